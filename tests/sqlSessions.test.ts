// SQL sessions against the real stack: a real agent process holds each session's DuckDB connection; statements run
// on it in order with session state kept; the route answers in the shapes the existing Python DB-API connector
// reads (shared/reference), including its v1 error fallback (`detail`); deadlines fire through the reaper.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { secondReplica, setupAdmin, startTestApi, newUser, type Caller } from './support/api.ts';
import { waitForHealthyAgent } from './support/agent.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const UA = 'eider-test-connector/1.2.3 python/3.12';
const SECRET = 'internal-secret-for-the-sessions-test-0123456789';

const world = await stackWithAgent({
  env: {
    SQL_SESSIONS_ENABLED: 'true',
    SQL_SESSION_IDLE_TIMEOUT_S: '6',
    INTERNAL_API_SECRET: SECRET,
    AGENT_HEARTBEAT_INTERVAL_S: '0.5',
    AGENT_HEARTBEAT_TTL_S: '3',
    ACTOR_REAPER_TICK_S: '0.2',
    SQL_SESSION_REAPER_TICK_S: '0.2',
  },
  agent: { name: 'sessions' },
});
const { t, admin, agentId } = world;

const as = (who: Caller = admin) => ({ as: who, headers: { 'user-agent': UA } });

/** What the connector does: open with on_wait_timeout=continue, then poll until open. */
async function open(who: Caller = admin, extra: Record<string, unknown> = {}) {
  const r = await t.req('POST', '/api/workspaces/default/sql/sessions', { ...as(who), body: { agent_id: agentId, wait_timeout_s: 30, on_wait_timeout: 'continue', ...extra } });
  expect([201, 202], r.text).toContain(r.status);
  let s = r.body;
  for (let i = 0; s.status !== 'open' && i < 100; i++) {
    await new Promise((res) => setTimeout(res, 100));
    s = (await t.req('GET', `/api/sql/sessions/${s.id}`, as(who))).body;
  }
  expect(s.status).toBe('open');
  return { res: r, session: s };
}

/** What the connector does per statement: submit (202), poll the query, read its rows (also for DDL). */
async function run(sessionId: string, sql: string, who: Caller = admin) {
  const sub = await t.req('POST', `/api/sql/sessions/${sessionId}/statements`, { ...as(who), body: { sql } });
  expect(sub.status, sub.text).toBe(202);
  const q = (await t.req('GET', `/api/queries/${sub.body.id}?wait_timeout_s=30`, as(who))).body;
  const rows = q.status === 'done' ? (await t.req('GET', `/api/queries/${q.id}/rows?limit=1000`, as(who))).body : null;
  return { q, rows };
}

