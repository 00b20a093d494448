// DuckDB's node bindings run every call (a statement, a connect, an instance's creation) on libuv's thread pool,
// where the agent's file calls (mkdir, stat, readFile of a result) also run. The pool has 4 threads by default: four
// long statements held all of them, and everything else on the agent (a `SELECT 42`, the next query's instance, a
// cancelled query's clean-up) queued behind them until one ended (18 s measured). The pool is sized when this module
// is evaluated: libuv reads the variable once, at the pool's first use, and loading an entry's static imports
// already uses it, so an entry that runs an agent (bin/eider.ts, agent/cli.ts) imports this module first. Admission
// keeps RESERVED_THREADS of the pool free of statements (admission.ts `maxRunning`): short statements and file
// calls always find a thread.

/** Threads libuv's pool gets unless UV_THREADPOOL_SIZE is set (libuv's own ceiling is 1024). */
const DEFAULT_THREAD_POOL_SIZE = 64;
/** Threads no admitted statement may hold: file calls, connects, instance creation. */
const RESERVED_THREADS = 8;

/** Sizes libuv's pool for this process (in effect only before any asynchronous file or DuckDB call); answers its size. */
function sizeThreadPool(env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.UV_THREADPOOL_SIZE);
  if (Number.isInteger(set) && set > 0) return Math.min(set, 1024);
  env.UV_THREADPOOL_SIZE = String(DEFAULT_THREAD_POOL_SIZE);
  return DEFAULT_THREAD_POOL_SIZE;
}

/** How many admitted statements (queries, SQL sessions' grants) may run at once in a pool of `poolSize`. */
export function statementLanes(poolSize: number): number {
  return Math.max(1, poolSize - RESERVED_THREADS);
}

/** The pool's size in this process, sized on first import. */
export const THREAD_POOL_SIZE = sizeThreadPool();
