// LDAP sign-in against a real OpenLDAP (Debian's slapd, started by tests/support/slapd.ts): service bind, search
// with the escaped email, user bind, StartTLS and ldaps:// with a CA, group → role mapping re-applied at every
// sign-in, just-in-time users, local accounts first, and a directory that is down, frozen or refuses the service
// bind answering 503 directory_unavailable while local accounts keep signing in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, cookieFrom, setupAdmin, startTestApi, type Caller, type TestApi } from './support/api.ts';
import { BASE_DN, SERVICE_DN, SERVICE_PW, startSlapd, type Slapd } from './support/slapd.ts';
import { escapeFilterValue, normalizeDn, roleFromGroups } from '../domain/ldap.ts';
import { ldapInClear, loadConfig } from '../runtime/config.ts';
import { freePort } from '../runtime/postgres.ts';

let dir: Slapd;
let t: TestApi;
let admin: Caller & { id: string };

const ANN = { uid: 'ann', email: 'ann@example.com', name: 'Ann Analyst', password: 'ann-directory-pw', groups: ['analysts', 'admins'] };
const BOB = { uid: 'bob', email: 'bob@example.com', name: 'Bob Builder', password: 'bob-directory-pw', groups: ['analysts'] };
const CAROL = { uid: 'carol', email: 'carol@example.com', name: 'Carol Directory', password: 'carol-directory-pw' };
const TWIN_A = { uid: 'twin1', email: 'twin@example.com', name: 'Twin One', password: 'twin-pw-1', groups: ['admins'] }; // keeps admins non-empty
const TWIN_B = { uid: 'twin2', email: 'twin@example.com', name: 'Twin Two', password: 'twin-pw-2' };

const ldapEnv = (over: Record<string, string> = {}) => ({
  LDAP_ENABLED: 'true',
  LDAP_SERVER_URI: dir.ldapUrl,
  LDAP_USE_START_TLS: 'true',
  LDAP_TLS_CA_CERT: dir.caFile,
  LDAP_BIND_DN: SERVICE_DN,
  LDAP_BIND_PASSWORD: SERVICE_PW,
  LDAP_USER_SEARCH_BASE: `ou=people,${BASE_DN}`,
  LDAP_GROUP_ROLE_MAP: JSON.stringify({ [dir.groupDn('admins').toUpperCase()]: 'admin', [dir.groupDn('analysts')]: 'member' }),
  LDAP_TIMEOUT_S: '1',
  ...over,
});

const login = (api: TestApi, email: string, password: string) => api.req('POST', '/api/auth/login', { body: { email, password } });

beforeAll(async () => {
  dir = await startSlapd();
  await dir.seed([ANN, BOB, CAROL, TWIN_A, TWIN_B]);
  t = await startTestApi(ldapEnv());
  admin = await setupAdmin(t);
});
afterAll(async () => {
  await t?.close();
  await dir?.stop();
});

describe('LDAP filter escaping and group mapping (pure)', () => {
  it('escapes the RFC 4515 specials, so an email cannot change the filter', () => {
    expect(escapeFilterValue('*)(uid=*))(|(uid=*')).toBe('\\2a\\29\\28uid=\\2a\\29\\29\\28|\\28uid=\\2a');
    expect(escapeFilterValue('a\\b\0c')).toBe('a\\5cb\\00c');
    expect(escapeFilterValue('plain.user+tag@example.com')).toBe('plain.user+tag@example.com');
  });
  it('maps groups to roles: admin wins, DNs compare without case or blanks, no map leaves the role alone', () => {
    const map = new Map([[normalizeDn('CN=Admins, OU=groups,DC=x'), 'admin' as const]]);
    expect(roleFromGroups(['cn=admins,ou=groups,dc=x', 'cn=other'], map)).toBe('admin');
    expect(roleFromGroups(['cn=other'], map)).toBe('member');
    expect(roleFromGroups(['cn=admins,ou=groups,dc=x'], new Map())).toBeNull();
  });
});

