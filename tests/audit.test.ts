// The audit trail against a real api and PostgreSQL: each security-relevant action leaves one row (actor, target,
// replica, request id), failures included; admins read it newest first with filters; rows are append-only in the
// database and pruned by age; and no row ever holds a password, token or secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PROTOCOL_VERSION } from '../protocol/index.ts';
import { ADMIN, newUser, setupAdmin, startTestApi, type Caller, type TestApi } from './support/api.ts';
import { pruneAudit } from '../domain/audit.ts';
import { startExtraStore, type ExtraStore } from './support/catalogStack.ts';

const BOOTSTRAP = 'seeded-bootstrap-token-for-audit';
let t: TestApi;
/** a real S3-compatible store: registering a backend probes it */
let lake: ExtraStore;
let admin: Caller & { id: string };
/** every secret the test handed the api: none may appear in any audit row */
const secrets: string[] = [ADMIN.password, BOOTSTRAP];

beforeAll(async () => {
  lake = await startExtraStore({ bucket: 'audit-lake' });
  t = await startTestApi({ AGENT_BOOTSTRAP_TOKEN: BOOTSTRAP, REPLICA_ID: 'audit-replica' });
  admin = await setupAdmin(t);
  secrets.push(admin.token!, admin.cookie!.split('=')[1], lake.secretKey);
});
afterAll(async () => {
  await t?.close();
  await lake?.close();
});

interface Row {
  id: string;
  at: string;
  action: string;
  outcome: 'success' | 'failure';
  actor: { kind: string; id: string | null; email: string | null };
  target: { kind: string; id: string | null } | null;
  replica_id: string;
  request_id: string | null;
  details: Record<string, unknown>;
}

async function audit(query = ''): Promise<Row[]> {
  const r = await t.req('GET', `/api/admin/audit${query}`, { as: admin });
  expect(r.status, r.text).toBe(200);
  return r.body.items;
}

/** The newest row of `action`. */
async function latest(action: string): Promise<Row> {
  const [row] = await audit(`?action=${action}&limit=1`);
  expect(row, `no ${action} row`).toBeDefined();
  return row;
}

async function rawAgent(token: string): Promise<{ ws: WebSocket; reply: Promise<any> }> {
  const ws = new WebSocket(t.url.replace(/^http/, 'ws') + '/agents/connect');
  await new Promise((res, rej) => (ws.once('open', res), ws.once('error', rej)));
  const reply = new Promise<any>((res) =>
    ws.on('message', (d) => {
      const f = JSON.parse(String(d));
      if (f.type === 'auth_ok' || f.type === 'auth_error') res(f);
    }),
  );
  ws.send(JSON.stringify({ type: 'auth', payload: { protocol_version: PROTOCOL_VERSION, results_port: 8001, agent_version: 'test', name: 'audited', bootstrap_token: token } }));
  return { ws, reply };
}

