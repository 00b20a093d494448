// Elastic compute's pool operations, which the query and session actors and the routes use: find or start compute
// for a pool, start or restart an elastic agent, report an agent's work, and the reaper's reconciliation. The
// elasticAgent actor they spawn is elasticAgentKind.ts.
// Decisions that span replicas (one provisioning per pool at a time, the pool cap) are taken under a PostgreSQL
// advisory lock on the pool key, never on what this process holds.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../runtime/db.ts';
import type { ComputeProvider } from '../runtime/compute/provider.ts';
import { insertElasticAgent, setCurrentIncarnation } from '../domain/agents.ts';
import * as elastic from '../domain/elastic.ts';
import type { ElasticAgentProjection } from '../machines/elasticAgent.ts';
import type { ActorHost, ActorKind, SpawnResult } from './types.ts';
import { ActorError } from './errors.ts';
import { elasticAgentKind, tellWaitingWork, type ElasticAgentDeps } from './elasticAgentKind.ts';

/** What the pool operations use: the elastic agent actor's deps less `reportWork`, which they provide. */
type ElasticComputeDeps = Omit<ElasticAgentDeps, 'reportWork'>;

export interface ElasticCompute {
  kind: ActorKind<ElasticAgentProjection>;
  settings: elastic.ElasticSettings;
  provider: ComputeProvider;
  /** A healthy agent for `pool` now, or null after making sure compute is starting for it (or the cap is reached). */
  ensure(host: ActorHost, pool: string): Promise<string | null>;
  /** A new elastic agent an operator started (it serves only work that names it). */
  startAgent(host: ActorHost, input: { name: string | null; accessMode: 'open' | 'restricted'; size: elastic.ComputeSize }): Promise<string>;
  /** A new incarnation of a terminated or failed elastic agent; false while its current one is live. */
  restart(host: ActorHost, agentId: string): Promise<boolean>;
  /** Recounts an agent's work and tells its elastic actor (no-op for a static agent). */
  reportWork(host: ActorHost, agentId: string): Promise<void>;
  /** ELASTIC_AGENT_CATALOG_BASE_URL when `agentId` is an elastic agent and it is set, else null. */
  catalogUrlFor(agentId: string): Promise<string | null>;
  /** One reaper pass: leaked instances terminated, vanished ones failed, waiting pools asked for compute again. */
  reconcile(host: ActorHost): Promise<{ leaked: number; vanished: number; pools: number }>;
}

