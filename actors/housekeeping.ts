// The actor runtime's background work across replicas: pending effects are picked up (this replica's after a
// restart, a gone replica's once its heartbeat is older than the presence TTL), gone replicas are removed from the
// registry with their live actors adopted, and finished actors' history is pruned after its retention (and the
// inline results of queries after theirs).
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import { presenceBeatMs, removeGoneReplicas } from '../runtime/replicas.ts';
import { startLeaderLoop, type LeaderLoop } from '../runtime/timers.ts';
import type { ActorHost } from './types.ts';
import { pruneInlineResults } from '../domain/queries.ts';

export interface HousekeepingOptions {
  db: Db;
  host: ActorHost;
  logger: Logger;
  presenceTtlS: number;
  historyRetentionDays: number;
  resultRetentionHours: number;
  /** How often pending effects are looked for. */
  effectsTickMs?: number;
}

/** Deletes the history of actors that ended more than `retentionDays` ago, and those ended connections' rows. */
export async function pruneActorHistory(db: Db, retentionDays: number, batch = 5_000): Promise<{ transitions: number; connections: number }> {
  let transitions = 0;
  for (;;) {
    const rows = await db.query(
      `delete from actor_transitions t using (
         select t2.kind, t2.id, t2.seq from actor_transitions t2 join actors a on a.kind = t2.kind and a.id = t2.id
         where a.terminal and a.updated_at < now() - make_interval(secs => $1 * 86400) limit $2
       ) old where t.kind = old.kind and t.id = old.id and t.seq = old.seq returning 1`,
      [retentionDays, batch],
    );
    transitions += rows.length;
    if (rows.length < batch) break;
  }
  // A connection's actor is its only record (the agents row keeps the agent); an ended one is kept as long.
  const conns = await db.query(
    `delete from actors where kind = 'agentConnection' and terminal and updated_at < now() - make_interval(secs => $1 * 86400) returning 1`,
    [retentionDays],
  );
  return { transitions, connections: conns.length };
}

/** Removes the registry rows of replicas gone longer than the presence TTL and moves their live actors to `replicaId`.
 *  Their pending effects stay in the outbox: effect recovery claims them (whole transitions) and runs them. */
export async function sweepGoneReplicas(db: Db, replicaId: string, presenceTtlS: number): Promise<{ gone: string[]; adoptedActors: number }> {
  const gone = await removeGoneReplicas(db, presenceTtlS);
  if (gone.length === 0) return { gone, adoptedActors: 0 };
  const adopted = await db.query(`update actors set owner_replica = $1 where owner_replica = any($2::text[]) and not terminal returning 1`, [replicaId, gone]);
  return { gone, adoptedActors: adopted.length };
}

export function startActorHousekeeping(opts: HousekeepingOptions): { stop(): Promise<void> } {
  const { db, host, logger } = opts;
  let stopped = false;
  let effectsRun: Promise<unknown> = Promise.resolve();
  const effectsTimer = setInterval(() => {
    effectsRun = effectsRun
      .then(() => (stopped ? 0 : host.recoverEffects({ presenceTtlS: opts.presenceTtlS })))
      .catch((e) => logger.warn({ err: (e as Error).message }, 'pending effects could not be claimed'));
  }, opts.effectsTickMs ?? 2_000);
  effectsTimer.unref();

  const sweeper: LeaderLoop = startLeaderLoop({
    db,
    name: 'replica-sweeper',
    enabled: true,
    logger,
    tickMs: presenceBeatMs(opts.presenceTtlS),
    run: async () => {
      const r = await sweepGoneReplicas(db, host.replicaId, opts.presenceTtlS);
      if (r.gone.length > 0) logger.warn({ gone: r.gone, adoptedActors: r.adoptedActors }, 'replicas gone: their actors adopted');
    },
  });
  const pruner: LeaderLoop = startLeaderLoop({
    db,
    name: 'actor-history-pruner',
    enabled: true,
    logger,
    tickMs: 3_600_000,
    run: async () => {
      const r = await pruneActorHistory(db, opts.historyRetentionDays);
      if (r.transitions || r.connections) logger.info(r, 'finished actors pruned');
      const results = await pruneInlineResults(db, opts.resultRetentionHours);
      if (results) logger.info({ results }, 'expired inline results dropped');
    },
  });
  void pruner.tickNow();

  return {
    async stop() {
      stopped = true;
      clearInterval(effectsTimer);
      await effectsRun;
      await sweeper.stop();
      await pruner.stop();
    },
  };
}
