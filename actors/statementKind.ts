// The statement actor's effects: a SQL session's statement is a queries row (origin `session`) run on the
// session's connection on its agent. Dispatch carries a catalog token scoped like a query's; the outcome comes back
// as the agent's query frames; a finished statement renews its session's idle deadline.
import { machineKinds } from '../machines/index.ts';
import type { Db } from '../runtime/db.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { ActorKind } from './types.ts';
import { AGENT_RECONNECT_WAIT_MS, type AgentLink } from './agentLink.ts';
import type { AgentSockets } from '../runtime/agentSockets.ts';
import type { ParamType } from '../protocol/index.ts';
import { dispatchCatalogs, dispatchScope, recordRunOutcome, runEntityWrite } from './queryKind.ts';
import type { ElasticCompute } from './elasticCompute.ts';
import type { LineageEnv } from '../domain/lineage/graph.ts';

export interface StatementKindDeps {
  db: Db;
  link: AgentLink;
  /** this replica's agent sockets: a statement dispatched here is remembered with its session (the agent's frames
   *  about it then need no lookup) */
  sockets?: AgentSockets;
  tracing?: Tracing;
  /** The attached catalogs a statement of this session may reach (as a query's dispatch carries them). */
  catalogsFor: (
    statementId: string,
  ) => Promise<{
    catalogs: Array<Record<string, unknown>>;
    extras: Record<string, unknown>;
    params: (string | null)[] | null;
    paramTypes: (ParamType | null)[] | null;
  } | null>;
  catalogToken?: (scope: { warehouse: string; access: 'read' | 'write' }[], ttlSeconds: number) => Promise<string>;
  /** Presigned URLs of the staging files a session statement's SQL names, living `ttlSeconds`. */
  stagingFor?: (sessionId: string, sql: string, ttlSeconds: number) => Promise<Array<{ uri: string; get_url: string; put_url: string }>>;
  /** present when ELASTIC_COMPUTE_ENABLED: an elastic agent may reach the catalog at another address */
  elastic?: ElasticCompute;
  /** what execution lineage needs besides the database (as for queries) */
  lineage?: LineageEnv;
}

export function statementKind(deps: StatementKindDeps): ActorKind {
  const { db, link } = deps;
  return {
    machine: machineKinds.statement.machine,
    // The queries row names the agent like a query's does.
    project: (s) => ({ ...machineKinds.statement.project(s), agentId: s.context.agentId }),
    externalContext: { keys: ['sql'], select: `select jsonb_build_object('sql', q.sql) from queries q where q.id = a.id` },
    effects: {
      sendExecuteStatement: async (ctx, p: { statementId: string; sessionId: string; agentId: string; sql: string; timeoutS: number; awaitsAck?: boolean }) => {
        const run = async () => {
          const found = await deps.catalogsFor(p.statementId);
          let token: string | null = null;
          if (found && found.catalogs.length && deps.catalogToken) {
            try {
              token = await deps.catalogToken(dispatchScope(found.catalogs, found.extras), p.timeoutS + 120);
            } catch (err) {
              await ctx.send({ type: 'failed', code: 'catalog_error', message: `the catalog service is unavailable: ${(err as Error).message}` });
              return;
            }
          }
          let staging: Array<{ uri: string; get_url: string; put_url: string }> = [];
          try {
            staging = (await deps.stagingFor?.(p.sessionId, p.sql, p.timeoutS + 300)) ?? [];
          } catch (err) {
            await ctx.send({ type: 'failed', code: 'catalog_error', message: `the staging area is unavailable: ${(err as Error).message}` });
            return;
          }
          // `$n` values (the PostgreSQL wire endpoint's Bind): kept on the statement's row, sent beside its SQL.
          const params = found?.params ?? null;
          // Stored only when some were declared (usecases/sqlSessions.ts).
          const paramTypes = found?.paramTypes ?? null;
          // The statement id is the idempotency key: the agent ignores a statement it has queued or run.
          // An agent whose replica just died is waited for while it reconnects (AGENT_RECONNECT_WAIT_MS).
          const sent = await link.sendWaiting(p.agentId, {
            type: 'execute_statement',
            payload: {
              statement_id: p.statementId,
              session_id: p.sessionId,
              sql: p.sql,
              timeout_s: p.timeoutS,
              ...(token && found ? { catalogs: dispatchCatalogs(found.catalogs, token, await deps.elastic?.catalogUrlFor(p.agentId)) } : {}),
              ...(staging.length ? { staging } : {}),
              ...(params?.length ? { params } : {}),
              ...(params?.length && paramTypes ? { param_types: paramTypes } : {}),
              ...(deps.tracing?.enabled ? { traceparent: deps.tracing.traceparent() } : {}),
            },
          }, AGENT_RECONNECT_WAIT_MS, async () => (await ctx.host.get('statement', p.statementId))?.state === 'queued');
          if (sent && deps.sockets?.agent(p.agentId)) deps.sockets.rememberDispatch(p.statementId, p.agentId, p.sessionId);
          // An agent that acknowledges moves the statement on with its ack: `dispatched` would only record the time.
          if (!sent) await ctx.send({ type: 'failed', code: 'agent_unavailable', message: 'the agent is not connected' });
          else if (p.awaitsAck !== true) await ctx.send({ type: 'dispatched' });
        };
        if (!deps.tracing?.enabled) return run();
        await deps.tracing.span('dispatch statement', { attributes: { 'eider.statement_id': p.statementId, 'eider.session_id': p.sessionId } }, run);
      },
      // The agent answers with the statement's end (failed cancelled) or a cancel_ack: that moves it on from
      // cancelling. An agent reconnecting is waited for a while (it drops its sessions with its connection, and
      // agentLost ends the statement when it does not come back).
      sendCancelStatement: async (ctx, p: { statementId: string; agentId: string }) => {
        const stillCancelling = async () => (await ctx.host.get('statement', p.statementId))?.state === 'cancelling';
        await link.sendWaiting(p.agentId, { type: 'cancel_query', payload: { query_id: p.statementId } }, AGENT_RECONNECT_WAIT_MS, stillCancelling);
      },
      // A read leaves nothing to record (its profile came with `done`): its row is not read back.
      statementFinished: async (ctx, p: { sessionId: string; statementId: string; status: string; readOnly?: boolean }) => {
        if (p.status === 'done' && p.readOnly !== true) await recordRunOutcome(db, p.statementId, null, deps.lineage);
        await ctx.host.send('sqlSession', p.sessionId, { type: 'statementFinished', statementId: p.statementId });
      },
    },
    entityWrite: runEntityWrite,
    // The agent's profile of a finished statement, and its result when small, go with its `done` (no write of their own).
    eventAttachments: ['resultInline', 'profile'],
    // Waiters elsewhere wait for a statement's end (as for a query's).
    announceAcross: 'terminal',
  };
}
