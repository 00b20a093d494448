// The agent's Iceberg bridge against a real catalog service, real object stores and real DuckDB: DDL, DML
// (copy-on-write), schema evolution, partitioned appends with pruning, time travel; every table shape written is
// read back by icebird, an independent Iceberg reader, with the rows the agent returns.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { startExtraStore, type CatalogStack } from './support/catalogStack.ts';
import type { BridgeAgent } from './support/bridgeAgent.ts';
import { startCatalogWithBridge, type CatalogWithBridge } from './support/catalogWithBridge.ts';
import { icebirdRows, liveFiles, loadMetadata } from './support/icebergInspect.ts';
import { bucketOf } from '../iceberg/transforms.ts';

let world: CatalogWithBridge | undefined;
let stack: CatalogStack;
let agent: BridgeAgent;
/** A second agent with its own (cold) cache: what it fetches shows pruning. */
let reader: BridgeAgent;

// Every shape runs on each backend an agent reaches over S3: the bundled store, and a second S3-compatible
// endpoint (its own object-store process, port, bucket and keys) as an object_store or s3 backend has it.
const BACKENDS = [
  { backend: 'the bundled store', second: false },
  { backend: 'a second S3-compatible endpoint', second: true },
];

async function startOn(second: boolean) {
  const extra = second ? await startExtraStore({ bucket: 'lake2' }) : undefined;
  world = await startCatalogWithBridge({ store: extra, closeAfter: extra && [extra], bridges: 2 });
  ({ stack } = world);
  [agent, reader] = world.agents;
  await agent.exec('CREATE SCHEMA sales');
}

async function stopAll() {
  await world?.close();
  world = undefined;
}

const norm = (rows: Record<string, unknown>[]) =>
  rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.toISOString() : v])));

/** The table's row-level statements rewrite data files (merge-on-read is the default for v2 tables). */
async function copyOnWrite(table: string) {
  const modes = Object.fromEntries(['delete', 'update', 'merge'].map((op) => [`write.${op}.mode`, 'copy-on-write']));
  const res = await stack.request('POST', `/v1/wh/namespaces/sales/tables/${table}`, { requirements: [], updates: [{ action: 'set-properties', updates: modes }] });
  expect(res.status).toBe(200);
}

async function sameAsIcebird(table: string, orderBy: string, columns: string) {
  const ours = norm(await agent.query(`SELECT ${columns} FROM sales.${table} ORDER BY ${orderBy}`));
  const theirs = norm(await icebirdRows(stack, 'wh', 'sales', table));
  const key = orderBy.split(',')[0].trim();
  const pick = columns.split(',').map((c) => c.trim());
  const sorted = theirs
    .map((r) => Object.fromEntries(pick.map((c) => [c, r[c] ?? null])))
    .sort((a, b) => (a[key] as number) - (b[key] as number));
  expect(sorted).toEqual(ours);
  return ours;
}

async function fetchesFor(sql: string): Promise<{ fetches: number; rows: Record<string, unknown>[] }> {
  const before = reader.cache.stats.fetches;
  const rows = await reader.query(sql);
  return { fetches: reader.cache.stats.fetches - before, rows };
}

