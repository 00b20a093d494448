// Table maintenance run by the agent (`CALL system.…`, Spark's procedure names) against a real catalog service, the
// bundled object store and real DuckDB: compaction of a table with 50 small files in 30 snapshots keeps every row
// (time travel to the snapshot before still reads the old files), snapshot expiry deletes exactly what only the
// expired snapshots reached, manifests are rewritten without touching rows, planted orphans are removed and nothing
// live is; INSERTs committing while a compaction runs are never lost. Every table is read back by icebird, an
// independent Iceberg reader, as well as by the agent.
import { describe, it, expect, beforeAll } from 'vitest';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { STACK_CLIENT } from './support/catalogStack.ts';
import type { Outcome } from './support/bridgeAgent.ts';
import { catalogWithBridge } from './support/catalogWithBridge.ts';
import { icebirdRows, liveFiles, loadMetadata } from './support/icebergInspect.ts';
import { parseS3Uri } from '../iceberg/storageUri.ts';
import { readManifestList } from '../iceberg/avro.ts';
import type { TableMetadata } from '../iceberg/metadata.ts';

const world = await catalogWithBridge({ bridges: 2 });
const { stack } = world;
/** `writer`: a second agent, the other writer racing the maintenance procedures. */
const [agent, writer] = world.agents;

beforeAll(async () => {
  await agent.exec('CREATE SCHEMA app');
});

const norm = (rows: Record<string, unknown>[]) =>
  rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));

const done = (o: Outcome) => {
  if (o.type !== 'query_done') throw new Error(`${o.payload.error.code}: ${o.payload.error.message}`);
  return o.payload;
};

/** `TIMESTAMP '…'` text (UTC) `offsetMs` from now. */
const timestampIn = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString().replace('T', ' ').slice(0, 19);

async function metadataOf(table: string): Promise<TableMetadata> {
  return (await loadMetadata(stack, 'wh', 'app', table)).metadata;
}

async function listStore(prefix: string): Promise<string[]> {
  const { bucket, key } = parseS3Uri(prefix);
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await stack.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ContinuationToken: token }));
    for (const o of page.Contents ?? []) out.push(`s3://${bucket}/${o.Key}`);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out.sort();
}

