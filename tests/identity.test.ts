import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, SETUP_TOKEN, cookieFrom, newUser, setupAdmin, signIn, startTestApi, type Caller, type TestApi } from './support/api.ts';
import { apiForTest } from './support/fixtures.ts';
import { sha256 } from '../domain/identity.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

let t: TestApi;
let admin: Caller & { id: string };

beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => t?.close());

describe('first admin setup', () => {
  it('a SETUP_TOKEN given by the environment is never written to DATA_DIR', () => {
    // the test api is started with SETUP_TOKEN set
    expect(existsSync(join(t.dataDir, 'setup-token'))).toBe(false);
    expect(existsSync(join(t.dataDir, 'secret-key'))).toBe(true); // generated secrets still are
  });

  it('reports needs_admin, refuses a wrong token, creates once, then 409', async () => {
    expect((await t.req('GET', '/api/setup/status')).body).toEqual({ needs_admin: true });
    const wrong = await t.req('POST', '/api/setup/admin', { body: ADMIN, headers: { 'x-setup-token': 'nope' } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('forbidden');
    const missing = await t.req('POST', '/api/setup/admin', { body: ADMIN });
    expect(missing.status).toBe(403);
    expect((await t.req('GET', '/api/setup/status')).body.needs_admin).toBe(true);

    const ok = await t.req('POST', '/api/setup/admin', { body: ADMIN, headers: { 'x-setup-token': SETUP_TOKEN } });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ email: ADMIN.email, name: 'Admin', role: 'admin', auth_provider: 'local', is_active: true });
    expect(ok.body.permissions).toEqual(['agents:manage', 'query-admin', 'catalogs']);
    expect(ok.body).not.toHaveProperty('password_hash');

    const again = await t.req('POST', '/api/setup/admin', { body: { ...ADMIN, email: 'x@example.com' }, headers: { 'x-setup-token': SETUP_TOKEN } });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('conflict');
    expect((await t.req('GET', '/api/setup/status')).body.needs_admin).toBe(false);

    admin = await signIn(t, ADMIN.email, ADMIN.password);
    const ws = await t.req('GET', '/api/workspaces', { as: admin });
    expect(ws.body.map((w: any) => w.slug)).toEqual(['default']);
    expect(ws.body[0].default_catalog).toBe('warehouse');
  });

  it('stores a memory-hard hash, never the password', async () => {
    const [row] = await t.database.db.query<{ password_hash: string }>(`select password_hash from eider.users where email = $1`, [ADMIN.email]);
    expect(row.password_hash.startsWith('$argon2id$')).toBe(true);
    expect(row.password_hash).not.toContain(ADMIN.password);
  });
});

