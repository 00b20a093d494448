// A row-level DELETE, UPDATE and MERGE touching 10 rows of an N-row Iceberg table through the agent's write path
// (catalog load, cached data files, DuckDB, files uploaded to the bundled object store, REST commit), copy-on-write
// against merge-on-read (position delete files), with the bytes each statement writes to the store (every object
// new under the table location: data, delete, manifest, manifest-list and metadata files). The table is ten data
// files of N/10 rows (ten INSERTs); the 10 rows of each statement are one per file, so copy-on-write rewrites the
// whole table. Then a full aggregate over the table (the read cost of the deletes) and the compaction that folds them.
//   node bench/rowLevelWrites.ts [rows ...] [--mode merge-on-read] [--statement MERGE]
//   (default 1000000 rows, both modes, all three statements; embedded PostgreSQL unless DATABASE_URL is set)
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startCatalogStack, type CatalogStack } from '../tests/support/catalogStack.ts';
import { parseS3Uri } from '../iceberg/storageUri.ts';
import { startBridgeAgent, type BridgeAgent } from '../tests/support/bridgeAgent.ts';
import { benchDatabase } from './support.ts';

const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SIZES = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--')).map(Number).filter((n) => n > 0);
if (SIZES.length === 0) SIZES.push(1_000_000);
const FILES = 10;
const RUNS = 3;
const MODES = (['copy-on-write', 'merge-on-read'] as const).filter((m) => !option('mode') || option('mode') === m);
const STATEMENTS = ['DELETE', 'UPDATE', 'MERGE'].filter((st) => !option('statement') || option('statement')!.toUpperCase() === st);
if (!MODES.length || !STATEMENTS.length) throw new Error('--mode copy-on-write|merge-on-read, --statement DELETE|UPDATE|MERGE');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Bytes of every object under `location` (s3://bucket/prefix). */
async function storedBytes(stack: CatalogStack, location: string): Promise<number> {
  const { bucket, key } = parseS3Uri(`${location.replace(/\/+$/, '')}/`);
  let total = 0;
  let token: string | undefined;
  do {
    const page = await stack.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ContinuationToken: token }));
    for (const o of page.Contents ?? []) total += o.Size ?? 0;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return total;
}

async function tableLocation(stack: CatalogStack, wh: string, table: string): Promise<string> {
  const res = await stack.request('GET', `/v1/${wh}/namespaces/bench/tables/${table}`);
  if (res.status !== 200) throw new Error(`load ${table}: ${res.status}`);
  return res.body.metadata.location as string;
}

