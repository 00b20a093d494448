// The agent registry's rules: who sees an agent and at which tier (use < operate < admin), access modes and
// grants, bootstrap credentials (single use, expiring, stored hashed) and agent session credentials.
import { randomBytes } from 'node:crypto';
import { Schema } from 'effect';
import type { Db, Queryable } from '../runtime/db.ts';
import { exec, rows, sql, type SqlFragment } from '../runtime/sql.ts';
import { AppError, notFound, unprocessable } from './errors.ts';
import { hasPermission, isUuid, sha256, type Principal } from './identity.ts';
import { ELASTIC_OUT_COLUMN, ElasticOutSchema, toElasticOut } from './elastic.ts';

const TIERS = ['use', 'operate', 'admin'] as const;
export type AgentTier = (typeof TIERS)[number];
export const Tier = Schema.Literals(TIERS);
// An agent's status as the api answers it (apiStatus): its row also knows 'registered' (connected, capabilities not
// yet reported), which the api shows as unavailable since no work is dispatched to it yet.
export const AgentStatusSchema = Schema.Literals(['healthy', 'unavailable']);
export const AccessModeSchema = Schema.Literals(['open', 'restricted']);
const tierRank = (t: AgentTier | null) => (t ? TIERS.indexOf(t) : -1);

// Row shapes at the database boundary.
const AgentRowSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.String,
  version: Schema.NullOr(Schema.String),
  capabilities: Schema.Record(Schema.String, Schema.Unknown),
  access_mode: AccessModeSchema,
  owner_url: Schema.NullOr(Schema.String),
  owner_replica: Schema.NullOr(Schema.String),
  result_url: Schema.NullOr(Schema.String),
  connection_id: Schema.NullOr(Schema.String),
  credential_revoked_at: Schema.NullOr(Schema.Date),
  connected_at: Schema.NullOr(Schema.Date),
  last_heartbeat_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date,
  /** the current elastic incarnation (ELASTIC_OUT_COLUMN), null for a static agent */
  elastic: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
});
export type AgentRow = typeof AgentRowSchema.Type;
const GrantRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.NullOr(Schema.String),
  workspace_id: Schema.NullOr(Schema.String),
  tier: Tier,
  principal_name: Schema.String,
  created_at: Schema.Date,
});
const IdRow = Schema.Struct({ id: Schema.String });

/** An agent as the api answers it. */
export const AgentOutSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: AgentStatusSchema,
  version: Schema.NullOr(Schema.String),
  capabilities: Schema.Record(Schema.String, Schema.Unknown),
  access_tier: Tier,
  access_mode: AccessModeSchema,
  owner_url: Schema.NullOr(Schema.String),
  /** the agentConnection actor of its latest socket (operators inspect it at /api/admin/actors/agentConnection/{id}) */
  connection_id: Schema.NullOr(Schema.String),
  connected_at: Schema.NullOr(Schema.String),
  last_heartbeat_at: Schema.NullOr(Schema.String),
  /** null for a static agent; an elastic agent's current incarnation (docs/api-decisions.md "Elastic compute") */
  elastic: Schema.NullOr(ElasticOutSchema),
});
export type AgentOut = typeof AgentOutSchema.Type;

/** API status vocabulary: an agent is healthy or unavailable (registered-but-silent counts as unavailable). */
const apiStatus = (s: string): typeof AgentStatusSchema.Type => (s === 'healthy' ? 'healthy' : 'unavailable');

export const toAgentOut = (a: AgentRow, tier: AgentTier): AgentOut => ({
  id: a.id,
  name: a.name,
  status: apiStatus(a.status),
  version: a.version,
  capabilities: a.capabilities ?? {},
  access_tier: tier,
  access_mode: a.access_mode,
  owner_url: a.owner_url,
  connection_id: a.connection_id,
  connected_at: a.connected_at?.toISOString() ?? null,
  last_heartbeat_at: a.last_heartbeat_at?.toISOString() ?? null,
  elastic: toElasticOut(a.elastic),
});

const AGENT_COLS = sql`a.id, a.name, a.status, a.version, a.capabilities, a.access_mode, a.owner_url, a.owner_replica, a.result_url,
  a.connection_id, a.credential_revoked_at, a.connected_at, a.last_heartbeat_at, a.created_at, ${sql.trusted(ELASTIC_OUT_COLUMN)}`;

