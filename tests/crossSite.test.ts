// Cross-site requests through raw HTTP with the session cookie, as a forged page's form or fetch would send them: an
// unsafe request from another origin is refused whatever its body, a Content-Type the route does not declare is 415
// (a form can send only urlencoded, multipart or text/plain), and the api's own pages, non-browser clients and bearer
// tokens keep working.
import { expect } from 'vitest';
import { stackTest, apiForTest } from './support/fixtures.ts';
import { setupAdmin, type Res, type TestApi } from './support/api.ts';

const FORGED = 'http://127.0.0.1:9000';
const NATIVE = 'version: 1\nmodels: []\n';

stackTest.describe('cross-site requests', () => {
  stackTest('a form post from another origin with the session cookie is refused on routes without an object body', async ({ stack, admin }) => {
    const cookieFrom = (origin: string | undefined, extra: Record<string, string> = {}) => ({
      as: { cookie: admin.cookie },
      headers: { 'content-type': 'text/plain', ...(origin ? { origin } : {}), ...extra },
      rawBody: '',
    });
    const targets = [
      '/api/workspaces/default/lineage/backfill',
      '/api/workspaces/default/catalogs/warehouse/refresh-stats',
      '/api/workspaces/default/semantic/imports/native',
      '/api/workspaces/default/lineage/imports/transform',
    ];
    for (const path of targets) {
      const forged = await stack.req('POST', path, cookieFrom(FORGED));
      expect(forged.status, `${path}: ${forged.text}`).toBe(403);
      expect(forged.body.error).toBe('cross_site_request');
      // Origin: null (a sandboxed frame) and a foreign Referer without Origin are the same page
      expect((await stack.req('POST', path, cookieFrom('null'))).status, path).toBe(403);
      expect((await stack.req('POST', path, cookieFrom(undefined, { referer: `${FORGED}/page.html` }))).status, path).toBe(403);
    }
    // text/plain where the route takes JSON only: 415 even from the api's own origin (what a same-site form sends)
    const plain = await stack.req('POST', '/api/workspaces/default/lineage/backfill', cookieFrom(stack.url));
    expect(plain.status, plain.text).toBe(415);
    expect(plain.body.error).toBe('unsupported_media_type');
    const form = await stack.req('POST', '/api/workspaces/default/catalogs/warehouse/refresh-stats', {
      as: { cookie: admin.cookie },
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.url },
      rawBody: 'a=b',
    });
    expect(form.status, form.text).toBe(415);
  });

  stackTest("the api's own pages, clients without Origin and bearer tokens keep working", async ({ stack, admin }) => {
    const own = await stack.req('POST', '/api/workspaces/default/catalogs/warehouse/refresh-stats', { as: { cookie: admin.cookie }, headers: { origin: stack.url } });
    expect(own.status, own.text).toBe(200);
    const referer = await stack.req('POST', '/api/workspaces/default/catalogs/warehouse/refresh-stats', {
      as: { cookie: admin.cookie },
      headers: { referer: `${stack.url}/workspaces/default` },
    });
    expect(referer.status, referer.text).toBe(200);
    // a declared text type from the api's own page: the import reads it
    const imported = await stack.req('POST', '/api/workspaces/default/semantic/imports/native?reconcile=none', {
      as: { cookie: admin.cookie },
      headers: { 'content-type': 'application/yaml', origin: stack.url },
      rawBody: NATIVE,
    });
    expect(imported.status, imported.text).toBe(200);
    // no Origin and no Referer: not a browser
    expect((await stack.req('POST', '/api/workspaces/default/catalogs/warehouse/refresh-stats', { as: { cookie: admin.cookie } })).status).toBe(200);
    // a bearer token is a program's: another Origin does not matter, the declared text type is read
    const bearer = await stack.req('POST', '/api/workspaces/default/semantic/imports/native?reconcile=none', {
      as: { token: admin.token },
      headers: { 'content-type': 'text/plain', origin: FORGED },
      rawBody: NATIVE,
    });
    expect(bearer.status, bearer.text).toBe(200);
    // sign-in from a foreign page is refused too (it would sign the victim into the attacker's account)
    const login = await stack.req('POST', '/api/auth/login', { body: { email: 'admin@example.com', password: 'x' }, headers: { origin: FORGED } });
    expect(login.status, login.text).toBe(403);
  });
});

stackTest('origins named in CORS_ORIGINS or forwarded by a trusted proxy count as the api own', async () => {
  const post = (t: TestApi, cookie: string, headers: Record<string, string>): Promise<Res> =>
    t.req('POST', '/api/workspaces', { body: { slug: `w${Math.random().toString(36).slice(2, 8)}`, name: 'W' }, as: { cookie }, headers });
  const configured = await apiForTest({ CORS_ORIGINS: 'https://app.example.com', OIDC_REDIRECT_BASE_URL: 'https://eider.example.com/' });
  const a = await setupAdmin(configured);
  expect((await post(configured, a.cookie, { origin: 'https://app.example.com' })).status).toBe(201);
  expect((await post(configured, a.cookie, { origin: 'https://eider.example.com' })).status).toBe(201);
  expect((await post(configured, a.cookie, { origin: 'https://evil.example.com' })).status).toBe(403);
  // loopback is a trusted proxy by default: the host and scheme it forwards are how the browser reached the api
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'lake.example.org' };
  expect((await post(configured, a.cookie, { ...forwarded, origin: 'https://lake.example.org' })).status).toBe(201);
  expect((await post(configured, a.cookie, { ...forwarded, origin: 'http://lake.example.org' })).status).toBe(403);
  // from a peer that is not a trusted proxy the forwarded headers are not believed
  const untrusting = await apiForTest({ TRUSTED_PROXIES: '10.0.0.0/8' });
  const b = await setupAdmin(untrusting);
  expect((await post(untrusting, b.cookie, { ...forwarded, origin: 'https://lake.example.org' })).status).toBe(403);
  expect((await post(untrusting, b.cookie, { origin: untrusting.url })).status).toBe(201);
});
