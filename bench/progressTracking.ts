// What DuckDB's progress tracking (enable_progress_bar, which the agent turns on so it can report a query's progress,
// agent/queryProgress.ts) costs a query, in one process: a trivial `SELECT 42` (CPU per query, from the kernel, every
// thread) and an aggregate over a 20M-row table (wall time), each measured with tracking off and on in alternating
// rounds, so load from others on the machine falls on both alike.
// Run by hand: node bench/progressTracking.ts [rounds] [trivial queries per round]
import { DuckDBInstance } from '@duckdb/node-api';
import { PROGRESS_SETTINGS } from '../agent/queryProgress.ts';

const rounds = Number(process.argv[2] ?? 6);
const perRound = Number(process.argv[3] ?? 2000);
const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await instance.connect();
await c.run('CREATE TABLE t AS SELECT range AS x FROM range(20000000)');
const OFF = ['SET enable_progress_bar=false'];
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const trivial: Record<'off' | 'on', number[]> = { off: [], on: [] };
const aggregate: Record<'off' | 'on', number[]> = { off: [], on: [] };
for (let r = 0; r < rounds; r++) {
  for (const mode of r % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
    await c.run((mode === 'on' ? PROGRESS_SETTINGS : OFF).join(';\n'));
    let cpu = cpuMs();
    for (let i = 0; i < perRound; i++) await c.run('SELECT 42');
    trivial[mode].push(((cpuMs() - cpu) * 1000) / perRound);
    cpu = performance.now();
    await c.run('SELECT sum(hash(x) % 7), count(DISTINCT x % 1000003) FROM t');
    aggregate[mode].push(performance.now() - cpu);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (name: string, unit: string, m: Record<'off' | 'on', number[]>) =>
  console.log(`${name}: off ${median(m.off).toFixed(1)} ${unit}, on ${median(m.on).toFixed(1)} ${unit} (medians of ${rounds}; each: off ${m.off.map((x) => x.toFixed(0)).join(' ')} | on ${m.on.map((x) => x.toFixed(0)).join(' ')})`);
line('SELECT 42, CPU per query', 'µs', trivial);
line('20M-row aggregate, wall', 'ms', aggregate);
c.closeSync();
instance.closeSync();