/**
 * `select <columns>, <the caller's tier> as tier from agents a <join>`, of the agents the caller has a tier on (or
 * just `onlyId`), in registry order. With `workspaceId` (work submitted in a workspace) a grant to a workspace counts
 * only for that workspace, so a grant to W does not carry the user's queries in other workspaces onto the agent.
 *
 * The tier is decided here, set-based: who manages agents holds admin on every agent; anyone else the best of `use`
 * on an open agent and the best of their grants. A grants look-up per agent (a scan of every grant for each, the
 * index unusable under its OR) read 190,000 buffers for 10,000 agents and 1,666 grants. The caller's grants are now
 * read once into one map from agent to best tier (materialized, since the tier and the filter both read it), which
 * each agent looks itself up in while the agents are read in registry order: 3,600 buffers. (Joined to the agents
 * instead, the 10,000 wide rows needed sorting again, which spilled to disk.)
 */
function visibleAgentsStatement(p: Principal, columns: SqlFragment, o: { onlyId?: string; workspaceId?: string; join?: SqlFragment } = {}) {
  const only = (column: SqlFragment) => (o.onlyId == null ? sql`` : sql`and ${column} = ${o.onlyId}::uuid`);
  const join = o.join ?? sql``;
  if (hasPermission(p, 'agents:manage')) {
    return sql`select ${columns}, 'admin' as tier from agents a ${join} where true ${only(sql`a.id`)} order by a.created_at, a.id`;
  }
  // rank: use 1, operate 2, admin 3
  return sql`with granted as materialized (
      select coalesce(jsonb_object_agg(best.agent_id, best.rank), '{}'::jsonb) as ranks
        from (select g.agent_id, max(case g.tier when 'admin' then 3 when 'operate' then 2 else 1 end) as rank
                from agent_grants g
               where (g.user_id = ${p.user.id} or g.workspace_id in (
                       select m.workspace_id from workspace_members m
                        where m.user_id = ${p.user.id} ${o.workspaceId == null ? sql`` : sql`and m.workspace_id = ${o.workspaceId}::uuid`}))
                 ${only(sql`g.agent_id`)}
               group by g.agent_id) best)
    select ${columns}, (array['use', 'operate', 'admin'])[mine.rank] as tier
      from agents a
      cross join lateral (select greatest(case when a.access_mode = 'open' then 1 end, ((select ranks from granted) ->> a.id::text)::int) as rank) mine
      ${join}
     where mine.rank is not null ${only(sql`a.id`)}
     order by a.created_at, a.id`;
}

const VisibleAgentRow = Schema.Struct({ ...AgentRowSchema.fields, tier: Tier });

/** Every agent with the caller's tier on it (or just `onlyId`); agents with no tier are left out (see above). */
export async function visibleAgents(
  q: Queryable,
  p: Principal,
  onlyId?: string,
  workspaceId?: string,
): Promise<Array<{ agent: AgentRow; tier: AgentTier }>> {
  const found = await rows(q, VisibleAgentRow, visibleAgentsStatement(p, AGENT_COLS, { onlyId, workspaceId }));
  // the row is the agent (its extra `tier` column unread): no copy of 10,000 rows
  return found.map((agent) => ({ agent, tier: agent.tier }));
}

/**
 * The caller's tier on one agent, requiring at least `min`: 404 when the caller has no tier (the agent is invisible),
 * 403 agent_forbidden when the tier is below `min`.
 */
export async function requireAgentTier(
  q: Queryable,
  p: Principal,
  agentId: string,
  min: AgentTier,
  workspaceId?: string,
): Promise<{ agent: AgentRow; tier: AgentTier }> {
  if (!isUuid(agentId)) throw notFound('agent');
  const [found] = await visibleAgents(q, p, agentId, workspaceId);
  if (!found) throw notFound('agent');
  if (tierRank(found.tier) < tierRank(min)) {
    throw new AppError(403, 'agent_forbidden', `this needs the ${min} tier on agent ${found.agent.name}; you have ${found.tier}`);
  }
  return found;
}

export async function findAgent(q: Queryable, id: string): Promise<AgentRow | undefined> {
  if (!isUuid(id)) return undefined;
  return (await rows(q, AgentRowSchema, sql`select ${AGENT_COLS} from agents a where a.id = ${id}`))[0];
}

// ---- access payload and grants -------------------------------------------------------------------------------

/** A grant of a tier on an agent, to a user or a workspace, as the api answers it. */
export const GrantOutSchema = Schema.Struct({
  id: Schema.String,
  user_id: Schema.NullOr(Schema.String),
  workspace_id: Schema.NullOr(Schema.String),
  tier: Tier,
  /** the user's name or the workspace's slug */
  principal_name: Schema.String,
  created_at: Schema.String,
});
export type GrantOut = typeof GrantOutSchema.Type;

