// Row-level writes as merge-on-read (Iceberg v2 position delete files) through the agent's real query path, a real
// catalog service, the bundled object store and DuckDB: DELETE, UPDATE and MERGE leave every data file in place and
// add position delete files (and a data file for changed rows); a second change to a file that already has deletes
// finds the right positions; the agent and icebird (an independent reader that applies position deletes) read the
// same exact rows; time travel reads the snapshot before; compaction folds the deletes away; the table property
// `write.<op>.mode = copy-on-write` still rewrites files.
import { describe, it, expect, beforeAll } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { readManifest, readManifestList } from '../iceberg/avro.ts';
import { DELETE_FILE_PATH_ID, DELETE_POS_ID } from '../iceberg/positionDeletes.ts';
import { parseS3Uri } from '../iceberg/storageUri.ts';
import type { TableMetadata } from '../iceberg/metadata.ts';
import { catalogWithBridge } from './support/catalogWithBridge.ts';
import { icebirdRows, liveFiles, loadMetadata } from './support/icebergInspect.ts';

const { stack, agent } = await catalogWithBridge({ bridges: 1 });

beforeAll(async () => {
  await agent.exec('CREATE SCHEMA mor');
});

const norm = (rows: Record<string, unknown>[]) =>
  rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));

async function metadataOf(table: string): Promise<TableMetadata> {
  return (await loadMetadata(stack, 'wh', 'mor', table)).metadata;
}

const current = (m: TableMetadata) => m.snapshots.find((s) => String(s['snapshot-id']) === String(m['current-snapshot-id']))!;

async function getBytes(uri: string): Promise<Uint8Array> {
  const { bucket, key } = parseS3Uri(uri);
  const res = await stack.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return res.Body!.transformToByteArray();
}

/** Every live delete file of the current snapshot: its manifest entry's file. */
async function deleteFiles(table: string) {
  const m = await metadataOf(table);
  const list = readManifestList(await getBytes(current(m)['manifest-list'])).manifests;
  const out = [];
  for (const mf of list.filter((x) => x.content === 1)) {
    for (const e of readManifest(await getBytes(mf.manifest_path)).entries) if (e.status !== 2) out.push(e.data_file);
  }
  return out;
}

/** The agent's rows and icebird's, both sorted by id: they must be equal; the agent's are returned. */
async function bothReaders(table: string): Promise<Record<string, unknown>[]> {
  const ours = norm(await agent.query(`SELECT id, p, v, s FROM mor.${table} ORDER BY id`));
  const theirs = norm(await icebirdRows(stack, 'wh', 'mor', table))
    .map((r) => ({ id: r.id, p: r.p, v: r.v ?? null, s: r.s ?? null }))
    .sort((a, b) => (a.id as number) - (b.id as number));
  expect(theirs).toEqual(ours);
  return ours;
}

async function setProperties(table: string, updates: Record<string, string>): Promise<void> {
  const res = await stack.request('POST', `/v1/wh/namespaces/mor/tables/${table}`, { requirements: [], updates: [{ action: 'set-properties', updates }] });
  expect(res.status).toBe(200);
}

/** 0..39 in partition 0 and 100..139 in partition 1, written by two INSERTs: four data files. */
async function table(name: string): Promise<void> {
  await agent.exec(`CREATE TABLE mor.${name} (id INTEGER, p INTEGER, v DOUBLE, s VARCHAR) PARTITIONED BY (p)`);
  for (const half of [0, 1]) {
    await agent.exec(
      `INSERT INTO mor.${name} SELECT range + 80 * (range >= 20)::INTEGER + ${half * 20}, (range >= 20)::INTEGER, range / 4, 'r' || range FROM range(40)`,
    );
  }
}

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => r.id);

