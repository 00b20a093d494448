// The agent-connection actor's effects and entity projection: auth replies, the live socket registry, the agents
// row, failing an agent's in-flight work when its socket is gone, and its SQL sessions when it connects anew.
import { machineKinds } from '../machines/index.ts';
import type { Db } from '../runtime/db.ts';
import type { AgentSockets } from '../runtime/agentSockets.ts';
import { CLOSE_CODES, QUERY_PROGRESS_FEATURE, type ServiceFrame } from '../protocol/index.ts';
import type { AgentConnectionProjection } from '../machines/agentConnection.ts';
import type { ActorKind } from './types.ts';
import type { AgentLink } from './agentLink.ts';
import { sql } from '../runtime/sql.ts';
import { storeAgentCapabilities } from '../domain/agents.ts';

export function agentConnectionKind(deps: { db: Db; sockets: AgentSockets; link: AgentLink; replicaId: string }): ActorKind<AgentConnectionProjection> {
  const { db, sockets, link } = deps;
  const send = (connectionId: string, frame: ServiceFrame) => sockets.connection(connectionId)?.send(frame) ?? false;
  return {
    machine: machineKinds.agentConnection.machine,
    project: (s) => ({ ...machineKinds.agentConnection.project(s) }),
    // A heartbeat renews presence (the snapshot's deadline, the agent row's last_heartbeat_at), not history.
    quietEvents: ['heartbeat', 'status'],
    effects: {
      sendAuthOk: (_ctx, p: { connectionId: string; agentId: string; heartbeatIntervalMs: number; heartbeatTtlMs: number }) => {
        const conn = sockets.connection(p.connectionId);
        if (!conn) return;
        const issued = conn.issuedToken;
        conn.issuedToken = null;
        send(p.connectionId, {
          type: 'auth_ok',
          payload: {
            agent_id: p.agentId,
            ...(issued ? { session_token: issued } : {}),
            heartbeat_interval_s: p.heartbeatIntervalMs / 1000,
            heartbeat_ttl_s: p.heartbeatTtlMs / 1000,
            features: [QUERY_PROGRESS_FEATURE],
          },
        });
      },
      sendAuthError: (_ctx, p: { connectionId: string; code: string; message: string }) => {
        send(p.connectionId, { type: 'auth_error', payload: { code: p.code, message: p.message } });
      },
      storeCapabilities: async (ctx, p: { agentId: string; capabilities: Record<string, unknown> }) => {
        const elasticId = await storeAgentCapabilities(db, p.agentId, p.capabilities);
        // An elastic agent is ready for work once healthy: its incarnation releases what waits for it (a repeat,
        // after a reconnect, is ignored by the machine).
        if (elasticId) await ctx.host.send('elasticAgent', elasticId, { type: 'registered', agentId: p.agentId });
      },
      registerAgent: (_ctx, p: { agentId: string; connectionId: string }) => {
        const older = sockets.bind(p.agentId, p.connectionId);
        older?.close(CLOSE_CODES.replaced, 'replaced by a newer connection of the same agent');
      },
      unregisterAgent: (_ctx, p: { agentId: string; connectionId: string }) => {
        sockets.unbind(p.agentId, p.connectionId);
      },
      // Wherever the socket is: a revocation or a deadline may be delivered on another replica.
      closeSocket: async (_ctx, p: { connectionId: string; code: number; reason: string }) => {
        await link.closeConnection(p.connectionId, p.code, p.reason);
      },
      failAgentWork: async (ctx, p: { agentId: string; reason: string }) => {
        // Only while this connection is still the agent's newest (the database says, not this replica's sockets:
        // a newer connection records itself there before any replica binds its socket), the end of a replaced
        // socket, here or on another replica, fails nothing.
        const [agent] = await db.query<{ connection_id: string | null }>(`select connection_id::text from agents where id = $1`, [p.agentId]);
        if (agent && agent.connection_id !== null && agent.connection_id !== ctx.id) return;
        // Queries, and SQL sessions with their statements (the agent drops a session with its connection).
        const live = await db.query<{ id: string; session_id: string | null }>(
          `select id, session_id from queries where agent_id = $1 and status in ('queued', 'running')`,
          [p.agentId],
        );
        const sessions = await db.query<{ id: string }>(
          `select id from sql_sessions where agent_id = $1 and status in ('pending', 'opening', 'open', 'closing')`,
          [p.agentId],
        );
        await Promise.all([
          ...live.map((q) => ctx.host.send(q.session_id ? 'statement' : 'query', q.id, { type: 'agentLost' })),
          ...sessions.map((x) => ctx.host.send('sqlSession', x.id, { type: 'agentLost' })),
        ]);
      },
      // A new connection authenticated: the agent holds no SQL session of an earlier connection (it drops them with
      // it, and a restarted agent has none), however late that connection's end is noticed (a killed replica's,
      // only past the presence TTL). The sessions decide: an open one fails, an opening one is asked again here.
      // The socket's frames wait for this, so no session is yet open on this connection.
      reconnectSessions: async (ctx, p: { agentId: string }) => {
        const [agent] = await db.query<{ connection_id: string | null }>(`select connection_id::text from agents where id = $1`, [p.agentId]);
        if (agent?.connection_id !== ctx.id) return; // superseded already: the newer connection does this
        const sessions = await db.query<{ id: string }>(`select id from sql_sessions where agent_id = $1 and status in ('opening', 'open', 'closing')`, [p.agentId]);
        await Promise.all(sessions.map((x) => ctx.host.send('sqlSession', x.id, { type: 'agentReconnected' })));
      },
    },
    // The newest connection owns the agent row; an older one may only write while it still is the owner.
    entityWrite: (id, pr) => {
      const status = pr.state === 'healthy' ? 'healthy' : pr.state === 'registered' ? 'registered' : 'unavailable';
      const toTs = (ms: number | null) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());
      const conn = id;
      const caps = pr.capabilities ? JSON.stringify(pr.capabilities) : null;
      return sql`update agents set
          connection_id = case when ${status} = 'registered' then ${conn}::uuid else connection_id end,
          status = ${status}, owner_url = ${pr.ownerUrl},
          owner_replica = case when ${pr.ownerUrl}::text is null then null else ${deps.replicaId} end,
          result_url = coalesce(${pr.resultAddress}, result_url),
          connected_at = coalesce(${toTs(pr.connectedAt)}::timestamptz, connected_at),
          last_heartbeat_at = coalesce(${toTs(pr.lastHeartbeatAt)}::timestamptz, last_heartbeat_at),
          disconnected_at = ${toTs(pr.disconnectedAt)}::timestamptz,
          capabilities = coalesce(${caps}::jsonb, capabilities)
        where ${pr.agentId}::uuid is not null and id = ${pr.agentId}::uuid
          and (connection_id is null or connection_id = ${conn}::uuid or ${status} = 'registered')`;
    },
  };
}