export async function accessPayload(q: Queryable, agentId: string) {
  const agent = await findAgent(q, agentId);
  if (!agent) throw notFound('agent');
  const grants = await rows(
    q,
    GrantRow,
    sql`select g.id, g.user_id, g.workspace_id, g.tier, coalesce(u.name, w.slug) as principal_name, g.created_at
          from agent_grants g left join users u on u.id = g.user_id left join workspaces w on w.id = g.workspace_id
         where g.agent_id = ${agentId} order by g.created_at, g.id`,
  );
  const users = await rows(
    q,
    Schema.Struct({ id: Schema.String, name: Schema.String, email: Schema.NullOr(Schema.String), kind: Schema.String }),
    sql`select id, name, email, kind from users where is_active order by name, id`,
  );
  const workspaces = await rows(
    q,
    Schema.Struct({ id: Schema.String, slug: Schema.String, name: Schema.String }),
    sql`select id, slug, name from workspaces order by slug`,
  );
  return {
    agent_id: agent.id,
    access_mode: agent.access_mode,
    grants: grants.map((g): GrantOut => ({ ...g, created_at: g.created_at.toISOString() })),
    candidates: { users, workspaces },
  };
}

export async function setAccessMode(q: Queryable, agentId: string, mode: 'open' | 'restricted') {
  const r = await exec(q, sql`update agents set access_mode = ${mode} where id = ${agentId} returning id`);
  if (!r.length) throw notFound('agent');
}

/** Upsert: exactly one principal; a workspace cannot hold admin. Returns whether a row was inserted. */
export async function upsertGrant(
  db: Db,
  agentId: string,
  body: { user_id?: string | null; workspace_id?: string | null; tier: AgentTier },
): Promise<{ grant: GrantOut; created: boolean }> {
  const hasUser = body.user_id != null;
  const hasWs = body.workspace_id != null;
  if (hasUser === hasWs) {
    throw unprocessable('give exactly one of user_id or workspace_id', 'unprocessable_content', {
      fields: [{ field: hasUser ? 'workspace_id' : 'user_id', message: 'exactly one of user_id or workspace_id' }],
    });
  }
  if (hasWs && body.tier === 'admin') {
    throw unprocessable('a workspace cannot be granted admin', 'unprocessable_content', { fields: [{ field: 'tier', message: 'use or operate for a workspace' }] });
  }
  return db.tx(async (tx) => {
    const col = hasUser ? 'user_id' : 'workspace_id';
    const column = sql.trusted(col);
    const id = (hasUser ? body.user_id : body.workspace_id)!;
    const exists = isUuid(id) ? (await exec(tx, sql`select 1 from ${sql.trusted(hasUser ? 'users' : 'workspaces')} where id = ${id}`)).length > 0 : false;
    if (!exists) throw unprocessable(`${col} names no ${hasUser ? 'user' : 'workspace'}`, 'unprocessable_content', { fields: [{ field: col, message: 'not found' }] });
    const prior = await rows(tx, IdRow, sql`select id from agent_grants where agent_id = ${agentId} and ${column} = ${id} for update`);
    let gid: string;
    if (prior.length) {
      gid = prior[0].id;
      await exec(tx, sql`update agent_grants set tier = ${body.tier} where id = ${gid}`);
    } else {
      [{ id: gid }] = await rows(tx, IdRow, sql`insert into agent_grants (agent_id, ${column}, tier) values (${agentId}, ${id}, ${body.tier}) returning id`);
    }
    const payload = await accessPayload(tx, agentId);
    return { grant: payload.grants.find((g) => g.id === gid)!, created: !prior.length };
  });
}

export async function deleteGrant(q: Queryable, agentId: string, grantId: string) {
  const r = isUuid(grantId) ? await exec(q, sql`delete from agent_grants where id = ${grantId} and agent_id = ${agentId} returning id`) : [];
  if (!r.length) throw notFound('grant');
}

// ---- credentials ---------------------------------------------------------------------------------------------

const BOOTSTRAP_PREFIX = 'eid_boot_';
const AGENT_SESSION_PREFIX = 'eid_agent_';

export async function createBootstrapToken(q: Queryable, p: Principal, input: { name?: string; expires_in_hours?: number }) {
  const token = BOOTSTRAP_PREFIX + randomBytes(24).toString('base64url');
  const hours = input.expires_in_hours ?? 24;
  const [row] = await rows(
    q,
    Schema.Struct({ expires_at: Schema.Date }),
    sql`insert into agent_bootstrap_tokens (token_hash, name, created_by, expires_at)
        values (${sha256(token)}, ${input.name ?? null}, ${p.user.id}, now() + make_interval(secs => ${hours * 3600})) returning expires_at`,
  );
  return { token, expires_at: row.expires_at.toISOString() };
}