describe('audit rows per action', () => {
  it('sign-in: success with the user, failure with the attempted email and never the password', async () => {
    const ok = await t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } });
    const row = await latest('auth.login');
    expect(row).toMatchObject({
      outcome: 'success',
      actor: { kind: 'user', id: admin.id, email: ADMIN.email },
      target: { kind: 'user', id: admin.id },
      replica_id: 'audit-replica',
      request_id: ok.headers.get('x-request-id'),
      details: { method: 'local' },
    });
    secrets.push('not-the-password-42');
    const bad = await t.req('POST', '/api/auth/login', { body: { email: 'Mallory@Example.com', password: 'not-the-password-42' } });
    expect(bad.status).toBe(401);
    const fail = await latest('auth.login');
    expect(fail).toMatchObject({ outcome: 'failure', actor: { kind: 'anonymous', id: null, email: 'Mallory@Example.com' }, request_id: bad.headers.get('x-request-id') });
    expect(fail.details).toEqual({ method: 'local', code: 'unauthorized' });

    await t.req('POST', '/api/auth/logout', { as: { cookie: ok.headers.get('set-cookie')!.split(';')[0] } });
    expect(await latest('auth.logout')).toMatchObject({ outcome: 'success', actor: { id: admin.id } });
  });

  it('tokens: issue and revoke name the token, never its secret', async () => {
    const issued = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 3 }, as: { cookie: admin.cookie } });
    secrets.push(issued.body.token);
    expect(await latest('token.create')).toMatchObject({ actor: { id: admin.id }, target: { kind: 'access_token', id: issued.body.id }, details: { owner_id: admin.id } });
    expect((await t.req('DELETE', `/api/me/pats/${issued.body.id}`, { as: admin })).status).toBe(204);
    expect(await latest('token.revoke')).toMatchObject({ target: { kind: 'access_token', id: issued.body.id } });

    const sa = await t.req('POST', '/api/admin/service-accounts', { body: { name: 'audited-sa' }, as: admin });
    const saTok = await t.req('POST', `/api/admin/service-accounts/${sa.body.id}/pats`, { body: { expires_in_days: null }, as: admin });
    secrets.push(saTok.body.token);
    expect(await latest('token.create')).toMatchObject({ target: { id: saTok.body.id }, details: { owner_id: sa.body.id, expires_at: null } });
    // The service account acts: its rows name it as a service account.
    await t.req('PATCH', `/api/admin/service-accounts/${sa.body.id}`, { body: { role: 'admin' }, as: admin });
    const me = await t.req('POST', '/api/admin/storage-backends', { body: { name: 'sa-made', kind: 'object_store', root_uri: 's3://audit-lake/sa-made/', endpoint: lake.endpoint, access_key_id: lake.accessKey, secret_access_key: lake.secretKey }, as: { token: saTok.body.token } });
    expect(me.status, me.text).toBe(201);
    expect(await latest('backend.change')).toMatchObject({ actor: { kind: 'service_account', id: sa.body.id, email: null } });
  });

  it('roles: creating a user, a role change and a deactivation, with before and after', async () => {
    const u = await newUser(t, admin);
    secrets.push(u.token!);
    expect(await latest('user.role_change')).toMatchObject({ target: { kind: 'user', id: u.id }, details: { created: true, role_to: 'member' } });
    await t.req('PATCH', `/api/admin/users/${u.id}`, { body: { role: 'admin' }, as: admin });
    expect(await latest('user.role_change')).toMatchObject({ details: { role_from: 'member', role_to: 'admin', is_active_from: true, is_active_to: true } });
    await t.req('PATCH', `/api/admin/users/${u.id}`, { body: { name: 'Renamed only' }, as: admin });
    expect((await latest('user.role_change')).details.role_from).toBe('member'); // a rename alone writes no row
    await t.req('PATCH', `/api/admin/users/${u.id}`, { body: { is_active: false }, as: admin });
    expect(await latest('user.role_change')).toMatchObject({ details: { role_from: 'admin', role_to: 'admin', is_active_to: false } });
  });

  it('workspace members, catalog attachments and grants', async () => {
    const u = await newUser(t, admin);
    await t.req('POST', '/api/workspaces', { body: { slug: 'audws', name: 'Audit' }, as: admin });
    expect((await t.req('PUT', `/api/workspaces/audws/members/${u.id}`, { body: { role: 'writer' }, as: admin })).status).toBe(201);
    expect(await latest('workspace.member_change')).toMatchObject({ target: { kind: 'workspace' }, details: { workspace: 'audws', user_id: u.id, role: 'writer', change: 'added' } });
    await t.req('DELETE', `/api/workspaces/audws/members/${u.id}`, { as: admin });
    expect((await latest('workspace.member_change')).details.change).toBe('removed');

    const att = await t.req('PUT', '/api/workspaces/audws/catalogs/warehouse', { body: { make_default: false, access_mode: 'scoped' }, as: admin });
    expect(att.status, att.text).toBe(201);
    expect(await latest('catalog.change')).toMatchObject({ target: { kind: 'catalog', id: att.body.id }, details: { change: 'attached', workspace: 'audws', access_mode: 'scoped' } });
    const g = await t.req('PUT', '/api/workspaces/audws/catalogs/warehouse/grants', { body: { schema: 'samples', privilege: 'read' }, as: admin });
    expect(g.status, g.text).toBe(201);
    expect(await latest('grant.change')).toMatchObject({ target: { kind: 'catalog_grant', id: g.body.id }, details: { change: 'created', schema: 'samples', privilege: 'read' } });
    await t.req('DELETE', `/api/workspaces/audws/catalogs/warehouse/grants/${g.body.id}`, { as: admin });
    expect((await latest('grant.change')).details.change).toBe('deleted');
    await t.req('DELETE', '/api/workspaces/audws/catalogs/warehouse', { as: admin });
    expect((await latest('catalog.change')).details.change).toBe('detached');
  });

  it('storage backends: the row says credentials were given, never what they are', async () => {
    const b = await t.req('POST', '/api/admin/storage-backends', {
      body: { name: 'audited', kind: 's3', root_uri: 's3://audit-lake/audited/', endpoint: lake.endpoint, region: 'eu-west-1', access_key_id: lake.accessKey, secret_access_key: lake.secretKey },
      as: admin,
    });
    expect(b.status, b.text).toBe(201);
    const row = await latest('backend.change');
    expect(row).toMatchObject({ target: { kind: 'storage_backend', id: b.body.id }, details: { change: 'created', static_keys: true } });
    await t.req('DELETE', `/api/admin/storage-backends/${b.body.id}`, { as: admin });
    expect((await latest('backend.change')).details.change).toBe('deleted');
  });

  it('agents: a bootstrap (refused and accepted) and a credential revocation', async () => {
    const refused = await rawAgent('eid_boot_wrong');
    expect((await refused.reply).type).toBe('auth_error');
    refused.ws.close();
    expect(await latest('agent.bootstrap')).toMatchObject({ outcome: 'failure', actor: { kind: 'anonymous' }, details: { code: 'invalid_bootstrap_token' } });

    const minted = await t.req('POST', '/api/admin/agents/bootstrap', { body: { name: 'audited' }, as: admin });
    secrets.push(minted.body.token);
    expect(await latest('token.create')).toMatchObject({ target: { kind: 'agent_bootstrap_token' }, details: { agent_name: 'audited' } });
    const a = await rawAgent(minted.body.token);
    const ok = await a.reply;
    expect(ok.type).toBe('auth_ok');
    secrets.push(ok.payload.session_token);
    const boot = await latest('agent.bootstrap');
    expect(boot).toMatchObject({ outcome: 'success', actor: { kind: 'agent' }, target: { kind: 'agent' }, replica_id: 'audit-replica' });
    const agentId = boot.target!.id!;
    expect((await t.req('DELETE', `/api/admin/agents/${agentId}/credential`, { as: admin })).status).toBe(204);
    expect(await latest('agent.credential_revoke')).toMatchObject({ actor: { id: admin.id }, target: { kind: 'agent', id: agentId } });
    a.ws.close();
  });

  it('policy rejections: the code and the statement kind, not the SQL text', async () => {
    const sql = "CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 'policy-sql-literal-secret')";
    secrets.push('policy-sql-literal-secret');
    const r = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: null }, as: admin });
    expect(r.status, r.text).toBe(403);
    const row = await latest('policy.reject');
    expect(row).toMatchObject({ outcome: 'failure', actor: { id: admin.id }, target: { kind: 'workspace' }, details: { workspace: 'default', code: 'sql_not_allowed' } });
    // A reader writing is refused by role: audited too.
    const reader = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/default/members/${reader.id}`, { body: { role: 'reader' }, as: admin });
    expect((await t.req('POST', '/api/workspaces/default/queries', { body: { sql: 'CREATE TABLE x (a INT)' }, as: reader })).status).toBe(403);
    expect(await latest('policy.reject')).toMatchObject({ actor: { id: reader.id }, details: { code: 'forbidden', statement_type: expect.any(String) } });
  });
});

describe('refusals and bulk actions', () => {
  it('an admin-only call by a member is access.denied with the actor and what was needed', async () => {
    const member = await newUser(t, admin);
    expect((await t.req('GET', '/api/admin/users', { as: member })).status).toBe(403);
    expect(await latest('access.denied')).toMatchObject({
      outcome: 'failure',
      actor: { kind: 'user', id: member.id },
      target: { kind: 'operation', id: 'list_users' },
      details: { method: 'GET', path: '/api/admin/users', needed: 'admin' },
    });
  });

  it('a sign-in refused before its handler runs (a cross-site form, another content type) leaves a failure row, once', async () => {
    const before = (await audit('?action=auth.login&limit=100')).length;
    const forged = await t.req('POST', '/api/auth/login', { body: { email: 'forged@example.com', password: 'whatever-1' }, headers: { origin: 'http://evil.example' } });
    expect(forged.status).toBe(403);
    expect(await latest('auth.login')).toMatchObject({ outcome: 'failure', actor: { kind: 'anonymous', email: 'forged@example.com' }, details: { status: 403, code: forged.body.error } });
    const text = await t.req('POST', '/api/auth/login', { rawBody: 'email=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(await latest('auth.login')).toMatchObject({ outcome: 'failure', actor: { kind: 'anonymous' }, details: { status: 415 } });
    // A wrong password is refused by the handler, which records it itself: one row, not two.
    const wrong = await t.req('POST', '/api/auth/login', { body: { email: 'forged@example.com', password: 'whatever-2' } });
    expect(wrong.status).toBe(401);
    expect((await audit('?action=auth.login&limit=100')).length).toBe(before + 3);
  });

  it('failed backend registrations and rotations leave a failure row, without the credentials given', async () => {
    const wrong = 'wrong-secret-for-the-audit-lake';
    secrets.push(wrong);
    const body = { name: 'refused', kind: 'object_store', root_uri: 's3://audit-lake/refused/', endpoint: lake.endpoint, access_key_id: lake.accessKey, secret_access_key: wrong };
    const refused = await t.req('POST', '/api/admin/storage-backends', { body, as: admin });
    expect(refused.status, refused.text).toBe(422);
    expect(await latest('backend.change')).toMatchObject({
      outcome: 'failure',
      actor: { id: admin.id },
      details: { operation: 'create_storage_backend', status: 422, code: refused.body.error },
    });
    const ok = await t.req('POST', '/api/admin/storage-backends', { body: { ...body, name: 'rotated', root_uri: 's3://audit-lake/rotated/', secret_access_key: lake.secretKey }, as: admin });
    expect(ok.status, ok.text).toBe(201);
    const rotate = await t.req('PATCH', `/api/admin/storage-backends/${ok.body.id}`, { body: { access_key_id: lake.accessKey, secret_access_key: wrong }, as: admin });
    expect(rotate.status, rotate.text).toBe(422);
    expect(await latest('backend.change')).toMatchObject({
      outcome: 'failure',
      target: { kind: 'storage_backend', id: ok.body.id },
      details: { operation: 'update_storage_backend_credentials', status: 422 },
    });
  });

  it('schedule run-now and semantic and lineage imports are audited, refused or done', async () => {
    const missing = '00000000-0000-4000-8000-000000000001';
    expect((await t.req('POST', `/api/workspaces/default/schedules/${missing}/run`, { as: admin })).status).toBe(404);
    expect(await latest('schedule.run')).toMatchObject({ outcome: 'failure', actor: { id: admin.id }, target: { kind: 'schedule', id: missing }, details: { code: 'not_found' } });

    const yaml = { 'content-type': 'application/yaml' };
    const imported = await t.req('POST', '/api/workspaces/default/semantic/imports/native?reconcile=none', { rawBody: 'version: 1\nmodels: []\n', headers: yaml, as: admin });
    expect(imported.status, imported.text).toBe(200);
    const done = await latest('semantic.import');
    expect(done).toMatchObject({ outcome: 'success', actor: { id: admin.id }, target: { kind: 'workspace' }, details: { operation: 'import_semantic_models' } });
    expect((await t.req('POST', '/api/workspaces/default/semantic/imports/native', { rawBody: 'not: [a, model', headers: yaml, as: admin })).status).toBe(422);
    expect(await latest('semantic.import')).toMatchObject({ outcome: 'failure', target: { id: done.target!.id }, details: { status: 422 } });

    const edges = await t.req('POST', '/api/workspaces/default/lineage/imports', { body: { provider: 'audit-test', edges: [] }, as: admin });
    expect(edges.status, edges.text).toBe(200);
    expect(await latest('lineage.import')).toMatchObject({ outcome: 'success', details: { operation: 'import_lineage' } });
    expect((await t.req('POST', '/api/workspaces/default/lineage/imports/transform', { body: { nodes: 'no' }, as: admin })).status).toBe(422);
    expect(await latest('lineage.import')).toMatchObject({ outcome: 'failure', details: { operation: 'import_lineage_artifact', status: 422 } });
  });
});

describe('reading the trail', () => {
  it('is for admins only; filters by action, outcome, actor and time; pages newest first without repeats', async () => {
    const member = await newUser(t, admin);
    expect((await t.req('GET', '/api/admin/audit', { as: member })).status).toBe(403);
    expect((await t.req('GET', '/api/admin/audit')).status).toBe(401);

    const all = await audit('?limit=1000');
    expect(all.length).toBeGreaterThan(20);
    const times = all.map((r) => Date.parse(r.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await t.req('GET', `/api/admin/audit?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { as: admin });
      expect(r.status).toBe(200);
      seen.push(...r.body.items.map((x: Row) => x.id));
      cursor = r.body.cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((r) => r.id));

    const two = await audit('?action=token.create&action=token.revoke');
    expect(new Set(two.map((r) => r.action))).toEqual(new Set(['token.create', 'token.revoke']));
    const mine = await audit(`?actor_id=${member.id}`);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((r) => r.actor.id === member.id)).toBe(true);
    // Outcome on the server: the failures are exactly the failure rows of the whole trail, paged the same way.
    const failures = await audit('?outcome=failure&limit=1000');
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.map((r) => r.id)).toEqual(all.filter((r) => r.outcome === 'failure').map((r) => r.id));
    const successes = await audit('?outcome=success&limit=1000');
    expect(successes.map((r) => r.id)).toEqual(all.filter((r) => r.outcome === 'success').map((r) => r.id));
    const firstFailurePage = await t.req('GET', '/api/admin/audit?outcome=failure&limit=1', { as: admin });
    expect(firstFailurePage.body.items.map((x: Row) => x.id)).toEqual([failures[0].id]);
    if (failures.length > 1) {
      const next = await t.req('GET', `/api/admin/audit?outcome=failure&limit=1&cursor=${encodeURIComponent(firstFailurePage.body.cursor)}`, { as: admin });
      expect(next.body.items.map((x: Row) => x.id)).toEqual([failures[1].id]);
    }
    const refusedLogins = await audit('?outcome=failure&action=auth.login&limit=1000');
    expect(refusedLogins.every((r) => r.action === 'auth.login' && r.outcome === 'failure')).toBe(true);
    const oldest = all[all.length - 1];
    expect(await audit(`?until=${encodeURIComponent(oldest.at)}`)).toEqual([]);
    expect((await audit(`?since=${encodeURIComponent(oldest.at)}`)).length).toBe(all.length);

    for (const bad of ['?action=nope', '?outcome=refused', '?outcome=', '?actor_id=not-a-uuid', '?since=2024-02-30', '?limit=0', '?since=2025-01-02&until=2025-01-01']) {
      const r = await t.req('GET', `/api/admin/audit${bad}`, { as: admin });
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 422, error: 'unprocessable_content' });
    }
    const forged = await t.req('GET', '/api/admin/audit?cursor=garbage!', { as: admin });
    expect(forged.status).toBe(400);
    expect(forged.body.error).toBe('invalid_cursor');
  });

  it('no row holds any password, token or secret the test used', async () => {
    const rows = await t.database.db.query<{ r: string }>(`select row_to_json(a)::text as r from eider.audit_events a`);
    expect(rows.length).toBeGreaterThan(20);
    const text = rows.map((x) => x.r).join('\n');
    for (const s of secrets) expect(text.includes(s), `a secret (${s.slice(0, 6)}…) is in the audit trail`).toBe(false);
    expect(text).not.toMatch(/eid_pat_|eid_boot_|eid_agent_|argon2/);
  });
});

