// Lineage against the real stack: a pipeline written in SQL through a real agent yields exactly the expected
// table edges (CTAS, INSERT … SELECT with a join and a CTE, CREATE VIEW; none for VALUES or a self-reference) and
// column pairs (CTEs, joins, aliases, `SELECT *`); imports from other producers, purges, depth and direction,
// column detail around the nodes asked about and its cap, staleness, redaction under scoped grants, and drops.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { newUser, type Caller } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { executionEdges, readGraph, writeTargetOf, writtenTable } from '../domain/lineage/graph.ts';
import { claimBackfill, runBackfill } from '../domain/lineage/backfill.ts';
import { deriveColumnLineage, loadParser, qualified, type ColumnEnv } from '../domain/lineage/columns.ts';

const T = '/api/workspaces/default/catalogs/warehouse/schemas';

const { t, admin, sql: run } = await stackWithAgent({ env: { LINEAGE_STALE_AFTER_DAYS: '30' }, agent: { name: 'lineage-agent' } });

const graph = async (table: string, query = '', as: Caller = admin) => t.req('GET', `${T}/lin/tables/${table}/lineage${query}`, { as });
const pairs = (g: any) => g.edges.map((e: any) => `${e.source} -> ${e.target}`).sort();
/** Each edge's column pairs as `source.col -> target.col`, sorted. */
const columnPairs = (g: any) =>
  g.edges.flatMap((e: any) => e.columns.map((c: any) => `${e.source}.${c.source_column} -> ${e.target}.${c.target_column}`)).sort();

// The schemas a pure derivation sees: three tables in catalog w, schema s.
const env: ColumnEnv = {
  resolveTable: (r) => `${(r.catalog ?? 'w').toLowerCase()}.${(r.schema ?? 's').toLowerCase()}.${r.name.toLowerCase()}`,
  tables: new Map([
    ['w.s.orders', ['id', 'customer_id', 'amount', 'Status']],
    ['w.s.customers', ['id', 'name', 'region']],
    ['w.s.out', ['a', 'b', 'c']],
  ]),
};
const derive = (sql: string) => {
  const r = deriveColumnLineage(sql, env);
  return r.state === 'derived' ? Object.fromEntries(r.columns.map((c) => [c.target_column, c.sources.map(qualified)])) : r;
};

