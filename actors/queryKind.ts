// The query actor's effects and entity projection: dispatch and cancel frames over the agent's socket, the
// profile, and the queries row written in the same transaction as every transition.
import { machineKinds } from '../machines/index.ts';
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import type { AgentSockets } from '../runtime/agentSockets.ts';
import type { ActorKind } from './host.ts';

export interface QueryKindDeps {
  db: Db;
  sockets: AgentSockets;
  logger: Logger;
  /** A short-lived bearer for the catalog service, handed to the agent with each dispatch (memory only). */
  catalogToken?: () => Promise<string>;
}

export function queryKind(deps: QueryKindDeps): ActorKind {
  const { db, sockets } = deps;
  return {
    machine: machineKinds.query.machine,
    project: (s) => ({ ...machineKinds.query.project(s) }),
    effects: {
      sendDispatchQuery: async (
        ctx,
        p: { queryId: string; agentId: string; sql: string; workspace: string; timeoutS: number; extras: Record<string, any> | null },
      ) => {
        const live = sockets.agent(p.agentId);
        const catalogs: Array<Record<string, unknown>> = Array.isArray(p.extras?.catalogs) ? p.extras.catalogs : [];
        let token: string | null = null;
        if (catalogs.length && deps.catalogToken) {
          try {
            token = await deps.catalogToken();
          } catch (err) {
            // A statement that names no table needs no catalog: it runs without them.
            const tables = Array.isArray(p.extras?.tables) ? p.extras.tables : [];
            if (tables.length) {
              await ctx.send({ type: 'dispatchFailed', message: `the catalog service is unavailable: ${(err as Error).message}` });
              return;
            }
            ctx.logger.warn({ queryId: p.queryId, err: (err as Error).message }, 'catalog service unavailable; dispatching without catalogs');
          }
        }
        const sent =
          live?.send({
            type: 'dispatch_query',
            payload: {
              query_id: p.queryId,
              sql: p.sql,
              workspace: p.workspace,
              backend: String(p.extras?.backend ?? 'object_store'),
              timeout_s: p.timeoutS,
              ...(token ? { catalogs: catalogs.map((c) => ({ ...c, token })) } : {}),
            },
          }) ?? false;
        await ctx.send(sent ? { type: 'dispatched' } : { type: 'dispatchFailed', message: 'the agent is not connected' });
      },
      sendCancelQuery: (_ctx, p: { queryId: string; agentId: string | null }) => {
        if (p.agentId) sockets.agent(p.agentId)?.send({ type: 'cancel_query', payload: { query_id: p.queryId } });
      },
      recordProfile: async (_ctx, p: { queryId: string; profile: unknown }) => {
        if (p.profile !== null && p.profile !== undefined) {
          await db.query(`update queries set profile = $2::jsonb where id = $1`, [p.queryId, JSON.stringify(p.profile)]);
        }
      },
      // Elastic compute is not built: with ELASTIC_COMPUTE_ENABLED off a query without an agent is refused (422
      // agent_required) before an actor exists, so these are reached only by the machine's own paths.
      requestCompute: (ctx, p: { queryId: string }) => {
        ctx.logger.warn({ queryId: p.queryId }, 'elastic compute is not available; the query waits for its deadline');
      },
      agentWorkChanged: () => undefined,
    },
    onPersist: async (tx, id, _snapshot, pr: any) => {
      const toTs = (ms: number | null) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());
      await tx.query(
        `update queries set status = $2, agent_id = $3, row_count = $4, duration_ms = $5, error = $6, error_code = $7,
           columns = $8::jsonb, column_schema = $9::jsonb, result_path = $10, running_at = $11::timestamptz, finished_at = $12::timestamptz
         where id = $1`,
        [
          id,
          pr.status,
          pr.agentId,
          pr.rowCount,
          pr.durationMs,
          pr.error,
          pr.errorCode,
          pr.columns ? JSON.stringify(pr.columns) : null,
          pr.columnSchema ? JSON.stringify(pr.columnSchema) : null,
          pr.resultPath,
          toTs(pr.runningAt),
          toTs(pr.finishedAt),
        ],
      );
    },
  };
}