describe('an action and its row commit together', () => {
  it('when the audit row cannot be written, the token is not issued, the grant not changed, the session not opened', async () => {
    const db = t.database.db;
    const someone = await newUser(t, admin);
    const count = async (table: string) => (await db.query<{ n: number }>(`select count(*)::int as n from eider.${table}`))[0].n;
    // A fault in the audit write, injected in the database itself: every insert fails.
    await db.query(`create function eider.audit_fault() returns trigger language plpgsql as $$ begin raise exception 'audit write failed'; end $$`);
    await db.query(`create trigger audit_fault before insert on eider.audit_events for each row execute function eider.audit_fault()`);
    try {
      const tokens = await count('access_tokens');
      const sessions = await count('web_sessions');
      const issue = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 1 }, as: { cookie: admin.cookie } });
      expect(issue.status).toBe(500);
      expect(issue.body.error).toBe('internal_error');
      expect(await count('access_tokens')).toBe(tokens);

      const member = await t.req('PUT', `/api/workspaces/default/members/${someone.id}`, { body: { role: 'writer' }, as: admin });
      expect(member.status).toBe(500);
      const rows = await db.query(
        `select 1 from eider.workspace_members m join eider.workspaces w on w.id = m.workspace_id where w.slug = 'default' and m.user_id = $1`,
        [someone.id],
      );
      expect(rows).toEqual([]);

      expect((await t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } })).status).toBe(500);
      expect(await count('web_sessions')).toBe(sessions);
    } finally {
      await db.query(`drop trigger audit_fault on eider.audit_events`);
      await db.query(`drop function eider.audit_fault()`);
    }
    // And with the fault gone, the same actions work and are recorded.
    expect((await t.req('POST', '/api/me/pats', { body: { expires_in_days: 1 }, as: { cookie: admin.cookie } })).status).toBe(201);
  });
});

