// Dispatch overhead: `SELECT 42` submitted and awaited through the api, sequentially, against the same statement
// run by DuckDB in-process. Run by hand: node bench/dispatch.ts [iterations]
import { DuckDBInstance } from '@duckdb/node-api';
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, percentiles, runQuery, startAgentProcess, startApiProcess } from './support.ts';

const n = Number(process.argv[2] ?? 300);
const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP });
const token = await adminToken(api);
const agent = await startAgentProcess(api, token, 'bench', BENCH_BOOTSTRAP);
try {
  const agentId = await agentIdByName(api, token, 'bench');
  for (let i = 0; i < 20; i++) await runQuery(api, token, agentId, 'SELECT 42');
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await runQuery(api, token, agentId, 'SELECT 42');
    lat.push(performance.now() - t0);
  }
  const full = percentiles(lat);

  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const local: number[] = [];
  for (let i = 0; i < n + 20; i++) {
    const t0 = performance.now();
    await (await conn.run('SELECT 42')).getRows();
    if (i >= 20) local.push(performance.now() - t0);
  }
  const inproc = percentiles(local);
  console.log(`SELECT 42, ${n} sequential round trips`);
  console.log(`through the api (submit + wait):   p50 ${full.p50.toFixed(2)} ms   p99 ${full.p99.toFixed(2)} ms`);
  console.log(`DuckDB in-process:                 p50 ${inproc.p50.toFixed(3)} ms   p99 ${inproc.p99.toFixed(3)} ms`);
  console.log(`overhead at p50: ${(full.p50 - inproc.p50).toFixed(2)} ms`);
} finally {
  agent.kill('SIGTERM');
  await api.stop();
}