describe('merge-on-read row-level writes', () => {
  it('DELETE, UPDATE and MERGE write position deletes, keep every data file, and read back exactly', async () => {
    await table('t');
    const files0 = await liveFiles(stack, 'wh', 'mor', 't');
    expect(files0).toHaveLength(4);
    const all = await bothReaders('t');
    expect(all).toHaveLength(80);

    // DELETE: three rows in two partitions.
    expect(await agent.exec('DELETE FROM mor.t WHERE id IN (3, 25, 107)')).toBe(3);
    const afterDelete = await metadataOf('t');
    const deleteSnapshot = current(afterDelete);
    expect(deleteSnapshot.summary).toMatchObject({
      operation: 'delete',
      'added-data-files': '0',
      'added-delete-files': '2',
      'added-position-deletes': '3',
      'total-delete-files': '2',
      'total-position-deletes': '3',
      'total-data-files': '4',
      'total-records': '80',
    });
    expect(await liveFiles(stack, 'wh', 'mor', 't')).toEqual(files0);
    const dels = await deleteFiles('t');
    expect(dels.map((d) => [d.content, d.record_count, d.file_format])).toEqual(expect.arrayContaining([[1, 2n, 'PARQUET'], [1, 1n, 'PARQUET']]));
    expect(dels.every((d) => d.lower_bounds?.some((b) => b.key === DELETE_FILE_PATH_ID) && d.upper_bounds?.some((b) => b.key === DELETE_POS_ID))).toBe(true);
    let rows = await bothReaders('t');
    expect(rows).toHaveLength(77);
    expect(ids(rows)).not.toContain(3);
    expect(ids(rows)).not.toContain(25);
    expect(ids(rows)).not.toContain(107);

    // UPDATE of rows in files that already have deletes: positions must skip the deleted rows.
    expect(await agent.exec(`UPDATE mor.t SET v = -1, s = 'u' WHERE id IN (4, 26, 108, 139)`)).toBe(4);
    const update = current(await metadataOf('t'));
    expect(update.summary).toMatchObject({ operation: 'overwrite', 'added-data-files': '2', 'added-records': '4', 'added-position-deletes': '4', 'total-position-deletes': '7' });
    rows = await bothReaders('t');
    expect(rows).toHaveLength(77);
    expect(rows.filter((r) => r.v === -1).map((r) => [r.id, r.s])).toEqual([[4, 'u'], [26, 'u'], [108, 'u'], [139, 'u']]);
    expect(rows.find((r) => r.id === 5)).toEqual({ id: 5, p: 0, v: 1.25, s: 'r5' });

    // MERGE: one matched row updated, one matched row deleted, one row inserted.
    const merged = await agent.exec(
      `MERGE INTO mor.t AS t USING (VALUES (5, 0, 9.5, 'm'), (6, 0, 0.0, 'x'), (500, 1, 5.0, 'new')) AS src(id, p, v, s) ON t.id = src.id ` +
        `WHEN MATCHED AND src.s = 'x' THEN DELETE WHEN MATCHED THEN UPDATE SET v = src.v, s = src.s WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.p, src.v, src.s)`,
    );
    expect(merged).toBe(3);
    expect(current(await metadataOf('t')).summary).toMatchObject({ operation: 'overwrite', 'added-records': '2', 'added-position-deletes': '2' });
    rows = await bothReaders('t');
    expect(rows).toHaveLength(77);
    expect(rows.find((r) => r.id === 5)).toEqual({ id: 5, p: 0, v: 9.5, s: 'm' });
    expect(ids(rows)).not.toContain(6);
    expect(rows.find((r) => r.id === 500)).toEqual({ id: 500, p: 1, v: 5, s: 'new' });
    // The data files written before are all still live: nothing was rewritten.
    const live = await liveFiles(stack, 'wh', 'mor', 't');
    expect(files0.every((f) => live.includes(f))).toBe(true);

    // An aggregate over the whole table: every deleted row missing, every updated row once.
    const [agg] = norm(await agent.query('SELECT count(*) AS n, sum(id)::BIGINT AS ids, count(DISTINCT id) AS d FROM mor.t'));
    const expectedIds = all.map((r) => r.id as number).filter((i) => ![3, 25, 107, 6].includes(i));
    expect(agg).toEqual({ n: 77, ids: expectedIds.reduce((a, b) => a + b, 0) + 500, d: 77 });

    // Time travel: the snapshot before the DELETE has all 80 rows; the DELETE's own snapshot has 77, none updated.
    const before = String(deleteSnapshot['parent-snapshot-id']);
    expect(norm(await agent.query(`SELECT count(*) AS n FROM mor.t__snapshot_${before}`))).toEqual([{ n: 80 }]);
    const atDelete = norm(await agent.query(`SELECT id, v FROM mor.t__snapshot_${deleteSnapshot['snapshot-id']} ORDER BY id`));
    expect(atDelete).toHaveLength(77);
    expect(atDelete.find((r) => r.id === 4)).toEqual({ id: 4, v: 1 });
  });

  it('a WHERE only partly usable to narrow the load, none at all, and a script of two statements change exactly their rows', async () => {
    await table('f');
    // Loaded: partition 1's rows only (p = 1); the OR and the LIKE are DuckDB's to apply.
    expect(await agent.exec(`UPDATE mor.f SET s = 'k' WHERE p = 1 AND (id = 101 OR id = 139) AND s LIKE 'r%'`)).toBe(2);
    // No usable conjunct: the whole table is loaded.
    expect(await agent.exec('DELETE FROM mor.f WHERE v >= 9.5 OR id = 0')).toBe(5);
    // Two statements in one query: the second plans on the first's snapshot (its delete files included).
    expect(await agent.exec(`DELETE FROM mor.f WHERE id = 1; UPDATE mor.f SET v = 100 WHERE id IN (2, 101)`)).toBe(3);
    const rows = await bothReaders('f');
    expect(rows).toHaveLength(74);
    expect(ids(rows).filter((i) => [0, 1, 118, 119, 138, 139].includes(i as number))).toEqual([]);
    expect(rows.filter((r) => r.s === 'k').map((r) => [r.id, r.v])).toEqual([[101, 100]]);
    expect(rows.filter((r) => r.v === 100).map((r) => r.id)).toEqual([2, 101]);
  });

  it('compaction rewrites the data files with deletes without the deleted rows and drops the delete files', async () => {
    await table('c');
    expect(await agent.exec('DELETE FROM mor.c WHERE id % 10 = 0')).toBe(8);
    expect(await agent.exec(`UPDATE mor.c SET s = 'u' WHERE id IN (1, 101)`)).toBe(2);
    const before = await bothReaders('c');
    expect(before).toHaveLength(72);
    expect((await deleteFiles('c')).length).toBeGreaterThan(0);
    const snapshotBefore = (await metadataOf('c'))['current-snapshot-id'];

    const [row] = norm(await agent.query(`CALL system.rewrite_data_files(table => 'mor.c')`));
    expect(row.rewritten_data_files_count).toBe(6);
    const m = await metadataOf('c');
    expect(current(m).summary).toMatchObject({ operation: 'replace', 'total-delete-files': '0', 'total-position-deletes': '0', 'total-records': '72' });
    expect(await deleteFiles('c')).toEqual([]);
    expect(await bothReaders('c')).toEqual(before);
    // The snapshot before the compaction still reads through its delete files.
    expect(norm(await agent.query(`SELECT id, p, v, s FROM mor.c__snapshot_${snapshotBefore} ORDER BY id`))).toEqual(before);
  });

  it('copy-on-write when the table asks for it: the changed files are rewritten, no delete file is written', async () => {
    await table('w');
    await setProperties('w', { 'write.delete.mode': 'copy-on-write', 'write.update.mode': 'copy-on-write' });
    const files0 = await liveFiles(stack, 'wh', 'mor', 'w');
    expect(await agent.exec('DELETE FROM mor.w WHERE id = 3')).toBe(1);
    expect(await agent.exec(`UPDATE mor.w SET v = -1 WHERE id = 104`)).toBe(1);
    const files = await liveFiles(stack, 'wh', 'mor', 'w');
    expect(files.filter((f) => files0.includes(f))).toHaveLength(2);
    expect(await deleteFiles('w')).toEqual([]);
    expect(current(await metadataOf('w')).summary['total-delete-files']).toBe('0');
    const rows = await bothReaders('w');
    expect(rows).toHaveLength(79);
    expect(rows.find((r) => r.id === 104)?.v).toBe(-1);
    // merge-on-read (the default for MERGE) on top of the copy-on-write changes
    await agent.exec(`MERGE INTO mor.w AS t USING (SELECT 105 AS id) AS src ON t.id = src.id WHEN MATCHED THEN DELETE`);
    expect((await deleteFiles('w')).length).toBe(1);
    expect(await bothReaders('w')).toHaveLength(78);
  });

  it('a MERGE loads only the target files and rows its source can match, and does exactly what DuckDB does on the whole table', async () => {
    await table('m');
    // The same MERGEs on a plain DuckDB table holding the same rows: the oracle of what each must do.
    const oracle = await (await DuckDBInstance.create(':memory:')).connect();
    await oracle.run('CREATE SCHEMA mor; CREATE TABLE mor.m (id INTEGER, p INTEGER, v DOUBLE, s VARCHAR)');
    const insert = await oracle.prepare('INSERT INTO mor.m VALUES ($1, $2, $3, $4)');
    for (const r of await bothReaders('m')) {
      insert.bindInteger(1, r.id as number);
      insert.bindInteger(2, r.p as number);
      insert.bindDouble(3, r.v as number);
      insert.bindVarchar(4, r.s as string);
      await insert.run();
    }
    // A source that is an Iceberg table (a NULL key, a key matching two rows of the target by its string column).
    const source = `CREATE TABLE mor.msrc AS SELECT * FROM (VALUES (7, 'r7'), (NULL, 'r8'), (121, 'r1'), (600, 'r39'), (601, NULL)) AS x(id, s)`;
    await agent.exec(source);
    await oracle.run(source);
    const both = async (sql: string) => {
      const hits = agent.cache.stats.hits + agent.cache.stats.fetches;
      const changed = await agent.exec(sql);
      const filesRead = agent.cache.stats.hits + agent.cache.stats.fetches - hits;
      const expected = Number((await oracle.run(sql)).rowsChanged);
      expect(changed, sql).toBe(expected);
      const rows = await bothReaders('m');
      const want = norm((await oracle.runAndReadAll('SELECT id, p, v, s FROM mor.m ORDER BY id')).getRowObjectsJS() as Record<string, unknown>[]);
      expect(rows, sql).toEqual(want);
      return { changed, filesRead };
    };
    // Keys 5 and 6 are in one of the four data files, 500 in none: that file alone is read, and in it the two rows.
    const first = await both(
      `MERGE INTO mor.m AS t USING (VALUES (5, 0, 9.5, 'm'), (6, 0, 0.0, 'x'), (500, 1, 5.0, 'new')) AS src(id, p, v, s) ON t.id = src.id ` +
        `WHEN MATCHED AND src.s = 'x' THEN DELETE WHEN MATCHED THEN UPDATE SET v = src.v, s = src.s WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.p, src.v, src.s)`,
    );
    expect(first).toEqual({ changed: 3, filesRead: 1 });
    expect(current(await metadataOf('m')).summary).toMatchObject({ 'added-position-deletes': '2', 'added-records': '2' });
    // An Iceberg table source, a condition on the target in ON; the NULL key and the unmatched ones are inserted.
    await both(
      `MERGE INTO mor.m AS t USING mor.msrc AS s ON t.id = s.id AND t.p = 1 WHEN MATCHED THEN UPDATE SET s = 'from ' || s.s ` +
        `WHEN NOT MATCHED THEN INSERT (id, p, v, s) VALUES (coalesce(s.id, -1) + 1000, 2, 0, s.s)`,
    );
    // A string key matching a row in each half, two keys at once, a subquery source read once (random() in it).
    await both(`MERGE INTO mor.m USING (SELECT 'r9' AS s UNION ALL SELECT 'r30') AS src ON m.s = src.s WHEN MATCHED THEN UPDATE SET v = v + 1000`);
    await both(
      `MERGE INTO mor.m AS t USING (SELECT 110 + (random() * 0)::INTEGER AS id, 'r30' AS s) AS src ON src.id = t.id AND src.s = t.s WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (src.id, 1, 1, src.s)`,
    );
    // Not bounded, the whole target loaded as before: a clause on target rows without a match; a key whose source
    // type DuckDB casts (VARCHAR against INTEGER); an unmatched source.
    await both(`MERGE INTO mor.m AS t USING (SELECT 130 AS id) AS src ON t.id = src.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED BY SOURCE AND t.id > 135 THEN UPDATE SET s = 'orphan'`);
    await both(`MERGE INTO mor.m AS t USING (SELECT '131' AS id) AS src ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = 'cast'`);
    expect(await both(`MERGE INTO mor.m AS t USING (SELECT 99999 AS id WHERE false) AS src ON t.id = src.id WHEN MATCHED THEN DELETE`)).toEqual({ changed: 0, filesRead: 0 });
    oracle.closeSync();
  });
});