/** The ids of run `run` of statement `op`: one per data file, distinct across statements and runs. */
function ids(rows: number, op: number, run: number): number[] {
  const per = rows / FILES;
  return Array.from({ length: FILES }, (_, f) => f * per + 1 + op * RUNS + run);
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;
const kib = (b: number) => (b < 2 ** 20 ? `${(b / 1024).toFixed(1)} KiB` : mib(b));

async function benchSize(stack: CatalogStack, wh: string, agent: BridgeAgent, rows: number): Promise<void> {
  console.log(`\n## ${rows.toLocaleString('en')} rows (${FILES} data files of ${(rows / FILES).toLocaleString('en')}), 10 rows per statement, median of ${RUNS}`);
  const results: Record<string, Record<string, { ms: number; bytes: number }>> = {};
  const reads: Record<string, number> = {};
  for (const mode of MODES) {
    const table = `t_${mode.replace(/-/g, '_')}_${rows}`;
    await agent.exec(`CREATE TABLE bench.${table} (id BIGINT, k INTEGER, v DOUBLE, s VARCHAR)`);
    const per = rows / FILES;
    for (let f = 0; f < FILES; f++) {
      await agent.exec(`INSERT INTO bench.${table} SELECT range AS id, (range % 100)::INTEGER, (range * 7 % 1000) / 10.0, 'r' || range FROM range(${f * per}, ${(f + 1) * per})`);
    }
    const modes = Object.fromEntries(['delete', 'update', 'merge'].map((op) => [`write.${op}.mode`, mode]));
    const set = await stack.request('POST', `/v1/${wh}/namespaces/bench/tables/${table}`, { requirements: [], updates: [{ action: 'set-properties', updates: modes }] });
    if (set.status !== 200) throw new Error(`set-properties: ${set.status}`);
    const location = await tableLocation(stack, wh, table);
    await agent.query(`SELECT count(*) FROM bench.${table}`); // the data files cached, as a table in use has them
    const statements: Record<string, (xs: number[]) => string> = {
      DELETE: (xs) => `DELETE FROM bench.${table} WHERE id IN (${xs.join(', ')})`,
      UPDATE: (xs) => `UPDATE bench.${table} SET v = -v, s = 'updated' WHERE id IN (${xs.join(', ')})`,
      MERGE: (xs) =>
        `MERGE INTO bench.${table} AS t USING (SELECT unnest([${xs.join(', ')}]) AS id) AS src ON t.id = src.id ` +
        `WHEN MATCHED THEN UPDATE SET v = 0, s = 'merged' WHEN NOT MATCHED THEN INSERT VALUES (src.id, 0, 0, 'new')`,
    };
    results[mode] = {};
    for (const [op, [name, sql]] of Object.entries(statements).entries()) {
      if (!STATEMENTS.includes(name)) continue;
      const ms: number[] = [];
      const bytes: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const before = await storedBytes(stack, location);
        let changed = 0;
        ms.push(await time(async () => (changed = await agent.exec(sql(ids(rows, op, run))))));
        if (changed !== FILES) throw new Error(`${name} changed ${changed} rows, expected ${FILES}`);
        bytes.push((await storedBytes(stack, location)) - before);
      }
      results[mode][name] = { ms: median(ms), bytes: median(bytes) };
    }
    // Every column read; no hash of every string (count(DISTINCT s) needs more than the agent's memory at 100M rows).
    const aggregate = `SELECT count(*), sum(v), sum(length(s)) FROM bench.${table}`;
    await agent.query(aggregate);
    const rs: number[] = [];
    for (let i = 0; i < RUNS; i++) rs.push(await time(() => agent.query(aggregate)));
    reads[mode] = median(rs);
    const [check] = await agent.query(`SELECT count(*)::BIGINT AS n FROM bench.${table}`);
    const deleted = STATEMENTS.includes('DELETE') ? FILES * RUNS : 0;
    if (Number(check.n) !== rows - deleted) throw new Error(`${table} holds ${check.n} rows, expected ${rows - deleted}`);
    if (mode === 'merge-on-read') {
      const before = await storedBytes(stack, location);
      const t = await time(() => agent.query(`CALL system.rewrite_data_files(table => 'bench.${table}')`));
      const after = await storedBytes(stack, location);
      const tRead = await time(() => agent.query(aggregate));
      console.log(`compaction folding the ${STATEMENTS.length * FILES * RUNS} position deletes: ${t.toFixed(0)} ms, ${mib(after - before)} written; aggregate after it ${tRead.toFixed(0)} ms (first run, files fetched)`);
    }
  }
  const cell = (mode: string, name: string, what: 'ms' | 'bytes') => {
    const r = results[mode]?.[name];
    return r === undefined ? '-' : what === 'ms' ? `${r.ms.toFixed(0)} ms` : kib(r.bytes);
  };
  console.log('\n| statement | copy-on-write | merge-on-read | bytes written, copy-on-write | bytes written, merge-on-read |');
  console.log('|---|---|---|---|---|');
  for (const name of STATEMENTS) {
    console.log(`| ${name} 10 rows | ${cell('copy-on-write', name, 'ms')} | ${cell('merge-on-read', name, 'ms')} | ${cell('copy-on-write', name, 'bytes')} | ${cell('merge-on-read', name, 'bytes')} |`);
  }
  const read = (mode: string) => (reads[mode] === undefined ? '-' : `${reads[mode].toFixed(0)} ms`);
  console.log(`| full aggregate after the ${STATEMENTS.length * RUNS} statements | ${read('copy-on-write')} | ${read('merge-on-read')} | | |`);
}

async function main() {
  const { db, close: closeDb } = await benchDatabase(4);
  const stack = await startCatalogStack({ db });
  const wh = `rowlevel_${Date.now().toString(36)}`;
  await stack.createWarehouse(wh);
  // Warm sandboxed slots, as the agent process runs queries (agent/main.ts).
  const agent = await startBridgeAgent(stack, wh, { slots: true });
  try {
    await agent.exec('CREATE SCHEMA bench');
    for (const rows of SIZES) await benchSize(stack, wh, agent, rows);
  } finally {
    await agent.close();
    await stack.close();
    await closeDb();
  }
}

await main();