describe('sign-in and sessions', () => {
  it('sets a HttpOnly SameSite=Lax cookie with Max-Age, and the same 401 for unknown email and wrong password', async () => {
    const ok = await t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } });
    expect(ok.status).toBe(200);
    const set = ok.headers.get('set-cookie')!;
    expect(set).toMatch(/^session=[A-Za-z0-9_-]{20,};/);
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Lax');
    expect(set).toContain('Path=/');
    expect(set).toContain('Max-Age=604800');
    expect(set).not.toContain('Secure');
    const wrongPw = await t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: 'wrong-password' } });
    const unknown = await t.req('POST', '/api/auth/login', { body: { email: 'nobody@example.com', password: 'wrong-password' } });
    expect(wrongPw.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrongPw.body).toEqual(unknown.body);
    expect(wrongPw.body.error).toBe('unauthorized');
  });

  it('stores only a hash of the session id; logout deletes it server-side', async () => {
    const login = await t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } });
    const cookie = cookieFrom(login);
    const sid = cookie.split('=')[1];
    const rows = await t.database.db.query(`select 1 from eider.web_sessions where id_hash = $1`, [sha256(sid)]);
    expect(rows.length).toBe(1);
    expect((await t.database.db.query(`select 1 from eider.web_sessions where id_hash = $1`, [sid])).length).toBe(0);
    expect((await t.req('GET', '/api/me', { as: { cookie } })).status).toBe(200);
    expect((await t.req('POST', '/api/auth/logout', { as: { cookie } })).status).toBe(204);
    const after = await t.req('GET', '/api/me', { as: { cookie } });
    expect(after.status).toBe(401);
    expect((await t.database.db.query(`select 1 from eider.web_sessions where id_hash = $1`, [sha256(sid)])).length).toBe(0);
  });

  it('the session cookie is Secure when the api is reached over HTTPS through a trusted proxy, not otherwise', async () => {
    const login = (headers: Record<string, string>, api: Pick<TestApi, 'req'> = t) =>
      api.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password }, headers });
    // loopback is a trusted proxy by default
    expect((await login({ 'x-forwarded-proto': 'https' })).headers.get('set-cookie')).toMatch(/; Secure$/);
    expect((await login({ 'x-forwarded-proto': 'http' })).headers.get('set-cookie')).not.toContain('Secure');
    const untrusting = await apiForTest({ TRUSTED_PROXIES: '10.0.0.0/8', SETUP_TOKEN });
    await setupAdmin(untrusting);
    expect((await login({ 'x-forwarded-proto': 'https' }, untrusting)).headers.get('set-cookie')).not.toContain('Secure');
  });

  it('a sign-in with a stale session cookie ignores it and replaces it; elsewhere the stale cookie is still 401', async () => {
    const first = cookieFrom(await t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } }));
    expect((await t.req('POST', '/api/auth/logout', { as: { cookie: first } })).status).toBe(204);
    const again = await t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password }, as: { cookie: first } });
    expect(again.status, again.text).toBe(200);
    const second = cookieFrom(again);
    expect(second).not.toBe(first);
    expect((await t.req('GET', '/api/me', { as: { cookie: second } })).status).toBe(200);
    expect((await t.req('GET', '/api/me', { as: { cookie: first } })).status).toBe(401);
    // the public pages a signed-out browser opens answer too
    expect((await t.req('GET', '/api/auth/methods', { as: { cookie: first } })).status).toBe(200);
    expect((await t.req('POST', '/api/auth/logout', { as: { cookie: first } })).status).toBe(204);
    // a bearer token is the client's own choice: an invalid one is refused even on a public route
    const bearer = await t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password }, as: { token: 'eider_pat_nope' } });
    expect(bearer.status).toBe(401);
  });

  it('anonymous /me is 401 in the envelope', async () => {
    const r = await t.req('GET', '/api/me');
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ error: 'unauthorized', detail: { error: 'unauthorized' } });
  });

  it('auth methods list local sign-in', async () => {
    expect((await t.req('GET', '/api/auth/methods')).body).toEqual({ local: true, ldap: false, oidc_providers: [] });
  });
});

