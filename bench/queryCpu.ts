// CPU per trivial query, and queries per second, with one agent: `SELECT 42` submitted and awaited through the api
// by N concurrent clients; the api's and the agent's CPU time (user + system, from /proc) divided by the queries.
// Run by hand: node bench/queryCpu.ts [clients] [queries] [query|session|connector]   (Linux: reads /proc/<pid>/stat)
// `session`: each client opens a SQL session on the agent and sends its statements there, each one request that
// waits and carries the first page (a query is two: the submit and the wait); `connector`: as DuckHaven's connector
// does, each statement submitted (202), awaited with GET /queries/{id}?wait_timeout_s, and its rows read.
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, runQuery, startAgentProcess, startApiProcess } from './support.ts';

const clients = Number(process.argv[2] ?? 8);
const total = Number(process.argv[3] ?? 400);
const path = process.argv[4] ?? 'query';
if (!['query', 'session', 'connector'].includes(path)) throw new Error('the third argument is query, session or connector');
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in clock ticks of 10 ms
};

/** The embedded PostgreSQL's postmaster and its backends (their CPU is the database's share of a query). */
const postgresPids = (dataDir: string): number[] => {
  const postmaster = Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
};
/** CPU of the listed processes, counting one that ended since `before` as its last reading. */
const groupCpuMs = (pids: number[], before: Map<number, number> = new Map()) => {
  const now = new Map<number, number>();
  for (const pid of pids) {
    try {
      now.set(pid, cpuMs(pid));
    } catch {
      now.set(pid, before.get(pid) ?? 0);
    }
  }
  return now;
};

const api = await startApiProcess({
  AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP,
  SQL_SESSIONS_ENABLED: 'true',
  ...(process.env.API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.API_NODE_OPTIONS } : {}),
});
const token = await adminToken(api);
const agent = await startAgentProcess(api, token, 'bench', BENCH_BOOTSTRAP);
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const post = async (route: string, body: unknown) => {
  const r = await fetch(`${api.url}/api${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const answer = (await r.json()) as any;
  if (r.status >= 300) throw new Error(`${route}: ${r.status} ${JSON.stringify(answer)}`);
  return answer;
};
/** A client's way to run `SELECT 42` to done: a query (submit, wait), or a statement in its own session. */
async function clientRunner(agentId: string): Promise<() => Promise<unknown>> {
  if (path === 'query') return () => runQuery(api, token, agentId, 'SELECT 42');
  const session = await post('/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 60 });
  if (path === 'connector') {
    return async () => {
      const sub = await post(`/sql/sessions/${session.id}/statements`, { sql: 'SELECT 42' });
      const done = (await (await fetch(`${api.url}/api/queries/${sub.id}?wait_timeout_s=30`, { headers })).json()) as any;
      const page = (await (await fetch(`${api.url}/api/queries/${sub.id}/rows?limit=1000`, { headers })).json()) as any;
      if (done.status !== 'done' || page.rows?.[0]?.['42'] !== 42) throw new Error(`statement: ${JSON.stringify(done)} ${JSON.stringify(page)}`);
    };
  }
  return async () => {
    const st = await post(`/sql/sessions/${session.id}/statements`, { sql: 'SELECT 42', wait_timeout_s: 30 });
    if (st.status !== 'done' || st.first_page?.rows?.[0]?.['42'] !== 42) throw new Error(`statement: ${JSON.stringify(st)}`);
  };
}
try {
  const id = await agentIdByName(api, token, 'bench');
  const runners = await Promise.all(Array.from({ length: clients }, () => clientRunner(id)));
  for (let i = 0; i < 30; i++) await runners[i % clients]();
  const agent0 = cpuMs(agent.pid!);
  const api0 = cpuMs(api.child.pid!);
  const pg0 = groupCpuMs(postgresPids(api.dataDir));
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  let started = 0;
  await Promise.all(
    runners.map(async (run) => {
      while (started++ < total) await run();
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${clients} clients, one agent, ${total} ${path === 'query' ? 'queries' : 'session statements'}: ${(total / seconds).toFixed(1)} /s`);
  // Backends started during the run count from zero.
  const pgNow = groupCpuMs([...new Set([...pg0.keys(), ...postgresPids(api.dataDir)])], pg0);
  const perQuery = {
    api: (cpuMs(api.child.pid!) - api0) / total,
    agent: (cpuMs(agent.pid!) - agent0) / total,
    postgres: [...pgNow].reduce((sum, [pid, ms]) => sum + ms - (pg0.get(pid) ?? 0), 0) / total,
    client: ((c) => (c.user + c.system) / 1000)(process.cpuUsage(client0)) / total,
  };
  const whole = perQuery.api + perQuery.agent + perQuery.postgres + perQuery.client;
  console.log(`CPU per query: api ${perQuery.api.toFixed(2)} ms, agent ${perQuery.agent.toFixed(2)} ms, postgres ${perQuery.postgres.toFixed(2)} ms, this client ${perQuery.client.toFixed(2)} ms`);
  // Every part shares this machine's cores, so their sum bounds the rate whatever the concurrency.
  console.log(`all parts: ${whole.toFixed(2)} ms CPU per query, so at most ${((availableParallelism() * 1000) / whole).toFixed(0)} queries/s on ${availableParallelism()} cores`);
} finally {
  agent.kill('SIGTERM');
  await api.stop();
}
