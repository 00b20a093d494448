// Agents: listings by visibility, per-agent tiers (use < operate < admin), access modes and grants, bootstrap
// tokens, disconnect and credential revocation.
import { Schema } from 'effect';
import { route } from '../route.ts';
import { AppError, unprocessable } from '../../domain/errors.ts';
import { computeSizes, currentIncarnation, elasticState, sizeNamed } from '../../domain/elastic.ts';
import * as agents from '../../domain/agents.ts';
import type { AppContext } from '../../usecases/context.ts';
import { ActorError } from '../../actors/errors.ts';
import type { Principal } from '../../domain/identity.ts';
import { actorOf } from '../../domain/audit.ts';
import { audited } from '../audit.ts';

const AccessMode = agents.AccessModeSchema;
const AgentMetricsSchema = Schema.Struct({
  agent_id: Schema.String,
  name: Schema.String,
  status: agents.AgentStatusSchema,
  running_queries: Schema.Finite,
  queued_queries: Schema.Finite,
  /** from the agent's capabilities; null until it has reported them */
  memory_limit_bytes: Schema.NullOr(Schema.Finite),
  last_heartbeat_at: Schema.NullOr(Schema.String),
});
const AgentMonitoringSchema = Schema.Struct({
  agent_id: Schema.String,
  status: agents.AgentStatusSchema,
  capabilities: Schema.Record(Schema.String, Schema.Unknown),
  /** whether this replica holds the agent's socket */
  connected_here: Schema.Boolean,
  last_heartbeat_at: Schema.NullOr(Schema.String),
  running: Schema.Finite,
  queued: Schema.Finite,
  done_last_hour: Schema.Finite,
  failed_last_hour: Schema.Finite,
  p50_duration_ms_last_hour: Schema.NullOr(Schema.Finite),
});
const AgentAccessSchema = Schema.Struct({
  agent_id: Schema.String,
  access_mode: AccessMode,
  grants: Schema.Array(agents.GrantOutSchema),
  /** who could be granted a tier: active users and every workspace */
  candidates: Schema.Struct({
    users: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, email: Schema.NullOr(Schema.String), kind: Schema.String })),
    workspaces: Schema.Array(Schema.Struct({ id: Schema.String, slug: Schema.String, name: Schema.String })),
  }),
});
const ComputeOption = Schema.Struct({ size: Schema.String, cpu: Schema.Number, memory_gb: Schema.Number, hourly_cost: Schema.NullOr(Schema.Number), currency: Schema.String });
const AgentParams = Schema.Struct({ agent_id: Schema.String });

/** Revocation reaches the agent's latest connection through its actor, wherever its socket is held: the actor's
 *  close effect is forwarded to the replica holding it. A connection whose actor is gone (pruned) has ended. */
async function endConnection(ctx: AppContext, connectionId: string | null) {
  if (!connectionId) return;
  await ctx.host.send('agentConnection', connectionId, { type: 'credentialRevoked' }).catch((e) => {
    if (!(e instanceof ActorError && e.code === 'not_found')) throw e;
  });
}
const ELASTIC_OFF = 'elastic compute is off (ELASTIC_COMPUTE_ENABLED=false): only elastic agents can be started, restarted or terminated';

function requireElastic(ctx: AppContext) {
  if (!ctx.elastic) throw unprocessable(ELASTIC_OFF, 'elastic_compute_disabled');
  return ctx.elastic;
}

/** The agent as its caller sees it, read again after a change. */
async function agentOut(ctx: AppContext, principal: Principal, agentId: string) {
  const { agent, tier } = await agents.requireAgentTier(ctx.db, principal, agentId, 'use');
  return agents.toAgentOut(agent, tier);
}

async function listVisible(ctx: AppContext, principal: Principal) {
  return (await agents.visibleAgents(ctx.db, principal)).map(({ agent, tier }) => agents.toAgentOut(agent, tier));
}