/** Seeds AGENT_BOOTSTRAP_TOKEN at startup (hashed) so the bundled agent can register. */
export async function seedBootstrapToken(q: Queryable, token: string) {
  await exec(
    q,
    sql`insert into agent_bootstrap_tokens (token_hash, name, seeded, expires_at) values (${sha256(token)}, 'bundled', true, null)
        on conflict (token_hash) do nothing`,
  );
}

/** A single-use bootstrap token for one pre-created agent row (an elastic agent's instance dials home with it). */
export async function mintAgentBootstrapToken(q: Queryable, agentId: string, ttlSeconds: number): Promise<string> {
  const token = BOOTSTRAP_PREFIX + randomBytes(24).toString('base64url');
  await exec(
    q,
    sql`insert into agent_bootstrap_tokens (token_hash, name, agent_id, expires_at)
        values (${sha256(token)}, null, ${agentId}, now() + make_interval(secs => ${ttlSeconds}))`,
  );
  return token;
}

/** A new elastic agent's identity: unavailable until its first incarnation dials home. */
export async function insertElasticAgent(q: Queryable, input: { name: string; accessMode: 'open' | 'restricted' }): Promise<string> {
  const [row] = await rows(q, IdRow, sql`insert into agents (name, status, access_mode) values (${input.name}, 'unavailable', ${input.accessMode}) returning id`);
  return row.id;
}

/** Makes `elasticId` the agent's current incarnation (written with the incarnation's actor, in its transaction). */
export async function setCurrentIncarnation(q: Queryable, agentId: string, elasticId: string): Promise<void> {
  await exec(q, sql`update agents set elastic_id = ${elasticId} where id = ${agentId}`);
}

/** Ends the session credential of an elastic agent while `elasticId` is still its current incarnation. */
export async function revokeIncarnationCredential(q: Queryable, agentId: string, elasticId: string) {
  await exec(q, sql`update agents set session_token_hash = null where id = ${agentId} and elastic_id = ${elasticId}`);
}

/** Validates and deletes a bootstrap token in one statement: two agents racing with it cannot both win. */
export async function consumeBootstrapToken(q: Queryable, token: string): Promise<{ name: string | null; agent_id: string | null } | undefined> {
  const r = await rows(
    q,
    Schema.Struct({ name: Schema.NullOr(Schema.String), agent_id: Schema.NullOr(Schema.String) }),
    sql`delete from agent_bootstrap_tokens where token_hash = ${sha256(token)} and (expires_at is null or expires_at > now()) returning name, agent_id`,
  );
  return r[0];
}

/** Registers a new agent with a fresh session credential (only its hash is stored). */
export async function registerAgent(q: Queryable, input: { name: string; version: string | null }) {
  const sessionToken = AGENT_SESSION_PREFIX + randomBytes(32).toString('base64url');
  const [row] = await rows(
    q,
    IdRow,
    sql`insert into agents (name, version, session_token_hash) values (${input.name}, ${input.version}, ${sha256(sessionToken)}) returning id`,
  );
  return { agentId: row.id, sessionToken };
}

/** A fresh session credential for an existing agent row (a token minted for it was spent). */
export async function renewAgentCredential(q: Queryable, agentId: string, version: string | null) {
  const sessionToken = AGENT_SESSION_PREFIX + randomBytes(32).toString('base64url');
  const [row] = await rows(
    q,
    IdRow,
    sql`update agents set session_token_hash = ${sha256(sessionToken)}, credential_revoked_at = null, version = ${version}
         where id = ${agentId} returning id`,
  );
  return row ? { agentId: row.id, sessionToken } : null;
}

/** Where an authenticated agent serves its results, and the version it runs, as its hello said. */
export async function recordAgentHello(q: Queryable, agentId: string, resultUrl: string, version: string | null): Promise<void> {
  await exec(q, sql`update agents set result_url = ${resultUrl}, version = ${version} where id = ${agentId}`);
}

/** The capabilities an agent reported; returns its current elastic incarnation (null for a static agent). */
export async function storeAgentCapabilities(q: Queryable, agentId: string, capabilities: Record<string, unknown>): Promise<string | null> {
  const [row] = await rows(
    q,
    Schema.Struct({ elastic_id: Schema.NullOr(Schema.String) }),
    sql`update agents set capabilities = ${JSON.stringify(capabilities)}::jsonb where id = ${agentId} returning elastic_id`,
  );
  return row?.elastic_id ?? null;
}

