// Where a statement runs: the agent it names when connected, an elastic pool waiting for compute, or (for SQL
// sessions, which DB-API clients open without naming one) the least-loaded connected agent the caller may use.
import { unavailable, unprocessable } from '../domain/errors.ts';
import { requireAgentTier, visibleAgents } from '../domain/agents.ts';
import { agentPool, healthyPoolAgent, poolOf } from '../domain/elastic.ts';
import { liveLoadOf } from '../domain/queries.ts';
import type { Principal } from '../domain/identity.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import { AGENT_RECONNECT_WAIT_MS } from '../actors/agentLink.ts';
import type { AppContext } from './context.ts';

/** An agent to run on now, or the elastic pool to wait on; with the agent's capabilities (its timeout cap). */
export interface Compute {
  agentId: string | null;
  pool: string | null;
  capabilities: Record<string, unknown>;
}

/**
 * Where work goes: the named agent when connected; with elastic compute on, a named elastic agent that is not
 * running waits for it to start again, and work naming no agent goes to its workspace's pool (a healthy pool agent
 * now, or none yet: `pool` is what it waits on). Without elastic compute an agent is required and must be connected,
 * except where `pickConnected` (SQL sessions: DB-API clients open them without naming one) lets the api pick a
 * connected agent the caller may use.
 */
export async function chooseCompute(
  ctx: AppContext,
  principal: Principal,
  ws: WorkspaceAccess,
  agentId: string | null,
  opts: { pickConnected?: boolean } = {},
): Promise<Compute> {
  if (!agentId) {
    if (!ctx.elastic && opts.pickConnected) return pickConnectedAgent(ctx, principal, ws);
    if (!ctx.elastic) {
      throw unprocessable('agent_id is required: elastic compute is off', 'agent_required', { fields: [{ field: 'agent_id', message: 'required' }] });
    }
    const pool = await poolOf(ctx.db, ws.workspace.id);
    const ready = await healthyPoolAgent(ctx.db, pool);
    return ready ? { agentId: ready, pool: null, capabilities: {} } : { agentId: null, pool, capabilities: {} };
  }
  const { agent } = await requireAgentTier(ctx.db, principal, agentId, 'use', ws.workspace.id);
  // An agent whose replica just died is reconnecting to another: waited for (AGENT_RECONNECT_WAIT_MS) before 503.
  // An elastic agent that is not running is not waited for: the query waits for its pool instead.
  const wait = ctx.elastic && agent.elastic ? 0 : AGENT_RECONNECT_WAIT_MS;
  if (await ctx.link.awaitReachable(agent.id, wait)) return { agentId: agent.id, pool: null, capabilities: agent.capabilities };
  if (ctx.elastic && agent.elastic) return { agentId: null, pool: agentPool(agent.id), capabilities: agent.capabilities };
  throw unavailable(`agent ${agent.name} is not connected`, 'agent_unavailable');
}

/**
 * A healthy agent the caller holds the use tier on in this workspace and that some replica holds connected: the one
 * with the fewest queries running, then the oldest. None: 503 agent_unavailable (the connector's "no connected agent
 * available").
 */
async function pickConnectedAgent(ctx: AppContext, principal: Principal, ws: WorkspaceAccess) {
  const usable = (await visibleAgents(ctx.db, principal, undefined, ws.workspace.id)).filter((a) => a.agent.status === 'healthy').map((a) => a.agent);
  if (usable.length > 0) {
    const busy = await liveLoadOf(ctx.db, usable.map((a) => a.id));
    usable.sort((a, b) => (busy.get(a.id) ?? 0) - (busy.get(b.id) ?? 0));
    for (const agent of usable) if (await ctx.link.reachable(agent.id)) return { agentId: agent.id, pool: null, capabilities: agent.capabilities };
    // None held right now: the least busy one may be reconnecting after its replica died (AGENT_RECONNECT_WAIT_MS).
    const first = usable[0];
    if (await ctx.link.awaitReachable(first.id, AGENT_RECONNECT_WAIT_MS)) return { agentId: first.id, pool: null, capabilities: first.capabilities };
  }
  throw unavailable('no connected agent available: name one with agent_id, or connect an agent you may use', 'agent_unavailable');
}