describe('SQL sessions', () => {
  it('the connector flow: open (201, Location), statements in order with session state, rows also for DDL, close', async () => {
    const { res, session } = await open();
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/sql/sessions/${session.id}`);
    expect(session).toMatchObject({ agent_id: agentId, user_id: admin.id, active_catalog: 'warehouse', client_name: 'eider-test-connector', client_version: '1.2.3', error: null, close_reason: null });
    expect(session.staging_uri).toMatch(new RegExp(`/_staging/${session.id}/$`));

    const ddl = await run(session.id, 'CREATE TEMP TABLE scratch AS SELECT range AS n FROM range(5)');
    expect(ddl.q).toMatchObject({ status: 'done', origin: 'session', session_id: session.id });
    expect(ddl.rows).toMatchObject({ rows: [], total: 0 });
    // The temp table lives on the session's connection.
    expect((await run(session.id, 'SELECT sum(n)::INTEGER AS s FROM scratch')).rows.rows).toEqual([{ s: 10 }]);
    // A safe setting persists too; an unsafe one is refused by the api, never reaching the agent.
    expect((await run(session.id, "SET TimeZone = 'America/New_York'")).q.status).toBe('done');
    expect((await run(session.id, "SELECT CAST(TIMESTAMPTZ '2024-01-01 12:00:00+00' AS VARCHAR) AS at")).rows.rows).toEqual([{ at: '2024-01-01 07:00:00-05' }]);
    const unsafe = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: "SET memory_limit = '100GB'" } });
    expect(unsafe.status).toBe(403);
    expect(unsafe.body.error).toBe('sql_not_allowed');
    // Iceberg reads and writes work as for queries.
    expect((await run(session.id, 'CREATE SCHEMA IF NOT EXISTS sess')).q.status).toBe('done');
    expect((await run(session.id, 'CREATE TABLE sess.t AS SELECT range AS id FROM range(3)')).q.status).toBe('done');
    expect((await run(session.id, 'INSERT INTO sess.t SELECT n FROM scratch')).q).toMatchObject({ status: 'done', row_count: 5 });
    expect((await run(session.id, 'SELECT count(*)::INTEGER AS c FROM sess.t')).rows.rows).toEqual([{ c: 8 }]);

    const list = await t.req('GET', `/api/sql/sessions/${session.id}/statements`, as());
    expect(list.status).toBe(200);
    expect(list.body.items.length).toBeGreaterThanOrEqual(8);
    expect(list.body.items.every((x: any) => x.session_id === session.id)).toBe(true);
    expect((await t.req('GET', '/api/workspaces/default/sql/sessions?status=open', as())).body.items.map((x: any) => x.id)).toContain(session.id);

    expect((await t.req('DELETE', `/api/sql/sessions/${session.id}`, as())).status).toBe(204);
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body.status, { timeout: 10_000 }).toBe('closed');
    const after = (await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body;
    expect(after).toMatchObject({ close_reason: 'client' });
    expect(after.closed_at).not.toBeNull();
    expect((await t.req('DELETE', `/api/sql/sessions/${session.id}`, as())).status).toBe(204);
    // What the connector falls back on for errors (`detail`), and the code it reads.
    const late = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: 'SELECT 1' } });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ error: 'session_not_open', detail: { error: 'session_not_open' } });
  });

  it('SET VARIABLE: a session keeps its variables for getvariable(), another session does not see them, a query may not set one', async () => {
    const a = (await open()).session;
    const b = (await open()).session;
    expect((await run(a.id, "SET VARIABLE cutoff = 3")).q.status).toBe('done');
    expect((await run(a.id, "SET VARIABLE label = 'low'")).q.status).toBe('done');
    expect((await run(a.id, "SELECT count(*)::INTEGER AS n, getvariable('label') AS label FROM range(10) WHERE range < getvariable('cutoff')")).rows?.rows).toEqual([{ n: 3, label: 'low' }]);
    expect((await run(b.id, "SELECT getvariable('cutoff') AS v")).rows?.rows).toEqual([{ v: null }]);
    expect((await run(a.id, 'RESET VARIABLE cutoff')).q.status).toBe('done');
    expect((await run(a.id, "SELECT getvariable('cutoff') AS v")).rows?.rows).toEqual([{ v: null }]);
    const computed = await t.req('POST', `/api/sql/sessions/${a.id}/statements`, { ...as(), body: { sql: 'SET VARIABLE x = (SELECT 1)' } });
    expect(computed.status).toBe(403);
    expect(computed.body.error).toBe('sql_not_allowed');
    const query = await t.req('POST', '/api/workspaces/default/queries', { ...as(), body: { sql: 'SET VARIABLE x = 1', agent_id: agentId } });
    expect(query.status).toBe(403);
    expect(query.body.message).toMatch(/only allowed in SQL sessions/);
    await t.req('DELETE', `/api/sql/sessions/${a.id}`, as());
    await t.req('DELETE', `/api/sql/sessions/${b.id}`, as());
  });

  it('two sessions on one agent keep separate state', async () => {
    const a = (await open()).session;
    const b = (await open()).session;
    // Metrics count them across the cluster (read from the database at scrape time).
    const metrics = (await t.req('GET', '/api/metrics')).text;
    expect(Number(/eider_sql_sessions\{status="open"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
    expect(Number(/eider_sql_sessions_ended\{reason="client"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    await run(a.id, 'CREATE TEMP TABLE mine AS SELECT 1 AS x');
    const other = await run(b.id, 'SELECT * FROM mine');
    expect(other.q.status).toBe('failed');
    expect(other.q.error).toMatch(/mine/);
    expect((await run(a.id, 'SELECT x FROM mine')).rows.rows).toEqual([{ x: 1 }]);
    await t.req('DELETE', `/api/sql/sessions/${a.id}`, as());
    // A query-admin closing another user's session is recorded as such.
    const member = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/default/members/${member.id}`, { body: { role: 'reader' }, as: admin });
    await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { user_id: member.id, tier: 'use' }, as: admin });
    const theirs = (await open(member)).session;
    expect((await t.req('GET', '/api/workspaces/default/sql/sessions?status=open', as(member))).body.items.map((x: any) => x.id)).toEqual([theirs.id]);
    expect((await t.req('DELETE', `/api/sql/sessions/${theirs.id}`, as())).status).toBe(204);
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${theirs.id}`, as())).body.close_reason, { timeout: 10_000 }).toBe('admin');
    await t.req('DELETE', `/api/sql/sessions/${b.id}`, as());
  });

  it('a statement waited for answers 200 with its first page; cancel stops a running one', async () => {
    const { session } = await open();
    const waited = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: 'SELECT range AS n FROM range(300)', wait_timeout_s: 20, first_page_limit: 7 } });
    expect(waited.status, waited.text).toBe(200);
    expect(waited.body.status).toBe('done');
    expect(waited.body.first_page.rows).toHaveLength(7);
    expect(waited.body.first_page.total).toBe(300);
    const ddl = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: 'CREATE TEMP TABLE x AS SELECT 1 AS a', wait_timeout_s: 20 } });
    expect(ddl.status).toBe(200);
    expect(ddl.body).not.toHaveProperty('first_page');

    const slow = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: 'SELECT count(*) FROM range(10000000000) a, range(1000) b' } });
    expect(slow.status).toBe(202);
    await expect.poll(async () => (await t.req('GET', `/api/queries/${slow.body.id}`, as())).body.status, { timeout: 15_000 }).toBe('running');
    // The agent is held still (shorter than the heartbeat TTL): it cannot confirm the cancel yet, so the statement
    // is not reported cancelled while it may still run; once the agent stops it, it is.
    world.agent.child.kill('SIGSTOP');
    try {
      expect((await t.req('DELETE', `/api/queries/${slow.body.id}`, as())).status).toBe(204);
      // The cancel was taken (the statement's actor is cancelling), yet the statement still reads as running.
      await expect.poll(async () => (await t.req('GET', `/api/admin/actors/statement/${slow.body.id}`, as())).body.state, { timeout: 5_000 }).toBe('cancelling');
      expect((await t.req('GET', `/api/queries/${slow.body.id}`, as())).body.status).toBe('running');
    } finally {
      world.agent.child.kill('SIGCONT');
    }
    await expect.poll(async () => (await t.req('GET', `/api/queries/${slow.body.id}`, as())).body.status, { timeout: 15_000 }).toBe('cancelled');
    expect(world.agent.logs()).toMatch(new RegExp(`"statementId":"${slow.body.id}"[^\\n]*"code":"cancelled"`));
    // The session is still usable after a cancel.
    expect((await run(session.id, 'SELECT a FROM x')).rows.rows).toEqual([{ a: 1 }]);
    await t.req('DELETE', `/api/sql/sessions/${session.id}`, as());
  });

  it('staging files: presigned URLs, COPY … TO a staging file, a staged Parquet file loaded into an Iceberg table', async () => {
    const { session } = await open();
    const stage = (files: string[]) => t.req('POST', `/api/sql/sessions/${session.id}/staging-files`, { ...as(), body: { files } });
    const staged = await stage(['out.parquet', 'in.parquet']);
    expect(staged.status, staged.text).toBe(201);
    expect(Date.parse(staged.body.expires_at)).toBeGreaterThan(Date.now());
    const [out, inp] = staged.body.files;
    expect(out).toMatchObject({ name: 'out.parquet', key: `${session.staging_uri}out.parquet` });
    expect(out.put_url).toMatch(/^http/);
    for (const bad of [['a/b'], ['..'], ['.'], ['x\\y'], ['']]) expect((await stage(bad)).status, bad[0]).toBe(422);

    // The agent writes the staging file (uploading it through the presigned URL it was given)…
    const copied = await run(session.id, `COPY (SELECT range AS id, 'v' || range AS v FROM range(10)) TO '${out.key}' (FORMAT parquet)`);
    expect(copied.q.status, copied.q.error).toBe('done');
    const file = await fetch(out.get_url);
    expect(file.status).toBe(200);
    // A browser saves a staged file, never renders it.
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="out.parquet"');
    expect(file.headers.get('content-type')).toBe('application/octet-stream');
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(Buffer.from(bytes.subarray(0, 4)).toString()).toBe('PAR1');
    // A PUT URL is no copy of anything else: not of the catalog's tables (outside the session's key), nor by an added header.
    const copy = await fetch(inp.put_url, { method: 'PUT', headers: { 'x-amz-copy-source': `/${new URL(out.key).host}${new URL(out.key).pathname}` } });
    expect(copy.status).toBe(403);
    expect((await fetch(inp.get_url)).status).toBe(404);
    // …and the client stages a file of its own, which the session loads and writes into an Iceberg table.
    expect((await fetch(inp.put_url, { method: 'PUT', body: bytes })).status).toBe(200);
    await run(session.id, 'CREATE TEMP TABLE loaded (id BIGINT, v VARCHAR)');
    const load = await run(session.id, `COPY loaded FROM '${inp.key}' (FORMAT parquet)`);
    expect(load.q.status, load.q.error).toBe('done');
    await run(session.id, 'CREATE SCHEMA IF NOT EXISTS sess');
    expect((await run(session.id, 'CREATE TABLE sess.staged AS SELECT * FROM loaded')).q.status).toBe('done');
    expect((await run(session.id, 'SELECT count(*)::INTEGER AS n, sum(id)::INTEGER AS s FROM sess.staged')).rows.rows).toEqual([{ n: 10, s: 45 }]);
    // Outside the staging prefix, COPY is refused at the api.
    const outside = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: "COPY loaded TO 's3://warehouse/elsewhere/x.parquet'" } });
    expect(outside.status).toBe(403);
    await t.req('DELETE', `/api/sql/sessions/${session.id}`, as());
    await expect.poll(async () => (await stage(['late.csv'])).status, { timeout: 10_000 }).toBe(409);
    // The ended session's URLs are revoked (a PUT lands nowhere) and its staged files removed.
    await expect.poll(async () => (await fetch(out.get_url)).status, { timeout: 10_000 }).toBe(403);
    expect(await (await fetch(inp.get_url)).text()).toContain('revoked');
    expect((await fetch(inp.put_url, { method: 'PUT', body: 'late' })).status).toBe(403);
    const area = new URL(session.staging_uri);
    await expect
      .poll(async () => (await t.stack.s3.send(new ListObjectsV2Command({ Bucket: area.host, Prefix: area.pathname.slice(1) }))).KeyCount ?? 0, { timeout: 10_000 })
      .toBe(0);
  });

  it('staging files read with read_parquet / read_csv in the session; refused outside it, of another session and of any other path', async () => {
    const { session } = await open();
    const staged = await t.req('POST', `/api/sql/sessions/${session.id}/staging-files`, { ...as(), body: { files: ['rows.parquet', 'rows.csv'] } });
    expect(staged.status, staged.text).toBe(201);
    const [pq, csv] = staged.body.files;
    // The client makes its Parquet file with DuckDB of its own, and writes the CSV by hand.
    const dir = mkdtempSync(join(tmpdir(), 'eider-staging-'));
    const local = await DuckDBInstance.create(':memory:');
    const conn = await local.connect();
    try {
      await conn.run(`COPY (SELECT range AS id, 'p' || range AS v FROM range(4)) TO '${join(dir, 'rows.parquet')}' (FORMAT parquet)`);
    } finally {
      conn.closeSync();
      local.closeSync();
    }
    expect((await fetch(pq.put_url, { method: 'PUT', body: readFileSync(join(dir, 'rows.parquet')) })).status).toBe(200);
    expect((await fetch(csv.put_url, { method: 'PUT', body: 'id,v\n1,a\n2,b\n3,c\n' })).status).toBe(200);
    rmSync(dir, { recursive: true, force: true });

    const parquet = await run(session.id, `SELECT id::INTEGER AS id, v FROM read_parquet('${pq.key}') ORDER BY id`);
    expect(parquet.q.status, parquet.q.error).toBe('done');
    expect(parquet.rows.rows).toEqual([0, 1, 2, 3].map((i) => ({ id: i, v: `p${i}` })));
    const text = await run(session.id, `SELECT id::INTEGER AS id, v FROM read_csv('${csv.key}', header = true) ORDER BY id`);
    expect(text.q.status, text.q.error).toBe('done');
    expect(text.rows.rows).toEqual([{ id: 1, v: 'a' }, { id: 2, v: 'b' }, { id: 3, v: 'c' }]);
    // Both at once, into a temp table, as a loader does.
    const both = await run(session.id, `CREATE TEMP TABLE mixed AS SELECT id::INTEGER AS id FROM read_parquet(['${pq.key}']) UNION ALL SELECT id FROM read_csv('${csv.key}')`);
    expect(both.q.status, both.q.error).toBe('done');
    expect((await run(session.id, 'SELECT count(*)::INTEGER AS n FROM mixed')).rows.rows).toEqual([{ n: 7 }]);

    const refused = async (res: Promise<{ status: number; body: any; text: string }>) => {
      const r = await res;
      expect(r.status, r.text).toBe(403);
      expect(r.body.error).toBe('sql_not_allowed');
    };
    const inSession = (id: string, sql: string) => t.req('POST', `/api/sql/sessions/${id}/statements`, { ...as(), body: { sql } });
    // Outside a session: a query may not read the staged file.
    await refused(t.req('POST', '/api/workspaces/default/queries', { body: { sql: `SELECT * FROM read_parquet('${pq.key}')`, agent_id: agentId }, as: admin }));
    // Another session may not read this session's files (opened now: the idle timeout is short).
    const other = (await open()).session;
    await refused(inSession(other.id, `SELECT * FROM read_parquet('${pq.key}')`));
    await refused(inSession(other.id, `SELECT * FROM read_csv('${csv.key}')`));
    // Nor any other path, scheme, glob or list that leaves the prefix.
    for (const path of [
      's3://warehouse/warehouse/data/x.parquet',
      `${session.staging_uri}*.parquet`,
      `${session.staging_uri}../${other.id}/rows.parquet`,
      '/etc/passwd',
      `file://${session.staging_uri}rows.parquet`,
    ]) {
      await refused(inSession(session.id, `SELECT * FROM read_parquet('${path}')`));
    }
    await refused(inSession(session.id, `SELECT * FROM read_csv(['${csv.key}', '/etc/passwd'])`));
    await refused(inSession(session.id, `SELECT * FROM read_csv('${session.staging_uri}' || 'rows.csv')`));
    await t.req('DELETE', `/api/sql/sessions/${session.id}`, as());
    await t.req('DELETE', `/api/sql/sessions/${other.id}`, as());
  });

  it('a session naming no agent opens on a connected agent its user may use (DB-API clients omit it); with none, 503 agent_unavailable', async () => {
    const { session } = await open(admin, { agent_id: undefined });
    expect(session.agent_id).toBe(agentId);
    expect((await run(session.id, 'SELECT 1 AS one')).rows.rows).toEqual([{ one: 1 }]);
    await t.req('DELETE', `/api/sql/sessions/${session.id}`, as());
    // A member with no tier on the (restricted) agent has nothing to be given.
    const before = (await t.req('GET', `/api/admin/agents/${agentId}/access`, { as: admin })).body.access_mode;
    const member = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/default/members/${member.id}`, { body: { role: 'writer' }, as: admin });
    await t.req('PATCH', `/api/admin/agents/${agentId}/access-mode`, { body: { access_mode: 'restricted' }, as: admin });
    try {
      const none = await t.req('POST', '/api/workspaces/default/sql/sessions', { ...as(member), body: { wait_timeout_s: 5 } });
      expect(none.status, none.text).toBe(503);
      expect(none.body.error).toBe('agent_unavailable');
    } finally {
      await t.req('PATCH', `/api/admin/agents/${agentId}/access-mode`, { body: { access_mode: before }, as: admin });
    }
  });

  it('refuses what the spec refuses: 422 limits, another user’s session, unauthenticated', async () => {
    const open422 = async (body: Record<string, unknown>) => (await t.req('POST', '/api/workspaces/default/sql/sessions', { ...as(), body })).body;
    expect(await open422({ agent_id: agentId, wait_timeout_s: 121 })).toMatchObject({ error: 'unprocessable_content' });
    expect(await open422({ agent_id: agentId, wait_timeout_s: 0, on_wait_timeout: 'cancel' })).toMatchObject({ error: 'unprocessable_content' });
    expect(await open422({ agent_id: agentId, on_wait_timeout: 'later' })).toMatchObject({ error: 'unprocessable_content' });
    // Not open within the wait: 202 to poll (continue), or 503 compute_starting with Retry-After (cancel).
    const later = await t.req('POST', '/api/workspaces/default/sql/sessions', { ...as(), body: { agent_id: agentId, wait_timeout_s: 0, on_wait_timeout: 'continue' } });
    expect(later.status).toBe(202);
    expect(['opening', 'open']).toContain(later.body.status);
    expect(later.headers.get('location')).toBe(`/api/sql/sessions/${later.body.id}`);
    // A warm agent may open a session within even 1 ms: such a session is closed and the open tried again.
    let gaveUp = await t.req('POST', '/api/workspaces/default/sql/sessions', { ...as(), body: { agent_id: agentId, wait_timeout_s: 0.001, on_wait_timeout: 'cancel' } });
    for (let attempt = 1; gaveUp.status === 201 && attempt < 20; attempt++) {
      await t.req('DELETE', `/api/sql/sessions/${gaveUp.body.id}`, as());
      gaveUp = await t.req('POST', '/api/workspaces/default/sql/sessions', { ...as(), body: { agent_id: agentId, wait_timeout_s: 0.001, on_wait_timeout: 'cancel' } });
    }
    expect(gaveUp.status).toBe(503);
    expect(gaveUp.body.error).toBe('compute_starting');
    expect(gaveUp.headers.get('retry-after')).toBe('5');
    await t.req('DELETE', `/api/sql/sessions/${later.body.id}`, as());
    const { session } = await open();
    const stmt = (body: Record<string, unknown>, who: Caller = admin) => t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(who), body });
    expect((await stmt({ sql: 'SELECT 1', wait_timeout_s: 61 })).status).toBe(422);
    expect((await stmt({ sql: 'SELECT 1', wait_timeout_s: 5, first_page_limit: 201 })).status).toBe(422);
    expect((await stmt({ sql: 'SELEC 1' })).status).toBe(400);
    const someone = await newUser(t, admin);
    expect((await t.req('GET', `/api/sql/sessions/${session.id}`, as(someone))).status).toBe(404);
    expect((await stmt({ sql: 'SELECT 1' }, someone)).status).toBe(404);
    expect((await t.req('DELETE', `/api/sql/sessions/${session.id}`, as(someone))).status).toBe(404);
    expect((await t.req('GET', `/api/sql/sessions/${session.id}`)).status).toBe(401);
    expect((await t.req('GET', '/api/sql/sessions/not-a-uuid', as())).status).toBe(404);
    expect((await t.req('GET', '/api/workspaces/default/sql/sessions?status=nope', as())).status).toBe(422);
    await t.req('DELETE', `/api/sql/sessions/${session.id}`, as());
  });

  it('a session’s statements are as private as the session: status, rows, profile, history and cancel are its owner’s and a query-admin’s', async () => {
    const member = async (role: 'reader' | 'writer') => {
      const u = await newUser(t, admin);
      await t.req('PUT', `/api/workspaces/default/members/${u.id}`, { body: { role }, as: admin });
      await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { user_id: u.id, tier: 'use' }, as: admin });
      return u;
    };
    const [owner, writer, reader] = [await member('writer'), await member('writer'), await member('reader')];
    const { session } = await open(owner);
    const done = await run(session.id, 'SELECT 42 AS secret', owner);
    expect(done.rows.rows).toEqual([{ secret: 42 }]);
    const slow = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(owner), body: { sql: 'SELECT count(*) FROM range(10000000000) a, range(1000) b' } });
    expect(slow.status).toBe(202);
    for (const other of [writer, reader]) {
      for (const path of [`/api/queries/${done.q.id}`, `/api/queries/${done.q.id}/rows`, `/api/queries/${done.q.id}/profile`]) {
        expect((await t.req('GET', path, as(other))).status, path).toBe(404);
      }
      expect((await t.req('POST', `/api/queries/${slow.body.id}/cancel`, as(other))).status).toBe(404);
      expect((await t.req('DELETE', `/api/queries/${slow.body.id}`, as(other))).status).toBe(404);
      const listed = async (qs: string) => (await t.req('GET', `/api/workspaces/default/queries?${qs}`, as(other))).body.items.map((x: any) => x.id);
      expect(await listed(`session_id=${session.id}`)).toEqual([]);
      expect(await listed('origin=session&limit=1000')).not.toContain(done.q.id);
      expect(await listed('limit=1000')).not.toContain(done.q.id);
    }
    expect((await t.req('GET', `/api/queries/${slow.body.id}`, as(owner))).body.status).not.toBe('cancelled');
    // Its owner and a query-admin read it, list it and cancel it.
    expect((await t.req('GET', `/api/workspaces/default/queries?session_id=${session.id}`, as(owner))).body.items.map((x: any) => x.id)).toContain(done.q.id);
    expect((await t.req('GET', `/api/workspaces/default/queries?session_id=${session.id}`, as(admin))).body.items.map((x: any) => x.id)).toContain(done.q.id);
    expect((await t.req('GET', `/api/queries/${done.q.id}/rows`, as(admin))).body.rows).toEqual([{ secret: 42 }]);
    // The agent's profile of the statement came with its end and is kept on its row.
    const profile = await t.req('GET', `/api/queries/${done.q.id}/profile`, as(owner));
    expect(profile.status, profile.text).toBe(200);
    expect(JSON.stringify(profile.body)).toContain('"operator');
    expect((await t.req('POST', `/api/queries/${slow.body.id}/cancel`, as(admin))).status).toBe(202);
    await expect.poll(async () => (await t.req('GET', `/api/queries/${slow.body.id}`, as(owner))).body.status, { timeout: 15_000 }).toBe('cancelled');
    await t.req('DELETE', `/api/sql/sessions/${session.id}`, as(owner));

    // An ordinary query keeps the workspace's rule: members read it, a writer cancels it, a reader may not.
    const sub = async () => {
      const r = await t.req('POST', '/api/workspaces/default/queries', { ...as(owner), body: { sql: 'SELECT count(*) FROM range(10000000000) a, range(1000) b', agent_id: agentId } });
      expect(r.status, r.text).toBe(202);
      return r.body.id as string;
    };
    const q = await sub();
    expect((await t.req('GET', `/api/queries/${q}`, as(reader))).status).toBe(200);
    expect((await t.req('POST', `/api/queries/${q}/cancel`, as(reader))).status).toBe(403);
    expect((await t.req('POST', `/api/queries/${q}/cancel`, as(writer))).status).toBe(202);
    await expect.poll(async () => (await t.req('GET', `/api/queries/${q}`, as(owner))).body.status, { timeout: 15_000 }).toBe('cancelled');

    // Sending a statement into it: another member finds no such session, a query-admin may not; its owner, once
    // out of the workspace, finds no session either (the session and the role are read with the credential).
    const { session: second } = await open(owner);
    const send = (who: Caller) => t.req('POST', `/api/sql/sessions/${second.id}/statements`, { ...as(who), body: { sql: 'SELECT 1', wait_timeout_s: 5 } });
    expect((await send(writer)).status).toBe(404);
    expect((await send(admin)).status).toBe(403);
    expect((await send(owner)).status).toBe(200);
    await t.req('DELETE', `/api/workspaces/default/members/${owner.id}`, { as: admin });
    const outside = await send(owner);
    expect(outside.status, outside.text).toBe(404);
    expect(outside.body.error).toBe('not_found');
  });

  it('deactivating a user closes their sessions and cancels what runs in them; the session reaper closes any left open', async () => {
    const member = async () => {
      const u = await newUser(t, admin);
      await t.req('PUT', `/api/workspaces/default/members/${u.id}`, { body: { role: 'writer' }, as: admin });
      await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { user_id: u.id, tier: 'use' }, as: admin });
      return u;
    };
    const leaver = await member();
    const { session } = await open(leaver);
    const slow = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(leaver), body: { sql: 'SELECT count(*) FROM range(10000000000) a, range(1000) b' } });
    expect(slow.status).toBe(202);
    expect((await t.req('PATCH', `/api/admin/users/${leaver.id}`, { body: { is_active: false }, as: admin })).status).toBe(200);
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body.status, { timeout: 15_000 }).toBe('closed');
    expect((await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body.close_reason).toBe('admin');
    await expect.poll(async () => (await t.req('GET', `/api/queries/${slow.body.id}`, as())).body.status, { timeout: 15_000 }).toBe('cancelled');

    // A replica that died between the deactivation's commit and the close: the reaper finds the session.
    const other = await member();
    const second = (await open(other)).session;
    await t.database.db.query(`update eider.users set is_active = false where id = $1`, [other.id]);
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${second.id}`, as())).body.status, { timeout: 15_000 }).toBe('closed');
    expect((await t.req('GET', `/api/sql/sessions/${second.id}`, as())).body.close_reason).toBe('admin');
  });

  it('USE makes an attached catalog current; ATTACH of one works; BEGIN … ROLLBACK undoes temp-table work and refuses Iceberg writes', async () => {
    const backends = (await t.req('GET', '/api/admin/storage-backends', as())).body as { id: string; name: string }[];
    const created = await t.req('POST', '/api/catalogs', { ...as(), body: { slug: 'lake', storage_backend_id: backends.find((b) => b.name === 'bundled')!.id } });
    expect(created.status, created.text).toBe(201);
    expect((await t.req('PUT', '/api/workspaces/default/catalogs/lake', { ...as(), body: { make_default: false } })).status).toBe(201);
    const { session } = await open();
    const ok = async (sql: string) => {
      const r = await run(session.id, sql);
      expect(r.q.status, `${sql}: ${r.q.error}`).toBe('done');
      return r.rows?.rows;
    };
    // USE: unqualified names resolve in the catalog made current, for the grant check and on the agent alike.
    await ok('USE lake');
    await ok('CREATE TABLE used_here AS SELECT 7 AS v');
    expect((await t.req('GET', '/api/workspaces/default/catalogs/lake/schemas/main/tables/used_here', as())).status).toBe(200);
    expect((await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/main/tables/used_here', as())).status).toBe(404);
    await ok('USE warehouse');
    expect((await run(session.id, 'SELECT v FROM used_here')).q.status).toBe('failed');
    expect(await ok('SELECT v FROM lake.main.used_here')).toEqual([{ v: 7 }]);
    for (const refused of ['USE memory', 'USE lake.main', 'USE lake; SELECT 1']) {
      const r = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: refused } });
      expect(r.status, refused).toBe(403);
    }
    // ATTACH of an attached catalog is carried out by the agent's bridge: no file is opened, no local path shown.
    await ok("ATTACH 'lake'");
    await ok("ATTACH 'warehouse' AS warehouse (TYPE iceberg, READ_ONLY)");
    // An error about a file names it as the user did: a missing staging file by its storage URI.
    const missing = `${session.staging_uri}absent.csv`;
    const failed = await run(session.id, `SELECT * FROM read_csv('${missing}')`);
    expect(failed.q.status).toBe('failed');
    expect(failed.q.error).toContain(missing);
    for (const local of [process.cwd(), tmpdir(), '/staging/']) expect(failed.q.error).not.toContain(local);

    // Transactions: temporary tables roll back; a change to a catalog table is refused inside one, clearly.
    await ok('CREATE TEMP TABLE tx (x INTEGER)');
    await ok('BEGIN');
    await ok('INSERT INTO tx VALUES (1)');
    await ok('ROLLBACK');
    expect(await ok('SELECT count(*)::INTEGER AS n FROM tx')).toEqual([{ n: 0 }]);
    await ok('BEGIN TRANSACTION');
    await ok('INSERT INTO tx VALUES (2)');
    await ok('COMMIT');
    expect(await ok('SELECT x FROM tx')).toEqual([{ x: 2 }]);
    await ok('BEGIN');
    const inside = await run(session.id, 'INSERT INTO lake.main.used_here VALUES (8)');
    expect(inside.q.status).toBe('failed');
    expect(inside.q.error).toMatch(/not allowed inside a transaction/);
    await ok('ROLLBACK');
    await ok('INSERT INTO lake.main.used_here VALUES (8)');
    expect(await ok('SELECT v FROM lake.main.used_here ORDER BY v')).toEqual([{ v: 7 }, { v: 8 }]);
    const script = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: 'BEGIN; INSERT INTO tx VALUES (3); COMMIT' } });
    expect(script.status).toBe(403);
    // Query mode keeps its rule.
    for (const sql of ['USE lake', 'BEGIN', 'COMMIT', 'ROLLBACK', "ATTACH 'lake'"]) {
      expect((await t.req('POST', '/api/workspaces/default/queries', { ...as(), body: { sql, agent_id: agentId } })).status, sql).toBe(403);
    }
    await t.req('DELETE', `/api/sql/sessions/${session.id}`, as());
  });

  it('an idle session is closed by the reaper (close_reason idle), and a statement keeps it alive', async () => {
    const { session } = await open();
    // Time itself must pass (the idle timeout): each wait is more than half of it, the two together more than all of it.
    await new Promise((r) => setTimeout(r, 3_500));
    expect((await run(session.id, 'SELECT 1 AS one')).q.status).toBe('done');
    await new Promise((r) => setTimeout(r, 3_500));
    expect((await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body.status).toBe('open');
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body.status, { timeout: 15_000, interval: 250 }).toBe('closed');
    expect((await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body.close_reason).toBe('idle');
  });

  it('a statement that waits: its small result comes with its end and stays on its row (pages without the agent file); a large one stays on the agent', async () => {
    const { session } = await open();
    const waited = async (sql: string) => {
      const r = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql, wait_timeout_s: 30, first_page_limit: 2 } });
      expect(r.status, r.text).toBe(200);
      return r.body;
    };
    const held = async (id: string) => (await t.database.db.query<{ n: number | null }>(`select octet_length(result_inline) as n from queries where id = $1`, [id]))[0].n;
    const small = await waited(`SELECT i AS n, 9007199254740993::BIGINT + i AS big FROM range(3) t(i)`);
    expect(small).toMatchObject({ status: 'done', row_count: 3, columns: ['n', 'big'] });
    expect(small.first_page.rows).toEqual([
      { n: 0, big: '9007199254740993' },
      { n: 1, big: '9007199254740994' },
    ]);
    expect(await held(small.id)).toBeGreaterThan(0);
    // The bytes are the row's, not the history's.
    const [h] = await t.database.db.query<{ payload: unknown }>(`select event_payload as payload from actor_transitions where kind = 'statement' and id = $1 and event = 'done'`, [small.id]);
    expect(JSON.stringify(h.payload)).not.toContain('resultInline');
    rmSync(join(world.agent.dataDir, 'results', `${small.id}.parquet`));
    const rest = await t.req('GET', `/api/queries/${small.id}/rows?offset=2`, as());
    expect(rest.status, rest.text).toBe(200);
    expect(rest.body.rows).toEqual([{ n: 2, big: '9007199254740995' }]);
    // Above RESULT_INLINE_MAX_BYTES (64 KiB): the first page comes from the agent's file.
    const large = await waited(`SELECT md5(i::VARCHAR) AS h FROM range(20000) t(i)`);
    expect(await held(large.id)).toBeNull();
    expect(large.first_page.rows).toHaveLength(2);
    expect(large.first_page.total).toBe(20000);
    await t.req('DELETE', `/api/sql/sessions/${session.id}`, as());
  });

  it('works through a replica that does not hold the agent: open, statements, rows, close', async () => {
    const other = await secondReplica(t, 'other-replica', { SQL_SESSIONS_ENABLED: 'true', INTERNAL_API_SECRET: SECRET });
    try {
      const via = (method: string, path: string, body?: unknown) => other.req(method, path, { body, as: admin, headers: { 'user-agent': UA } });
      const opened = await via('POST', '/api/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 30 });
      expect(opened.status, opened.text).toBe(201);
      const made = await via('POST', `/api/sql/sessions/${opened.body.id}/statements`, { sql: 'CREATE TEMP TABLE far AS SELECT 5 AS five', wait_timeout_s: 30 });
      expect(made.status, made.text).toBe(200);
      const read = await via('POST', `/api/sql/sessions/${opened.body.id}/statements`, { sql: 'SELECT five FROM far', wait_timeout_s: 30 });
      expect(read.body.status, read.text).toBe('done');
      expect(read.body.first_page?.rows, read.text).toEqual([{ five: 5 }]);
      expect((await via('GET', `/api/queries/${read.body.id}/rows`)).body.rows).toEqual([{ five: 5 }]);
      expect((await via('DELETE', `/api/sql/sessions/${opened.body.id}`)).status).toBe(204);
      await expect.poll(async () => (await via('GET', `/api/sql/sessions/${opened.body.id}`)).body.status, { timeout: 10_000 }).toBe('closed');
    } finally {
      await other.close();
    }
  });

  it('the agent going away fails its sessions (agent_disconnect), and the next statement is 409', async () => {
    const { session } = await open();
    await world.agent.kill();
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body.status, { timeout: 20_000, interval: 250 }).toBe('failed');
    expect((await t.req('GET', `/api/sql/sessions/${session.id}`, as())).body.close_reason).toBe('agent_disconnect');
    const r = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { ...as(), body: { sql: 'SELECT 1' } });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('session_not_open');
    await world.restartAgent();
    await waitForHealthyAgent(t, admin, 'sessions');
  });
});

describe('switched off (the default)', () => {
  it('every session route answers 404 "not enabled"', async () => {
    const off = await startTestApi();
    try {
      const who = await setupAdmin(off);
      for (const [method, path] of [
        ['POST', '/api/workspaces/default/sql/sessions'],
        ['GET', '/api/workspaces/default/sql/sessions'],
        ['GET', '/api/sql/sessions/00000000-0000-4000-8000-000000000000'],
        ['POST', '/api/sql/sessions/00000000-0000-4000-8000-000000000000/statements'],
        ['DELETE', '/api/sql/sessions/00000000-0000-4000-8000-000000000000'],
      ] as const) {
        const r = await off.req(method, path, { as: who, ...(method === 'POST' ? { body: {} } : {}) });
        expect(r.status, path).toBe(404);
        expect(r.body.message).toContain('not enabled');
      }
    } finally {
      await off.close();
    }
  });
});