/** Whether an agent of this name is connected and healthy (readiness with READY_AFTER_AGENT). */
export async function isAgentHealthy(q: Queryable, name: string): Promise<boolean> {
  const [a] = await rows(q, Schema.Struct({ n: Schema.Number }), sql`select count(*)::int as n from agents where name = ${name} and status = 'healthy'`);
  return (a?.n ?? 0) > 0;
}

export async function agentBySessionToken(q: Queryable, token: string): Promise<AgentRow | undefined> {
  return (
    await rows(q, AgentRowSchema, sql`select ${AGENT_COLS} from agents a where a.session_token_hash = ${sha256(token)} and a.credential_revoked_at is null`)
  )[0];
}

export async function revokeAgentCredential(q: Queryable, agentId: string) {
  await exec(q, sql`update agents set session_token_hash = null, credential_revoked_at = now() where id = ${agentId}`);
}

/** Removes an agent from the registry (its grants and tokens go with it). */
export async function deleteAgent(q: Queryable, agentId: string) {
  await exec(q, sql`delete from agents where id = ${agentId}`);
}

// ---- live work -----------------------------------------------------------------------------------------------

const AgentMetricsRow = Schema.Struct({
  agent_id: Schema.String,
  name: Schema.String,
  status: Schema.String,
  running: Schema.Number,
  queued: Schema.Number,
  /** the capability as the agent reported it (any JSON value; absent until its first status) */
  memory_limit_bytes: Schema.Unknown,
  last_heartbeat_at: Schema.NullOr(Schema.Date),
});

/** Live work per visible agent: running and queued queries, last heartbeat. One statement: only the columns the
 *  answer shows (not each agent's capabilities), the live counts joined by agent. */
export async function agentMetrics(q: Queryable, p: Principal) {
  const found = await rows(
    q,
    AgentMetricsRow,
    visibleAgentsStatement(
      p,
      sql`a.id as agent_id, a.name, a.status, coalesce(live.running, 0) as running, coalesce(live.queued, 0) as queued,
          a.capabilities -> 'memory_limit_bytes' as memory_limit_bytes, a.last_heartbeat_at`,
      {
        join: sql`left join (select agent_id, count(*) filter (where status = 'running')::int as running, count(*) filter (where status = 'queued')::int as queued
                               from queries where status in ('queued', 'running') and agent_id is not null group by agent_id) live on live.agent_id = a.id`,
      },
    ),
  );
  return found.map((agent) => ({
    agent_id: agent.agent_id,
    name: agent.name,
    status: apiStatus(agent.status),
    running_queries: agent.running,
    queued_queries: agent.queued,
    // a number from the agent's decoded status frame (protocol Capabilities); absent until its first status
    memory_limit_bytes: typeof agent.memory_limit_bytes === 'number' ? agent.memory_limit_bytes : null,
    last_heartbeat_at: agent.last_heartbeat_at?.toISOString() ?? null,
  }));
}

const MonitoringStats = Schema.Struct({
  running: Schema.Number,
  queued: Schema.Number,
  done_last_hour: Schema.Number,
  failed_last_hour: Schema.Number,
  p50_duration_ms_last_hour: Schema.NullOr(Schema.Number),
});

/** Recent work of one agent: its status, live queries and the last hour's outcomes. Only rows that can count are
 *  read (live ones, and those finished in the hour: two indexes), not the agent's every query ever. */
export async function agentMonitoring(q: Queryable, agent: AgentRow, connectedHere: boolean) {
  const [stats] = await rows(
    q,
    MonitoringStats,
    sql`select count(*) filter (where status = 'running')::int as running, count(*) filter (where status = 'queued')::int as queued,
               count(*) filter (where status = 'done' and finished_at > now() - interval '1 hour')::int as done_last_hour,
               count(*) filter (where status = 'failed' and finished_at > now() - interval '1 hour')::int as failed_last_hour,
               percentile_cont(0.5) within group (order by duration_ms) filter (where finished_at > now() - interval '1 hour') as p50_duration_ms_last_hour
          from queries where agent_id = ${agent.id} and (status in ('queued', 'running') or finished_at > now() - interval '1 hour')`,
  );
  return {
    agent_id: agent.id,
    status: apiStatus(agent.status),
    capabilities: agent.capabilities,
    connected_here: connectedHere,
    last_heartbeat_at: agent.last_heartbeat_at?.toISOString() ?? null,
    ...stats,
  };
}
