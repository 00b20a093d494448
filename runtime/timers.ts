// The one mechanism behind every periodic loop (actor reaper, session reaper, scheduler, maintenance scanner…):
// each tick, the replica that wins the loop's transaction-scoped advisory lock runs it, so across replicas one
// tick of a loop runs at a time, and a replica that dies mid-tick releases the lock with its connection.
import { isDatabaseUnavailable, type Db, type Queryable } from './db.ts';
import type { Logger } from 'pino';

interface LeaderTick {
  /** The transaction holding the loop's lock; use it only for work that must commit or roll back with the tick. */
  tx: Queryable;
  /** Aborted when the loop is stopping; long ticks should check it between batches. */
  signal: AbortSignal;
  /** When a tick of this loop last found the database unreachable (epoch ms), or null: a tick may hold back work
   *  that the outage itself made due (the actor reaper, actors/reaper.ts). */
  lastUnreachableAt: number | null;
}

export interface LeaderLoopOptions {
  db: Db;
  name: string;
  tickMs: number;
  /** A disabled loop never joins the election (it takes no lock and runs nothing). */
  enabled: boolean;
  run: (tick: LeaderTick) => Promise<void>;
  logger?: Logger;
}

export interface LeaderLoop {
  readonly name: string;
  /** Runs one tick now (after any tick in progress); true when this replica won the lock and ran it. */
  tickNow(): Promise<boolean>;
  /** Stops scheduling ticks and waits for a running one to finish. */
  stop(): Promise<void>;
}

export function loopLockKey(name: string): string {
  return `eider:loop:${name}`;
}

export function startLeaderLoop(opts: LeaderLoopOptions): LeaderLoop {
  const { db, name, tickMs, run, logger } = opts;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<boolean> = Promise.resolve(false);
  let stopped = !opts.enabled;
  let lastUnreachableAt: number | null = null;

  const tickOnce = async (): Promise<boolean> => {
    if (controller.signal.aborted) return false;
    try {
      return await db.tx(async (tx) => {
        const [row] = await tx.query<{ won: boolean }>('select pg_try_advisory_xact_lock(hashtext($1)) as won', [
          loopLockKey(name),
        ]);
        if (!row?.won) return false;
        await run({ tx, signal: controller.signal, lastUnreachableAt });
        return true;
      });
    } catch (e) {
      if (isDatabaseUnavailable(e)) lastUnreachableAt = Date.now();
      logger?.error({ loop: name, err: e instanceof Error ? e.message : String(e) }, 'leader loop tick failed');
      return false;
    }
  };

  // Ticks are chained, never overlapping: the next one is scheduled only after the previous settled.
  const enqueue = (): Promise<boolean> => {
    running = running.then(tickOnce, tickOnce);
    return running;
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void enqueue().finally(schedule);
    }, tickMs);
    timer.unref();
  };

  schedule();

  return {
    name,
    tickNow: () => (opts.enabled && !controller.signal.aborted ? enqueue() : Promise.resolve(false)),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
      await running.catch(() => false);
    },
  };
}
