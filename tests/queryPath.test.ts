// The query path end to end: a real agent process dials the api over a real WebSocket, runs SQL in DuckDB,
// and the api reads the result file back over HTTP.
import { describe, expect, it } from 'vitest';
import { newUser, runDone, type Caller } from './support/api.ts';
import { agentForTest, waitForHealthyAgent } from './support/agent.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const BOOT = 'test-bootstrap-token-for-the-query-path';

const world = await stackWithAgent({
  env: { AGENT_BOOTSTRAP_TOKEN: BOOT, AGENT_HEARTBEAT_INTERVAL_S: '0.5', AGENT_HEARTBEAT_TTL_S: '3', ACTOR_REAPER_TICK_S: '0.2' },
  agent: { name: 'alpha' },
});
const { t, admin, agentId } = world;

async function run(sql: string, as: Caller = admin, extra: Record<string, unknown> = {}) {
  const submit = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: agentId, ...extra }, as });
  if (submit.status !== 202) return { submit, final: undefined as any };
  const final = await t.req('GET', `/api/queries/${submit.body.id}?wait_timeout_s=30`, { as });
  return { submit, final: final.body };
}

describe('agent registration', () => {
  it('registers with capabilities, healthy, and the bootstrap token is single use', async () => {
    const a = await t.req('GET', `/api/admin/agents/${agentId}`, { as: admin });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ name: 'alpha', status: 'healthy', access_tier: 'admin', access_mode: 'open' });
    expect(a.body.capabilities.engine_version).toMatch(/\d+\.\d+/);
    const [row] = await t.database.db.query<{ session_token_hash: string }>(`select session_token_hash from eider.agents where id = $1`, [agentId]);
    expect(row.session_token_hash).toMatch(/^[0-9a-f]{64}$/);
    const left = await t.database.db.query(`select 1 from eider.agent_bootstrap_tokens`);
    expect(left.length).toBe(0);

    const second = await agentForTest(t, { bootstrapToken: BOOT, name: 'intruder' });
    await expect.poll(() => second.logs(), { timeout: 10_000 }).toContain('invalid_bootstrap_token');
    expect(second.logs()).not.toContain(BOOT);
    await second.stop();
    const names = (await t.req('GET', '/api/agents', { as: admin })).body.map((x: any) => x.name);
    expect(names).toEqual(['alpha']);
  });

  it('a fresh bootstrap token from the API registers another agent', async () => {
    const boot = await t.req('POST', '/api/admin/agents/bootstrap', { body: { name: 'beta', expires_in_hours: 1 }, as: admin });
    expect(boot.status).toBe(201);
    expect(boot.body.token).toMatch(/^eid_boot_/);
    const beta = await agentForTest(t, { bootstrapToken: boot.body.token, name: 'beta' });
    const id = await waitForHealthyAgent(t, admin, 'beta');
    await beta.stop();
    await expect.poll(async () => (await t.req('GET', `/api/admin/agents/${id}`, { as: admin })).body.status, { timeout: 10_000 }).toBe('unavailable');
  });
});

