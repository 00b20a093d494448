// Dispatch overhead: `SELECT 42` submitted, awaited and its first rows page read through the api, sequentially,
// against the same statement run by DuckDB in-process. Prints the split (submit answer, wait for done, first page).
// Run by hand: node bench/dispatch.ts [iterations]   (BENCH_SYNCHRONOUS_COMMIT=off: commits not waited for, an experiment)
// (API_NODE_OPTIONS / AGENT_NODE_OPTIONS, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof', profile the api / the agent)
import { DuckDBInstance } from '@duckdb/node-api';
import { connectDb } from '../runtime/db.ts';
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, percentiles, startAgentProcess, startApiProcess } from './support.ts';

const n = Number(process.argv[2] ?? 300);
const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP, ...(process.env.API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.API_NODE_OPTIONS } : {}) });
const token = await adminToken(api);
// BENCH_SYNCHRONOUS_COMMIT=off: an experiment, never a setting to ship (a crash would lose acknowledged commits):
// how much of the latency is waiting for commits to reach the disk.
if (process.env.BENCH_SYNCHRONOUS_COMMIT) {
  const admin = await connectDb({ url: api.databaseUrl, poolSize: 1, maxOverflow: 0 });
  await admin.query(`alter system set synchronous_commit = '${process.env.BENCH_SYNCHRONOUS_COMMIT === 'off' ? 'off' : 'on'}'`);
  await admin.query('select pg_reload_conf()');
  await admin.close();
}
const agent = await startAgentProcess(api, token, 'bench', BENCH_BOOTSTRAP);
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

/** One run: [submit answered, done seen, first page read] in ms from the start. */
async function once(agentId: string): Promise<[number, number, number]> {
  const t0 = performance.now();
  const sub = await fetch(`${api.url}/api/workspaces/default/queries`, { method: 'POST', headers, body: JSON.stringify({ sql: 'SELECT 42', agent_id: agentId }) });
  const q = (await sub.json()) as { id: string; status: string };
  if (sub.status !== 202) throw new Error(`submit: ${sub.status} ${JSON.stringify(q)}`);
  const t1 = performance.now();
  const final = q.status === 'done' ? q : ((await (await fetch(`${api.url}/api/queries/${q.id}?wait_timeout_s=30`, { headers })).json()) as { status: string });
  if (final.status !== 'done') throw new Error(`query ${final.status}`);
  const t2 = performance.now();
  const page = (await (await fetch(`${api.url}/api/queries/${q.id}/rows?limit=1000`, { headers })).json()) as { rows: Array<Record<string, unknown>> };
  if (page.rows?.[0]?.["42"] !== 42) throw new Error(`rows: ${JSON.stringify(page)}`);
  return [t1 - t0, t2 - t0, performance.now() - t0];
}

try {
  const agentId = await agentIdByName(api, token, 'bench');
  for (let i = 0; i < 20; i++) await once(agentId);
  const submit: number[] = [];
  const wait: number[] = [];
  const full: number[] = [];
  for (let i = 0; i < n; i++) {
    const [a, b, c] = await once(agentId);
    submit.push(a);
    wait.push(b - a);
    full.push(c);
  }
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const local: number[] = [];
  for (let i = 0; i < n + 20; i++) {
    const t0 = performance.now();
    await (await conn.run('SELECT 42')).getRows();
    if (i >= 20) local.push(performance.now() - t0);
  }
  const p = (xs: number[]) => percentiles(xs);
  const ms = (x: number) => x.toFixed(2).padStart(7);
  console.log(`SELECT 42, ${n} sequential runs (submit → done → first rows page)`);
  console.log(`submit answered:        p50 ${ms(p(submit).p50)} ms   p99 ${ms(p(submit).p99)} ms`);
  console.log(`then wait until done:   p50 ${ms(p(wait).p50)} ms   p99 ${ms(p(wait).p99)} ms`);
  console.log(`whole, with first page: p50 ${ms(p(full).p50)} ms   p99 ${ms(p(full).p99)} ms`);
  console.log(`DuckDB in-process:      p50 ${p(local).p50.toFixed(3).padStart(7)} ms   p99 ${p(local).p99.toFixed(3).padStart(7)} ms`);
  // Where the time goes inside the lifecycle: each persisted query transition's offset from the query's spawn,
  // as its history rows recorded it (the api's clock), p50 over the measured runs.
  const control = await connectDb({ url: api.databaseUrl, poolSize: 1, maxOverflow: 0 });
  try {
    const steps = await control.query<{ step: string; p50: number; n: string }>(
      `with t as (
         select t.id, t.seq, t.event, t.to_state, extract(epoch from t.at - min(t.at) over (partition by t.id)) * 1000 as off
         from actor_transitions t where t.kind = 'query'
           and t.id in (select id from actors where kind = 'query' order by created_at desc limit $1))
       select event || ' → ' || to_state as step, percentile_cont(0.5) within group (order by off) as p50, count(*) as n, min(seq) as seq
       from t group by event, to_state order by seq, p50`,
      [n],
    );
    console.log('query lifecycle, offset from spawn (p50, the api clock, whole ms):');
    for (const s of steps) console.log(`  ${s.step.padEnd(40)} ${Number(s.p50).toFixed(2).padStart(7)} ms  (${s.n})`);
    const [agentSide] = await control.query<{ p50: number }>(
      `select percentile_cont(0.5) within group (order by duration_ms) as p50 from (select duration_ms from queries order by started_at desc limit $1) q`,
      [n],
    );
    console.log(`  the agent's own duration (receipt → outcome)   p50 ${Number(agentSide.p50).toFixed(2)} ms`);
  } finally {
    await control.close();
  }
} finally {
  agent.kill('SIGTERM');
  await api.stop();
}