async function exists(uri: string): Promise<boolean> {
  const { bucket, key } = parseS3Uri(uri);
  try {
    await stack.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch {
    return false;
  }
}

async function manifestPaths(listUri: string): Promise<string[]> {
  const { bucket, key } = parseS3Uri(listUri);
  const res = await stack.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return readManifestList(await res.Body!.transformToByteArray()).manifests.map((m) => m.manifest_path);
}

/** The table's rows as the independent reader sees them, sorted by `id`. */
async function icebirdSorted(table: string): Promise<Record<string, unknown>[]> {
  return norm(await icebirdRows(stack, 'wh', 'app', table)).sort((a, b) => (a.id as number) - (b.id as number));
}

const AGGREGATE = 'count(*)::BIGINT AS n, sum(id)::BIGINT AS ids, sum(v)::DOUBLE AS vs, count(DISTINCT s)::BIGINT AS ss';

/** 30 INSERTs: the first 20 write rows to both partitions (two files each), the last 10 to one: 50 small files. */
async function smallFilesTable(table: string): Promise<void> {
  await agent.exec(`CREATE TABLE app.${table} (id INTEGER, p INTEGER, v DOUBLE, s VARCHAR) PARTITIONED BY (p)`);
  for (let i = 0; i < 30; i++) {
    const rows = i < 20 ? [`(${i}, 0, ${i}.25, 'a${i}')`, `(${1000 + i}, 1, ${i}.5, 'b${i}')`, `(${2000 + i}, 1, NULL, NULL)`] : [`(${i}, ${i % 2}, ${i}.75, 'c${i}')`];
    await agent.exec(`INSERT INTO app.${table} VALUES ${rows.join(', ')}`);
  }
}

describe('maintenance procedures run by the agent', () => {
  it('compacts 50 small files in 30 snapshots into one file per partition, then expires the old snapshots and their files', async () => {
    await smallFilesTable('events');
    const before = await metadataOf('events');
    expect(before.snapshots).toHaveLength(30);
    const oldFiles = await liveFiles(stack, 'wh', 'app', 'events');
    expect(oldFiles).toHaveLength(50);
    const rowsBefore = norm(await agent.query(`SELECT ${AGGREGATE} FROM app.events`));
    const partitionsBefore = norm(await agent.query(`SELECT p, ${AGGREGATE} FROM app.events GROUP BY p ORDER BY p`));
    const icebirdBefore = await icebirdSorted('events');
    expect(icebirdBefore).toHaveLength(70);
    const snapshotBefore = before['current-snapshot-id'];

    // Compaction
    const compacted = norm(await agent.query(`CALL system.rewrite_data_files(table => 'wh.app.events')`));
    expect(compacted).toEqual([{ rewritten_data_files_count: 50, added_data_files_count: 2, rewritten_bytes_count: Number(before.snapshots.at(-1)!.summary['total-files-size']) }]);
    const after = await metadataOf('events');
    expect(after.snapshots).toHaveLength(31);
    const replace = after.snapshots.at(-1)!;
    expect(replace.summary).toMatchObject({ operation: 'replace', 'added-data-files': '2', 'deleted-data-files': '50', 'added-records': '70', 'deleted-records': '70', 'total-records': '70', 'total-data-files': '2' });
    expect(String(replace['parent-snapshot-id'])).toBe(String(snapshotBefore));
    const newFiles = await liveFiles(stack, 'wh', 'app', 'events');
    expect(newFiles).toHaveLength(2);
    expect(newFiles.filter((f) => oldFiles.includes(f))).toEqual([]);
    expect(norm(await agent.query(`SELECT ${AGGREGATE} FROM app.events`))).toEqual(rowsBefore);
    expect(norm(await agent.query(`SELECT p, ${AGGREGATE} FROM app.events GROUP BY p ORDER BY p`))).toEqual(partitionsBefore);
    expect(await icebirdSorted('events')).toEqual(icebirdBefore);
    // Time travel: the snapshot before the compaction still reads the 50 old files, and the current one reads the same.
    expect(norm(await agent.query(`SELECT ${AGGREGATE} FROM app.events__snapshot_${snapshotBefore}`))).toEqual(rowsBefore);
    expect(norm(await agent.query(`SELECT ${AGGREGATE} FROM app.events__snapshot_${after['current-snapshot-id']}`))).toEqual(rowsBefore);
    // Nothing left to compact: no commit.
    expect(norm(await agent.query(`CALL system.rewrite_data_files(table => 'wh.app.events')`))).toEqual([{ rewritten_data_files_count: 0, added_data_files_count: 0, rewritten_bytes_count: 0 }]);
    expect(await metadataOf('events')).toMatchObject({ 'current-snapshot-id': after['current-snapshot-id'] });

    // Expiry: every snapshot but the current one, and what only they reached.
    const oldLists = before.snapshots.map((s) => s['manifest-list']);
    const oldManifests = [...new Set((await Promise.all(oldLists.map(manifestPaths))).flat())];
    expect(oldManifests).toHaveLength(30);
    const currentManifests = await manifestPaths(replace['manifest-list']);
    const expired = await agent.run(`CALL system.expire_snapshots(table => 'wh.app.events', older_than => TIMESTAMP '${timestampIn(86_400_000)}', retain_last => 1)`);
    const payload = done(expired);
    expect(payload.statement_type).toBe('other');
    expect(payload.columns).toEqual(['deleted_data_files_count', 'deleted_manifest_files_count', 'deleted_manifest_lists_count', 'expired_snapshots_count']);
    const expiredRow = norm(await agent.query(`CALL system.expire_snapshots(table => 'wh.app.events')`));
    expect(expiredRow).toEqual([{ deleted_data_files_count: 0, deleted_manifest_files_count: 0, deleted_manifest_lists_count: 0, expired_snapshots_count: 0 }]);
    const final = await metadataOf('events');
    expect(final.snapshots.map((s) => String(s['snapshot-id']))).toEqual([String(replace['snapshot-id'])]);
    expect(final['snapshot-log'].map((e) => String(e['snapshot-id']))).toEqual([String(replace['snapshot-id'])]);
    for (const f of oldFiles) expect(await exists(f)).toBe(false);
    for (const l of oldLists) expect(await exists(l)).toBe(false);
    for (const m of oldManifests) expect(await exists(m)).toBe(false);
    for (const m of [...currentManifests, replace['manifest-list'], ...newFiles]) expect(await exists(m)).toBe(true);
    expect(await listStore(`${final.location}/data/`)).toEqual([...newFiles].sort());
    expect(norm(await agent.query(`SELECT ${AGGREGATE} FROM app.events`))).toEqual(rowsBefore);
    expect(await icebirdSorted('events')).toEqual(icebirdBefore);
    const gone = await agent.run(`SELECT count(*) FROM app.events__snapshot_${snapshotBefore}`);
    expect(gone.type === 'query_failed' && gone.payload.error).toMatchObject({ code: 'catalog_error', message: expect.stringContaining('does not exist') });
  });

  it('reports the expiry counts: data files, manifests, manifest lists and snapshots only the expired snapshots reached', async () => {
    await agent.exec('CREATE TABLE app.counts (id INTEGER, v DOUBLE, s VARCHAR)');
    const cow = await stack.request('POST', '/v1/wh/namespaces/app/tables/counts', { requirements: [], updates: [{ action: 'set-properties', updates: { 'write.delete.mode': 'copy-on-write' } }] });
    expect(cow.status).toBe(200);
    for (let i = 0; i < 4; i++) await agent.exec(`INSERT INTO app.counts VALUES (${i}, ${i}, 'x')`);
    await agent.exec('DELETE FROM app.counts WHERE id = 0'); // copy-on-write: removes the first file
    await agent.exec(`INSERT INTO app.counts VALUES (4, 4, 'x')`);
    const before = await metadataOf('counts');
    const live = await liveFiles(stack, 'wh', 'app', 'counts');
    const [removed] = (await listStore(`${before.location}/data/`)).filter((f) => !live.includes(f));
    // retain_last 2 keeps the DELETE's snapshot and the last append: the four older appends go, and of the files they
    // reached only the one the DELETE removed (the others are live in what remains); of their manifests, the first.
    const row = norm(await agent.query(`CALL system.expire_snapshots(table => 'wh.app.counts', older_than => TIMESTAMP '${timestampIn(60_000)}', retain_last => 2)`));
    expect(row).toEqual([{ deleted_data_files_count: 1, deleted_manifest_files_count: 1, deleted_manifest_lists_count: 4, expired_snapshots_count: 4 }]);
    expect(await exists(removed)).toBe(false);
    for (const f of live) expect(await exists(f)).toBe(true);
    expect((await metadataOf('counts')).snapshots.map((s) => s.summary.operation)).toEqual(['delete', 'append']);
    expect(norm(await agent.query(`SELECT ${AGGREGATE} FROM app.counts`))).toEqual([{ n: 4, ids: 10, vs: 10, ss: 1 }]);
    expect(await icebirdSorted('counts')).toEqual([1, 2, 3, 4].map((i) => ({ id: i, v: i, s: 'x' })));
    // Snapshots newer than older_than stay whatever retain_last says.
    expect(norm(await agent.query(`CALL system.expire_snapshots(table => 'wh.app.counts', older_than => TIMESTAMP '2000-01-01 00:00:00')`))[0].expired_snapshots_count).toBe(0);
  });

  it('rewrites the manifests into one per partition spec, keeping every row and the earlier snapshots readable', async () => {
    await agent.exec('CREATE TABLE app.manifests (id INTEGER, v DOUBLE, s VARCHAR)');
    for (let i = 0; i < 10; i++) await agent.exec(`INSERT INTO app.manifests VALUES (${i}, ${i}.5, 's${i}'), (${i + 100}, NULL, 't')`);
    const before = await metadataOf('manifests');
    const rows = norm(await agent.query(`SELECT ${AGGREGATE} FROM app.manifests`));
    const icebirdBefore = await icebirdSorted('manifests');
    const files = await liveFiles(stack, 'wh', 'app', 'manifests');
    expect(await manifestPaths(before.snapshots.at(-1)!['manifest-list'])).toHaveLength(10);
    const o = await agent.run(`CALL system.rewrite_manifests(table => 'wh.app.manifests')`);
    expect(done(o).statement_type).toBe('other');
    const after = await metadataOf('manifests');
    const current = after.snapshots.at(-1)!;
    expect(current.summary).toMatchObject({ operation: 'replace', 'manifests-created': '1', 'manifests-replaced': '10', 'total-records': '20', 'total-data-files': '10' });
    expect(await manifestPaths(current['manifest-list'])).toHaveLength(1);
    expect(await liveFiles(stack, 'wh', 'app', 'manifests')).toEqual(files);
    expect(norm(await agent.query(`SELECT ${AGGREGATE} FROM app.manifests`))).toEqual(rows);
    expect(await icebirdSorted('manifests')).toEqual(icebirdBefore);
    expect(norm(await agent.query(`SELECT ${AGGREGATE} FROM app.manifests__snapshot_${before['current-snapshot-id']}`))).toEqual(rows);
    // One manifest, no tombstones: nothing to do.
    expect(norm(await agent.query(`CALL system.rewrite_manifests(table => 'wh.app.manifests')`))).toEqual([{ rewritten_manifests_count: 0, added_manifests_count: 0 }]);
    // The data still reads after compaction on top of the rewritten manifests.
    expect(norm(await agent.query(`CALL system.rewrite_data_files(table => 'wh.app.manifests')`))[0]).toMatchObject({ rewritten_data_files_count: 10, added_data_files_count: 1 });
    expect(await icebirdSorted('manifests')).toEqual(icebirdBefore);
  });

  it('removes planted orphan files older than older_than and nothing any snapshot or metadata file references', async () => {
    await agent.exec('CREATE TABLE app.orphans (id INTEGER, v DOUBLE, s VARCHAR)');
    for (let i = 0; i < 5; i++) await agent.exec(`INSERT INTO app.orphans VALUES (${i}, ${i}, 'o')`);
    await agent.exec('UPDATE app.orphans SET v = 10 WHERE id = 1');
    await agent.query(`CALL system.rewrite_data_files(table => 'wh.app.orphans')`);
    const { metadata } = await loadMetadata(stack, 'wh', 'app', 'orphans');
    const location = metadata.location;
    const { bucket, key } = parseS3Uri(location);
    const plant = (rel: string) => stack.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${key}/${rel}`, Body: 'not referenced' }));
    await plant('data/00000-orphan.parquet');
    await plant('metadata/orphan-m0.avro');
    await plant('elsewhere/not-ours.txt'); // outside data/ and metadata/: never looked at
    const everything = await listStore(`${location}/`);
    const planted = [`${location}/data/00000-orphan.parquet`, `${location}/metadata/orphan-m0.avro`];

    // Newer than older_than: kept.
    expect(norm(await agent.query(`CALL system.remove_orphan_files(table => 'wh.app.orphans', older_than => TIMESTAMP '2000-01-01 00:00:00')`))).toEqual([{ orphan_file_location_count: 0 }]);
    expect(await listStore(`${location}/`)).toEqual(everything);

    const o = await agent.run(`CALL system.remove_orphan_files(table => 'wh.app.orphans', older_than => TIMESTAMP '${timestampIn(86_400_000)}')`);
    expect(done(o).statement_type).toBe('other');
    expect(await listStore(`${location}/`)).toEqual(everything.filter((f) => !planted.includes(f)));
    const current = await loadMetadata(stack, 'wh', 'app', 'orphans');
    for (const snapshot of current.metadata.snapshots) {
      // Every snapshot, the ones before the UPDATE and the compaction too, still reads.
      expect(done(await agent.run(`SELECT count(*) FROM app.orphans__snapshot_${snapshot['snapshot-id']}`)).row_count).toBe(1);
    }
    expect(norm(await agent.query(`SELECT ${AGGREGATE} FROM app.orphans`))).toEqual([{ n: 5, ids: 10, vs: 19, ss: 1 }]);
    expect(await icebirdSorted('orphans')).toHaveLength(5);
  });

  it('keeps every row of INSERTs that commit between a compaction reading its files and committing', async () => {
    await agent.exec('CREATE TABLE app.race (w INTEGER, n INTEGER)');
    for (let i = 0; i < 12; i++) await agent.exec(`INSERT INTO app.race VALUES (0, ${i})`);
    // Deterministic: the other writer's INSERT lands after the compaction uploaded its file, before its commit.
    agent.setBeforeCommit(() => writer.exec('INSERT INTO app.race VALUES (1, 0), (1, 1)').then(() => undefined));
    try {
      expect(norm(await agent.query(`CALL system.rewrite_data_files(table => 'wh.app.race')`))).toEqual([{ rewritten_data_files_count: 12, added_data_files_count: 1, rewritten_bytes_count: expect.any(Number) }]);
    } finally {
      agent.setBeforeCommit(undefined);
    }
    const metadata = await metadataOf('race');
    const [insert, replace] = metadata.snapshots.slice(-2);
    expect(insert.summary.operation).toBe('append');
    expect(replace.summary).toMatchObject({ operation: 'replace', 'total-records': '14', 'total-data-files': '2' });
    expect(String(replace['parent-snapshot-id'])).toBe(String(insert['snapshot-id']));
    const check = `SELECT count(*)::BIGINT AS c, count(DISTINCT (w, n))::BIGINT AS d FROM app.race`;
    expect(norm(await agent.query(check))).toEqual([{ c: 14, d: 14 }]);

    // Free-running: compactions in parallel with appends from the other agent, several times.
    let expected = 14;
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 4; i++) await agent.exec(`INSERT INTO app.race VALUES (${10 + round}, ${i})`);
      expected += 4;
      const [compaction, ...inserts] = await Promise.all([
        agent.run(`CALL system.rewrite_data_files(table => 'wh.app.race')`),
        ...Array.from({ length: 4 }, (_, i) => writer.run(`INSERT INTO app.race VALUES (${100 + round}, ${i}), (${100 + round}, ${i + 10})`)),
      ]);
      done(compaction);
      for (const o of inserts) expect(done(o).row_count).toBe(2);
      expected += 8;
      expect(norm(await agent.query(check))).toEqual([{ c: expected, d: expected }]);
    }
    const rows = norm(await icebirdRows(stack, 'wh', 'app', 'race'));
    expect(rows).toHaveLength(expected);
    expect(new Set(rows.map((r) => `${r.w}:${r.n}`)).size).toBe(expected);
  });

  it('aborts a compaction when a file it rewrote was changed by a concurrent commit, losing and duplicating nothing', async () => {
    await agent.exec('CREATE TABLE app.clash (w INTEGER, n INTEGER)');
    for (let i = 0; i < 6; i++) await agent.exec(`INSERT INTO app.clash VALUES (0, ${i})`);
    const snapshotsBefore = (await metadataOf('clash')).snapshots.length;
    agent.setBeforeCommit(() => writer.exec('DELETE FROM app.clash WHERE n = 3').then(() => undefined));
    let o: Outcome;
    try {
      o = await agent.run(`CALL system.rewrite_data_files(table => 'wh.app.clash')`);
    } finally {
      agent.setBeforeCommit(undefined);
    }
    expect(o.type === 'query_failed' && o.payload.error).toMatchObject({ code: 'catalog_error', message: expect.stringMatching(/concurrent modification.*nothing was committed/) });
    const metadata = await metadataOf('clash');
    expect(metadata.snapshots).toHaveLength(snapshotsBefore + 1);
    expect(metadata.snapshots.at(-1)!.summary.operation).toBe('delete');
    expect(norm(await agent.query('SELECT n FROM app.clash ORDER BY n'))).toEqual([0, 1, 2, 4, 5].map((n) => ({ n })));
    expect(norm(await icebirdRows(stack, 'wh', 'app', 'clash')).map((r) => r.n).sort()).toEqual([0, 1, 2, 4, 5]);
    // Run again, it compacts what is there now: the six files, one of them with the DELETE's position deletes
    // (merge-on-read), folded into one file without its deleted row.
    expect(norm(await agent.query(`CALL system.rewrite_data_files(table => 'wh.app.clash')`))[0]).toMatchObject({ rewritten_data_files_count: 6, added_data_files_count: 1 });
    expect((await metadataOf('clash')).snapshots.at(-1)!.summary).toMatchObject({ 'total-delete-files': '0', 'total-records': '5' });
    expect(norm(await agent.query('SELECT n FROM app.clash ORDER BY n'))).toEqual([0, 1, 2, 4, 5].map((n) => ({ n })));
  });

  it('changes nothing with a catalog token that may only read the warehouse', async () => {
    const res = await fetch(`${stack.catalog.url}/v1/oauth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: STACK_CLIENT.id, client_secret: STACK_CLIENT.secret, scope: 'warehouse:wh:read' }),
    });
    const token = ((await res.json()) as { access_token: string }).access_token;
    await agent.exec('CREATE TABLE app.readonly (id INTEGER)');
    for (let i = 0; i < 3; i++) await agent.exec(`INSERT INTO app.readonly VALUES (${i})`);
    const location = (await metadataOf('readonly')).location;
    const { bucket, key } = parseS3Uri(location);
    await stack.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${key}/data/orphan.parquet`, Body: 'x' }));
    const everything = await listStore(`${location}/`);
    const future = timestampIn(86_400_000);
    for (const call of [
      `CALL system.rewrite_data_files(table => 'wh.app.readonly')`,
      `CALL system.expire_snapshots(table => 'wh.app.readonly', older_than => TIMESTAMP '${future}')`,
      `CALL system.rewrite_manifests(table => 'wh.app.readonly')`,
      `CALL system.remove_orphan_files(table => 'wh.app.readonly', older_than => TIMESTAMP '${future}')`,
    ]) {
      const o = await agent.run(call, { token });
      expect(o.type === 'query_failed' && o.payload.error, call).toMatchObject({ code: 'catalog_error', message: expect.stringContaining('may only read') });
    }
    expect((await metadataOf('readonly')).snapshots).toHaveLength(3);
    // A compaction that was refused its commit leaves its uploaded file behind; nothing else changed.
    const now = await listStore(`${location}/`);
    expect(everything.filter((f) => !now.includes(f))).toEqual([]);
  });

  it('refuses unknown tables, malformed calls and snapshots with sql_error', async () => {
    const failure = async (sql: string) => {
      const o = await agent.run(sql);
      return o.type === 'query_failed' ? o.payload.error : null;
    };
    expect(await failure(`CALL system.rewrite_data_files(table => 'wh.app.missing')`)).toMatchObject({ code: 'sql_error', message: expect.stringContaining('does not exist') });
    expect(await failure(`CALL system.expire_snapshots(table => 'wh.app.events', retain_last => 'x')`)).toMatchObject({ code: 'sql_error', message: expect.stringContaining('retain_last') });
    expect(await failure(`CALL system.rewrite_manifests(table => 'wh.app.events__snapshot_1')`)).toMatchObject({ code: 'sql_error', message: expect.stringContaining('snapshot') });
    // schema.table resolves against the default catalog, like SQL names.
    expect(norm(await agent.query(`CALL system.rewrite_manifests(table => 'app.events')`))).toHaveLength(1);
  });
});