describe('LDAP sign-in through a real directory', () => {
  it('/auth/methods says LDAP is offered', async () => {
    expect((await t.req('GET', '/api/auth/methods')).body).toEqual({ local: true, ldap: true, oidc_providers: [] });
  });

  it('a directory user signs in (StartTLS, service bind, search, user bind) and is created just in time', async () => {
    const r = await login(t, ANN.email, ANN.password);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ email: ANN.email, name: ANN.name, auth_provider: 'ldap', role: 'admin', is_active: true });
    const me = await t.req('GET', '/api/me', { as: { cookie: cookieFrom(r) } });
    expect(me.body.id).toBe(r.body.id);
    const [{ n, hash }] = await t.database.db.query<{ n: number; hash: string | null }>(
      `select count(*)::int as n, max(password_hash) as hash from eider.users where email = $1`,
      [ANN.email],
    );
    expect({ n, hash }).toEqual({ n: 1, hash: null }); // the directory's password is never stored
    const again = await login(t, ANN.email.toUpperCase(), ANN.password);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(r.body.id);
  });

  it('wrong password, unknown email, empty password and an ambiguous filter all get the same 401', async () => {
    const wrong = await login(t, BOB.email, 'not-bobs-password');
    const unknown = await login(t, 'nobody@example.com', 'whatever-pw');
    const empty = await login(t, BOB.email, '');
    const twins = await login(t, TWIN_A.email, TWIN_A.password);
    for (const r of [wrong, unknown, empty, twins]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual(unknown.body);
    }
  });

  it('an injection attempt in the email matches nobody, even with a real password', async () => {
    for (const email of ['ann@example.c*', '*', '*)(uid=ann', 'ann@example.com)(|(mail=*)', 'a*']) {
      const r = await login(t, email, ANN.password);
      expect({ email, status: r.status }).toEqual({ email, status: 401 });
    }
  });

  it('roles follow the groups at every sign-in, and the change is audited', async () => {
    const first = await login(t, BOB.email, BOB.password);
    expect(first.body).toMatchObject({ role: 'member', auth_provider: 'ldap' });
    const annBefore = await login(t, ANN.email, ANN.password);
    expect(annBefore.body.role).toBe('admin');
    await dir.leaveGroup('ann', 'admins');
    const annAfter = await login(t, ANN.email, ANN.password);
    expect(annAfter.body.role).toBe('member');
    const audit = await t.req('GET', `/api/admin/audit?action=user.role_change&actor_id=${annAfter.body.id}&limit=1`, { as: admin });
    expect(audit.body.items[0]).toMatchObject({ details: { source: 'ldap', role_from: 'admin', role_to: 'member', created: false } });
    const logins = await t.req('GET', '/api/admin/audit?action=auth.login&limit=100', { as: admin });
    expect(logins.body.items.some((r: any) => r.outcome === 'success' && r.details.method === 'ldap' && r.actor.email === ANN.email)).toBe(true);
    expect(logins.body.items.some((r: any) => r.outcome === 'failure' && r.details.method === 'ldap' && r.actor.email === BOB.email)).toBe(true);
    expect(JSON.stringify(logins.body)).not.toContain(BOB.password);
    expect(JSON.stringify(logins.body)).not.toContain('not-bobs-password');
  });

  it('local accounts come first: the directory is never asked for an email a local account holds', async () => {
    const created = await t.req('POST', '/api/admin/users', { body: { email: CAROL.email, name: 'Carol Local', password: 'carol-local-pw', role: 'member' }, as: admin });
    expect(created.status).toBe(201);
    const local = await login(t, CAROL.email, 'carol-local-pw');
    expect(local.body).toMatchObject({ auth_provider: 'local', name: 'Carol Local' });
    expect((await login(t, CAROL.email, CAROL.password)).status).toBe(401);
  });

  it('a deactivated directory user cannot sign in', async () => {
    const bob = await login(t, BOB.email, BOB.password);
    await t.req('PATCH', `/api/admin/users/${bob.body.id}`, { body: { is_active: false }, as: admin });
    expect((await login(t, BOB.email, BOB.password)).status).toBe(401);
    await t.req('PATCH', `/api/admin/users/${bob.body.id}`, { body: { is_active: true }, as: admin });
  });

  it('a frozen directory answers 503 within LDAP_TIMEOUT_S, never lets anyone in, and local sign-in goes on', async () => {
    await dir.freeze();
    try {
      const started = Date.now();
      const r = await login(t, ANN.email, ANN.password);
      // The answer says something about a frozen directory only if it stayed frozen throughout.
      expect(dir.frozen(), 'slapd was continued while the sign-in ran').toBe(true);
      expect(r.status, r.text).toBe(503);
      expect(r.body.error).toBe('directory_unavailable');
      expect(Date.now() - started).toBeLessThan(2_900); // LDAP_TIMEOUT_S=1, bounded at twice that overall
      const localStart = Date.now();
      expect((await login(t, ADMIN.email, ADMIN.password)).status).toBe(200);
      expect(Date.now() - localStart).toBeLessThan(1_000);
    } finally {
      dir.thaw();
    }
    expect((await login(t, ANN.email, ANN.password)).status).toBe(200);
  });
});