const TERMINATE_TIMEOUT_MS = 60_000;
const MAX_TERMINATE_ATTEMPTS = 3;
const poolLock = (pool: string) => `eider:elastic-pool:${pool}`;
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function elasticCompute(deps: ElasticComputeDeps): ElasticCompute {
  const { db, settings, provider, logger } = deps;

  async function spawnIncarnation(tx: Queryable, host: ActorHost, r: { agentId: string; pool: string; size: elastic.ComputeSize }): Promise<SpawnResult> {
    const id = randomUUID();
    // The row is written (with the actor) before the provider is asked for anything: a crash after the provider
    // call leaves a row the reaper can reconcile, never an instance nobody knows of.
    const spawned = await host.spawn(
      'elasticAgent',
      id,
      {
        elasticId: id,
        pool: r.pool,
        cpu: r.size.cpu,
        memoryGb: r.size.memory_gb,
        at: Date.now(),
        provisioningDeadlineMs: settings.provisioningDeadlineMs,
        idleTimeoutMs: settings.idleTimeoutMs,
        maxLifetimeMs: settings.maxLifetimeMs,
        terminateTimeoutMs: TERMINATE_TIMEOUT_MS,
        maxTerminateAttempts: MAX_TERMINATE_ATTEMPTS,
      },
      { tx, entity: elastic.incarnationInsert({ id, agentId: r.agentId, pool: r.pool, provider: provider.name, size: r.size }) },
    );
    await setCurrentIncarnation(tx, r.agentId, id);
    return spawned;
  }

  const defaultSize = () => elastic.sizeNamed(settings, 'medium');
  const sizeOf = (row: elastic.IncarnationRow): elastic.ComputeSize => ({
    size: row.size,
    cpu: row.cpu,
    memory_gb: row.memory_gb,
    hourly_cost: provider.hourlyCost(row.cpu, row.memory_gb),
    currency: settings.currency,
  });

  /** Runs `decide` under the pool's advisory lock; starts what it spawned once the transaction committed. */
  async function underPoolLock<T>(pool: string, decide: (tx: Queryable, spawn: (s: SpawnResult) => void) => Promise<T>): Promise<T> {
    const spawned: SpawnResult[] = [];
    const out = await db.tx(async (tx) => {
      await tx.query('select pg_advisory_xact_lock(hashtext($1))', [poolLock(pool)]);
      return decide(tx, (s) => spawned.push(s));
    });
    for (const s of spawned) await s.start();
    return out;
  }

  const api: ElasticCompute = {
    settings,
    provider,
    async ensure(host, pool) {
      const ready = await elastic.healthyPoolAgent(db, pool);
      if (ready) return ready;
      return underPoolLock(pool, async (tx, started) => {
        const again = await elastic.healthyPoolAgent(tx, pool);
        if (again) return again;
        const named = elastic.pooledAgentId(pool);
        if (named) {
          const current = await elastic.currentIncarnation(tx, named);
          // Starting, terminating, or running but not connected yet: it is released or re-asked later.
          if (!current || elastic.LIVE_STATUSES.includes(current.status)) return null;
          started(await spawnIncarnation(tx, host, { agentId: named, pool: current.pool, size: sizeOf(current) }));
          return null;
        }
        const counts = await elastic.poolCounts(tx, pool);
        if (counts.starting > 0 || counts.live >= settings.maxAgentsPerPool) return null;
        const agentId = await insertElasticAgent(tx, { name: `elastic-${pool}-${randomUUID().slice(0, 8)}`, accessMode: 'open' });
        started(await spawnIncarnation(tx, host, { agentId, pool, size: defaultSize() }));
        logger.info({ pool, agentId }, 'elastic compute requested for the pool');
        return null;
      });
    },
    async startAgent(host, input) {
      let spawned: SpawnResult | null = null;
      const agentId = await db.tx(async (tx) => {
        const id = await insertElasticAgent(tx, { name: input.name ?? `elastic-${randomUUID().slice(0, 8)}`, accessMode: input.accessMode });
        spawned = await spawnIncarnation(tx, host, { agentId: id, pool: elastic.agentPool(id), size: input.size });
        return id;
      });
      await (spawned as SpawnResult | null)?.start();
      return agentId;
    },
    async restart(host, agentId) {
      return underPoolLock(elastic.agentPool(agentId), async (tx, started) => {
        const current = await elastic.currentIncarnation(tx, agentId);
        if (!current || elastic.LIVE_STATUSES.includes(current.status)) return false;
        started(await spawnIncarnation(tx, host, { agentId, pool: current.pool, size: sizeOf(current) }));
        return true;
      });
    },
    async reportWork(host, agentId) {
      const [row] = await db.query<{ elastic_id: string | null }>(`select elastic_id from agents where id = $1`, [agentId]);
      if (!row?.elastic_id) return;
      const work = await elastic.agentWork(db, agentId);
      await host.send('elasticAgent', row.elastic_id, { type: 'workChanged', ...work }).catch((e) => {
        if (!(e instanceof ActorError && e.code === 'not_found')) throw e;
      });
    },
    async catalogUrlFor(agentId) {
      if (!settings.agentCatalogUrl) return null;
      const [row] = await db.query<{ elastic: boolean }>(`select elastic_id is not null as elastic from agents where id = $1`, [agentId]);
      return row?.elastic ? settings.agentCatalogUrl : null;
    },
    async reconcile(host) {
      let leaked = 0;
      let vanished = 0;
      if (provider.name !== 'null') {
        const instances = await provider.list();
        const known = await elastic.knownIncarnationIds(db, instances.map((i) => i.elasticId).filter((id) => /^[0-9a-f-]{36}$/i.test(id)));
        for (const i of instances) {
          if (known.has(i.elasticId)) continue;
          // An instance without a live row: left by a crash between the provider call and the row's end, or by
          // an incarnation that already ended. Nothing else will stop it.
          await provider.terminate(i.providerRef).then(
            () => leaked++,
            (e) => logger.warn({ providerRef: i.providerRef, err: message(e) }, 'leaked instance not terminated'),
          );
        }
        const byId = new Map(instances.map((i) => [i.elasticId, i]));
        for (const row of await elastic.liveIncarnations(db)) {
          // Only incarnations the provider accepted and that should be running: the starting ones have their
          // own deadline, the terminating ones their own retries.
          if (!row.provider_ref || !elastic.RUNNING_STATUSES.includes(row.status)) continue;
          const instance = byId.get(row.id);
          if (instance?.running) continue;
          vanished++;
          logger.warn({ elasticId: row.id, agentId: row.agent_id }, 'elastic instance vanished; the agent is ended');
          await host.send('elasticAgent', row.id, { type: 'agentLost' }).catch((e) => logger.warn({ elasticId: row.id, err: message(e) }, 'agentLost not delivered'));
        }
      }
      const pools = await elastic.waitingPools(db);
      for (const pool of pools) {
        const agentId = await api.ensure(host, pool).catch((e) => {
          logger.warn({ pool, err: message(e) }, 'compute for waiting work not ensured');
          return null;
        });
        if (agentId) await tellWaitingWork(host, logger, await elastic.waitingWork(db, [pool]), { type: 'computeReady', agentId });
      }
      return { leaked, vanished, pools: pools.length };
    },
    kind: elasticAgentKind({ ...deps, reportWork: (host, agentId) => api.reportWork(host, agentId) }),
  };
  return api;
}
