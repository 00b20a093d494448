// Cost as work grows (issue #36, second table): for one axis, builds the state at the small size directly in
// PostgreSQL with set-based SQL, measures the api's answers, grows the same state to the large size, measures again,
// and prints p50/p95 at both sizes and their ratio. Run by hand:
//   npx node bench/scale.ts history [small=10000] [large=10000000]
//   npx node bench/scale.ts catalog [small=100] [large=100000]
//   npx node bench/scale.ts lineage [small=1000] [large=1000000]
//   npx node bench/scale.ts housekeeping [smallDays=1] [largeDays=365]
//   npx node bench/scale.ts agents [small=100] [large=10000]
//   npx node bench/scale.ts running [small=10] [large=1000]
//   npx node bench/scale.ts sessions [small=10] [large=500]
// BENCH_EXPLAIN=1 prints EXPLAIN (ANALYZE, BUFFERS) of the statements behind each figure at both sizes.
import { rmSync } from 'node:fs';
import { connectDb } from '../runtime/db.ts';
import { BENCH_BOOTSTRAP, adminToken, startApiProcess } from './support.ts';
import type { Axis, AxisContext, Figure } from './scale/measure.ts';

// Each axis is its own module under bench/scale/, loaded when asked for.
// The axes with agents start the api with a bootstrap token for the real agent (and sessions on where they need them).
const AGENTS = { AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP };
const AXES: Record<string, { axis: () => Promise<Axis>; sizes: [number, number]; env?: Record<string, string> }> = {
  history: { axis: async () => (await import('./scale/history.ts')).historyAxis, sizes: [10_000, 10_000_000] },
  catalog: { axis: async () => (await import('./scale/catalog.ts')).catalogAxis, sizes: [100, 100_000] },
  lineage: { axis: async () => (await import('./scale/lineage.ts')).lineageAxis, sizes: [1_000, 1_000_000] },
  housekeeping: { axis: async () => (await import('./scale/housekeeping.ts')).housekeepingAxis, sizes: [1, 365] },
  agents: { axis: async () => (await import('./scale/agents.ts')).agentsAxis, sizes: [100, 10_000], env: AGENTS },
  running: { axis: async () => (await import('./scale/running.ts')).runningAxis, sizes: [10, 1_000], env: AGENTS },
  sessions: { axis: async () => (await import('./scale/sessions.ts')).sessionsAxis, sizes: [10, 500], env: { ...AGENTS, SQL_SESSIONS_ENABLED: 'true' } },
};

async function main() {
  const [name = 'history', small, large] = process.argv.slice(2);
  const spec = AXES[name];
  if (!spec) throw new Error(`unknown axis ${name}: one of ${Object.keys(AXES).join(', ')}`);
  const sizes: [number, number] = [Number(small ?? spec.sizes[0]), Number(large ?? spec.sizes[1])];
  // e.g. API_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof/api' to profile the api while it answers
  const api = await startApiProcess({ ...spec.env, ...(process.env.API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.API_NODE_OPTIONS } : {}) });
  const db = await connectDb({ url: api.databaseUrl, poolSize: 4 });
  try {
    const token = await adminToken(api);
    const headers = { authorization: `Bearer ${token}`, 'user-agent': 'eider-bench/1' };
    const ctx: AxisContext = {
      api,
      db,
      token,
      explain: process.env.BENCH_EXPLAIN === '1',
      async get(path: string) {
        const r = await fetch(`${api.url}${path}`, { headers });
        const body = await r.json();
        if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(body)}`);
        return body;
      },
    };
    const results: { size: number; figures: Figure[] }[] = [];
    const axis = await spec.axis();
    for await (const r of axis(ctx, sizes)) {
      results.push(r);
      console.log(`\n${name} at ${r.size.toLocaleString('en')}:`);
      for (const f of r.figures) console.log(`  ${f.name.padEnd(48)} p50 ${f.p50.toFixed(2).padStart(8)} ms   p95 ${f.p95.toFixed(2).padStart(8)} ms${f.note ? `   ${f.note}` : ''}`);
    }
    if (results.length === 2) {
      const [a, b] = results;
      console.log(`\n${name}: ${a.size.toLocaleString('en')} → ${b.size.toLocaleString('en')}, ratio of p50s (large / small)`);
      for (const f of b.figures) {
        const s = a.figures.find((x) => x.name === f.name);
        if (s) console.log(`  ${f.name.padEnd(48)} ${s.p50.toFixed(2).padStart(8)} → ${f.p50.toFixed(2).padStart(8)} ms   ×${(f.p50 / s.p50).toFixed(2)}${s.note ? `   (${s.note} → ${f.note})` : ''}`);
      }
    }
  } finally {
    await db.close();
    await api.stop();
    // the state built is gigabytes at the large sizes
    rmSync(api.dataDir, { recursive: true, force: true });
  }
}

await main();