describe('column lineage derivation', () => {
  beforeAll(() => loadParser());

  it('follows aliases, expressions, CTEs, subqueries, joins and star expansion to the columns they read', () => {
    expect(derive('CREATE TABLE s.x AS SELECT o.id AS oid, o.amount * 2 AS twice, upper(c.name) AS who FROM s.orders o JOIN s.customers c ON c.id = o.customer_id')).toEqual({
      oid: ['w.s.orders.id'],
      twice: ['w.s.orders.amount'],
      who: ['w.s.customers.name'],
    });
    // USING merges the key (one column from both sides); `*` spells columns as the schema does.
    expect(derive('CREATE TABLE s.x AS SELECT * FROM s.orders JOIN s.customers USING (id)')).toEqual({
      id: ['w.s.customers.id', 'w.s.orders.id'],
      customer_id: ['w.s.orders.customer_id'],
      amount: ['w.s.orders.amount'],
      Status: ['w.s.orders.Status'],
      name: ['w.s.customers.name'],
      region: ['w.s.customers.region'],
    });
    expect(
      derive(`CREATE TABLE s.x AS WITH big AS (SELECT customer_id AS cid, amount FROM s.orders WHERE amount > 10), c2 AS (SELECT * FROM big)
              SELECT c.*  EXCLUDE (region), CASE WHEN status = 'x' THEN 0 ELSE t.total END AS total
              FROM (SELECT cid, sum(amount) AS total FROM c2 GROUP BY cid) t JOIN s.customers c ON c.id = t.cid, s.orders o`),
    ).toEqual({ id: ['w.s.customers.id'], name: ['w.s.customers.name'], total: ['w.s.orders.Status', 'w.s.orders.amount'] });
    // Later items may use earlier aliases; a correlated scalar subquery contributes its projection; lambdas bind.
    expect(
      derive('CREATE TABLE s.x AS SELECT amount AS a, a + 1 AS b, (SELECT max(name) FROM s.customers c WHERE c.id = o.customer_id) AS n, list_transform([1], v -> v + id) AS l FROM s.orders o'),
    ).toEqual({ a: ['w.s.orders.amount'], b: ['w.s.orders.amount'], n: ['w.s.customers.name'], l: ['w.s.orders.id'] });
    // INSERT maps by position onto the target's columns, or by the column list, or BY NAME.
    expect(derive('INSERT INTO s.out SELECT id, name, 1 FROM s.customers')).toEqual({ a: ['w.s.customers.id'], b: ['w.s.customers.name'], c: [] });
    expect(derive('INSERT INTO s.out (c, a) SELECT id, region FROM s.customers')).toEqual({ c: ['w.s.customers.id'], a: ['w.s.customers.region'] });
    expect(derive('INSERT INTO s.out BY NAME SELECT name AS b FROM s.customers')).toEqual({ b: ['w.s.customers.name'] });
    expect(derive('CREATE TABLE s.x AS SELECT id FROM s.orders UNION ALL SELECT id FROM s.customers')).toEqual({ id: ['w.s.customers.id', 'w.s.orders.id'] });
  });

  it('says unknown when it does not try, unsupported with the reason when it cannot establish the columns', () => {
    expect(derive('CREATE VIEW s.v AS SELECT id FROM s.orders')).toEqual({ state: 'unknown' });
    expect(derive('MERGE INTO s.out USING s.orders o ON o.id = out.a WHEN MATCHED THEN UPDATE SET b = o.amount')).toEqual({ state: 'unknown' });
    expect(derive('CREATE TABLE s.x AS SELECT id FROM s.orders, s.customers')).toMatchObject({ state: 'unsupported', reason: 'column id is ambiguous' });
    expect(derive('CREATE TABLE s.x AS SELECT nope FROM s.orders')).toMatchObject({ state: 'unsupported', reason: expect.stringContaining('nope') });
    expect(derive('CREATE TABLE s.x AS SELECT * FROM s.missing')).toMatchObject({ state: 'unsupported', reason: expect.stringContaining('w.s.missing') });
    expect(derive("CREATE TABLE s.x AS SELECT COLUMNS('a.*') FROM s.orders")).toMatchObject({ state: 'unsupported' });
    expect(derive('INSERT INTO s.out SELECT id FROM s.orders')).toMatchObject({ state: 'unsupported', reason: expect.stringContaining('3 columns') });
    expect(derive('CREATE TABLE s.x AS SELECT FROM WHERE')).toMatchObject({ state: 'unsupported', parseFailed: true });
  });
});

