// Elastic compute, scale from zero: the time from a query that names no agent, with the pool at zero, to its first
// row (`process` provider: a real `eider agent` process is started, dials home, gets the query, and the api reads
// the row back). p50 of BENCH_ELASTIC_RUNS (default 10); between runs the agent is terminated and the pool is back
// at zero. Run by hand: node bench/elastic.ts
import { adminToken, percentiles, startApiProcess } from './support.ts';

const RUNS = Number(process.env.BENCH_ELASTIC_RUNS ?? 10);
const api = await startApiProcess({ ELASTIC_COMPUTE_ENABLED: 'true', ELASTIC_PROVIDER: 'process', ELASTIC_REAPER_TICK_S: '1' });
const token = await adminToken(api);
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const get = async (path: string) => (await (await fetch(`${api.url}${path}`, { headers })).json()) as any;
const elasticAgents = async () => ((await get('/api/agents')) as any[]).filter((a) => a.elastic);

try {
  const lat: number[] = [];
  const breakdown: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await fetch(`${api.url}/api/workspaces/default/queries`, { method: 'POST', headers, body: JSON.stringify({ sql: `SELECT ${i} AS n` }) });
    const q = (await r.json()) as any;
    if (r.status !== 202 || q.agent_id !== null) throw new Error(`expected a query waiting for compute: ${r.status} ${JSON.stringify(q)}`);
    const done = await get(`/api/queries/${q.id}?wait_timeout_s=60`);
    if (done.status !== 'done') throw new Error(`query ${done.status}: ${done.error}`);
    const rows = await get(`/api/queries/${q.id}/rows?limit=1`);
    if (rows.rows?.[0]?.n !== i) throw new Error(`rows: ${JSON.stringify(rows)}`);
    lat.push(performance.now() - t0);
    const agent = (await elasticAgents()).find((a) => a.id === done.agent_id);
    const dial = new Date(agent.elastic.provisioned_at).getTime() - new Date(q.started_at).getTime();
    breakdown.push(`${(lat.at(-1)! / 1000).toFixed(2)} s (dial home after ${(dial / 1000).toFixed(2)} s)`);
    // Back to zero: terminate the pool's agent and wait until it is gone.
    const term = await fetch(`${api.url}/api/admin/agents/${agent.id}/terminate`, { method: 'POST', headers: { authorization: headers.authorization } });
    if (term.status !== 202) throw new Error(`terminate: ${term.status} ${await term.text()}`);
    for (let w = 0; (await elasticAgents()).some((a) => a.elastic.state !== 'terminated' && a.elastic.state !== 'failed'); w++) {
      if (w > 600) throw new Error(`the agent was not terminated: ${JSON.stringify((await elasticAgents()).map((a) => [a.name, a.status, a.elastic]))}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  const p = percentiles(lat);
  console.log(`runs: ${breakdown.join(', ')}`);
  console.log(`time from a query with no agent to its first row, pool at zero (process provider), ${RUNS} runs: p50 ${(p.p50 / 1000).toFixed(2)} s   p99 ${(p.p99 / 1000).toFixed(2)} s`);
} finally {
  await api.stop();
}