describe.each(BACKENDS)('the Iceberg bridge on $backend', ({ second }) => {
  beforeAll(() => startOn(second));
  afterAll(stopAll);

  it('keeps every file on the backend it runs on', async () => {
    await agent.exec('CREATE TABLE sales.placed (id INTEGER)');
    await agent.exec('INSERT INTO sales.placed VALUES (1)');
    const files = await liveFiles(stack, 'wh', 'sales', 'placed');
    expect(files[0]).toMatch(second ? /^s3:\/\/lake2\/wh\/sales\/placed\/data\// : /^s3:\/\/warehouse\/wh\/sales\/placed\/data\//);
  });

  it('creates a table, inserts, and reads back by catalog.schema.table and schema.table', async () => {
    await agent.exec('CREATE TABLE sales.orders (id BIGINT, region VARCHAR, amount DOUBLE)');
    expect(await agent.exec(`INSERT INTO sales.orders VALUES (1, 'eu', 10.5), (2, 'us', 20), (3, 'eu', 30.25)`)).toBe(3);
    expect(await agent.exec(`INSERT INTO wh.sales.orders (id, region) VALUES (4, 'apac')`)).toBe(1);
    expect(norm(await agent.query('SELECT * FROM wh.sales.orders ORDER BY id'))).toEqual([
      { id: 1, region: 'eu', amount: 10.5 },
      { id: 2, region: 'us', amount: 20 },
      { id: 3, region: 'eu', amount: 30.25 },
      { id: 4, region: 'apac', amount: null },
    ]);
    expect(norm(await reader.query(`SELECT region, count(*) AS n FROM sales.orders GROUP BY region ORDER BY region`))).toEqual([
      { region: 'apac', n: 1 }, { region: 'eu', n: 2 }, { region: 'us', n: 1 },
    ]);
    await sameAsIcebird('orders', 'id', 'id, region, amount');
  });

  it('a statement nested past the parser guard is refused with its reason, not "table does not exist"', async () => {
    const deep = `SELECT sum(length(${'md5('.repeat(40)}region${')'.repeat(40)})) AS l FROM sales.orders`;
    await expect(agent.query(deep)).rejects.toThrow(/nests too deeply for its tables to be read/);
    // within the guard it reads the table
    expect(norm(await agent.query(`SELECT count(${'abs('.repeat(8)}id${')'.repeat(8)}) AS n FROM sales.orders`))).toEqual([{ n: 4 }]);
  });

  it('CTAS creates and fills a table, with the row count reported', async () => {
    expect(await agent.exec(`CREATE TABLE sales.big AS SELECT range AS id, 'r' || (range % 5) AS region FROM range(1000)`)).toBe(1000);
    expect(norm(await reader.query('SELECT count(*) AS n, sum(id)::BIGINT AS s FROM sales.big'))).toEqual([{ n: 1000, s: 499500 }]);
  });

  it('UPDATE, DELETE and MERGE rewrite only the files they touch (copy-on-write)', async () => {
    await agent.exec('CREATE TABLE sales.cow (id INTEGER, grp VARCHAR, v INTEGER)');
    await copyOnWrite('cow');
    // Three appends: three data files.
    for (const g of ['a', 'b', 'c']) {
      await agent.exec(`INSERT INTO sales.cow SELECT range + ${g.charCodeAt(0) * 100}, '${g}', 0 FROM range(5)`);
    }
    const files0 = await liveFiles(stack, 'wh', 'sales', 'cow');
    expect(files0).toHaveLength(3);

    expect(await agent.exec(`UPDATE sales.cow SET v = 1 WHERE grp = 'b'`)).toBe(5);
    const files1 = await liveFiles(stack, 'wh', 'sales', 'cow');
    expect(files1.filter((f) => files0.includes(f))).toHaveLength(2);

    expect(await agent.exec(`DELETE FROM sales.cow WHERE id = ${'c'.charCodeAt(0) * 100 + 2}`)).toBe(1);
    const files2 = await liveFiles(stack, 'wh', 'sales', 'cow');
    expect(files2.filter((f) => files1.includes(f))).toHaveLength(2);

    // MERGE: one matched row of group a, one new row.
    const merged = await agent.exec(
      `MERGE INTO sales.cow AS t USING (SELECT ${'a'.charCodeAt(0) * 100} AS id, 'a' AS grp, 7 AS v UNION ALL SELECT 1, 'z', 9) AS s ON t.id = s.id ` +
        `WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.grp, s.v)`,
    );
    expect(merged).toBe(2);
    const files3 = await liveFiles(stack, 'wh', 'sales', 'cow');
    // File of group a rewritten (with the new row appended alongside), files of b and c kept.
    expect(files3.filter((f) => files2.includes(f))).toHaveLength(2);

    const rows = await sameAsIcebird('cow', 'id', 'id, grp, v');
    expect(rows).toHaveLength(15);
    expect(rows.filter((r) => r.v === 1)).toHaveLength(5);
    expect(rows.find((r) => r.id === 9700)).toEqual({ id: 9700, grp: 'a', v: 7 });
    expect(rows.find((r) => r.id === 1)).toEqual({ id: 1, grp: 'z', v: 9 });
    expect(rows.some((r) => r.id === 9902)).toBe(false);

    // A statement that changes nothing commits nothing.
    const snapshots = (await loadMetadata(stack, 'wh', 'sales', 'cow')).metadata.snapshots.length;
    expect(await agent.exec(`DELETE FROM sales.cow WHERE id = -1`)).toBe(0);
    expect((await loadMetadata(stack, 'wh', 'sales', 'cow')).metadata.snapshots.length).toBe(snapshots);
  });

  it('schema evolution: add, rename, drop a column and widen int to bigint', async () => {
    await agent.exec('CREATE TABLE sales.evo (id INTEGER, name VARCHAR, extra VARCHAR)');
    await agent.exec(`INSERT INTO sales.evo VALUES (1, 'one', 'x'), (2, 'two', 'y')`);
    await agent.exec('ALTER TABLE sales.evo ADD COLUMN score DOUBLE');
    await agent.exec('ALTER TABLE sales.evo RENAME COLUMN name TO label');
    await agent.exec('ALTER TABLE sales.evo DROP COLUMN extra');
    await agent.exec('ALTER TABLE sales.evo ALTER COLUMN id TYPE BIGINT');
    await agent.exec(`INSERT INTO sales.evo VALUES (3000000000, 'three', 3.5)`);
    const rows = norm(await reader.query('SELECT * FROM sales.evo ORDER BY id'));
    expect(rows).toEqual([
      { id: 1, label: 'one', score: null },
      { id: 2, label: 'two', score: null },
      { id: 3000000000, label: 'three', score: 3.5 },
    ]);
    const { metadata } = await loadMetadata(stack, 'wh', 'sales', 'evo');
    const schema = metadata.schemas.find((s) => s['schema-id'] === metadata['current-schema-id'])!;
    expect(schema.fields.map((f) => [f.id, f.name, f.type])).toEqual([[1, 'id', 'long'], [2, 'label', 'string'], [4, 'score', 'double']]);
    // A narrowing or cross-type change is refused with a clear error.
    const bad = await agent.run('ALTER TABLE sales.evo ALTER COLUMN label TYPE INTEGER');
    expect(bad.type).toBe('query_failed');
    // icebird matches columns by name, through each file's `iceberg.schema` footer (the schema it was written
    // with): the file written before the rename and the drop reads right too.
    const theirs = norm(await icebirdRows(stack, 'wh', 'sales', 'evo')).sort((a, b) => (a.id as number) - (b.id as number));
    expect(theirs.map((r) => ({ id: r.id, label: r.label, score: r.score ?? null }))).toEqual(rows);
    expect(theirs.every((r) => !('extra' in r) && !('name' in r))).toBe(true);
  });

  // A schema-only change makes no snapshot: the very next read must still see it (not the last snapshot's schema).
  it('a schema-only change is visible to the very next read', async () => {
    await agent.exec('CREATE TABLE sales.evo2 (id INTEGER, name VARCHAR, extra VARCHAR)');
    await agent.exec(`INSERT INTO sales.evo2 VALUES (1, 'one', 'x')`);
    await agent.exec('ALTER TABLE sales.evo2 ADD COLUMN score DOUBLE');
    expect(norm(await agent.query('SELECT * FROM sales.evo2'))).toEqual([{ id: 1, name: 'one', extra: 'x', score: null }]);
    await agent.exec('ALTER TABLE sales.evo2 RENAME COLUMN name TO label');
    expect(norm(await agent.query('SELECT * FROM sales.evo2'))).toEqual([{ id: 1, label: 'one', extra: 'x', score: null }]);
    await agent.exec('ALTER TABLE sales.evo2 DROP COLUMN extra');
    expect(norm(await agent.query('SELECT * FROM sales.evo2'))).toEqual([{ id: 1, label: 'one', score: null }]);
  });

  // Even past a policy hole, a query reads only the files its own tables resolved to: the agent-wide cache (every
  // workspace's data files) is outside DuckDB's allowed directories, and the view SQL names no cache path.
  it('a query cannot read the agent-wide cache; its views name only its own linked files', async () => {
    await agent.exec('CREATE TABLE sales.iso (id INTEGER)');
    await agent.exec('INSERT INTO sales.iso VALUES (1), (2)');
    expect(norm(await agent.query('SELECT count(*) AS n FROM sales.iso'))).toEqual([{ n: 2 }]);
    const cacheDir = join(agent.dataDir, 'cache');
    const direct = await agent.run(`SELECT count(*) FROM read_parquet('${cacheDir}/**/*.parquet')`);
    expect(direct.type).toBe('query_failed');
    const listing = await agent.run(`SELECT count(*) FROM glob('${cacheDir}/**')`);
    expect(listing.type).toBe('query_failed');
    const views = norm(await agent.query("SELECT sql FROM duckdb_views() WHERE NOT internal AND sql ILIKE '%read_parquet%'"));
    expect(JSON.stringify(views)).not.toContain(cacheDir);
  });

  it('partitioned tables (identity, day, bucket, truncate) append, read, and prune', async () => {
    await agent.exec(`CREATE TABLE sales.p_ident (id INTEGER, region VARCHAR) PARTITIONED BY (region)`);
    await agent.exec(`INSERT INTO sales.p_ident VALUES (1, 'eu'), (2, 'us'), (3, 'eu'), (4, 'apac'), (5, NULL)`);
    expect(await liveFiles(stack, 'wh', 'sales', 'p_ident')).toHaveLength(4);
    let r = await fetchesFor(`SELECT id FROM sales.p_ident WHERE region = 'eu' ORDER BY id`);
    expect(norm(r.rows)).toEqual([{ id: 1 }, { id: 3 }]);
    expect(r.fetches).toBe(1);
    await sameAsIcebird('p_ident', 'id', 'id, region');

    await agent.exec(`CREATE TABLE sales.p_day (id INTEGER, ts TIMESTAMP) PARTITIONED BY (day(ts))`);
    await agent.exec(`INSERT INTO sales.p_day VALUES (1, '2024-01-01 10:00'), (2, '2024-01-02 00:00'), (3, '2024-01-02 23:59:59'), (4, '2024-01-03 05:00'), (5, '1969-12-31 23:00')`);
    expect(await liveFiles(stack, 'wh', 'sales', 'p_day')).toHaveLength(4);
    r = await fetchesFor(`SELECT id FROM sales.p_day WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' AND ts < TIMESTAMP '2024-01-03 00:00:00' ORDER BY id`);
    expect(norm(r.rows)).toEqual([{ id: 2 }, { id: 3 }]);
    expect(r.fetches).toBe(1);
    r = await fetchesFor(`SELECT id FROM sales.p_day WHERE ts < '1970-01-01' ORDER BY id`);
    expect(norm(r.rows)).toEqual([{ id: 5 }]);
    expect(r.fetches).toBe(1);
    await sameAsIcebird('p_day', 'id', 'id');

    await agent.exec(`CREATE TABLE sales.p_bucket (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(4, id))`);
    await agent.exec(`INSERT INTO sales.p_bucket SELECT range, 'v' || range FROM range(1, 41)`);
    const bucketFiles = await liveFiles(stack, 'wh', 'sales', 'p_bucket');
    expect(bucketFiles.length).toBe(4);
    let fetched = 0;
    for (const id of [7, 23, 40]) {
      r = await fetchesFor(`SELECT id, v FROM sales.p_bucket WHERE id = ${id}`);
      expect(norm(r.rows)).toEqual([{ id, v: `v${id}` }]);
      fetched += r.fetches;
    }
    // One file per distinct bucket of the three ids (a later id in an already fetched bucket hits the cache).
    expect(fetched).toBe(new Set([7n, 23n, 40n].map((id) => bucketOf('long', id, 4))).size);
    await sameAsIcebird('p_bucket', 'id', 'id, v');

    await agent.exec(`CREATE TABLE sales.p_trunc (id INTEGER, name VARCHAR) PARTITIONED BY (truncate(2, name))`);
    await agent.exec(`INSERT INTO sales.p_trunc VALUES (1, 'aa1'), (2, 'aa2'), (3, 'bb1'), (4, 'cc1')`);
    expect(await liveFiles(stack, 'wh', 'sales', 'p_trunc')).toHaveLength(3);
    r = await fetchesFor(`SELECT id FROM sales.p_trunc WHERE name = 'bb1'`);
    expect(norm(r.rows)).toEqual([{ id: 3 }]);
    expect(r.fetches).toBe(1);
    await sameAsIcebird('p_trunc', 'id', 'id, name');

    // A partitioned table after copy-on-write: only the partition touched is rewritten.
    await copyOnWrite('p_ident');
    const before = await liveFiles(stack, 'wh', 'sales', 'p_ident');
    expect(await agent.exec(`UPDATE sales.p_ident SET id = id + 100 WHERE region = 'us'`)).toBe(1);
    const after = await liveFiles(stack, 'wh', 'sales', 'p_ident');
    expect(after.filter((f) => before.includes(f))).toHaveLength(3);
    await sameAsIcebird('p_ident', 'id', 'id, region');
  });

  it('reads an older snapshot with the __snapshot_<id> suffix', async () => {
    await agent.exec('CREATE TABLE sales.tt (id INTEGER)');
    await agent.exec('INSERT INTO sales.tt VALUES (1), (2)');
    const first = (await loadMetadata(stack, 'wh', 'sales', 'tt')).metadata['current-snapshot-id'];
    await agent.exec('INSERT INTO sales.tt VALUES (3)');
    await agent.exec('DELETE FROM sales.tt WHERE id = 1');
    expect(norm(await agent.query(`SELECT id FROM sales.tt__snapshot_${first} ORDER BY id`))).toEqual([{ id: 1 }, { id: 2 }]);
    expect(norm(await agent.query(`SELECT id FROM wh.sales.tt ORDER BY id`))).toEqual([{ id: 2 }, { id: 3 }]);
    const missing = await agent.run(`SELECT * FROM sales.tt__snapshot_12345`);
    expect(missing.type === 'query_failed' && missing.payload.error).toMatchObject({ code: 'catalog_error', message: expect.stringContaining('snapshot 12345 does not exist') });
  });

  it('reads the table as it was at an instant with the __at_<epoch ms> suffix', async () => {
    await agent.exec('CREATE TABLE sales.tat (id INTEGER)');
    await agent.exec('INSERT INTO sales.tat VALUES (1)');
    const log = (await loadMetadata(stack, 'wh', 'sales', 'tat')).metadata['snapshot-log'];
    const firstAt = Number(log[log.length - 1]['timestamp-ms']);
    await new Promise((r) => setTimeout(r, 5));
    await agent.exec('INSERT INTO sales.tat VALUES (2)');
    expect(norm(await agent.query(`SELECT id FROM sales.tat__at_${firstAt} ORDER BY id`))).toEqual([{ id: 1 }]);
    expect(norm(await agent.query(`SELECT id FROM sales.tat__at_${Date.now()} ORDER BY id`))).toEqual([{ id: 1 }, { id: 2 }]);
    const before = await agent.run(`SELECT * FROM sales.tat__at_${firstAt - 60_000}`);
    expect(before.type === 'query_failed' && before.payload.error).toMatchObject({ code: 'catalog_error', message: expect.stringContaining('no snapshot at or before') });
    const write = await agent.run(`INSERT INTO sales.tat__at_${firstAt} VALUES (3)`);
    expect(write.type).toBe('query_failed');
  });

  it('runs a script statement by statement, each seeing the previous one\'s commit', async () => {
    expect(await agent.exec(`CREATE TABLE sales.sc (id INTEGER); INSERT INTO sales.sc VALUES (1), (2); UPDATE sales.sc SET id = id * 10; INSERT INTO sales.sc SELECT id + 1 FROM sales.sc`)).toBe(6);
    expect(norm(await reader.query('SELECT id FROM sales.sc ORDER BY id'))).toEqual([{ id: 10 }, { id: 11 }, { id: 20 }, { id: 21 }]);
  });

  it('drops tables and schemas; a dropped table is not found', async () => {
    await agent.exec('CREATE SCHEMA scratch');
    await agent.exec('CREATE TABLE scratch.t (id INTEGER)');
    await agent.exec('INSERT INTO scratch.t VALUES (1)');
    const notEmpty = await agent.run('DROP SCHEMA scratch');
    expect(notEmpty.type === 'query_failed' && notEmpty.payload.error.code).toBe('catalog_error');
    await agent.exec('DROP TABLE scratch.t');
    const gone = await reader.run('SELECT * FROM scratch.t');
    expect(gone.type).toBe('query_failed');
    expect(gone.type === 'query_failed' && gone.payload.error.message).toMatch(/does not exist/i);
    await agent.exec('DROP SCHEMA scratch');
    expect((await stack.request('GET', '/v1/wh/namespaces/scratch')).status).toBe(404);
  });
});