describe('personal access tokens', () => {
  it('requires expiry, at most 365 days', async () => {
    for (const body of [{}, { expires_in_days: 0 }, { expires_in_days: 366 }, { expires_in_days: 1.5 }, { expires_in_days: null }]) {
      const r = await t.req('POST', '/api/me/pats', { body, as: { cookie: admin.cookie } });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.details.fields[0].field).toBe('expires_in_days');
    }
    const ok = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 365 }, as: { cookie: admin.cookie } });
    expect(ok.status).toBe(201);
    expect(ok.body.token.startsWith('eid_pat_')).toBe(true);
    const days = (Date.parse(ok.body.expires_at) - Date.parse(ok.body.created_at)) / 86_400_000;
    expect(Math.round(days)).toBe(365);
    await t.req('DELETE', `/api/me/pats/${ok.body.id}`, { as: admin });
  });

  it('takes an optional name, returned at issue and in the lists; a bad name is 422; unnamed tokens list null', async () => {
    const named = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 7, name: 'laptop dbt' }, as: { cookie: admin.cookie } });
    expect(named.status, named.text).toBe(201);
    expect(named.body).toMatchObject({ name: 'laptop dbt', token: expect.stringMatching(/^eid_pat_/) });
    const plain = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 7 }, as: { cookie: admin.cookie } });
    expect(plain.body.name).toBeNull();
    const list = (await t.req('GET', '/api/me/pats', { as: admin })).body as { id: string; name: string | null }[];
    expect(list.find((x) => x.id === named.body.id)?.name).toBe('laptop dbt');
    expect(list.find((x) => x.id === plain.body.id)?.name).toBeNull();
    for (const name of ['', 'x'.repeat(101), 42]) {
      const r = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 7, name }, as: { cookie: admin.cookie } });
      expect(r.status, JSON.stringify(name)).toBe(422);
      expect(r.body.details.fields[0].field).toBe('name');
    }
    const sa = await t.req('POST', '/api/admin/service-accounts', { body: { name: 'named-token-bot' }, as: admin });
    const saTok = await t.req('POST', `/api/admin/service-accounts/${sa.body.id}/pats`, { body: { expires_in_days: null, name: 'nightly export' }, as: admin });
    expect(saTok.body.name).toBe('nightly export');
    expect((await t.req('GET', `/api/admin/service-accounts/${sa.body.id}/pats`, { as: admin })).body[0].name).toBe('nightly export');
    for (const id of [named.body.id, plain.body.id]) await t.req('DELETE', `/api/me/pats/${id}`, { as: admin });
  });

  it('needs a cookie session to issue: 403 session_required with a bearer token', async () => {
    const r = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 5 }, as: { token: admin.token } });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('session_required');
  });

  it('stores only SHA-256, marks current, 404 for another user’s token, and works as bearer', async () => {
    const issued = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 3 }, as: { cookie: admin.cookie } });
    const rows = await t.database.db.query<{ token_hash: string }>(`select token_hash from eider.access_tokens where id = $1`, [issued.body.id]);
    expect(rows[0].token_hash).toBe(sha256(issued.body.token));
    const all = await t.database.db.query(`select * from eider.access_tokens`);
    expect(JSON.stringify(all)).not.toContain(issued.body.token);

    const list = await t.req('GET', '/api/me/pats', { as: { token: issued.body.token } });
    expect(list.status).toBe(200);
    const mine = list.body.find((x: any) => x.id === issued.body.id);
    expect(mine.current).toBe(true);
    expect(list.body.filter((x: any) => x.current).length).toBe(1);
    expect(list.body[0]).not.toHaveProperty('token');

    const other = await newUser(t, admin);
    const del = await t.req('DELETE', `/api/me/pats/${issued.body.id}`, { as: other });
    expect(del.status).toBe(404);
    expect((await t.req('GET', '/api/me', { as: { token: issued.body.token } })).status).toBe(200);
    expect((await t.req('DELETE', `/api/me/pats/${issued.body.id}`, { as: admin })).status).toBe(204);
    expect((await t.req('GET', '/api/me', { as: { token: issued.body.token } })).status).toBe(401);
    expect((await t.req('DELETE', `/api/me/pats/not-a-uuid`, { as: admin })).status).toBe(404);
  });

  it('409 too_many_tokens at the 26th live token', async () => {
    const u = await newUser(t, admin); // already holds one token
    for (let i = 0; i < 24; i++) {
      const r = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 1 }, as: { cookie: u.cookie } });
      expect(r.status).toBe(201);
    }
    const r26 = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 1 }, as: { cookie: u.cookie } });
    expect(r26.status).toBe(409);
    expect(r26.body.error).toBe('too_many_tokens');
    expect((await t.req('GET', '/api/me/pats', { as: u })).body.length).toBe(25);
  });

  it('a token acts with its owner’s current role', async () => {
    const u = await newUser(t, admin, 'admin');
    expect((await t.req('GET', '/api/admin/users', { as: { token: u.token } })).status).toBe(200);
    const demote = await t.req('PATCH', `/api/admin/users/${u.id}`, { body: { role: 'member' }, as: admin });
    expect(demote.status).toBe(200);
    expect(demote.body.permissions).toEqual([]);
    const r = await t.req('GET', '/api/admin/users', { as: { token: u.token } });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('forbidden');
  });

  it('deactivating a user stops its sessions and tokens at once', async () => {
    const u = await newUser(t, admin);
    expect((await t.req('GET', '/api/me', { as: { token: u.token } })).status).toBe(200);
    const off = await t.req('PATCH', `/api/admin/users/${u.id}`, { body: { is_active: false }, as: admin });
    expect(off.status).toBe(200);
    expect(off.body.is_active).toBe(false);
    expect((await t.req('GET', '/api/me', { as: { token: u.token } })).status).toBe(401);
    expect((await t.req('GET', '/api/me', { as: { cookie: u.cookie } })).status).toBe(401);
    const login = await t.req('POST', '/api/auth/login', { body: { email: u.email, password: 'user-password-1' } });
    expect(login.status).toBe(401);
  });
});

