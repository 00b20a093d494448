// Throughput: trivial queries per second with 4 agents and 32 concurrent clients.
// Run by hand: node bench/throughput.ts [seconds] [agents] [clients]
// (API_NODE_OPTIONS / AGENT_NODE_OPTIONS, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof', profile the api / agents)
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, bootstrapToken, percentiles, runQuery, startAgentProcess, startApiProcess } from './support.ts';

const seconds = Number(process.argv[2] ?? 15);
const agentCount = Number(process.argv[3] ?? 4);
const clients = Number(process.argv[4] ?? 32);
const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP, ...(process.env.API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.API_NODE_OPTIONS } : {}) });
const token = await adminToken(api);
const children = [];
try {
  const ids: string[] = [];
  for (let i = 0; i < agentCount; i++) {
    const boot = i === 0 ? BENCH_BOOTSTRAP : await bootstrapToken(api, token);
    children.push(await startAgentProcess(api, token, `bench-${i}`, boot));
    ids.push(await agentIdByName(api, token, `bench-${i}`));
  }
  for (const id of ids) await runQuery(api, token, id, 'SELECT 1');
  const lat: number[] = [];
  let errors = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      let i = c;
      while (performance.now() < until) {
        const s = performance.now();
        try {
          await runQuery(api, token, ids[i++ % ids.length], 'SELECT 42');
          lat.push(performance.now() - s);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const p = percentiles(lat);
  console.log(`${agentCount} agents, ${clients} concurrent clients, ${elapsed.toFixed(1)} s`);
  console.log(`trivial queries: ${(lat.length / elapsed).toFixed(1)} /s   p50 ${p.p50.toFixed(1)} ms   p99 ${p.p99.toFixed(1)} ms   errors ${errors}`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await api.stop();
}