describe('a run-now or an import and its success row commit together', () => {
  it('when the audit row cannot be written, no run is recorded, no model imported, no edge kept; with it, each is', async () => {
    const db = t.database.db;
    // A schedule to fire by hand: its agent registered here (an agent need not be connected for a schedule).
    const minted = await t.req('POST', '/api/admin/agents/bootstrap', { body: { name: 'audited-scheduler' }, as: admin });
    secrets.push(minted.body.token);
    const a = await rawAgent(minted.body.token);
    const ok = await a.reply;
    expect(ok.type).toBe('auth_ok');
    secrets.push(ok.payload.session_token);
    a.ws.close();
    const agentId = (await latest('agent.bootstrap')).target!.id!;
    const saved = await t.req('POST', '/api/workspaces/default/saved-queries', { body: { name: 'audited run-now', sql: 'SELECT 1' }, as: admin });
    expect(saved.status, saved.text).toBe(201);
    const schedule = await t.req('POST', '/api/workspaces/default/schedules', { body: { saved_query_id: saved.body.id, cron: '0 3 * * *', agent_id: agentId }, as: admin });
    expect(schedule.status, schedule.text).toBe(201);
    const runs = async () => (await db.query<{ n: number }>(`select count(*)::int as n from eider.schedule_runs where schedule_id = $1`, [schedule.body.id]))[0].n;
    const models = async () => (await db.query<{ n: number }>(`select count(*)::int as n from eider.semantic_models where slug = 'audited-import'`))[0].n;
    const edges = async () => (await db.query<{ n: number }>(`select count(*)::int as n from eider.lineage_edges where provider = 'audit-tx'`))[0].n;
    const runNow = () => t.req('POST', `/api/workspaces/default/schedules/${schedule.body.id}/run`, { as: admin });
    const importModel = () =>
      t.req('POST', '/api/workspaces/default/semantic/imports/native?reconcile=none', {
        rawBody: 'version: 1\nmodels:\n  - slug: audited-import\n    name: Audited import\n',
        headers: { 'content-type': 'application/yaml' },
        as: admin,
      });
    const importEdge = () =>
      t.req('POST', '/api/workspaces/default/lineage/imports', { body: { provider: 'audit-tx', edges: [{ source: { external: 'crm' }, target: { external: 'bi' } }] }, as: admin });

    // The audit write fails, as a crash between the change and its row would leave it: the change is undone too.
    await db.query(`create function eider.audit_fault() returns trigger language plpgsql as $$ begin raise exception 'audit write failed'; end $$`);
    await db.query(`create trigger audit_fault before insert on eider.audit_events for each row when (new.outcome = 'success') execute function eider.audit_fault()`);
    try {
      expect((await runNow()).status).toBe(500);
      expect(await runs()).toBe(0);
      expect((await importModel()).status).toBe(500);
      expect(await models()).toBe(0);
      expect((await importEdge()).status).toBe(500);
      expect(await edges()).toBe(0);
    } finally {
      await db.query(`drop trigger audit_fault on eider.audit_events`);
      await db.query(`drop function eider.audit_fault()`);
    }

    const fired = await runNow();
    expect(fired.status, fired.text).toBe(202);
    expect(await runs()).toBe(1);
    expect(await latest('schedule.run')).toMatchObject({ outcome: 'success', actor: { id: admin.id }, target: { kind: 'schedule', id: schedule.body.id }, details: { operation: 'run_schedule' } });
    expect((await importModel()).status).toBe(200);
    expect(await models()).toBe(1);
    expect(await latest('semantic.import')).toMatchObject({ outcome: 'success', details: { operation: 'import_semantic_models', created: 1 } });
    expect((await importEdge()).status).toBe(200);
    expect(await edges()).toBe(1);
    expect(await latest('lineage.import')).toMatchObject({ outcome: 'success', details: { operation: 'import_lineage', provider: 'audit-tx', created: 1 } });
    // one success row each: the server writes none of its own for these routes
    for (const action of ['schedule.run', 'semantic.import', 'lineage.import']) {
      const [{ n }] = await db.query<{ n: number }>(`select count(*)::int as n from eider.audit_events where action = $1 and outcome = 'success' and request_id = (select request_id from eider.audit_events where action = $1 order by at desc limit 1)`, [action]);
      expect({ action, n }).toEqual({ action, n: 1 });
    }
  });
});