describe('service accounts', () => {
  it('admin issues tokens that may never expire; the self-issue route refuses them', async () => {
    const sa = await t.req('POST', '/api/admin/service-accounts', { body: { name: 'ci-bot' }, as: admin });
    expect(sa.status).toBe(201);
    expect(sa.body).toMatchObject({ name: 'ci-bot', role: 'member', is_active: true });
    const tok = await t.req('POST', `/api/admin/service-accounts/${sa.body.id}/pats`, { body: { expires_in_days: null }, as: admin });
    expect(tok.status).toBe(201);
    expect(tok.body.expires_at).toBeNull();
    const me = await t.req('GET', '/api/me', { as: { token: tok.body.token } });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(sa.body.id);
    const self = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 5 }, as: { token: tok.body.token } });
    expect(self.status).toBe(403);
    expect(self.body.error).toBe('service_account_tokens_are_managed');
    const list = await t.req('GET', `/api/admin/service-accounts/${sa.body.id}/pats`, { as: admin });
    expect(list.body.map((x: any) => x.id)).toEqual([tok.body.id]);
    const missingExpiry = await t.req('POST', `/api/admin/service-accounts/${sa.body.id}/pats`, { body: {}, as: admin });
    expect(missingExpiry.status).toBe(422);
    const off = await t.req('PATCH', `/api/admin/service-accounts/${sa.body.id}`, { body: { is_active: false }, as: admin });
    expect(off.status).toBe(200);
    expect((await t.req('GET', '/api/me', { as: { token: tok.body.token } })).status).toBe(401);
    expect((await t.req('POST', `/api/admin/service-accounts/${admin.id}/pats`, { body: { expires_in_days: 1 }, as: admin })).status).toBe(404);
  });

  it('a revoked service-account token stops working', async () => {
    const sa = await t.req('POST', '/api/admin/service-accounts', { body: { name: 'etl', role: 'member' }, as: admin });
    const tok = await t.req('POST', `/api/admin/service-accounts/${sa.body.id}/pats`, { body: { expires_in_days: 10 }, as: admin });
    expect((await t.req('DELETE', `/api/admin/service-accounts/${sa.body.id}/pats/${tok.body.id}`, { as: admin })).status).toBe(204);
    expect((await t.req('GET', '/api/me', { as: { token: tok.body.token } })).status).toBe(401);
  });
});

describe('admin lists use the page envelope with keyset cursors', () => {
  it('pages users to the end without loss or repetition; malformed and stale cursors', async () => {
    for (let i = 0; i < 5; i++) await newUser(t, admin);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await t.req('GET', `/api/admin/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { as: admin });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['cursor', 'has_more', 'items']);
      expect(r.body.has_more).toBe(r.body.cursor !== null);
      seen.push(...r.body.items.map((u: any) => u.id));
      cursor = r.body.cursor;
      pages++;
    } while (cursor);
    const [{ n }] = await t.database.db.query<{ n: number }>(`select count(*)::int as n from eider.users where kind = 'user'`);
    expect(seen.length).toBe(n);
    expect(new Set(seen).size).toBe(n);
    expect(pages).toBe(Math.ceil(n / 2));

    expect((await t.req('GET', '/api/admin/users?cursor=%%%', { as: admin })).body.error).toBe('invalid_cursor');
    expect((await t.req('GET', '/api/admin/users?cursor=bm90LWpzb24', { as: admin })).status).toBe(400);
    for (const limit of ['0', '1001', 'abc']) {
      expect((await t.req('GET', `/api/admin/users?limit=${limit}`, { as: admin })).status).toBe(422);
    }
    const first = await t.req('GET', '/api/admin/users?limit=1', { as: admin });
    const second = await t.req('GET', `/api/admin/users?limit=1&cursor=${first.body.cursor}`, { as: admin });
    const victim = second.body.items[0];
    expect(victim.id).not.toBe(admin.id);
    await t.database.db.query(`delete from eider.users where id = $1`, [victim.id]);
    const stale = await t.req('GET', `/api/admin/users?limit=1&cursor=${second.body.cursor}`, { as: admin });
    expect(stale.status).toBe(422);
    expect(stale.body.error).toBe('stale_cursor');
  });
});
