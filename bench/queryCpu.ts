// CPU per trivial query, and queries per second, with one agent: `SELECT 42` submitted and awaited through the api
// by N concurrent clients; the api's and the agent's CPU time (user + system, from /proc) divided by the queries.
// Run by hand: node bench/queryCpu.ts [clients] [queries]   (Linux: reads /proc/<pid>/stat)
import { readFileSync } from 'node:fs';
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, runQuery, startAgentProcess, startApiProcess } from './support.ts';

const clients = Number(process.argv[2] ?? 8);
const total = Number(process.argv[3] ?? 400);
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in clock ticks of 10 ms
};

const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP, ...(process.env.API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.API_NODE_OPTIONS } : {}) });
const token = await adminToken(api);
const agent = await startAgentProcess(api, token, 'bench', BENCH_BOOTSTRAP);
try {
  const id = await agentIdByName(api, token, 'bench');
  for (let i = 0; i < 30; i++) await runQuery(api, token, id, 'SELECT 42');
  const agent0 = cpuMs(agent.pid!);
  const api0 = cpuMs(api.child.pid!);
  const t0 = performance.now();
  let started = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (started++ < total) await runQuery(api, token, id, 'SELECT 42');
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${clients} clients, one agent, ${total} queries: ${(total / seconds).toFixed(1)} queries/s`);
  console.log(`CPU per query: api ${((cpuMs(api.child.pid!) - api0) / total).toFixed(2)} ms, agent ${((cpuMs(agent.pid!) - agent0) / total).toFixed(2)} ms`);
} finally {
  agent.kill('SIGTERM');
  await api.stop();
}
