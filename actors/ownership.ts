// Ownership: the live actors and pending effects this replica takes on. After a restart it loads the live actors it
// owns into the cache and runs the effects it committed but never finished; `recoverEffects` (housekeeping, every
// few seconds) also claims those of replicas gone longer than the presence TTL.
import { actorKey } from './actorCache.ts';
import type { EffectRunner } from './effectRunner.ts';
import { listOwnedLive } from './store.ts';
import type { HostResources } from './systems.ts';

export class Ownership {
  private readonly r: HostResources;
  private readonly effects: EffectRunner;

  constructor(r: HostResources, effects: EffectRunner) {
    this.r = r;
    this.effects = effects;
  }

  async rehydrate(): Promise<number> {
    const { db, replicaId, kinds, externals, cache, logger } = this.r;
    const rows = await listOwnedLive(db, replicaId, Object.keys(kinds), externals);
    for (const row of rows) cache.remember(actorKey(row.kind, row.id), cache.entryFromRow(kinds[row.kind], row));
    // Effects this replica committed but never finished before it stopped (nothing of ours runs yet: no age floor).
    const effects = await this.recoverEffects({ presenceTtlS: null, minAgeS: 0 });
    logger.info({ replica: replicaId, actors: rows.length, effects }, 'actors rehydrated');
    return rows.length;
  }

  recoverEffects(opts: { presenceTtlS: number | null; minAgeS?: number; limit?: number }): Promise<number> {
    return this.effects.recover(opts);
  }
}
