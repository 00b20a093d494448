// Durable timers: machines keep deadlines in context, the host projects them to actors.deadline_at, and this
// leader-elected loop sends `{type: 'deadline', at}` to every live actor whose deadline has passed. One replica
// reaps per tick; the host's version check keeps a deadline racing a live event from applying twice.
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import { startLeaderLoop, type LeaderLoop } from '../runtime/timers.ts';
import type { ActorHost } from './types.ts';
import { listDue } from './store.ts';

export interface ReaperOptions {
  db: Db;
  host: ActorHost;
  /** The kinds this host runs; actors of other kinds are left to hosts that know them. */
  kinds: readonly string[];
  logger: Logger;
  now?: () => number;
  /** Actors sent a deadline per query; a tick keeps going while batches come back full. */
  batch?: number;
  /** Deliveries in flight at once within a batch. */
  concurrency?: number;
}

export interface ReapResult {
  due: number;
  changed: number;
  failed: number;
}

/** One reaping pass; returns how many actors were due, how many moved, and how many deliveries threw. */
export async function reapDue(opts: ReaperOptions, signal?: AbortSignal): Promise<ReapResult> {
  const now = opts.now ?? Date.now;
  const batch = opts.batch ?? 200;
  const concurrency = Math.max(1, opts.concurrency ?? 16);
  const result: ReapResult = { due: 0, changed: 0, failed: 0 };
  // Actors that ignored their deadline stay due; they are skipped for the rest of this pass so the pass ends.
  const seen = new Set<string>();
  for (;;) {
    if (signal?.aborted) break;
    const at = now();
    const due = (await listDue(opts.db, at, opts.kinds, batch + seen.size)).filter((a) => !seen.has(`${a.kind}:${a.id}`));
    if (due.length === 0) break;
    result.due += due.length;
    for (let i = 0; i < due.length; i += concurrency) {
      await Promise.all(
        due.slice(i, i + concurrency).map(async ({ kind, id }) => {
          seen.add(`${kind}:${id}`);
          try {
            const r = await opts.host.send(kind, id, { type: 'deadline', at });
            if (r.outcome !== 'unchanged') result.changed++;
            else opts.logger.warn({ kind, id }, 'actor ignored its passed deadline');
          } catch (e) {
            result.failed++;
            opts.logger.error({ kind, id, err: e instanceof Error ? e.message : String(e) }, 'deadline delivery failed');
          }
        }),
      );
    }
    if (due.length < batch) break;
  }
  return result;
}

/**
 * Starts a leader-elected reaper loop for `kinds` (`ACTOR_REAPER_TICK_S`; the session reaper's own tick for
 * sessions and statements). Each name is its own election.
 *
 * `holdAfterOutageMs`: after the database was unreachable, deadlines are reaped only once this long has passed since
 * (AGENT_HEARTBEAT_TTL_S in bin/api.ts). What was not written during the outage (an agent's heartbeats, a statement's
 * acknowledgement, an outcome) made deadlines pass that the parties had kept: reaping them at once would end a live
 * agent's connection and fail its work. Held this long, every live agent has heartbeat again.
 */
export function startActorReaper(opts: ReaperOptions & { tickMs: number; enabled?: boolean; name?: string; alsoEachTick?: () => Promise<unknown>; holdAfterOutageMs?: number }): LeaderLoop {
  const name = opts.name ?? 'actor-reaper';
  const now = opts.now ?? Date.now;
  let held = false;
  return startLeaderLoop({
    db: opts.db,
    name,
    tickMs: opts.tickMs,
    enabled: opts.enabled ?? true,
    logger: opts.logger,
    run: async ({ signal, lastUnreachableAt }) => {
      const holdUntil = lastUnreachableAt === null ? 0 : lastUnreachableAt + (opts.holdAfterOutageMs ?? 0);
      if (now() < holdUntil) {
        if (!held) opts.logger.info({ loop: name, resumesInMs: holdUntil - now() }, 'the database was unreachable: deadlines are reaped once live parties have reported again');
        held = true;
        return;
      }
      held = false;
      const r = await reapDue(opts, signal);
      if (r.due > 0) opts.logger.info({ loop: name, ...r }, 'deadlines reaped');
      if (!signal.aborted) await opts.alsoEachTick?.();
    },
  });
}