describe('queries', () => {
  it('SELECT 42: submitted (202, whole query), done, rows', async () => {
    const { submit, final } = await run('SELECT 42 AS answer');
    expect(submit.status).toBe(202);
    expect(Object.keys(submit.body).sort()).toEqual(
      ['agent_id', 'column_schema', 'columns', 'duration_ms', 'error', 'error_code', 'finished_at', 'id', 'origin', 'row_count', 'running_at', 'schedule_id', 'session_id', 'sql', 'started_at', 'statement_type', 'status', 'user_id', 'user_name', 'workspace_id'].sort(),
    );
    // what existing clients (a DB-API connector) parse: duration_ms an integer, the submitter's name
    expect(final.user_name).toBe('Admin');
    expect(['running', 'done']).toContain(submit.body.status);
    expect(final).toMatchObject({ status: 'done', row_count: 1, statement_type: 'select', columns: ['answer'], column_schema: [{ name: 'answer', type: 'INTEGER' }] });
    expect(Number.isInteger(final.duration_ms)).toBe(true);
    const rows = await t.req('GET', `/api/queries/${final.id}/rows?limit=1000`, { as: admin });
    expect(rows.body).toEqual({ rows: [{ answer: 42 }], columns: ['answer'], column_schema: [{ name: 'answer', type: 'INTEGER' }], cursor: null, total: 1 });
    // The statement text is kept once, in the queries row: not in the actor's snapshot nor in its history.
    const [actor] = await t.database.db.query<{ snapshot: any }>(`select snapshot from eider.actors where kind = 'query' and id = $1`, [final.id]);
    expect(actor.snapshot.context).not.toHaveProperty('sql');
    expect(actor.snapshot.context.queryId).toBe(final.id);
    const history = await t.database.db.query<{ p: string }>(`select event_payload::text as p from eider.actor_transitions where kind = 'query' and id = $1`, [final.id]);
    expect(history.length).toBeGreaterThan(2);
    for (const h of history) expect(h.p).not.toContain('SELECT 42');
  });

  // polyglot cannot parse these; the policy judges them on DuckDB's own parse (docs/statement-policy.md), and the
  // agent runs them like any read
  it('a read only DuckDB\'s own parser reads runs and returns its rows', async () => {
    const { submit, final } = await run('FROM range(4) t(i) SELECT (i // 2)::INT AS h, i::INT AS i QUALIFY row_number() OVER (ORDER BY i DESC) = 1');
    expect(submit.status).toBe(202);
    expect(final).toMatchObject({ status: 'done', row_count: 1, statement_type: 'select', columns: ['h', 'i'] });
    const rows = await t.req('GET', `/api/queries/${final.id}/rows?limit=10`, { as: admin });
    expect(rows.body.rows).toEqual([{ h: 1, i: 3 }]);
  });

  it('DDL and DML have an empty rows page', async () => {
    const { final } = await run('CREATE TABLE t AS SELECT 1 AS x');
    expect(final.status).toBe('done');
    expect(final.statement_type).toBe('create');
    const rows = await t.req('GET', `/api/queries/${final.id}/rows?limit=1000`, { as: admin });
    expect(rows.status).toBe(200);
    expect(rows.body).toMatchObject({ rows: [], columns: [], total: 0, cursor: null });
  });

  it('the statement policy rejects before anything reaches an agent', async () => {
    const before = await t.database.db.query(`select count(*)::int as n from eider.queries`);
    for (const sql of ["ATTACH 'x.db'", 'SELECT 1; INSTALL httpfs', "SELECT * FROM read_csv('/etc/passwd')", 'PRAGMA version', 'SET threads=1']) {
      const r = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: agentId }, as: admin });
      expect(r.status, sql).toBe(403);
      expect(r.body.error).toBe('sql_not_allowed');
    }
    const after = await t.database.db.query(`select count(*)::int as n from eider.queries`);
    expect(after).toEqual(before);
  });

  it('a syntax error is 400 sql_syntax_error with its position; a script with a read is refused, not emptied', async () => {
    const before = await t.database.db.query(`select count(*)::int as n from eider.queries`);
    const bad = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: 'SELECT 1;\nSELECT * FRM t', agent_id: agentId }, as: admin });
    expect({ status: bad.status, error: bad.body.error }).toEqual({ status: 400, error: 'sql_syntax_error' });
    expect(bad.body.details.position).toEqual({ line: 2, column: 14, offset: 23 }); // the 't' after FRM
    expect(bad.body.message).toMatch(/syntax error at or near "t"/);
    for (const sql of ['SELECT 1; SELECT 2', 'CREATE TABLE s1 (x INT); SELECT * FROM s1']) {
      const r = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: agentId }, as: admin });
      expect({ sql, status: r.status, error: r.body.error }).toEqual({ sql, status: 422, error: 'unprocessable_content' });
      expect(r.body.message).toMatch(/is a read/);
    }
    expect(await t.database.db.query(`select count(*)::int as n from eider.queries`)).toEqual(before);
    // a script of writes still runs
    const { final } = await run('CREATE TABLE script_t (x INT); INSERT INTO script_t VALUES (1), (2)');
    expect(final.status).toBe('done');
    expect((await run('SELECT count(*) AS n FROM script_t')).final.status).toBe('done');
    const spec = await t.req('GET', '/api/openapi.json', { as: admin });
    expect(spec.status).toBe(200);
    expect(JSON.stringify(spec.body)).toContain('a script with a read');
  });

  it('agent_required, unknown agents, readers cannot write, and agent tiers', async () => {
    const none = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: 'SELECT 1' }, as: admin });
    expect(none.status).toBe(422);
    expect(none.body.error).toBe('agent_required');
    const ghost = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: 'SELECT 1', agent_id: '00000000-0000-4000-8000-000000000000' }, as: admin });
    expect(ghost.status).toBe(404);

    const reader = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/default/members/${reader.id}`, { body: { role: 'reader' }, as: admin });
    const w = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: 'CREATE TABLE r (x INT)', agent_id: agentId }, as: reader });
    expect(w.status).toBe(403);
    expect(w.body.error).toBe('forbidden');
    const ok = await run('SELECT 1 AS one', reader);
    expect(ok.final.status).toBe('done');

    // restricted: invisible without a grant (404), a grant of use lets them run, operate routes stay 403
    await t.req('PATCH', `/api/admin/agents/${agentId}/access-mode`, { body: { access_mode: 'restricted' }, as: admin });
    expect((await t.req('GET', `/api/admin/agents/${agentId}`, { as: reader })).status).toBe(404);
    expect((await t.req('GET', '/api/agents', { as: reader })).body.map((a: any) => a.id)).not.toContain(agentId);
    const hidden = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: 'SELECT 1', agent_id: agentId }, as: reader });
    expect(hidden.status).toBe(404);
    const g = await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { user_id: reader.id, tier: 'use' }, as: admin });
    expect(g.status).toBe(201);
    expect((await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { user_id: reader.id, tier: 'use' }, as: admin })).status).toBe(200);
    expect((await run('SELECT 2 AS two', reader)).final.status).toBe('done');
    const op = await t.req('POST', `/api/admin/agents/${agentId}/disconnect`, { as: reader });
    expect(op.status).toBe(403);
    expect(op.body.error).toBe('agent_forbidden');
    const wsAdmin = await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { workspace_id: (await t.req('GET', '/api/workspaces/default', { as: admin })).body.id, tier: 'admin' }, as: admin });
    expect(wsAdmin.status).toBe(422);
    const both = await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { user_id: reader.id, workspace_id: reader.id, tier: 'use' }, as: admin });
    expect(both.status).toBe(422);
    await t.req('DELETE', `/api/admin/agents/${agentId}/grants/${g.body.id}`, { as: admin });
    expect((await t.req('GET', `/api/admin/agents/${agentId}`, { as: reader })).status).toBe(404);
    await t.req('PATCH', `/api/admin/agents/${agentId}/access-mode`, { body: { access_mode: 'open' }, as: admin });
  });

  // A grant to workspace W carries only work submitted in W: the same user's query in another workspace finds the
  // restricted agent invisible.
  it('a workspace grant on a restricted agent counts only in that workspace', async () => {
    const member = await newUser(t, admin);
    for (const slug of ['granted-ws', 'other-ws']) {
      expect((await t.req('POST', '/api/workspaces', { body: { slug, name: slug }, as: admin })).status).toBe(201);
      expect((await t.req('PUT', `/api/workspaces/${slug}/members/${member.id}`, { body: { role: 'writer' }, as: admin })).status).toBe(201);
    }
    const granted = (await t.req('GET', '/api/workspaces/granted-ws', { as: admin })).body.id;
    await t.req('PATCH', `/api/admin/agents/${agentId}/access-mode`, { body: { access_mode: 'restricted' }, as: admin });
    try {
      const g = await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { workspace_id: granted, tier: 'use' }, as: admin });
      expect(g.status).toBe(201);
      const submit = (slug: string) => t.req('POST', `/api/workspaces/${slug}/queries`, { body: { sql: 'SELECT 1 AS one', agent_id: agentId }, as: member });
      const inGranted = await submit('granted-ws');
      expect(inGranted.status, inGranted.text).toBe(202);
      const elsewhere = await submit('other-ws');
      expect({ status: elsewhere.status, error: elsewhere.body?.error }).toEqual({ status: 404, error: 'not_found' });
    } finally {
      await t.req('PATCH', `/api/admin/agents/${agentId}/access-mode`, { body: { access_mode: 'open' }, as: admin });
    }
  });

  // A query, its rows and its profile are read by the members of its workspace (any role) and admins; anyone else
  // finds no such query (404, not 403: its existence is not told).
  it('a query is visible to the members of its workspace only', async () => {
    const q = await runDone(t, admin, agentId, 'SELECT 7 AS seven');
    const reader = await newUser(t, admin);
    const outsider = await newUser(t, admin);
    expect((await t.req('PUT', `/api/workspaces/default/members/${reader.id}`, { body: { role: 'reader' }, as: admin })).status).toBe(201);
    for (const path of [`/api/queries/${q.id}`, `/api/queries/${q.id}/rows`]) {
      const seen = await t.req('GET', path, { as: reader });
      expect(seen.status, seen.text).toBe(200);
      const hidden = await t.req('GET', path, { as: outsider });
      expect({ status: hidden.status, error: hidden.body?.error }).toEqual({ status: 404, error: 'not_found' });
    }
    expect((await t.req('GET', `/api/queries/${q.id}/rows`, { as: reader })).body.rows).toEqual([{ seven: 7 }]);
    // No such query, or an id that is none: 404 too.
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) expect((await t.req('GET', `/api/queries/${id}/rows`, { as: reader })).status).toBe(404);
  });

  it('cancel a long query; a timeout fails it', async () => {
    const submit = await t.req('POST', '/api/workspaces/default/queries', {
      body: { sql: 'SELECT count(*) FROM range(100000000000)', agent_id: agentId },
      as: admin,
    });
    expect(submit.status).toBe(202);
    const c = await t.req('POST', `/api/queries/${submit.body.id}/cancel`, { as: admin });
    expect(c.status).toBe(202);
    // Cancelled once the agent confirms it (running until then).
    expect(['running', 'queued', 'cancelled']).toContain(c.body.status);
    await expect.poll(async () => (await t.req('GET', `/api/queries/${submit.body.id}`, { as: admin })).body.status, { timeout: 15_000 }).toBe('cancelled');
    expect((await t.req('GET', `/api/queries/${submit.body.id}/rows`, { as: admin })).status).toBe(409);

    const { final } = await run('SELECT count(*) FROM range(100000000000)', admin, { timeout_s: 1 });
    expect(final.status).toBe('failed');
    expect(final.error).toMatch(/time/i);
  });

  it('the agent process killed mid-query fails the query; restarted, it reconnects with its session token', async () => {
    const submit = await t.req('POST', '/api/workspaces/default/queries', {
      body: { sql: 'SELECT count(*) FROM range(100000000000)', agent_id: agentId },
      as: admin,
    });
    const t0 = Date.now();
    await world.agent.kill();
    const final = (await t.req('GET', `/api/queries/${submit.body.id}?wait_timeout_s=10`, { as: admin })).body;
    expect(final.status).toBe('failed');
    expect(Date.now() - t0).toBeLessThan(3_000 + 2_000);
    expect(final.error).toMatch(/agent|lost|disconnect/i);
    await world.restartAgent();
    const again = await waitForHealthyAgent(t, admin, 'alpha');
    expect(again).toBe(agentId);
    expect((await run('SELECT 7 AS seven')).final.status).toBe('done');
  });
});

describe('operator inspection', () => {
  it('lists the six machines with real definitions', async () => {
    const r = await t.req('GET', '/api/admin/machines', { as: admin });
    expect(r.status).toBe(200);
    expect(r.body.map((m: any) => m.kind).sort()).toEqual(['agentConnection', 'elasticAgent', 'query', 'sqlSession', 'statement', 'storageMigration']);
    const q = r.body.find((m: any) => m.kind === 'query').definition;
    expect(q.states.map((s: any) => s.name)).toEqual(expect.arrayContaining(['queued', 'running', 'done', 'failed', 'cancelled']));
    expect(q.transitions).toEqual(expect.arrayContaining([expect.objectContaining({ from: 'running', event: 'done', to: 'done' })]));
    const member = await newUser(t, admin);
    expect((await t.req('GET', '/api/admin/machines', { as: member })).status).toBe(403);
  });

  it('serves the state chart as SVG and mermaid, highlighting a live actor, and the actor with its history', async () => {
    const { final } = await run('SELECT 1 AS x');
    const svg = await fetch(`${t.url}/api/admin/machines/query/diagram?actor=${final.id}`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toContain('image/svg+xml');
    const text = await svg.text();
    expect(text.startsWith('<svg') || text.startsWith('<?xml')).toBe(true);
    expect(text).toContain('xmlns="http://www.w3.org/2000/svg"');
    const plain = await (await fetch(`${t.url}/api/admin/machines/query/diagram`, { headers: { authorization: `Bearer ${admin.token}` } })).text();
    expect(text).not.toEqual(plain);
    const mermaid = await t.req('GET', '/api/admin/machines/query/diagram?format=mermaid', { as: admin });
    expect(mermaid.text).toContain('stateDiagram');
    expect((await t.req('GET', '/api/admin/machines/nope/diagram', { as: admin })).status).toBe(404);

    const actor = await t.req('GET', `/api/admin/actors/query/${final.id}`, { as: admin });
    expect(actor.status).toBe(200);
    expect(actor.body).toMatchObject({ kind: 'query', id: final.id, state: 'done', status: 'done', terminal: true });
    const path = actor.body.transitions.items.map((x: any) => x.to_state);
    expect(path.at(-1)).toBe('done');
    expect(path).toContain('running');
    expect(actor.body.transitions.has_more).toBe(false);
    const conn = await t.database.db.query<{ connection_id: string }>(`select connection_id from eider.agents where id = $1`, [agentId]);
    const ca = await t.req('GET', `/api/admin/actors/agentConnection/${conn[0].connection_id}?limit=2`, { as: admin });
    expect(ca.body.state).toBe('healthy');
    expect(ca.body.transitions.items.length).toBe(2);
    expect(ca.body.transitions.has_more).toBe(true);
    expect(JSON.stringify(ca.body)).not.toMatch(/eid_agent_|session_token/);
    const next = await t.req('GET', `/api/admin/actors/agentConnection/${conn[0].connection_id}?limit=2&cursor=${ca.body.transitions.cursor}`, { as: admin });
    expect(next.body.transitions.items[0].seq).toBe(ca.body.transitions.items[1].seq + 1);
  });
});

describe('Iceberg tables written through the agent', () => {
  it('appear in the catalog API with their row and size stats', async () => {
    expect((await run('CREATE SCHEMA IF NOT EXISTS sales')).final.status).toBe('done');
    expect((await run('CREATE TABLE sales.orders AS SELECT range AS id, range % 10 AS shop FROM range(2500)')).final.status).toBe('done');
    const ins = (await run('INSERT INTO sales.orders SELECT 9999 AS id, 1 AS shop')).final;
    expect(ins).toMatchObject({ status: 'done', statement_type: 'insert', row_count: 1 });
    const detail = await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/sales/tables/orders', { as: admin });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ name: 'orders', schema: 'sales', catalog: 'warehouse', row_count: 2501 });
    expect(detail.body.size_bytes).toBeGreaterThan(0);
    // last-write provenance from the sidecar: the INSERT, by its submitter
    await t.api.ctx.host.idle();
    const after = await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/sales/tables/orders', { as: admin });
    expect(after.body.last_write).toMatchObject({ query_id: ins.id, operation: 'insert', user_id: admin.id });
    // a CTAS that reads sales.orders writes only its own table: the source keeps the INSERT as its last write
    expect((await run('CREATE SCHEMA IF NOT EXISTS mart')).final.status).toBe('done');
    const ctas = (await run('CREATE TABLE mart.order_totals AS SELECT shop, count(*) AS n FROM sales.orders GROUP BY shop')).final;
    expect(ctas.status).toBe('done');
    await t.api.ctx.host.idle();
    const source = await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/sales/tables/orders', { as: admin });
    expect(source.body.last_write).toMatchObject({ query_id: ins.id, operation: 'insert' });
    const written = await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/mart/tables/order_totals', { as: admin });
    expect(written.body.last_write).toMatchObject({ query_id: ctas.id, operation: 'create', user_id: admin.id });
    expect(detail.body.current_snapshot_id).toMatch(/^-?\d+$/);
    const snaps = await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/sales/tables/orders/snapshots', { as: admin });
    expect(snaps.body.length).toBe(2);
    const tables = await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/sales/tables', { as: admin });
    expect(tables.body).toEqual([{ name: 'orders', table_type: expect.any(String) }]);
    // how existing clients read a table's columns
    const described = (await run('SELECT column_name, column_type FROM (DESCRIBE "warehouse"."sales"."orders")')).final;
    expect(described).toMatchObject({ status: 'done', statement_type: 'select' });
    const cols = await t.req('GET', `/api/queries/${described.id}/rows?limit=1000`, { as: admin });
    expect(cols.body.rows).toEqual([{ column_name: 'id', column_type: 'BIGINT' }, { column_name: 'shop', column_type: 'BIGINT' }]);
    const desc = (await run('DESCRIBE sales.orders')).final;
    expect(desc).toMatchObject({ status: 'done', statement_type: 'describe', row_count: 2 });
    const sample = await t.req('GET', `/api/workspaces/default/catalogs/warehouse/schemas/sales/tables/orders/sample?agent_id=${agentId}&limit=3`, { as: admin });
    expect(sample.status, sample.text).toBe(200);
    expect(sample.body.columns).toEqual(['id', 'shop']);
    expect(sample.body.rows.length).toBe(3);
    // samples are hidden from history
    const hist = await t.req('GET', '/api/workspaces/default/queries?limit=1000', { as: admin });
    expect(hist.body.items.map((q: any) => q.id)).not.toContain(sample.body.query_id);
    expect((await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/sales/tables/orders/sample', { as: admin })).body.error).toBe('agent_required');
    const { final } = await run('SELECT count(*) AS n, sum(id) AS s FROM warehouse.sales.orders');
    const rows = await t.req('GET', `/api/queries/${final.id}/rows`, { as: admin });
    // sum(BIGINT) is a HUGEINT in DuckDB: always a string in JSON
    expect(rows.body.rows).toEqual([{ n: 2501, s: String((2499 * 2500) / 2 + 9999) }]);
  });
});


describe('operators’ views of an agent', () => {
  it('metrics and monitoring count its work; its connection actor is inspectable with its transitions', async () => {
    const { final } = await run('SELECT 1 AS one');
    expect(final.status).toBe('done');

    const metrics = await t.req('GET', '/api/admin/agents/metrics', { as: admin });
    expect(metrics.status).toBe(200);
    const mine = metrics.body.find((m: any) => m.agent_id === agentId);
    expect(Object.keys(mine).sort()).toEqual(['agent_id', 'last_heartbeat_at', 'memory_limit_bytes', 'name', 'queued_queries', 'running_queries', 'status']);
    expect(mine).toMatchObject({ name: 'alpha', status: 'healthy', running_queries: expect.any(Number), queued_queries: expect.any(Number) });
    expect(mine.memory_limit_bytes).toEqual(expect.any(Number));
    expect(Date.parse(mine.last_heartbeat_at)).not.toBeNaN();

    const monitoring = await t.req('GET', `/api/admin/agents/${agentId}/monitoring`, { as: admin });
    expect(monitoring.status).toBe(200);
    expect(Object.keys(monitoring.body).sort()).toEqual(
      ['agent_id', 'capabilities', 'connected_here', 'done_last_hour', 'failed_last_hour', 'last_heartbeat_at', 'p50_duration_ms_last_hour', 'queued', 'running', 'status'].sort(),
    );
    expect(monitoring.body).toMatchObject({ agent_id: agentId, status: 'healthy', connected_here: true, running: expect.any(Number), queued: expect.any(Number) });
    expect(monitoring.body.done_last_hour).toBeGreaterThanOrEqual(1);
    expect(monitoring.body.failed_last_hour).toEqual(expect.any(Number));
    expect(monitoring.body.p50_duration_ms_last_hour).toEqual(expect.any(Number));
    expect(monitoring.body.capabilities.engine_version).toMatch(/\d+\.\d+/);

    const { connection_id } = (await t.req('GET', `/api/admin/agents/${agentId}`, { as: admin })).body;
    const actor = await t.req('GET', `/api/admin/actors/agentConnection/${connection_id}?limit=1`, { as: admin });
    expect(actor.status).toBe(200);
    expect(Object.keys(actor.body).sort()).toEqual(
      ['context', 'created_at', 'deadline_at', 'id', 'kind', 'last_error', 'owner_replica', 'state', 'status', 'terminal', 'transitions', 'updated_at', 'version'].sort(),
    );
    expect(actor.body).toMatchObject({ kind: 'agentConnection', id: connection_id, terminal: false });
    expect(actor.body.transitions.items).toHaveLength(1);
    expect(Object.keys(actor.body.transitions.items[0]).sort()).toEqual(['at', 'event', 'from_state', 'payload', 'replica', 'seq', 'to_state']);
    expect(actor.body.transitions.has_more).toBe(true);
    const next = await t.req('GET', `/api/admin/actors/agentConnection/${connection_id}?limit=1&cursor=${actor.body.transitions.cursor}`, { as: admin });
    expect(next.body.transitions.items[0].seq).toBeGreaterThan(actor.body.transitions.items[0].seq);
  });
});
