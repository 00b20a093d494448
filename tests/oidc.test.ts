// OIDC sign-in against a real OpenID provider (oidc-provider, started in the test) through the whole redirect flow:
// discovery, authorization code with PKCE, state and nonce in the signed handshake cookie, just-in-time users, roles
// from the groups claim re-applied at every sign-in, refusals (tampered state or cookie, replay, a foreign PKCE
// verifier, a provider error, an unverified email, an email owned by another account) and their audit rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, setupAdmin, startTestApi, type Caller, type TestApi } from './support/api.ts';
import { providerIssuer, startOidcProvider, TestBrowser, type TestProvider } from './support/oidcProvider.ts';
import { freePort } from '../runtime/postgres.ts';
import { HANDSHAKE_COOKIE, openHandshake, sealHandshake } from '../domain/oidc.ts';
import { loadConfig } from '../runtime/config.ts';

const SECRET_KEY = 'oidc-test-secret-key-0123456789abcdef';
const CORP = { client_id: 'eider-corp', client_secret: 'corp-client-secret-xyz' };
const OTHER = { client_id: 'eider-other', client_secret: 'other-client-secret-xyz' };
let t: TestApi;
let op: TestProvider;
let admin: Caller & { id: string };

const callbackOf = (id: string) => `${t.url}/api/auth/oidc/${id}/callback`;
const loginOf = (id: string) => `${t.url}/api/auth/oidc/${id}/login`;

beforeAll(async () => {
  const port = await freePort();
  const metadata = `${providerIssuer(port)}/.well-known/openid-configuration`;
  t = await startTestApi({
    SECRET_KEY,
    OIDC_PROVIDERS: JSON.stringify([
      { id: 'corp', label: 'Corp SSO', server_metadata_url: metadata, ...CORP, scopes: 'openid email profile groups', group_role_map: { 'eider-admins': 'admin', staff: 'member' } },
      { id: 'other', label: 'Other IdP', server_metadata_url: metadata, ...OTHER },
    ]),
  });
  op = await startOidcProvider(port, [
    { ...CORP, redirect_uris: [`${t.url}/api/auth/oidc/corp/callback`] },
    { ...OTHER, redirect_uris: [`${t.url}/api/auth/oidc/other/callback`] },
  ]);
  op.accounts.set('alice', { email: 'Alice@Example.com', name: 'Alice Admin', groups: ['staff', 'eider-admins'] });
  op.accounts.set('bob', { email: 'bob@example.com', name: 'Bob Local', groups: ['staff'] });
  op.accounts.set('mallory', { email: 'mallory@example.com', email_verified: false, name: 'Mallory', groups: ['eider-admins'] });
  admin = await setupAdmin(t);
});
afterAll(async () => {
  await t?.close();
  await op?.close();
});

/** Visits the callback and returns the response and the session cookie it set, if any. */
async function finish(b: TestBrowser, url: string) {
  const s = await b.step(url);
  const session = s.setCookies.find((c) => c.startsWith('session='))?.split(';')[0];
  return { ...s, session };
}

