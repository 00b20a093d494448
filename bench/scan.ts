// An aggregate over an N-row Iceberg table through the agent's read path (catalog load, manifests, cached data
// files, DuckDB view with field-id mapping, result file) against DuckDB reading the same Parquet files from local
// disk in-process; warm cache, then cold (a fresh agent with an empty cache).
//   node bench/scan.ts [rows]        (default 10000000; embedded PostgreSQL unless DATABASE_URL is set)
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startCatalogStack } from '../tests/support/catalogStack.ts';
import { startBridgeAgent } from '../tests/support/bridgeAgent.ts';
import { benchDatabase } from './support.ts';

const ROWS = Number(process.argv[2] ?? 10_000_000);
const QUERY = 'SELECT k, count(*) AS n, sum(v) AS s, avg(id) AS a FROM bench.t GROUP BY k ORDER BY k';
const RUNS = 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function main() {
  const { db, close: closeDb } = await benchDatabase(4);
  const stack = await startCatalogStack({ db });
  const wh = `scan_${Date.now().toString(36)}`;
  await stack.createWarehouse(wh);
  // Warm sandboxed slots, as the agent process runs queries (agent/main.ts).
  const agent = await startBridgeAgent(stack, wh, { slots: true });
  const cold = await startBridgeAgent(stack, wh, { slots: true });
  try {
    await agent.exec('CREATE SCHEMA bench');
    const tWrite = await time(() =>
      agent.exec(`CREATE TABLE bench.t AS SELECT range AS id, (range % 100)::INTEGER AS k, (range * 7 % 1000) / 10.0 AS v FROM range(${ROWS})`),
    );
    console.log(`rows ${ROWS}: written through the agent in ${(tWrite / 1000).toFixed(1)} s`);

    // Warm: the data file cached, and the agent's memory ask settled from the EXPLAIN estimate to grant feedback
    // (the first runs after the cache fills are slower while it does; a dashboard re-running a query sees the rest).
    for (let i = 0; i < 5; i++) await agent.query(QUERY);
    const warm: number[] = [];
    for (let i = 0; i < RUNS; i++) warm.push(await time(() => agent.query(QUERY)));

    const files = (await readdir(join(agent.dataDir, 'cache'))).filter((f) => f.endsWith('.parquet')).map((f) => join(agent.dataDir, 'cache', f));
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const direct = `SELECT k, count(*) AS n, sum(v) AS s, avg(id) AS a FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}]) GROUP BY k ORDER BY k`;
    await conn.runAndReadAll(direct);
    const local: number[] = [];
    for (let i = 0; i < RUNS; i++) local.push(await time(() => conn.runAndReadAll(direct)));
    conn.closeSync();
    instance.closeSync();

    const tCold = await time(() => cold.query(QUERY));
    const w = median(warm);
    const l = median(local);
    console.log(`agent read path, warm cache   median ${w.toFixed(0)} ms over ${RUNS} runs`);
    console.log(`DuckDB in-process, local file median ${l.toFixed(0)} ms over ${RUNS} runs (${files.length} file(s))`);
    console.log(`ratio warm/local              ${(w / l).toFixed(2)} (aim ≤ 1.2)`);
    console.log(`agent read path, cold cache   ${tCold.toFixed(0)} ms (fetched ${cold.cache.stats.fetches} file(s), ${(cold.cache.stats.fetchedBytes / 2 ** 20).toFixed(1)} MiB)`);
  } finally {
    await agent.close();
    await cold.close();
    await stack.close();
    await closeDb();
  }
}

await main();
