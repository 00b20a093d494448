// Reaching an agent from any replica. A frame goes on this replica's socket when it holds the agent, otherwise to
// the replica that does (agents.owner_replica, alive per AGENT_PRESENCE_TTL_S) over /internal; results are read
// the same way. Decisions rest on the database, never on one process's memory: a replica that does not hold the
// socket still knows who does.
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import type { AgentSockets, OutboundFrame } from '../runtime/agentSockets.ts';
import { PeerUnreachableError, type PeerClient } from '../runtime/peerClient.ts';
import type { ResultSource } from '../runtime/resultReader.ts';

/**
 * How long work for an agent waits for it when no replica holds its socket: the replica holding it has just died
 * (or drained) and the agent is dialling another (its first redial comes 0.25-0.5 s after the close, the next
 * replica of its list). A submission's agent check and a dispatch wait this long before `agent_unavailable` /
 * `agent_unreachable`.
 */
export const AGENT_RECONNECT_WAIT_MS = 10_000;

interface AgentOwner {
  replica: string;
  url: string;
}

export interface AgentLink {
  /** Held here, or by a live replica we can forward to. */
  reachable(agentId: string): Promise<boolean>;
  /** Sends a frame to the agent; false when no replica could put it on the agent's socket. */
  send(agentId: string, frame: OutboundFrame): Promise<boolean>;
  /** `reachable`, waiting up to `waitMs` for an agent that is reconnecting (AGENT_RECONNECT_WAIT_MS). */
  awaitReachable(agentId: string, waitMs: number): Promise<boolean>;
  /** `send`, tried again for up to `waitMs` while the agent is reconnecting and `stillWanted()` (checked before each
   *  new try: the work may have been cancelled meanwhile) says so. */
  sendWaiting(agentId: string, frame: OutboundFrame, waitMs: number, stillWanted?: () => Promise<boolean>): Promise<boolean>;
  /** Closes the agent's socket wherever it is held (operator disconnect). */
  close(agentId: string, code: number, reason: string): Promise<boolean>;
  /** Closes one connection's socket wherever it is held (a connection actor's close effect). */
  closeConnection(connectionId: string, code: number, reason: string): Promise<boolean>;
  /** Where to read a result file of the agent: its result server directly, or through the owning replica. */
  resultSource(agentId: string, file: string): Promise<ResultSource | null>;
}

export interface AgentLinkDeps {
  db: Db;
  sockets: AgentSockets;
  peers: PeerClient;
  replicaId: string;
  presenceTtlS: number;
  logger: Logger;
}

export function agentLink(deps: AgentLinkDeps): AgentLink {
  const { db, sockets, peers } = deps;

  /** The live replica holding the agent, when it is not this one and forwarding is on. */
  async function remoteOwner(where: string, param: string): Promise<AgentOwner | null> {
    if (!peers.enabled) return null;
    const [row] = await db.query<{ owner_replica: string; url: string }>(
      `select a.owner_replica, r.internal_url as url
         from agents a join replicas r on r.id = a.owner_replica
        where ${where} = $1 and a.status = 'healthy' and a.owner_replica <> $2
          and a.last_heartbeat_at > now() - make_interval(secs => $3) and r.heartbeat_at > now() - make_interval(secs => $3)`,
      [param, deps.replicaId, deps.presenceTtlS],
    );
    return row ? { replica: row.owner_replica, url: row.url } : null;
  }

  async function forward(owner: AgentOwner | null, path: string, body: unknown): Promise<boolean> {
    if (!owner) return false;
    try {
      const r = await peers.post(owner.url, path, body);
      return r.status === 200 && (r.body as { delivered?: unknown } | null)?.delivered === true;
    } catch (e) {
      if (e instanceof PeerUnreachableError) {
        deps.logger.warn({ replica: owner.replica, path }, 'could not reach the replica holding the agent');
        return false;
      }
      throw e;
    }
  }

  const reachable = async (agentId: string) => Boolean(sockets.agent(agentId)) || (await remoteOwner('a.id', agentId)) !== null;
  const send = async (agentId: string, frame: OutboundFrame) => {
    const live = sockets.agent(agentId);
    if (live) return live.send(frame);
    return forward(await remoteOwner('a.id', agentId), `/internal/agents/${agentId}/frames`, { frame });
  };
  /** Tries `attempt` until it succeeds or `waitMs` passes, waiting 100 ms, 200 ms… up to 500 ms between tries. */
  async function retrying(attempt: () => Promise<boolean>, waitMs: number, stillWanted?: () => Promise<boolean>) {
    const until = Date.now() + waitMs;
    for (let n = 0; ; n++) {
      if (await attempt()) return true;
      if (Date.now() >= until || (stillWanted && !(await stillWanted()))) return false;
      await new Promise((r) => setTimeout(r, Math.min(500, 100 * 2 ** n, Math.max(0, until - Date.now()))));
    }
  }

  return {
    reachable,
    send,
    awaitReachable: (agentId, waitMs) => retrying(() => reachable(agentId), waitMs),
    sendWaiting: (agentId, frame, waitMs, stillWanted) => retrying(() => send(agentId, frame), waitMs, stillWanted),
    async close(agentId, code, reason) {
      const live = sockets.agent(agentId);
      if (live) {
        live.close(code, reason);
        return true;
      }
      return forward(await remoteOwner('a.id', agentId), `/internal/agents/${agentId}/close`, { code, reason });
    },
    async closeConnection(connectionId, code, reason) {
      const live = sockets.connection(connectionId);
      if (live) {
        live.close(code, reason);
        return true;
      }
      return forward(await remoteOwner('a.connection_id::text', connectionId), `/internal/connections/${connectionId}/close`, { code, reason });
    },
    async resultSource(agentId, file) {
      const live = sockets.agent(agentId);
      if (live?.sessionToken && live.resultUrl) return { url: `${live.resultUrl}/results/${file}`, bearerToken: live.sessionToken };
      const owner = await remoteOwner('a.id', agentId);
      if (!owner) return null;
      // The agent's session token never leaves the replica holding its socket: that replica relays the ranges.
      return { url: new URL(`/internal/agents/${agentId}/results/${file}`, owner.url).toString(), headers: peers.headers() };
    },
  };
}
