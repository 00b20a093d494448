// The elasticAgent actor's effects and entity projection: the provider calls that start and stop an incarnation,
// releasing and failing the work waiting for it, and the elastic_agents row. The pool operations that spawn these
// actors are in elasticCompute.ts.
import { machineKinds } from '../machines/index.ts';
import type { ElasticAgentProjection } from '../machines/elasticAgent.ts';
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import { ProvisionRefused, type ComputeProvider } from '../runtime/compute/provider.ts';
import { mintAgentBootstrapToken, revokeIncarnationCredential } from '../domain/agents.ts';
import * as elastic from '../domain/elastic.ts';
import type { ActorHost, ActorKind } from './types.ts';
import type { AgentLink } from './agentLink.ts';
import { sql } from '../runtime/sql.ts';

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Tells the queries and sessions waiting for compute that it is ready, or that it could not start. */
export async function tellWaitingWork(
  host: ActorHost,
  logger: Logger,
  work: { queries: string[]; sessions: string[] },
  event: { type: 'computeReady'; agentId: string } | { type: 'computeFailed'; message: string },
) {
  await Promise.all([
    ...work.queries.map((id) => host.send('query', id, event).catch((e) => logger.warn({ queryId: id, err: message(e) }, 'waiting query not told'))),
    ...work.sessions.map((id) => host.send('sqlSession', id, event).catch((e) => logger.warn({ sessionId: id, err: message(e) }, 'waiting session not told'))),
  ]);
}

/** What the elastic agent actor uses; the pool operations (elasticCompute.ts) take the same, less `reportWork`. */
export interface ElasticAgentDeps {
  db: Db;
  settings: elastic.ElasticSettings;
  provider: ComputeProvider;
  /** The environment of a provisioned agent: its connection settings plus ELASTIC_AGENT_ENV (built in bin/). */
  agentEnv: (extra: Record<string, string>) => Promise<Record<string, string>>;
  link: AgentLink;
  logger: Logger;
  /** Recounts an agent's work and tells its elastic actor (elasticCompute.ts). */
  reportWork: (host: ActorHost, agentId: string) => Promise<void>;
}

export function elasticAgentKind(deps: ElasticAgentDeps): ActorKind<ElasticAgentProjection> {
  const { db, settings, provider, logger } = deps;
  return {
    machine: machineKinds.elasticAgent.machine,
    project: (s) => ({ ...machineKinds.elasticAgent.project(s) }),
    effects: {
      provisionCompute: async (ctx, p: { elasticId: string; pool: string; cpu: number; memoryGb: number }) => {
        const row = await elastic.incarnation(db, p.elasticId);
        if (!row) throw new Error(`elastic incarnation ${p.elasticId} has no row`);
        const [agent] = await db.query<{ name: string }>(`select name from agents where id = $1`, [row.agent_id]);
        if (!agent) {
          await ctx.send({ type: 'provisionFailed', message: 'the agent was removed' });
          return;
        }
        // Single use, bound to this agent row, and useless once the dial-home deadline passed.
        const token = await mintAgentBootstrapToken(db, row.agent_id, settings.provisioningDeadlineMs / 1000 + 60);
        try {
          const env = await deps.agentEnv({ BOOTSTRAP_TOKEN: token, AGENT_NAME: agent.name });
          const { providerRef } = await provider.provision({ elasticId: p.elasticId, agentId: row.agent_id, name: agent.name, cpu: p.cpu, memoryGb: p.memoryGb, env });
          ctx.logger.info({ elasticId: p.elasticId, agentId: row.agent_id, provider: provider.name, providerRef }, 'elastic instance started');
          await ctx.send({ type: 'provisioningStarted', providerRef });
        } catch (e) {
          // A refusal (no room, bad configuration) is final; anything else is retried by supervision.
          if (!(e instanceof ProvisionRefused)) throw e;
          await ctx.send({ type: 'provisionFailed', message: e.message });
        }
      },
      terminateCompute: async (ctx, p: { elasticId: string; agentId: string | null; providerRef: string | null; reason: string }) => {
        try {
          if (p.providerRef) await provider.terminate(p.providerRef);
          else {
            // The provider may have started it before its reference was recorded (a crash in between).
            for (const i of await provider.list()) if (i.elasticId === p.elasticId) await provider.terminate(i.providerRef);
          }
        } catch (e) {
          await ctx.send({ type: 'terminationFailed', message: message(e) });
          return;
        }
        const row = await elastic.incarnation(db, p.elasticId);
        if (row) await revokeIncarnationCredential(db, row.agent_id, p.elasticId);
        ctx.logger.info({ elasticId: p.elasticId, reason: p.reason }, 'elastic instance terminated');
        await ctx.send({ type: 'terminationConfirmed' });
      },
      releaseWaitingWork: async (ctx, p: { elasticId: string; agentId: string; pool: string }) => {
        const work = await elastic.waitingWork(db, [p.pool, elastic.agentPool(p.agentId)]);
        if (work.queries.length || work.sessions.length) ctx.logger.info({ agentId: p.agentId, queries: work.queries.length, sessions: work.sessions.length }, 'waiting work released');
        await tellWaitingWork(ctx.host, logger, work, { type: 'computeReady', agentId: p.agentId });
        await deps.reportWork(ctx.host, p.agentId);
      },
      stopAgent: async (_ctx, p: { elasticId: string; agentId: string | null }) => {
        if (!p.agentId) return;
        // It may not reconnect while it is being removed; its socket goes now.
        await revokeIncarnationCredential(db, p.agentId, p.elasticId);
        await deps.link.close(p.agentId, 1000, 'elastic agent terminating');
      },
      failWaitingWork: async (ctx, p: { elasticId: string; pool: string; registered: boolean; error: string | null }) => {
        if (p.registered) return;
        const row = await elastic.incarnation(db, p.elasticId);
        if (!row) return;
        // Work of a pool that has other compute starting or running waits for that instead.
        const counts = await elastic.poolCounts(db, p.pool);
        if (counts.live > 0 && !elastic.pooledAgentId(p.pool)) return;
        const work = await elastic.waitingWork(db, [p.pool, elastic.agentPool(row.agent_id)]);
        await tellWaitingWork(ctx.host, logger, work, { type: 'computeFailed', message: `elastic compute could not start: ${p.error ?? 'provisioning failed'}` });
      },
    },
    entityWrite: (id, pr) => {
      const reason = pr.terminal || pr.status === 'terminating' ? pr.terminationReason : null;
      const provisioned = pr.registeredAt ? new Date(pr.registeredAt).toISOString() : null;
      const terminated = pr.terminatedAt ? new Date(pr.terminatedAt).toISOString() : null;
      return sql`update elastic_agents set status = ${pr.status}, reason = ${reason}, error = ${pr.error ?? null},
          provider_ref = ${pr.providerRef}, provisioned_at = ${provisioned}::timestamptz, terminated_at = ${terminated}::timestamptz
        where id = ${id}`;
    },
  };
}