export const agentRoutes = [
  // The same listing at both paths of the spec's Agents table.
  ...([
    ['/api/agents', 'list_agents', 'Agents the caller can see, with the caller’s tier on each'],
    ['/api/admin/agents', 'list_admin_agents', 'Agents the caller can see (admin view)'],
  ] as const).map(([path, operationId, summary]) =>
    route({
      method: 'GET',
      path,
      operationId,
      summary,
      tags: ['agents'],
      access: { kind: 'authenticated' },
      responses: { 200: Schema.Array(agents.AgentOutSchema) },
      handler: async ({ ctx, principal }) => ({ status: 200, body: await listVisible(ctx, principal) }),
    }),
  ),
  route({
    method: 'GET',
    path: '/api/admin/agents/metrics',
    operationId: 'list_agent_metrics',
    summary: 'Live work per visible agent: running and queued queries, last heartbeat',
    tags: ['agents'],
    access: { kind: 'authenticated' },
    responses: { 200: Schema.Array(AgentMetricsSchema) },
    handler: async ({ ctx, principal }) => ({ status: 200, body: await agents.agentMetrics(ctx.db, principal) }),
  }),
  route({
    method: 'POST',
    path: '/api/admin/agents/bootstrap',
    operationId: 'create_agent_bootstrap_token',
    summary: 'A single-use bootstrap token for a new agent (shown once)',
    tags: ['agents'],
    access: { kind: 'permission', permission: 'agents:manage' },
    body: Schema.Struct({
      name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
      expires_in_hours: Schema.optionalKey(Schema.Finite.check(Schema.isFinite(), Schema.isBetween({ minimum: 0.01, maximum: 24 * 30 }))),
    }),
    responses: { 201: Schema.Struct({ token: Schema.String, expires_at: Schema.String }) },
    handler: async ({ ctx, req, principal, body }) => {
      const issued = await audited(
        ctx,
        req,
        (db) => agents.createBootstrapToken(db, principal, body ?? {}),
        (issued) => ({ action: 'token.create', outcome: 'success', actor: actorOf(principal), target: { kind: 'agent_bootstrap_token', id: null }, details: { agent_name: body?.name ?? null, expires_at: issued.expires_at } }),
      );
      return { status: 201, body: issued };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/agents/compute-options',
    operationId: 'get_agent_compute_options',
    summary: 'What elastic compute can provision here',
    tags: ['agents'],
    access: { kind: 'permission', permission: 'agents:manage' },
    responses: { 200: Schema.Array(ComputeOption) },
    handler: async ({ ctx }) => ({ status: 200, body: ctx.elastic ? computeSizes(ctx.elastic.settings) : [] }),
  }),
  route({
    method: 'POST',
    path: '/api/admin/agents/elastic',
    operationId: 'create_elastic_agent',
    summary: 'Provision an elastic agent: 202 while it starts (422 while elastic compute is off)',
    description:
      'The agent row exists at once (status unavailable, elastic.state provisioning); it becomes healthy when its ' +
      'instance dials home. An agent started here serves the work that names it; pool work starts its own.',
    tags: ['agents'],
    access: { kind: 'permission', permission: 'agents:manage' },
    body: Schema.Struct({
      size: Schema.optionalKey(Schema.String),
      name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
      access_mode: Schema.optionalKey(AccessMode),
    }),
    responses: { 202: agents.AgentOutSchema, 422: null },
    handler: async ({ ctx, principal, body }) => {
      const elastic = requireElastic(ctx);
      const size = sizeNamed(elastic.settings, body?.size);
      const id = await elastic.startAgent(ctx.host, { name: body?.name ?? null, accessMode: body?.access_mode ?? 'open', size });
      return { status: 202, body: await agentOut(ctx, principal, id) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/agents/:agent_id',
    operationId: 'get_agent',
    summary: 'One agent (use tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'use tier on the agent' },
    params: AgentParams,
    responses: { 200: agents.AgentOutSchema, 404: null },
    handler: async ({ ctx, principal, params }) => {
      const { agent, tier } = await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'use');
      return { status: 200, body: agents.toAgentOut(agent, tier) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/agents/:agent_id/monitoring',
    operationId: 'get_agent_monitoring',
    summary: 'Recent work of an agent: status, live queries, recent outcomes (use tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'use tier on the agent' },
    params: AgentParams,
    responses: { 200: AgentMonitoringSchema, 404: null },
    handler: async ({ ctx, principal, params }) => {
      const { agent } = await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'use');
      return { status: 200, body: await agents.agentMonitoring(ctx.db, agent, Boolean(ctx.sockets.agent(agent.id))) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/agents/:agent_id/restart',
    operationId: 'restart_agent',
    summary: 'Start a terminated or failed elastic agent again: 202 (409 while it is still running; operate tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'operate tier on the agent' },
    params: AgentParams,
    responses: { 202: agents.AgentOutSchema, 404: null, 409: null, 422: null },
    handler: async ({ ctx, principal, params }) => {
      const { agent } = await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'operate');
      const elastic = requireElastic(ctx);
      const current = await currentIncarnation(ctx.db, agent.id);
      if (!current) throw unprocessable(`agent ${agent.name} is not an elastic agent`, 'unprocessable_content');
      if (!(await elastic.restart(ctx.host, agent.id))) {
        throw new AppError(409, 'conflict', `elastic agent ${agent.name} is ${elasticState(current.status)}; terminate it first`);
      }
      return { status: 202, body: await agentOut(ctx, principal, agent.id) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/agents/:agent_id/terminate',
    operationId: 'terminate_agent',
    summary: 'Terminate an elastic agent: its work is failed and its instance removed; 202 (operate tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'operate tier on the agent' },
    params: AgentParams,
    responses: { 202: agents.AgentOutSchema, 404: null, 422: null },
    handler: async ({ ctx, principal, params }) => {
      const { agent } = await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'operate');
      requireElastic(ctx);
      const current = await currentIncarnation(ctx.db, agent.id);
      if (!current) throw unprocessable(`agent ${agent.name} is not an elastic agent`, 'unprocessable_content');
      // Already ending or ended: nothing changes (the machine ignores it).
      await ctx.host.send('elasticAgent', current.id, { type: 'terminate' });
      return { status: 202, body: await agentOut(ctx, principal, agent.id) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/agents/:agent_id/disconnect',
    operationId: 'disconnect_agent',
    summary: 'Close the agent’s socket; it reconnects with its session token (operate tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'operate tier on the agent' },
    params: AgentParams,
    responses: { 202: agents.AgentOutSchema, 404: null },
    handler: async ({ ctx, principal, params }) => {
      const { agent, tier } = await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'operate');
      await ctx.link.close(agent.id, 1000, 'disconnected by an operator');
      return { status: 202, body: agents.toAgentOut(agent, tier) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/agents/:agent_id/credential',
    operationId: 'delete_agent_credential',
    summary: 'Revoke the agent’s session credential: it is disconnected and must bootstrap again (operate tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'operate tier on the agent' },
    params: AgentParams,
    responses: { 204: null, 404: null },
    handler: async ({ ctx, req, principal, params }) => {
      const { agent } = await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'operate');
      await audited(
        ctx,
        req,
        (db) => agents.revokeAgentCredential(db, agent.id),
        () => ({ action: 'agent.credential_revoke', outcome: 'success', actor: actorOf(principal), target: { kind: 'agent', id: agent.id }, details: { agent_name: agent.name } }),
      );
      await endConnection(ctx, agent.connection_id);
      return { status: 204 };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/agents/:agent_id',
    operationId: 'delete_agent',
    summary: 'Remove an agent from the registry (admin tier); its credential stops working',
    tags: ['agents'],
    access: { kind: 'resource', note: 'admin tier on the agent' },
    params: AgentParams,
    responses: { 204: null, 404: null },
    handler: async ({ ctx, req, principal, params }) => {
      const { agent } = await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'admin');
      // An elastic agent's instance goes too (its actor removes it; the reaper would find it a leak otherwise).
      const current = await currentIncarnation(ctx.db, agent.id);
      if (current && ctx.elastic) await ctx.host.send('elasticAgent', current.id, { type: 'terminate' });
      await audited(
        ctx,
        req,
        (db) => agents.revokeAgentCredential(db, agent.id),
        () => ({ action: 'agent.credential_revoke', outcome: 'success', actor: actorOf(principal), target: { kind: 'agent', id: agent.id }, details: { agent_name: agent.name, removed: true } }),
      );
      await endConnection(ctx, agent.connection_id);
      await agents.deleteAgent(ctx.db, agent.id);
      return { status: 204 };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/agents/:agent_id/access',
    operationId: 'get_agent_access',
    summary: 'Access mode, grants and candidate principals (admin tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'admin tier on the agent' },
    params: AgentParams,
    responses: { 200: AgentAccessSchema, 404: null },
    handler: async ({ ctx, principal, params }) => {
      await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'admin');
      return { status: 200, body: await agents.accessPayload(ctx.db, params.agent_id) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/agents/:agent_id/access-mode',
    operationId: 'update_agent_access_mode',
    summary: 'Open or restricted; returns the full access payload (admin tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'admin tier on the agent' },
    params: AgentParams,
    body: Schema.Struct({ access_mode: AccessMode }),
    responses: { 200: AgentAccessSchema, 404: null },
    handler: async ({ ctx, req, principal, params, body }) => {
      await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'admin');
      await audited(
        ctx,
        req,
        (db) => agents.setAccessMode(db, params.agent_id, body.access_mode),
        () => ({ action: 'grant.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'agent', id: params.agent_id }, details: { access_mode: body.access_mode } }),
      );
      return { status: 200, body: await agents.accessPayload(ctx.db, params.agent_id) };
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/agents/:agent_id/grants',
    operationId: 'put_agent_grant',
    summary: 'Grant a tier to exactly one user or workspace (201 insert, 200 update; a workspace cannot hold admin)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'admin tier on the agent' },
    params: AgentParams,
    body: Schema.Struct({
      user_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
      workspace_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
      tier: agents.Tier,
    }),
    responses: { 200: agents.GrantOutSchema, 201: agents.GrantOutSchema, 404: null, 422: null },
    handler: async ({ ctx, req, principal, params, body }) => {
      await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'admin');
      const r = await audited(
        ctx,
        req,
        (db) => agents.upsertGrant(db, params.agent_id, body),
        (r) => ({
        action: 'grant.change',
        outcome: 'success',
        actor: actorOf(principal),
        target: { kind: 'agent_grant', id: r.grant.id },
        details: { agent_id: params.agent_id, user_id: body.user_id ?? null, workspace_id: body.workspace_id ?? null, tier: body.tier, change: r.created ? 'created' : 'updated' },
      }),
      );
      return { status: r.created ? 201 : 200, body: r.grant };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/agents/:agent_id/grants/:grant_id',
    operationId: 'delete_agent_grant',
    summary: 'Remove a grant (admin tier)',
    tags: ['agents'],
    access: { kind: 'resource', note: 'admin tier on the agent' },
    params: Schema.Struct({ agent_id: Schema.String, grant_id: Schema.String }),
    responses: { 204: null, 404: null },
    handler: async ({ ctx, req, principal, params }) => {
      await agents.requireAgentTier(ctx.db, principal, params.agent_id, 'admin');
      await audited(
        ctx,
        req,
        (db) => agents.deleteGrant(db, params.agent_id, params.grant_id),
        () => ({ action: 'grant.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'agent_grant', id: params.grant_id }, details: { agent_id: params.agent_id, change: 'deleted' } }),
      );
      return { status: 204 };
    },
  }),
];