describe('OIDC sign-in through a real provider', () => {
  it('/auth/methods lists the configured providers', async () => {
    expect((await t.req('GET', '/api/auth/methods')).body).toEqual({
      local: true,
      ldap: false,
      oidc_providers: [
        { id: 'corp', label: 'Corp SSO' },
        { id: 'other', label: 'Other IdP' },
      ],
    });
    expect((await t.req('GET', '/api/auth/oidc/nope/login')).status).toBe(404);
  });

  it('the login redirect asks for a code with PKCE (S256), state and nonce, and sets a signed handshake cookie', async () => {
    const b = new TestBrowser();
    const s = await b.step(loginOf('corp'));
    expect(s.status).toBe(302);
    const to = new URL(s.location!);
    expect(to.origin).toBe(op.issuer);
    expect(Object.fromEntries(to.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: CORP.client_id,
      redirect_uri: callbackOf('corp'),
      scope: 'openid email profile groups',
      code_challenge_method: 'S256',
      state: expect.any(String),
      nonce: expect.any(String),
      code_challenge: expect.any(String),
    });
    const cookie = s.setCookies.find((c) => c.startsWith(`${HANDSHAKE_COOKIE}=`))!;
    expect(cookie).toMatch(/HttpOnly; SameSite=Lax; Path=\/api\/auth\/oidc; Max-Age=600/);
    const h = openHandshake(SECRET_KEY, cookie.split(';')[0].split('=')[1], 'corp');
    expect(h.state).toBe(to.searchParams.get('state'));
    expect(h.verifier).not.toBe(to.searchParams.get('code_challenge'));
  });

  it('a first sign-in creates the user with its mapped role; the session works; the page forwards to the app', async () => {
    const b = new TestBrowser();
    const cb = await b.toCallback(loginOf('corp'), 'alice', callbackOf('corp'));
    const done = await finish(b, cb);
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain('url=/');
    expect(done.setCookies.some((c) => c.startsWith(`${HANDSHAKE_COOKIE}=;`) && /Max-Age=0/.test(c))).toBe(true);
    const me = await t.req('GET', '/api/me', { as: { cookie: done.session } });
    expect(me.body).toMatchObject({ email: 'alice@example.com', name: 'Alice Admin', auth_provider: 'oidc:corp', role: 'admin' });
    const [{ hash }] = await t.database.db.query<{ hash: string | null }>(`select password_hash as hash from eider.users where email = 'alice@example.com'`);
    expect(hash).toBeNull();
  });

  it('roles are set again at every sign-in: a group gone, its role gone', async () => {
    op.accounts.get('alice')!.groups = ['staff'];
    const b = new TestBrowser();
    const done = await finish(b, await b.toCallback(loginOf('corp'), 'alice', callbackOf('corp')));
    expect(done.status).toBe(200);
    const me = await t.req('GET', '/api/me', { as: { cookie: done.session } });
    expect(me.body.role).toBe('member');
    const [row] = (await t.req('GET', `/api/admin/audit?action=user.role_change&actor_id=${me.body.id}&limit=1`, { as: admin })).body.items;
    expect(row.details).toMatchObject({ source: 'oidc:corp', role_from: 'admin', role_to: 'member', groups: ['staff'] });
    expect((await t.database.db.query(`select 1 from eider.users where email = 'alice@example.com'`)).length).toBe(1);
  });

  it('a tampered state, a tampered or missing handshake cookie, and a replayed callback are refused with no session', async () => {
    const b = new TestBrowser();
    const cb = await b.toCallback(loginOf('corp'), 'alice', callbackOf('corp'));
    const jar = new Map(b.jar.get('127.0.0.1'));

    const badState = new URL(cb);
    badState.searchParams.set('state', 'forged-state');
    const r1 = await finish(b, badState.href);
    expect([r1.status, JSON.parse(r1.text).error, r1.session]).toEqual([400, 'oidc_failed', undefined]);

    b.jar.set('127.0.0.1', new Map(jar));
    const sealed = jar.get(HANDSHAKE_COOKIE)!;
    b.setCookie(t.url, HANDSHAKE_COOKIE, sealed.slice(0, -2) + (sealed.endsWith('AA') ? 'BB' : 'AA'));
    const r2 = await finish(b, cb);
    expect([r2.status, JSON.parse(r2.text).error, r2.session]).toEqual([400, 'oidc_failed', undefined]);

    b.jar.set('127.0.0.1', new Map());
    const r3 = await finish(b, cb);
    expect([r3.status, JSON.parse(r3.text).error, r3.session]).toEqual([400, 'oidc_failed', undefined]);

    b.jar.set('127.0.0.1', new Map(jar));
    const ok = await finish(b, cb);
    expect(ok.status).toBe(200);
    b.jar.set('127.0.0.1', new Map(jar)); // an attacker who kept the cookie and the URL
    const replay = await finish(b, cb);
    expect([replay.status, JSON.parse(replay.text).error, replay.session]).toEqual([400, 'oidc_failed', undefined]);
  });

  it('PKCE is enforced: the right state and nonce with another verifier get no tokens', async () => {
    const b = new TestBrowser();
    const cb = await b.toCallback(loginOf('corp'), 'alice', callbackOf('corp'));
    const h = openHandshake(SECRET_KEY, b.jar.get('127.0.0.1')!.get(HANDSHAKE_COOKIE), 'corp');
    b.setCookie(t.url, HANDSHAKE_COOKIE, sealHandshake(SECRET_KEY, { ...h, verifier: 'x'.repeat(43) }));
    const r = await finish(b, cb);
    expect([r.status, JSON.parse(r.text).error, r.session]).toEqual([400, 'oidc_failed', undefined]);
    expect(JSON.parse(r.text).message).toMatch(/invalid_grant/);
  });

  it('an error from the provider, and an unverified email, are 400 oidc_failed', async () => {
    const b = new TestBrowser();
    const start = await b.step(loginOf('corp'));
    const state = new URL(start.location!).searchParams.get('state')!;
    const denied = await finish(b, `${callbackOf('corp')}?error=access_denied&state=${state}&iss=${encodeURIComponent(op.issuer)}`);
    expect([denied.status, JSON.parse(denied.text).error, denied.session]).toEqual([400, 'oidc_failed', undefined]);
    expect(JSON.parse(denied.text).message).toContain('access_denied');

    const m = new TestBrowser();
    const unverified = await finish(m, await m.toCallback(loginOf('corp'), 'mallory', callbackOf('corp')));
    expect([unverified.status, JSON.parse(unverified.text).error, unverified.session]).toEqual([400, 'oidc_failed', undefined]);
    expect((await t.database.db.query(`select 1 from eider.users where email = 'mallory@example.com'`)).length).toBe(0);
  });

  it('an email that belongs to a local account or to another provider’s is 409 account_conflict', async () => {
    await t.req('POST', '/api/admin/users', { body: { email: 'bob@example.com', name: 'Bob', password: 'bob-local-pw-1', role: 'member' }, as: admin });
    const b = new TestBrowser();
    const local = await finish(b, await b.toCallback(loginOf('corp'), 'bob', callbackOf('corp')));
    expect([local.status, JSON.parse(local.text).error, local.session]).toEqual([409, 'account_conflict', undefined]);

    const o = new TestBrowser();
    const other = await finish(o, await o.toCallback(loginOf('other'), 'alice', callbackOf('other')));
    expect([other.status, JSON.parse(other.text).error, other.session]).toEqual([409, 'account_conflict', undefined]);
    const [u] = await t.database.db.query<{ auth_provider: string }>(`select auth_provider from eider.users where email = 'bob@example.com'`);
    expect(u.auth_provider).toBe('local');
  });

  it('sign-ins are audited, failures included, and no row holds a token, code or secret', async () => {
    const rows = (await t.req('GET', '/api/admin/audit?action=auth.login&limit=200', { as: admin })).body.items as any[];
    const oidc = rows.filter((r) => r.details.method === 'oidc');
    expect(oidc.some((r) => r.outcome === 'success' && r.actor.email === 'alice@example.com' && r.details.provider === 'corp')).toBe(true);
    expect(oidc.some((r) => r.outcome === 'failure' && r.details.code === 'oidc_failed')).toBe(true);
    expect(oidc.some((r) => r.outcome === 'failure' && r.details.code === 'account_conflict' && r.actor.email === 'bob@example.com')).toBe(true);
    const all = await t.database.db.query<{ r: string }>(`select row_to_json(a)::text as r from eider.audit_events a`);
    const text = all.map((x) => x.r).join('\n');
    for (const s of [SECRET_KEY, CORP.client_secret, OTHER.client_secret]) expect(text).not.toContain(s);
    expect(text).not.toMatch(/"code":"[A-Za-z0-9_-]{20,}"|eyJ[A-Za-z0-9_-]{10,}/); // no authorization code, no JWT
  });

  it('a member signed in locally is unaffected, and a provider that cannot be reached is 503 at login', async () => {
    const u = await newUser(t, admin);
    expect((await t.req('GET', '/api/me', { as: u })).status).toBe(200);
    const down = await startTestApi({ OIDC_ENABLED: 'true', OIDC_SERVER_METADATA_URL: `http://127.0.0.1:${await freePort()}/.well-known/openid-configuration`, OIDC_CLIENT_ID: 'x' });
    try {
      expect((await down.req('GET', '/api/auth/methods')).body.oidc_providers).toEqual([{ id: 'sso', label: 'SSO' }]);
      const r = await down.req('GET', '/api/auth/oidc/sso/login');
      expect([r.status, r.body.error]).toEqual([503, 'oidc_unavailable']);
    } finally {
      await down.close();
    }
  });

  it('bad provider settings stop the process with the variable named', () => {
    const ok = { id: 'a', server_metadata_url: 'https://idp.example/.well-known/openid-configuration', client_id: 'c' };
    const failing: [Record<string, string>, string][] = [
      [{ OIDC_PROVIDERS: JSON.stringify([{ ...ok, id: 'Bad Id' }]) }, 'OIDC_PROVIDERS'],
      [{ OIDC_PROVIDERS: JSON.stringify([ok, ok]) }, 'OIDC_PROVIDERS'],
      [{ OIDC_PROVIDERS: JSON.stringify([{ ...ok, server_metadata_url: 'ftp://x' }]) }, 'OIDC_PROVIDERS'],
      [{ OIDC_PROVIDERS: JSON.stringify([{ ...ok, group_role_map: { g: 'root' } }]) }, 'OIDC_PROVIDERS'],
      [{ OIDC_ENABLED: 'true' }, 'OIDC_SERVER_METADATA_URL'],
      [{ OIDC_ENABLED: 'true', OIDC_SERVER_METADATA_URL: ok.server_metadata_url }, 'OIDC_CLIENT_ID'],
      [{ OIDC_REDIRECT_BASE_URL: 'not a url' }, 'OIDC_REDIRECT_BASE_URL'],
    ];
    for (const [env, variable] of failing) expect(() => loadConfig(env), JSON.stringify(env)).toThrow(expect.objectContaining({ variable }));
    expect(() => loadConfig({ OIDC_PROVIDERS: JSON.stringify([ok]) })).not.toThrow();
  });
});