describe('append-only and retention', () => {
  it('the database refuses updates, deletes and truncation of audit rows', async () => {
    const db = t.database.db;
    await expect(db.query(`update eider.audit_events set action = 'x'`)).rejects.toThrow(/append-only/);
    await expect(db.query(`delete from eider.audit_events`)).rejects.toThrow(/append-only/);
    await expect(db.query(`truncate eider.audit_events`)).rejects.toThrow(/append-only/);
  });

  it('pruning deletes only rows older than the retention', async () => {
    const db = t.database.db;
    await db.query(
      `insert into eider.audit_events (at, action, outcome, actor_kind, replica_id) values
         (now() - interval '400 days', 'auth.login', 'success', 'anonymous', 'old'),
         (now() - interval '10 days', 'auth.login', 'success', 'anonymous', 'recent')`,
    );
    const before = (await db.query<{ n: number }>(`select count(*)::int as n from eider.audit_events`))[0].n;
    const pruned = await db.tx(async (tx) => {
      await tx.query(`set local search_path to eider, public`);
      return pruneAudit(tx, 365);
    });
    expect(pruned).toBe(1);
    const left = await db.query<{ replica_id: string }>(`select replica_id from eider.audit_events where replica_id in ('old', 'recent')`);
    expect(left.map((r) => r.replica_id)).toEqual(['recent']);
    expect((await db.query<{ n: number }>(`select count(*)::int as n from eider.audit_events`))[0].n).toBe(before - 1);
    // The prune's permission ends with its transaction.
    await expect(db.query(`delete from eider.audit_events where replica_id = 'recent'`)).rejects.toThrow(/append-only/);
  });
});
