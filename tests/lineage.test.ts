// Lineage against the real stack: a pipeline written in SQL through a real agent yields exactly the expected
// table edges (CTAS, INSERT … SELECT with a join and a CTE, CREATE VIEW; none for VALUES or a self-reference);
// imports from other producers, purges, depth and direction, staleness, redaction under scoped grants, and drops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, setupAdmin, startTestStack, type Caller, type TestStack } from './support/api.ts';
import { cleanupAgentDir, startAgent, waitForHealthyAgent, type TestAgent } from './support/agent.ts';
import { executionEdges, writeTargetOf } from '../domain/lineage.ts';

const BOOT = 'test-bootstrap-token-for-lineage';
let t: TestStack;
let admin: Caller & { id: string };
let agent: TestAgent;
let agentId: string;
const T = '/api/workspaces/default/catalogs/warehouse/schemas';

beforeAll(async () => {
  t = await startTestStack({ AGENT_BOOTSTRAP_TOKEN: BOOT, LINEAGE_STALE_AFTER_DAYS: '30' });
  admin = await setupAdmin(t);
  agent = await startAgent(t, { bootstrapToken: BOOT, name: 'lineage-agent' });
  agentId = await waitForHealthyAgent(t, admin, 'lineage-agent');
}, 120_000);
afterAll(async () => {
  await agent?.stop();
  if (agent) cleanupAgentDir(agent);
  await t?.close();
});

async function run(sql: string) {
  const s = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: agentId }, as: admin });
  expect(s.status, s.text).toBe(202);
  const q = await t.req('GET', `/api/queries/${s.body.id}?wait_timeout_s=30`, { as: admin });
  expect(q.body.status, q.body.error).toBe('done');
}

const graph = async (table: string, query = '', as: Caller = admin) => t.req('GET', `${T}/lin/tables/${table}/lineage${query}`, { as });
const pairs = (g: any) => g.edges.map((e: any) => `${e.source} -> ${e.target}`).sort();