describe('directory settings', () => {
  it('ldaps:// with the CA bundle works; without it the certificate is refused (503, nobody let in)', async () => {
    const tls = await startTestApi(ldapEnv({ LDAP_SERVER_URI: dir.ldapsUrl, LDAP_USE_START_TLS: 'false' }));
    try {
      expect((await login(tls, ANN.email, ANN.password)).status).toBe(200);
    } finally {
      await tls.close();
    }
    const untrusted = await startTestApi(ldapEnv({ LDAP_SERVER_URI: dir.ldapsUrl, LDAP_USE_START_TLS: 'false', LDAP_TLS_CA_CERT: '' }));
    try {
      const r = await login(untrusted, ANN.email, ANN.password);
      expect(r.status).toBe(503);
      expect(r.body.error).toBe('directory_unavailable');
    } finally {
      await untrusted.close();
    }
  });

  it('a refused service bind and an unreachable directory are 503; local sign-in still works', async () => {
    const closedPort = await freePort();
    const settings: Record<string, string>[] = [{ LDAP_BIND_PASSWORD: 'wrong-service-pw' }, { LDAP_SERVER_URI: `ldap://127.0.0.1:${closedPort}` }];
    for (const over of settings) {
      const api = await startTestApi(ldapEnv(over));
      try {
        await setupAdmin(api);
        const r = await login(api, ANN.email, ANN.password);
        expect(r.status, JSON.stringify(over)).toBe(503);
        expect(r.body.error).toBe('directory_unavailable');
        expect(r.text).not.toContain('wrong-service-pw');
        expect((await login(api, ADMIN.email, ADMIN.password)).status).toBe(200);
      } finally {
        await api.close();
      }
    }
  });

  it('inconsistent settings stop the process with the variable named', () => {
    const base = { LDAP_ENABLED: 'true', LDAP_SERVER_URI: 'ldap://dir', LDAP_USE_START_TLS: 'true', LDAP_USER_SEARCH_BASE: 'dc=x' };
    const failing: [Record<string, string>, string][] = [
      [{ LDAP_ENABLED: 'true' }, 'LDAP_SERVER_URI'],
      [{ ...base, LDAP_USER_SEARCH_BASE: '' }, 'LDAP_USER_SEARCH_BASE'],
      [{ ...base, LDAP_SERVER_URI: 'ldaps://dir', LDAP_USE_START_TLS: 'true' }, 'LDAP_USE_START_TLS'],
      [{ ...base, LDAP_USER_FILTER: '(mail=x)' }, 'LDAP_USER_FILTER'],
      [{ ...base, LDAP_GROUP_ROLE_MAP: '{"cn=g":"root"}' }, 'LDAP_GROUP_ROLE_MAP'],
      [{ ...base, LDAP_TIMEOUT_S: '0' }, 'LDAP_TIMEOUT_S'],
      // The bind passwords would travel in clear.
      [{ ...base, LDAP_USE_START_TLS: 'false' }, 'LDAP_SERVER_URI'],
      [{ ...base, LDAP_USE_START_TLS: 'false', LDAP_ALLOW_INSECURE: 'false' }, 'LDAP_SERVER_URI'],
    ];
    for (const [env, variable] of failing) expect(() => loadConfig(env), variable).toThrow(expect.objectContaining({ variable }));
    expect(() => loadConfig(base)).not.toThrow();
    expect(() => loadConfig({ ...base, LDAP_SERVER_URI: 'ldaps://dir', LDAP_USE_START_TLS: 'false' })).not.toThrow();
    // Said explicitly, it is accepted (and startApi logs a warning).
    const insecure = loadConfig({ ...base, LDAP_USE_START_TLS: 'false', LDAP_ALLOW_INSECURE: 'true' });
    expect(ldapInClear(insecure)).toBe(true);
    expect(ldapInClear(loadConfig(base))).toBe(false);
    expect(() => loadConfig({ LDAP_SERVER_URI: 'ldap://dir' })).not.toThrow(); // LDAP off: nothing is sent
  });
});