describe('lineage', () => {
  it('reads targets the way DuckDB names them, and yields no edge for VALUES or a self-reference', () => {
    expect(writeTargetOf('-- load\nINSERT INTO lin.facts SELECT * FROM lin.raw')).toEqual({ catalog: null, schema: 'lin', name: 'facts' });
    expect(writeTargetOf('CREATE OR REPLACE TABLE "Lin"."Big T" AS SELECT 1')).toEqual({ catalog: null, schema: 'Lin', name: 'Big T' });
    expect(writeTargetOf('UPDATE t SET a = 1')).toBeNull();
    expect(writeTargetOf('CREATE TEMP TABLE x AS SELECT 1')).toBeNull();
    // `--` inside a quoted name is part of the name, not a comment.
    expect(writeTargetOf('CREATE TABLE lin."a--b" AS SELECT 1 -- a comment')).toEqual({ catalog: null, schema: 'lin', name: 'a--b' });
    expect(writtenTable('/* x */ INSERT INTO lin."c--d" SELECT 1', 'warehouse', new Set(['warehouse']))).toMatchObject({ schema: 'lin', table: 'c--d' });
    // the table a write writes (its last write), whatever it reads
    const cats = new Set(['w', 'sales']);
    expect(writtenTable('CREATE TABLE mart.totals AS SELECT * FROM sales.orders', 'w', cats)).toEqual({ catalog: 'w', schema: 'mart', table: 'totals' });
    expect(writtenTable('UPDATE s.t SET a = 1', 'w', cats)).toEqual({ catalog: 'w', schema: 's', table: 't' });
    expect(writtenTable('DELETE FROM sales.s.t WHERE a IN (SELECT a FROM w.s.u)', 'w', cats)).toEqual({ catalog: 'sales', schema: 's', table: 't' });
    expect(writtenTable('ALTER TABLE sales.t ADD COLUMN b INT', 'w', cats)).toEqual({ catalog: 'sales', schema: 'main', table: 't' });
    expect(writtenTable('INSERT INTO "Mart"."Big T" SELECT 1', 'w', cats)).toEqual({ catalog: 'w', schema: 'Mart', table: 'Big T' });
    expect(writtenTable('SELECT * FROM sales.orders', 'w', cats)).toBeNull();
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
    await run('CREATE TABLE lin.wide AS SELECT *, upper(name) AS name_u, id * 10 AS id10 FROM lin.enriched');

    // Lineage is recorded by the query's completion effect, a moment after the query reads done.
    await expect
      .poll(async () => pairs((await graph('raw', '?direction=downstream&depth=5')).body), { timeout: 10_000 })
      .toEqual(['warehouse.lin.enriched -> warehouse.lin.summary', 'warehouse.lin.enriched -> warehouse.lin.wide', 'warehouse.lin.raw -> warehouse.lin.enriched']);
    const down = (await graph('raw', '?direction=downstream&depth=5')).body;
    expect(down.nodes.map((n: any) => n.key)).toEqual(['warehouse.lin.enriched', 'warehouse.lin.raw', 'warehouse.lin.summary', 'warehouse.lin.wide']);
    const edge = down.edges.find((e: any) => e.target === 'warehouse.lin.summary');
    // A node's column_count is its table's column count, not how many of its columns carry lineage (raw has two
    // columns; only id flows on); edges carry column detail only when columns_for asks for it.
    expect(down.nodes.map((n: any) => [n.key, n.column_count])).toEqual([
      ['warehouse.lin.enriched', 2],
      ['warehouse.lin.raw', 2],
      ['warehouse.lin.summary', 2],
      ['warehouse.lin.wide', 4],
    ]);
    expect(down.edges.every((e: any) => e.columns.length === 0)).toBe(true);
    expect(edge).toMatchObject({ observation_count: 1, stale: false, providers: [{ provider: 'execution', observation_count: 1, stale: false, column_lineage: 'derived' }] });
    // Column pairs around enriched: the join's two sides, the CTE's aggregate (count(*) reads no column), `SELECT *`.
    const around = (await graph('enriched', '?direction=both&depth=1&columns_for=warehouse.lin.enriched')).body;
    expect(columnPairs(around)).toEqual([
      'warehouse.lin.enriched.id -> warehouse.lin.wide.id',
      'warehouse.lin.enriched.id -> warehouse.lin.wide.id10',
      'warehouse.lin.enriched.name -> warehouse.lin.summary.name',
      'warehouse.lin.enriched.name -> warehouse.lin.wide.name',
      'warehouse.lin.enriched.name -> warehouse.lin.wide.name_u',
      'warehouse.lin.raw.id -> warehouse.lin.enriched.id',
      'warehouse.lin.regions.name -> warehouse.lin.enriched.name',
    ]);
    expect(around.edges.every((e: any) => e.providers[0].column_lineage === 'derived')).toBe(true);
    expect(around.nodes.find((n: any) => n.key === 'warehouse.lin.enriched').column_count).toBe(2);
    expect(around.columns_truncated).toBe(false);
    // Column detail only for edges touching the nodes asked about.
    const onlyWide = (await graph('raw', '?direction=downstream&depth=5&columns_for=warehouse.lin.wide')).body;
    expect(onlyWide.edges.filter((e: any) => e.columns.length).map((e: any) => e.target)).toEqual(['warehouse.lin.wide']);
    expect(pairs((await graph('raw', '?direction=downstream&depth=1')).body)).toEqual(['warehouse.lin.raw -> warehouse.lin.enriched']);
    // The cap on column entries: spent in edge order, the rest withheld and flagged.
    const capped = await readGraph(t.api.db, { catalog: 'warehouse', schema: 'lin', table: 'enriched' }, {
      direction: 'both', depth: 1, maxColumns: 3, staleAfterDays: 30, attached: new Set(['warehouse']), canSee: () => true, columnsFor: ['warehouse.lin.enriched'],
    });
    expect(capped.edges.flatMap((e) => e.columns)).toHaveLength(3);
    expect(capped.columns_truncated).toBe(true);
    expect(pairs((await graph('summary', '?direction=upstream&depth=2')).body)).toEqual([
      'warehouse.lin.enriched -> warehouse.lin.summary',
      'warehouse.lin.raw -> warehouse.lin.enriched',
      'warehouse.lin.regions -> warehouse.lin.enriched',
    ]);
    expect((await graph('summary', '?direction=downstream')).body.edges).toEqual([]);
    expect((await graph('summary', '?depth=6')).status).toBe(422);
    // A table that does not exist has no graph.
    const nope = await graph('nope');
    expect(nope.status).toBe(404);
    expect(nope.body.error).toBe('not_found');
    // Lineage is the catalog's: another workspace that attaches it sees the same edges.
    const other = await t.req('POST', '/api/workspaces', { body: { slug: 'lin-other', name: 'Lineage other' }, as: admin });
    expect(other.status, other.text).toBe(201);
    expect((await t.req('PUT', '/api/workspaces/lin-other/catalogs/warehouse', { body: { make_default: true }, as: admin })).status).toBeLessThan(300);
    const seenThere = await t.req('GET', '/api/workspaces/lin-other/catalogs/warehouse/schemas/lin/tables/raw/lineage?direction=downstream&depth=5', { as: admin });
    expect(seenThere.status, seenThere.text).toBe(200);
    expect(pairs(seenThere.body)).toEqual(pairs(down));
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
        // an end that does not resolve to a table of the catalog: skipped, never recorded
        { source: { catalog: 'warehouse', schema: 'lin', table: 'raw' }, target: { catalog: 'warehouse', schema: 'lin', table: 'no_such_table' } },
      ],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      provider: 'dbt',
      created: 2,
      updated: 0,
      skipped: [
        { index: 2, reason: expect.stringContaining('not attached') },
        { index: 3, reason: 'table warehouse.lin.no_such_table does not exist' },
      ],
    });
    expect((await t.api.db.query(`select 1 from lineage_edges where target_key = 'warehouse.lin.no_such_table'`)).length).toBe(0);
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
    const ext2 = (await graph('enriched', '?direction=upstream&depth=2&columns_for=external:crm.accounts')).body;
    expect(ext2.edges.find((e: any) => e.source === 'external:crm.accounts').columns).toEqual([{ source_column: 'acct', target_column: 'id', providers: ['dbt'], stale: false }]);
    expect(up.edges.find((e: any) => e.source === 'external:crm.accounts').columns).toEqual([]);
    // provider repeats: both producers' edges.
    expect((await graph('enriched', '?direction=upstream&depth=1&provider=dbt&provider=execution')).body.edges[0].providers).toHaveLength(2);

    expect((await imp({ provider: 'execution', edges: [] })).status).toBe(422);
    expect((await t.req('DELETE', '/api/workspaces/default/lineage/imports?provider=execution', { as: admin })).status).toBe(422);
    expect((await t.req('DELETE', '/api/workspaces/default/lineage/imports?provider=dbt', { as: admin })).body).toEqual({ provider: 'dbt', deleted: 2 });
    expect((await graph('enriched', '?direction=upstream&depth=2')).body.nodes.map((n: any) => n.key)).not.toContain('external:crm.accounts');
  });

  it('imports a dbt manifest as transform edges (ephemeral models inlined, skipped with reasons), idempotent', async () => {
    const manifest = JSON.parse(readFileSync(new URL('./fixtures/dbt-jaffle/manifest.json', import.meta.url), 'utf8'));
    const catalog = JSON.parse(readFileSync(new URL('./fixtures/dbt-jaffle/catalog.json', import.meta.url), 'utf8'));
    const imp = (body: unknown, provider = 'transform') => t.req('POST', `/api/workspaces/default/lineage/imports/${provider}`, { body, as: admin });
    const J = '/api/workspaces/default/catalogs/warehouse/schemas/jaffle/tables';
    // The relations the manifest names exist in the catalog (an import skips ends that do not).
    await run('CREATE SCHEMA IF NOT EXISTS jaffle');
    await run('CREATE SCHEMA IF NOT EXISTS jaffle_raw');
    for (const name of ['jaffle.country_codes', 'jaffle.stg_orders', 'jaffle.stg_customers', 'jaffle.customers', 'jaffle.fct_orders', 'jaffle.accounts_enriched', 'jaffle_raw.raw_orders', 'jaffle_raw.raw_customers']) {
      await run(`CREATE TABLE ${name} (id INTEGER)`);
    }
    const jaffle = async (table: string, query = '') => (await t.req('GET', `${J}/${table}/lineage${query}`, { as: admin })).body;

    const r = await imp(manifest);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ provider: 'transform', created: 8, updated: 0 });
    expect(r.body.skipped).toEqual([
      { item: 'model.jaffle_shop.retired_model -> model.jaffle_shop.orphan', reason: expect.stringContaining('does not declare') },
      { item: 'model.jaffle_shop.orders -> model.jaffle_shop.legacy_report', reason: 'catalog legacy_dw is not attached to this workspace' },
    ]);
    const up = await jaffle('customers', '?direction=upstream&depth=5');
    expect(pairs(up)).toEqual([
      'warehouse.jaffle.country_codes -> warehouse.jaffle.customers',
      'warehouse.jaffle.stg_customers -> warehouse.jaffle.customers',
      // int_order_totals is ephemeral: its parent feeds customers directly.
      'warehouse.jaffle.stg_orders -> warehouse.jaffle.customers',
      'warehouse.jaffle_raw.raw_customers -> warehouse.jaffle.stg_customers',
      'warehouse.jaffle_raw.raw_orders -> warehouse.jaffle.stg_orders',
    ]);
    expect(up.edges[0].providers).toEqual([expect.objectContaining({ provider: 'transform', column_lineage: 'unknown', first_seen_at: '2026-11-20T08:30:00.000Z' })]);
    // Aliases name the relation; a source outside the workspace's catalogs is an external node.
    expect(pairs(await jaffle('stg_orders', '?direction=downstream'))).toEqual(['warehouse.jaffle.stg_orders -> warehouse.jaffle.customers', 'warehouse.jaffle.stg_orders -> warehouse.jaffle.fct_orders']);
    expect(pairs(await jaffle('accounts_enriched', '?direction=upstream&depth=1'))).toEqual([
      'external:crm_pg.public.accounts -> warehouse.jaffle.accounts_enriched',
      'warehouse.jaffle.stg_customers -> warehouse.jaffle.accounts_enriched',
    ]);

    // With catalog.json: each model's compiled SQL gives its columns; a repeat re-observes every edge.
    const again = await imp({ manifest, catalog });
    expect(again.body).toMatchObject({ created: 0, updated: 8 });
    expect(columnPairs(await jaffle('customers', '?direction=upstream&depth=1&columns_for=warehouse.jaffle.customers'))).toEqual([
      'warehouse.jaffle.country_codes.country_name -> warehouse.jaffle.customers.country_name',
      'warehouse.jaffle.stg_customers.customer_id -> warehouse.jaffle.customers.customer_id',
      'warehouse.jaffle.stg_customers.full_name -> warehouse.jaffle.customers.full_name',
      'warehouse.jaffle.stg_orders.amount -> warehouse.jaffle.customers.lifetime_value',
    ]);
    expect(columnPairs(await jaffle('stg_customers', '?direction=upstream&depth=1&columns_for=warehouse.jaffle.stg_customers'))).toEqual([
      'warehouse.jaffle_raw.raw_customers.country -> warehouse.jaffle.stg_customers.country',
      'warehouse.jaffle_raw.raw_customers.first_name -> warehouse.jaffle.stg_customers.full_name',
      'warehouse.jaffle_raw.raw_customers.id -> warehouse.jaffle.stg_customers.customer_id',
      'warehouse.jaffle_raw.raw_customers.last_name -> warehouse.jaffle.stg_customers.full_name',
    ]);
    expect(columnPairs(await jaffle('accounts_enriched', '?direction=upstream&depth=1&columns_for=warehouse.jaffle.accounts_enriched'))).toEqual([
      'external:crm_pg.public.accounts.account_id -> warehouse.jaffle.accounts_enriched.account_id',
      'external:crm_pg.public.accounts.tier -> warehouse.jaffle.accounts_enriched.tier',
      'warehouse.jaffle.stg_customers.full_name -> warehouse.jaffle.accounts_enriched.full_name',
    ]);
    const edge = (await jaffle('customers', '?direction=upstream&depth=1')).edges[0];
    expect(edge).toMatchObject({ observation_count: 2, providers: [{ provider: 'transform', column_lineage: 'derived' }] });

    // Not an artifact: 422 naming the expected format, never 500; an unknown provider is 422 too.
    for (const bad of ['not json', { nodes: 3 }, { manifest: { metadata: {} } }, { metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json' }, nodes: {} }]) {
      const res = await t.req('POST', '/api/workspaces/default/lineage/imports/transform', typeof bad === 'string' ? { rawBody: bad, headers: { 'content-type': 'text/plain' }, as: admin } : { body: bad, as: admin });
      expect(res.status, res.text).toBe(422);
      expect(res.body.error).toBe('invalid_artifact');
      expect(res.body.message).toContain('dbt manifest.json');
    }
    expect((await imp(manifest, 'airflow')).status).toBe(422);
    expect((await t.req('DELETE', '/api/workspaces/default/lineage/imports?provider=transform', { as: admin })).body).toEqual({ provider: 'transform', deleted: 8 });
  });

  it('a renamed table keeps its edges: those that recorded its uuid, and uuid-less ones under its old name', async () => {
    await run('CREATE TABLE lin.src AS SELECT id FROM lin.raw');
    await run('CREATE TABLE lin.dst AS SELECT * FROM lin.src');
    await expect.poll(async () => pairs((await graph('src', '?depth=1')).body), { timeout: 10_000 }).toEqual([
      'warehouse.lin.raw -> warehouse.lin.src',
      'warehouse.lin.src -> warehouse.lin.dst',
    ]);
    const imp = await t.req('POST', '/api/workspaces/default/lineage/imports', {
      body: { provider: 'feeds', edges: [{ source: { external: 'feed' }, target: { catalog: 'warehouse', schema: 'lin', table: 'src' } }] },
      as: admin,
    });
    expect(imp.status, imp.text).toBe(200);
    const uuids = await t.api.db.query<{ target_key: string; source_uuid: string | null; target_uuid: string | null }>(
      `select target_key, source_uuid::text, target_uuid::text from lineage_edges where source_key = 'warehouse.lin.src' or target_key = 'warehouse.lin.src' order by target_key, provider`,
    );
    const srcUuid = uuids.find((u) => u.target_key === 'warehouse.lin.dst')!.source_uuid;
    expect(srcUuid).toMatch(/^[0-9a-f-]{36}$/);
    // The execution edge into src carries src's uuid; the imported one (provider feeds) carries none.
    expect(uuids.filter((u) => u.target_key === 'warehouse.lin.src').map((u) => u.target_uuid)).toEqual([srcUuid, null]);
    // An edge left under the name by an earlier table of that name (dropped outside Eider): another uuid.
    await t.api.db.query(
      `insert into lineage_edges (source_key, target_key, provider, first_seen_at, last_seen_at, source_uuid)
       values ('warehouse.lin.src', 'warehouse.lin.gone', 'execution', now(), now(), gen_random_uuid())`,
    );

    await run('ALTER TABLE lin.src RENAME TO src2');
    await expect.poll(async () => pairs((await graph('src2', '?depth=1')).body), { timeout: 10_000 }).toEqual([
      'external:feed -> warehouse.lin.src2',
      'warehouse.lin.raw -> warehouse.lin.src2',
      'warehouse.lin.src2 -> warehouse.lin.dst',
    ]);
    const renamed = (await graph('src2', '?depth=1&columns_for=warehouse.lin.src2')).body;
    expect(renamed.edges.find((e: any) => e.target === 'warehouse.lin.dst')).toMatchObject({ observation_count: 1, columns: [{ source_column: 'id', target_column: 'id' }] });
    // What stays under the old name is the earlier table's edge; the name itself is no table now (404).
    const left = await t.api.db.query<{ source_key: string; target_key: string }>(
      `select source_key, target_key from lineage_edges where source_key = 'warehouse.lin.src' or target_key = 'warehouse.lin.src'`,
    );
    expect(pairs({ edges: left.map((r) => ({ source: r.source_key, target: r.target_key })) })).toEqual(['warehouse.lin.src -> warehouse.lin.gone']);
    expect((await graph('src', '?depth=1')).status).toBe(404);
    // Writing through the new name observes the same edge again.
    await run('INSERT INTO lin.dst SELECT * FROM lin.src2');
    await expect.poll(async () => (await graph('src2', '?direction=downstream&depth=1')).body.edges[0].observation_count, { timeout: 10_000 }).toBe(2);
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
      expect(g.nodes.filter((n: any) => n.kind === 'redacted').length).toBe(4);
      expect(JSON.stringify(g)).not.toMatch(/raw|regions|summary|wide/);
      // Redacted ends carry no column detail, even when asked for.
      expect(g.edges.every((e: any) => e.columns.length === 0)).toBe(true);
      expect((await graph('raw', '', reader)).status).toBe(404);
      // Importing needs write on each target table's catalog (the spec's "writer on each target catalog"): a read
      // grant is not enough; an external target needs none.
      const imp = (target: unknown) =>
        t.req('POST', '/api/workspaces/default/lineage/imports', { as: admin, body: { provider: 'scoped-check', edges: [{ source: { external: 'crm' }, target }] } });
      const refused = await imp({ catalog: 'warehouse', schema: 'lin', table: 'enriched' });
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.error).toBe('not_granted');
      expect((await imp({ external: 'report' })).status).toBe(200);
      await t.req('DELETE', '/api/workspaces/default/lineage/imports?provider=scoped-check', { as: admin });
    } finally {
      await t.req('PUT', '/api/workspaces/default/catalogs/warehouse', { body: { make_default: true, access_mode: 'full' }, as: admin });
    }
    await run('DROP TABLE lin.summary');
    await expect.poll(async () => pairs((await graph('enriched', '?direction=downstream')).body), { timeout: 10_000 }).toEqual(['warehouse.lin.enriched -> warehouse.lin.wide']);
    expect((await graph('summary')).status).toBe(404);
  });

  it('a write whose columns cannot be established keeps its table edge, unsupported, and is counted', async () => {
    const failures = async () => (await t.api.ctx.metrics!.lineageFailures.get()).values.find((v) => v.labels.stage === 'columns')?.value ?? 0;
    const before = await failures();
    await run('CREATE TABLE lin.odd AS WITH RECURSIVE r(i) AS (SELECT id FROM lin.raw UNION ALL SELECT i + 1 FROM r WHERE i < 0) SELECT i FROM r');
    await expect.poll(async () => pairs((await graph('odd', '?direction=upstream')).body), { timeout: 10_000 }).toEqual(['warehouse.lin.raw -> warehouse.lin.odd']);
    const e = (await graph('odd', '?direction=upstream')).body.edges[0];
    expect(e.providers[0].column_lineage).toBe('unsupported');
    expect(e.columns).toEqual([]);
    expect(await failures()).toBe(before + 1);
  });

  it('backfills lineage from query history: resumes from its checkpoint, counts no observation twice', async () => {
    const ws = (await t.api.db.query<{ id: string }>(`select id from workspaces where slug = 'default'`))[0].id;
    const B = '/api/workspaces/default/lineage/backfill';
    expect((await t.req('GET', B, { as: admin })).status).toBe(404);
    // History from before lineage was recorded: the execution edges are gone; one write since records its edge live.
    await t.api.db.query(`delete from lineage_edges where provider = 'execution'`);
    await run('INSERT INTO lin.wide SELECT *, upper(name), id * 10 FROM lin.enriched');
    await expect.poll(async () => pairs((await graph('wide', '?direction=upstream&depth=1')).body), { timeout: 10_000 }).toEqual(['warehouse.lin.enriched -> warehouse.lin.wide']);
    const [{ n: writes }] = await t.api.db.query<{ n: string }>(
      `select count(*) as n from queries where workspace_id = $1 and status = 'done' and statement_type in ('insert', 'merge', 'update', 'create')`,
      [ws],
    );

    // A runner that does one batch and stops, as a process killed after a checkpoint would.
    const { job, token } = await claimBackfill(t.api.db, ws, admin.id);
    expect(await runBackfill(t.api.db, job.id, token, { catalog: t.api.ctx.catalog! }, { batchSize: 2, maxBatches: 1 })).toBe('stopped');
    const stopped = (await t.req('GET', B, { as: admin })).body;
    expect(stopped).toMatchObject({ status: 'running', stalled: false, report: { scanned: 2, resumed_from: null } });
    expect(stopped.checkpoint).not.toBeNull();
    // While its runner beats, nobody else runs it.
    const busy = await t.req('POST', B, { as: admin });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toBe('backfill_running');
    // The runner died a while ago: the next request resumes from the checkpoint.
    await t.api.db.query(`update lineage_backfills set heartbeat_at = now() - interval '5 minutes' where id = $1`, [job.id]);
    expect((await t.req('GET', B, { as: admin })).body.stalled).toBe(true);
    const resumed = await t.req('POST', B, { as: admin });
    expect(resumed.status, resumed.text).toBe(202);
    expect(resumed.body).toMatchObject({ id: job.id, report: { resumed_from: stopped.checkpoint } });
    await expect.poll(async () => (await t.req('GET', B, { as: admin })).body.status, { timeout: 20_000 }).toBe('done');
    const done = (await t.req('GET', B, { as: admin })).body;
    // Created: raw → enriched, regions → enriched, src2 → dst, raw → odd. Updated: enriched → wide, whose CTAS is older
    // than its live observation. Edges into dropped (summary) or renamed-away (src) tables are not recreated.
    expect(done.report).toEqual({ scanned: Number(writes), edges_created: 4, edges_updated: 1, failed: 0, resumed_from: stopped.checkpoint });

    const around = (await graph('enriched', '?depth=1&columns_for=warehouse.lin.enriched')).body;
    expect(pairs(around)).toEqual([
      'warehouse.lin.enriched -> warehouse.lin.wide',
      'warehouse.lin.raw -> warehouse.lin.enriched',
      'warehouse.lin.regions -> warehouse.lin.enriched',
    ]);
    expect(around.edges.map((e: any) => e.observation_count)).toEqual([2, 1, 1]);
    expect(columnPairs(around)).toContain('warehouse.lin.raw.id -> warehouse.lin.enriched.id');
    expect(columnPairs(around)).toContain('warehouse.lin.enriched.name -> warehouse.lin.wide.name_u');
    expect(pairs((await graph('dst', '?direction=upstream&depth=1')).body)).toEqual(['warehouse.lin.src2 -> warehouse.lin.dst']);

    // A second run scans the same history and finds every observation already counted.
    const again = await t.req('POST', B, { as: admin });
    expect(again.status).toBe(202);
    expect(again.body.id).not.toBe(job.id);
    await expect.poll(async () => (await t.req('GET', B, { as: admin })).body.status, { timeout: 20_000 }).toBe('done');
    expect((await t.req('GET', B, { as: admin })).body.report).toEqual({ scanned: Number(writes), edges_created: 0, edges_updated: 0, failed: 0, resumed_from: null });
    expect((await graph('enriched', '?depth=1')).body.edges.map((e: any) => e.observation_count)).toEqual([2, 1, 1]);
  });
});