describe('lineage', () => {
  it('reads targets the way DuckDB names them, and yields no edge for VALUES or a self-reference', () => {
    expect(writeTargetOf('-- load\nINSERT INTO lin.facts SELECT * FROM lin.raw')).toEqual({ catalog: null, schema: 'lin', name: 'facts' });
    expect(writeTargetOf('CREATE OR REPLACE TABLE "Lin"."Big T" AS SELECT 1')).toEqual({ catalog: null, schema: 'Lin', name: 'Big T' });
    expect(writeTargetOf('UPDATE t SET a = 1')).toBeNull();
    expect(writeTargetOf('CREATE TEMP TABLE x AS SELECT 1')).toBeNull();
    expect(executionEdges('INSERT INTO t VALUES (1)', [{ catalog: null, schema: null, name: 't' }], 'w')).toEqual([]);
    expect(executionEdges('INSERT INTO t SELECT * FROM t', [{ catalog: null, schema: null, name: 't' }], 'w')).toEqual([]);
  });

  it('a SQL pipeline produces exactly its table edges, walked by depth and direction', async () => {
    await run('CREATE SCHEMA IF NOT EXISTS lin');
    await run('CREATE TABLE lin.raw AS SELECT range AS id, range % 3 AS region_id FROM range(30)');
    await run("CREATE TABLE lin.regions AS SELECT * FROM (VALUES (0, 'north'), (1, 'south'), (2, 'west')) AS v(id, name)");
    await run('CREATE TABLE lin.enriched AS SELECT r.id, g.name FROM lin.raw r JOIN lin.regions g ON g.id = r.region_id');
    await run('CREATE TABLE lin.summary (name VARCHAR, n BIGINT)');
    await run('WITH c AS (SELECT name, count(*) AS n FROM lin.enriched GROUP BY name) INSERT INTO lin.summary SELECT * FROM c');
    await run('INSERT INTO lin.summary SELECT * FROM lin.summary WHERE false');
    await run("INSERT INTO lin.summary VALUES ('x', 1)");

    // Lineage is recorded by the query's completion effect, a moment after the query reads done.
    await expect
      .poll(async () => pairs((await graph('raw', '?direction=downstream&depth=5')).body), { timeout: 10_000 })
      .toEqual(['warehouse.lin.enriched -> warehouse.lin.summary', 'warehouse.lin.raw -> warehouse.lin.enriched']);
    const down = (await graph('raw', '?direction=downstream&depth=5')).body;
    expect(down.nodes.map((n: any) => n.key)).toEqual(['warehouse.lin.enriched', 'warehouse.lin.raw', 'warehouse.lin.summary']);
    const edge = down.edges.find((e: any) => e.target === 'warehouse.lin.summary');
    expect(edge).toMatchObject({ observation_count: 1, stale: false, providers: [{ provider: 'execution', observation_count: 1, stale: false, column_lineage: 'unknown' }] });
    expect(pairs((await graph('raw', '?direction=downstream&depth=1')).body)).toEqual(['warehouse.lin.raw -> warehouse.lin.enriched']);
    expect(pairs((await graph('summary', '?direction=upstream&depth=2')).body)).toEqual([
      'warehouse.lin.enriched -> warehouse.lin.summary',
      'warehouse.lin.raw -> warehouse.lin.enriched',
      'warehouse.lin.regions -> warehouse.lin.enriched',
    ]);
    expect((await graph('summary', '?direction=downstream')).body.edges).toEqual([]);
    expect((await graph('summary', '?depth=6')).status).toBe(422);
    expect((await graph('nope')).body).toMatchObject({ nodes: [{ key: 'warehouse.lin.nope' }], edges: [] });
    // Writing again re-observes the edge.
    await run('WITH c AS (SELECT name, count(*) AS n FROM lin.enriched GROUP BY name) INSERT INTO lin.summary SELECT * FROM c');
    await expect.poll(async () => (await graph('summary', '?direction=upstream&depth=1')).body.edges[0].observation_count, { timeout: 10_000 }).toBe(2);
  });

  it('imports edges from other producers (idempotent), marks stale claims, refuses execution, purges', async () => {
    const imp = (body: unknown) => t.req('POST', '/api/workspaces/default/lineage/imports', { body, as: admin });
    const r = await imp({
      provider: 'dbt',
      edges: [
        { source: { external: 'crm.accounts' }, target: { catalog: 'warehouse', schema: 'lin', table: 'raw' }, columns: [{ source_column: 'acct', target_column: 'id' }] },
        { source: { catalog: 'warehouse', schema: 'lin', table: 'raw' }, target: { catalog: 'warehouse', schema: 'lin', table: 'enriched' }, observed_at: '2020-01-01T00:00:00Z' },
        { source: { catalog: 'nowhere', schema: 's', table: 't' }, target: { catalog: 'warehouse', schema: 'lin', table: 'raw' } },
      ],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ provider: 'dbt', created: 2, updated: 0, skipped: [{ index: 2, reason: expect.stringContaining('not attached') }] });
    const again = { source: { external: 'crm.accounts' }, target: { catalog: 'warehouse', schema: 'lin', table: 'raw' }, columns: [{ source_column: 'acct', target_column: 'id' }] };
    expect((await imp({ provider: 'dbt', edges: [again] })).body).toMatchObject({ created: 0, updated: 1 });

    const up = (await graph('enriched', '?direction=upstream&depth=2')).body;
    const ext = up.nodes.find((n: any) => n.key === 'external:crm.accounts');
    expect(ext).toMatchObject({ kind: 'external' });
    const both = up.edges.find((e: any) => e.source === 'warehouse.lin.raw' && e.target === 'warehouse.lin.enriched');
    // dbt's claim is old (stale), execution's is fresh: the edge is not stale.
    expect(both.providers.map((p: any) => [p.provider, p.stale])).toEqual([
      ['dbt', true],
      ['execution', false],
    ]);
    expect(both.stale).toBe(false);
    const onlyDbt = (await graph('enriched', '?direction=upstream&depth=1&provider=dbt')).body.edges;
    expect(onlyDbt).toHaveLength(1);
    expect(onlyDbt[0].stale).toBe(true);
    expect(up.edges.find((e: any) => e.source === 'external:crm.accounts').columns).toEqual([{ source_column: 'acct', target_column: 'id', providers: ['dbt'], stale: false }]);

    expect((await imp({ provider: 'execution', edges: [] })).status).toBe(422);
    expect((await t.req('DELETE', '/api/workspaces/default/lineage/imports?provider=execution', { as: admin })).status).toBe(422);
    expect((await t.req('DELETE', '/api/workspaces/default/lineage/imports?provider=dbt', { as: admin })).body).toEqual({ provider: 'dbt', deleted: 2 });
    expect((await graph('enriched', '?direction=upstream&depth=2')).body.nodes.map((n: any) => n.key)).not.toContain('external:crm.accounts');
  });

  it('redacts what a scoped grant hides, and a dropped table takes its edges along', async () => {
    const reader = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/default/members/${reader.id}`, { body: { role: 'reader' }, as: admin });
    const attach = await t.req('PUT', '/api/workspaces/default/catalogs/warehouse', { body: { make_default: true, access_mode: 'scoped' }, as: admin });
    expect(attach.status, attach.text).toBeLessThan(300);
    try {
      const grant = await t.req('PUT', '/api/workspaces/default/catalogs/warehouse/grants', { body: { schema: 'lin', table: 'enriched', privilege: 'read' }, as: admin });
      expect(grant.status, grant.text).toBeLessThan(300);
      const g = (await graph('enriched', '?direction=both&depth=1', reader)).body;
      expect(g.nodes.filter((n: any) => n.kind === 'redacted').length).toBe(3);
      expect(JSON.stringify(g)).not.toMatch(/raw|regions|summary/);
      expect((await graph('raw', '', reader)).status).toBe(404);
    } finally {
      await t.req('PUT', '/api/workspaces/default/catalogs/warehouse', { body: { make_default: true, access_mode: 'full' }, as: admin });
    }
    await run('DROP TABLE lin.summary');
    await expect.poll(async () => pairs((await graph('enriched', '?direction=downstream')).body), { timeout: 10_000 }).toEqual([]);
  });
});
