// Bounded memory and storage of the api under a long run: the api process's resident memory (VmRSS) after every
// tenth of BENCH_QUERIES trivial queries (default 100,000) through 2 agents and 32 clients, and what the run left in
// PostgreSQL (actor rows, history rows, pending effects, the control schema's size). Flat RSS after warm-up means no
// per-query state stays in memory (the actor cache is bounded; dispatch maps and sockets are cleaned on every path).
// Run by hand: node bench/apiMemory.ts [queries]
import { readFileSync } from 'node:fs';
import { connectDb } from '../runtime/db.ts';
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, bootstrapToken, runQuery, startAgentProcess, startApiProcess } from './support.ts';

const total = Number(process.argv[2] ?? process.env.BENCH_QUERIES ?? 100_000);
const clients = 32;
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

// API_NODE_OPTIONS (e.g. --max-old-space-size=160) caps the api's heap: a leak then ends in an out-of-memory exit.
const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP, ...(process.env.API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.API_NODE_OPTIONS } : {}) });
const token = await adminToken(api);
const agents = [];
try {
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    agents.push(await startAgentProcess(api, token, `mem-${i}`, i === 0 ? BENCH_BOOTSTRAP : await bootstrapToken(api, token)));
    ids.push(await agentIdByName(api, token, `mem-${i}`));
  }
  const pid = api.child.pid!;
  // Warm-up: JIT, pools and caches reach their working size before the first sample.
  for (let i = 0; i < 500; i++) await runQuery(api, token, ids[i % 2], 'SELECT 1');
  const samples: Array<{ done: number; rss: number }> = [{ done: 0, rss: rssMiB(pid) }];
  let done = 0;
  let errors = 0;
  const step = Math.max(1, Math.floor(total / 10));
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (;;) {
        const n = done++;
        if (n >= total) return;
        try {
          await runQuery(api, token, ids[(n + c) % 2], 'SELECT 42');
        } catch {
          errors++;
        }
        if ((n + 1) % step === 0) samples.push({ done: n + 1, rss: rssMiB(pid) });
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${total} queries in ${seconds.toFixed(0)} s (${(total / seconds).toFixed(0)}/s), ${errors} errors, 2 agents, ${clients} clients`);
  console.log('api RSS (MiB) by queries done: ' + samples.map((s) => `${s.done}: ${s.rss.toFixed(0)}`).join(', '));
  const first = samples[1]?.rss ?? samples[0].rss;
  const last = samples[samples.length - 1].rss;
  console.log(`growth from the first tenth to the end: ${(last - first).toFixed(0)} MiB (${(((last - first) / first) * 100).toFixed(1)} %)`);
  const db = await connectDb({ url: api.databaseUrl, poolSize: 1 });
  {
    const [r] = await db.query<any>(
      `select (select count(*) from eider.actors where kind = 'query')::int as actors,
              (select count(*) from eider.actor_transitions where kind = 'query')::int as history,
              (select count(*) from eider.actor_effects)::int as pending,
              (select pg_size_pretty(sum(pg_total_relation_size(c.oid))) from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'eider' and c.relkind in ('r', 'm')) as size,
              (select pg_size_pretty(pg_total_relation_size('eider.actors'))) as actors_size`,
    );
    console.log(`database: ${r.actors} query actors, ${r.history} history rows (${(r.history / r.actors).toFixed(1)} per query), ${r.pending} pending effects; control schema ${r.size}, actors table ${r.actors_size}`);
    await db.close();
  }
} finally {
  for (const a of agents) a.kill('SIGTERM');
  await api.stop();
}
