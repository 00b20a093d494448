// The SQL session actor's effects and entity projection: asking the session's agent to open, close or drop the
// connection it holds, cancelling the session's statements when it ends, and the sql_sessions row.
import { machineKinds } from '../machines/index.ts';
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import type { SqlSessionProjection } from '../machines/sqlSession.ts';
import type { ActorHost, ActorKind } from './types.ts';
import { AGENT_RECONNECT_WAIT_MS, type AgentLink } from './agentLink.ts';
import type { ElasticCompute } from './elasticCompute.ts';
import { sql } from '../runtime/sql.ts';
import { liveSessionsOfInactiveUsers } from '../domain/sqlSessions.ts';

const toTs = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** docs/api-decisions.md's close_reason values, from the machine's close reason or failure code. */
function closeReasonOf(pr: { status: string; closeReason: string | null; errorCode: string | null }): string | null {
  if (pr.closeReason === 'lifetime') return 'max_lifetime';
  if (pr.closeReason) return pr.closeReason;
  if (pr.status !== 'failed') return null;
  switch (pr.errorCode) {
    case 'open_timeout':
      return 'open_timeout';
    case 'compute_unavailable':
      return 'compute_timeout';
    case 'agent_disconnected':
      return 'agent_disconnect';
    default:
      return null;
  }
}

export function sqlSessionKind(deps: { db: Db; link: AgentLink; logger: Logger; removeStaging: (sessionId: string) => Promise<number>; elastic?: ElasticCompute }): ActorKind<SqlSessionProjection> {
  const { db, link } = deps;
  return {
    machine: machineKinds.sqlSession.machine,
    project: (s) => ({ ...machineKinds.sqlSession.project(s) }),
    effects: {
      // Elastic compute: the session was recorded without an agent; the pool it waits on is on its row.
      requestCompute: async (ctx, p: { sessionId: string }) => {
        const [row] = await db.query<{ compute_pool: string | null }>(`select compute_pool from sql_sessions where id = $1`, [p.sessionId]);
        if (!deps.elastic || !row?.compute_pool) {
          ctx.logger.warn({ sessionId: p.sessionId }, 'no elastic compute for this session; it waits for its deadline');
          return;
        }
        const agentId = await deps.elastic.ensure(ctx.host, row.compute_pool);
        if (agentId) await ctx.send({ type: 'computeReady', agentId });
      },
      sendOpenSession: async (ctx, p: { sessionId: string; agentId: string; workspace: string }) => {
        // The agent answers a repeated open of a session it holds again (this effect runs at least once). An agent
        // between two connections (its replica died, or it reconnected a moment ago and no replica lists it
        // healthy yet) is waited for while the session still opens (AGENT_RECONNECT_WAIT_MS).
        const stillOpening = async () => (await ctx.host.get('sqlSession', p.sessionId))?.state === 'opening';
        const frame = { type: 'open_session' as const, payload: { session_id: p.sessionId, workspace: p.workspace } };
        const sent = await link.sendWaiting(p.agentId, frame, AGENT_RECONNECT_WAIT_MS, stillOpening);
        if (!sent) await ctx.send({ type: 'openFailed', code: 'agent_unavailable', message: 'the agent is not connected' });
      },
      sendCloseSession: async (ctx, p: { sessionId: string; agentId: string; reason: string }) => {
        const sent = await link.send(p.agentId, { type: 'close_session', payload: { session_id: p.sessionId, reason: p.reason } });
        // An agent that is gone holds nothing: the session counts closed now.
        if (!sent) await ctx.send({ type: 'closed' });
      },
      sendDropSession: async (_ctx, p: { sessionId: string; agentId: string; reason: string }) => {
        await link.send(p.agentId, { type: 'close_session', payload: { session_id: p.sessionId, reason: p.reason } });
      },
      cancelSessionStatements: async (ctx, p: { sessionId: string }) => {
        const live = await db.query<{ id: string }>(`select id from queries where session_id = $1 and status in ('queued', 'running')`, [p.sessionId]);
        await Promise.all(live.map((s) => ctx.host.send('statement', s.id, { type: 'sessionClosed' })));
      },
      // The statements route spawns the statement actor once the session accepted it (it has the SQL); nothing
      // is left to do here, and a refusal is answered 409 by that route.
      acceptStatement: () => undefined,
      rejectStatement: () => undefined,
      agentWorkChanged: (ctx, p: { agentId: string }) => deps.elastic?.reportWork(ctx.host, p.agentId),
      // The session ended: its staging URLs are revoked and what it staged goes. Durable (below): a catalog service
      // or object store away at the end only delays it.
      removeStaging: async (ctx, p: { sessionId: string }) => {
        const n = await deps.removeStaging(p.sessionId);
        if (n > 0) ctx.logger.info({ sessionId: p.sessionId, files: n }, 'session staging files removed');
      },
    },
    // Asked for on entering closed or failed, where supervision moves nothing: given up, the revocation and the
    // files would be lost (the staging sweep covers only URLs that cannot be revoked, and only once they expired).
    durableEffects: ['removeStaging'],
    entityWrite: (id, pr) =>
      sql`update sql_sessions set status = ${pr.status}, agent_id = ${pr.agentId}, error = ${pr.error}, error_code = ${pr.errorCode},
          close_reason = ${closeReasonOf(pr)}, statement_count = ${pr.statementCount}, opened_at = ${toTs(pr.openedAt)}::timestamptz,
          last_active_at = ${toTs(pr.lastActivityAt)}::timestamptz, closed_at = ${toTs(pr.closedAt)}::timestamptz
        where id = ${id}`,
  };
}

/**
 * Closes the sessions of deactivated users (one user's, or everyone's) through their actors, as a query-admin's close
 * (`close_reason` admin): their running statements are cancelled and the agent drops the connections. Returns how
 * many were told.
 */
export async function closeSessionsOfInactiveUsers(db: Db, host: ActorHost, logger: Logger, userId?: string): Promise<number> {
  const ids = await liveSessionsOfInactiveUsers(db, userId);
  await Promise.all(
    ids.map((id) =>
      host.send('sqlSession', id, { type: 'close', byAdmin: true }).catch((e: unknown) => {
        // The session reaper asks again on its next tick.
        logger.warn({ sessionId: id, err: e instanceof Error ? e.message : String(e) }, 'closing a deactivated user’s session failed');
      }),
    ),
  );
  if (ids.length) logger.info({ sessions: ids.length }, 'sessions of deactivated users closed');
  return ids.length;
}
