// What every axis of bench/scale.ts shares: its context, its figures, and the timing and EXPLAIN helpers.
import type { Db, Queryable } from '../../runtime/db.ts';
import type { BenchApi } from '../support.ts';

export interface AxisContext {
  api: BenchApi;
  db: Db;
  token: string;
  get(path: string): Promise<any>;
  explain: boolean;
}

export interface Figure {
  name: string;
  p50: number;
  p95: number;
  /** printed after the figures, e.g. the buffers a statement touched */
  note?: string;
}

export type Axis = (ctx: AxisContext, sizes: [number, number]) => AsyncGenerator<{ size: number; figures: Figure[] }>;

/**
 * Runs `fn` `n` times in a row after `warm` unmeasured runs; p50 and p95 in milliseconds. With `budgetMs`, an answer
 * that takes seconds is run only as often as fits (at least once, after one warm-up): 105 runs of a 4 s answer took 7
 * minutes, of a 30 s one (a scan of 10M rows) nearly an hour.
 */
export async function timed(name: string, n: number, fn: (i: number) => Promise<unknown>, warm = 5, budgetMs = Infinity): Promise<Figure> {
  const start = performance.now();
  for (let i = 0; i < warm && (i === 0 || performance.now() - start < budgetMs / 10); i++) await fn(i);
  const lat: number[] = [];
  const measuring = performance.now();
  for (let i = 0; i < n && (i === 0 || performance.now() - measuring < budgetMs); i++) {
    const t0 = performance.now();
    await fn(i);
    lat.push(performance.now() - t0);
  }
  lat.sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];
  return { name, p50: pct(50), p95: pct(95), ...(lat.length < n ? { note: `${lat.length} runs` } : {}) };
}

/** EXPLAIN (ANALYZE, BUFFERS) of one statement, printed with a title (only with BENCH_EXPLAIN=1). */
export async function explain(ctx: AxisContext, title: string, text: string, params: unknown[] = []): Promise<void> {
  if (!ctx.explain) return;
  const plan = await ctx.db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${text}`, params);
  console.log(`\n--- ${title}\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`);
}

/** Calls `fn(i)` for each i from `from` up to `to` (excluded), `concurrency` calls at a time, taken in order. */
export async function eachConcurrently(from: number, to: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < to) await fn(next++);
    }),
  );
}

export const seconds = (t0: number) => ((performance.now() - t0) / 1000).toFixed(1);


interface PlanJson {
  'Execution Time': number;
  Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
}

/**
 * The server's side of a domain function: runs `fn` against a Queryable that sends every read statement first as
 * EXPLAIN (ANALYZE, BUFFERS) and keeps, over `runs` runs, the median execution time and the buffers of the costliest
 * statement. Buffers do not move with the machine's load: they show what grows.
 */
export async function serverSide(ctx: AxisContext, name: string, fn: (q: Queryable) => Promise<unknown>, runs = 7, budgetMs = Infinity): Promise<Figure> {
  const times: number[] = [];
  let buffers = 0;
  const start = performance.now();
  for (let i = 0; i < runs && (i === 0 || performance.now() - start < budgetMs); i++) {
    let worst: { ms: number; buffers: number; text?: string; params?: readonly unknown[] } = { ms: 0, buffers: -1 };
    const q: Queryable = {
      async query<T>(text: string, params?: readonly unknown[]) {
        if (/^[\s(]*(select|with)\b/i.test(text)) {
          const [row] = await ctx.db.query<{ 'QUERY PLAN': PlanJson[] }>(`explain (analyze, buffers, format json) ${text}`, params);
          const p = row['QUERY PLAN'][0];
          const b = p.Plan['Shared Hit Blocks'] + p.Plan['Shared Read Blocks'];
          if (b > worst.buffers) worst = { ms: p['Execution Time'], buffers: b, text, params };
        }
        return ctx.db.query<T>(text, params);
      },
    };
    await fn(q);
    times.push(worst.ms);
    buffers = worst.buffers;
    if (i === 0 && worst.text) await explain(ctx, `db: ${name}`, worst.text, worst.params ? [...worst.params] : []);
  }
  times.sort((a, b) => a - b);
  return { name: `db: ${name}`, p50: times[Math.floor(times.length / 2)], p95: times[times.length - 1], note: `${buffers} buffers` };
}
