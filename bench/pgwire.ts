// The PostgreSQL wire endpoint against the REST session path: the round trip of `SELECT 42` through node-postgres
// (simple and extended protocol) and through POST /sql/sessions/{id}/statements (waited, first page included),
// 200 in a row each (p50/p99), and the rows per second a client reads through the endpoint from a result of
// BENCH_PGWIRE_ROWS rows (default 1,000,000: BIGINT, DOUBLE, VARCHAR).
// Run by hand: node bench/pgwire.ts
import { createServer } from 'node:net';
import pg from 'pg';
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, percentiles, startAgentProcess, startApiProcess } from './support.ts';

const ROWS = Number(process.env.BENCH_PGWIRE_ROWS ?? 1_000_000);
const ROUND_TRIPS = 200;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const pgPort = await freePort();
const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP, SQL_SESSIONS_ENABLED: 'true', PG_PORT: String(pgPort) });
const token = await adminToken(api);
const agent = await startAgentProcess(api, token, 'pgwire', BENCH_BOOTSTRAP);
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 'eider-bench/1' };
const post = async (path: string, body: unknown) => {
  const r = await fetch(`${api.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as any };
};
const timed = async (what: string, run: () => Promise<void>) => {
  for (let i = 0; i < 20; i++) await run();
  const lat: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now();
    await run();
    lat.push(performance.now() - t0);
  }
  const p = percentiles(lat);
  console.log(`${what}, ${ROUND_TRIPS} in a row: p50 ${p.p50.toFixed(1)} ms   p99 ${p.p99.toFixed(1)} ms`);
};
try {
  const agentId = await agentIdByName(api, token, 'pgwire');
  const client = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'admin', password: token, database: 'default', ssl: { rejectUnauthorized: false } });
  await client.connect();
  await timed('SELECT 42 through the wire endpoint (simple query)', async () => {
    const r = await client.query('SELECT 42 AS answer');
    if (r.rows[0].answer !== 42) throw new Error(JSON.stringify(r.rows));
  });
  await timed('SELECT $1 through the wire endpoint (extended query, one parameter)', async () => {
    const r = await client.query('SELECT $1::INTEGER AS answer', [42]);
    if (r.rows[0].answer !== 42) throw new Error(JSON.stringify(r.rows));
  });
  const open = await post('/api/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 60 });
  if (open.status !== 201) throw new Error(`open: ${open.status} ${JSON.stringify(open.body)}`);
  await timed('SELECT 42 through REST (statement waited, first page included)', async () => {
    const r = await post(`/api/sql/sessions/${open.body.id}/statements`, { sql: 'SELECT 42', wait_timeout_s: 30 });
    if (r.status !== 200 || r.body.first_page?.rows?.[0]?.['42'] !== 42) throw new Error(`statement: ${r.status} ${JSON.stringify(r.body)}`);
  });
  await fetch(`${api.url}/api/sql/sessions/${open.body.id}`, { method: 'DELETE', headers });

  const t0 = performance.now();
  const r = await client.query(`SELECT range AS id, range * 0.5 AS v, 'row-' || range AS s FROM range(${ROWS})`);
  const s = (performance.now() - t0) / 1000;
  if (r.rows.length !== ROWS) throw new Error(`read ${r.rows.length} rows of ${ROWS}`);
  console.log(`read through the wire endpoint: ${ROWS} rows (BIGINT, DOUBLE, VARCHAR) in ${s.toFixed(2)} s: ${Math.round(ROWS / s)} rows/s (statement run included)`);
  await client.end();
} finally {
  agent.kill('SIGTERM');
  await api.stop();
}
