// The agent registry's rules: who sees an agent and at which tier (use < operate < admin), access modes and
// grants, bootstrap credentials (single use, expiring, stored hashed) and agent session credentials.
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../runtime/db.ts';
import { AppError, notFound, unprocessable } from './errors.ts';
import { hasPermission, isUuid, sha256, type Principal } from './identity.ts';
import { ELASTIC_OUT_COLUMN, toElasticOut, type ElasticOut } from './elastic.ts';

export type AgentTier = 'use' | 'operate' | 'admin';
export const TIERS: readonly AgentTier[] = ['use', 'operate', 'admin'];
const tierRank = (t: AgentTier | null) => (t ? TIERS.indexOf(t) : -1);
export const maxTier = (a: AgentTier | null, b: AgentTier | null) => (tierRank(a) >= tierRank(b) ? a : b);

export interface AgentRow {
  id: string;
  name: string;
  status: string;
  version: string | null;
  capabilities: Record<string, unknown>;
  access_mode: 'open' | 'restricted';
  owner_url: string | null;
  owner_replica: string | null;
  result_url: string | null;
  connection_id: string | null;
  credential_revoked_at: Date | null;
  connected_at: Date | null;
  last_heartbeat_at: Date | null;
  created_at: Date;
  /** the current elastic incarnation (ELASTIC_OUT_COLUMN), null for a static agent */
  elastic: Record<string, unknown> | null;
}

export interface AgentOut {
  id: string;
  name: string;
  status: string;
  version: string | null;
  capabilities: Record<string, unknown>;
  access_tier: AgentTier;
  access_mode: 'open' | 'restricted';
  owner_url: string | null;
  /** the agentConnection actor of its latest socket (operators inspect it at /api/admin/actors/agentConnection/{id}) */
  connection_id: string | null;
  connected_at: string | null;
  last_heartbeat_at: string | null;
  /** null for a static agent; an elastic agent's current incarnation (decisions.md, Elastic compute) */
  elastic: ElasticOut | null;
}

/** API status vocabulary: an agent is healthy or unavailable (registered-but-silent counts as unavailable). */
export const apiStatus = (s: string) => (s === 'healthy' ? 'healthy' : 'unavailable');

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

const AGENT_COLS =
  'a.id, a.name, a.status, a.version, a.capabilities, a.access_mode, a.owner_url, a.owner_replica, a.result_url, a.connection_id, a.credential_revoked_at, a.connected_at, a.last_heartbeat_at, a.created_at, ' +
  ELASTIC_OUT_COLUMN;

/**
 * Every agent with the caller's tier on it (or just `onlyId`); agents with no tier are left out. With `workspaceId`
 * (work submitted in a workspace) a grant to a workspace counts only for that workspace, so a grant to W does not
 * carry the user's queries in other workspaces onto the agent.
 */
export async function visibleAgents(
  q: Queryable,
  p: Principal,
  onlyId?: string,
  workspaceId?: string,
): Promise<Array<{ agent: AgentRow; tier: AgentTier }>> {
  const rows = await q.query<AgentRow & { grant_tier: AgentTier | null }>(
    `select ${AGENT_COLS},
            (select g.tier from agent_grants g
              where g.agent_id = a.id
                and (g.user_id = $1 or g.workspace_id in (
                      select workspace_id from workspace_members where user_id = $1 and ($3::uuid is null or workspace_id = $3::uuid)))
              order by case g.tier when 'admin' then 3 when 'operate' then 2 else 1 end desc limit 1) as grant_tier
       from agents a where $2::uuid is null or a.id = $2::uuid order by a.created_at, a.id`,
    [p.user.id, onlyId ?? null, workspaceId ?? null],
  );
  const out: Array<{ agent: AgentRow; tier: AgentTier }> = [];
  for (const r of rows) {
    const { grant_tier, ...agent } = r;
    const tier = tierFor(p, agent, grant_tier);
    if (tier) out.push({ agent, tier });
  }
  return out;
}

function tierFor(p: Principal, agent: AgentRow, grant: AgentTier | null): AgentTier | null {
  if (hasPermission(p, 'agents:manage')) return 'admin';
  return maxTier(agent.access_mode === 'open' ? 'use' : null, grant);
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
  return (await q.query<AgentRow>(`select ${AGENT_COLS} from agents a where a.id = $1`, [id]))[0];
}

// ---- access payload and grants -------------------------------------------------------------------------------

export interface GrantOut {
  id: string;
  user_id: string | null;
  workspace_id: string | null;
  tier: AgentTier;
  principal_name: string;
  created_at: string;
}

export async function accessPayload(q: Queryable, agentId: string) {
  const agent = await findAgent(q, agentId);
  if (!agent) throw notFound('agent');
  const grants = await q.query<GrantOut & { created_at: Date }>(
    `select g.id, g.user_id, g.workspace_id, g.tier, coalesce(u.name, w.slug) as principal_name, g.created_at
       from agent_grants g left join users u on u.id = g.user_id left join workspaces w on w.id = g.workspace_id
      where g.agent_id = $1 order by g.created_at, g.id`,
    [agentId],
  );
  const users = await q.query<{ id: string; name: string; email: string | null; kind: string }>(
    `select id, name, email, kind from users where is_active order by name, id`,
  );
  const workspaces = await q.query<{ id: string; slug: string; name: string }>(`select id, slug, name from workspaces order by slug`);
  return {
    agent_id: agent.id,
    access_mode: agent.access_mode,
    grants: grants.map((g) => ({ ...g, created_at: (g.created_at as unknown as Date).toISOString() })),
    candidates: {
      users: users.map((u) => ({ id: u.id, name: u.name, email: u.email, kind: u.kind })),
      workspaces,
    },
  };
}

export async function setAccessMode(q: Queryable, agentId: string, mode: 'open' | 'restricted') {
  const r = await q.query(`update agents set access_mode = $2 where id = $1 returning id`, [agentId, mode]);
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
    const id = (hasUser ? body.user_id : body.workspace_id)!;
    const exists = isUuid(id) ? (await tx.query(`select 1 from ${hasUser ? 'users' : 'workspaces'} where id = $1`, [id])).length > 0 : false;
    if (!exists) throw unprocessable(`${col} names no ${hasUser ? 'user' : 'workspace'}`, 'unprocessable_content', { fields: [{ field: col, message: 'not found' }] });
    const prior = await tx.query<{ id: string }>(`select id from agent_grants where agent_id = $1 and ${col} = $2 for update`, [agentId, id]);
    let gid: string;
    if (prior.length) {
      gid = prior[0].id;
      await tx.query(`update agent_grants set tier = $2 where id = $1`, [gid, body.tier]);
    } else {
      [{ id: gid }] = await tx.query<{ id: string }>(
        `insert into agent_grants (agent_id, ${col}, tier) values ($1, $2, $3) returning id`,
        [agentId, id, body.tier],
      );
    }
    const payload = await accessPayload(tx, agentId);
    return { grant: payload.grants.find((g) => g.id === gid)!, created: !prior.length };
  });
}

export async function deleteGrant(q: Queryable, agentId: string, grantId: string) {
  const r = isUuid(grantId) ? await q.query(`delete from agent_grants where id = $1 and agent_id = $2 returning id`, [grantId, agentId]) : [];
  if (!r.length) throw notFound('grant');
}

// ---- credentials ---------------------------------------------------------------------------------------------

export const BOOTSTRAP_PREFIX = 'eid_boot_';
export const AGENT_SESSION_PREFIX = 'eid_agent_';

export async function createBootstrapToken(q: Queryable, p: Principal, input: { name?: string; expires_in_hours?: number }) {
  const token = BOOTSTRAP_PREFIX + randomBytes(24).toString('base64url');
  const hours = input.expires_in_hours ?? 24;
  const [row] = await q.query<{ expires_at: Date }>(
    `insert into agent_bootstrap_tokens (token_hash, name, created_by, expires_at)
     values ($1, $2, $3, now() + make_interval(secs => $4)) returning expires_at`,
    [sha256(token), input.name ?? null, p.user.id, hours * 3600],
  );
  return { token, expires_at: row.expires_at.toISOString() };
}

/** Seeds AGENT_BOOTSTRAP_TOKEN at startup (hashed) so the bundled agent can register. */
export async function seedBootstrapToken(q: Queryable, token: string) {
  await q.query(
    `insert into agent_bootstrap_tokens (token_hash, name, seeded, expires_at) values ($1, 'bundled', true, null)
     on conflict (token_hash) do nothing`,
    [sha256(token)],
  );
}

/** A single-use bootstrap token for one pre-created agent row (an elastic agent's instance dials home with it). */
export async function mintAgentBootstrapToken(q: Queryable, agentId: string, ttlSeconds: number): Promise<string> {
  const token = BOOTSTRAP_PREFIX + randomBytes(24).toString('base64url');
  await q.query(
    `insert into agent_bootstrap_tokens (token_hash, name, agent_id, expires_at) values ($1, null, $2, now() + make_interval(secs => $3))`,
    [sha256(token), agentId, ttlSeconds],
  );
  return token;
}

/** Ends the session credential of an elastic agent while `elasticId` is still its current incarnation. */
export async function revokeIncarnationCredential(q: Queryable, agentId: string, elasticId: string) {
  await q.query(`update agents set session_token_hash = null where id = $1 and elastic_id = $2`, [agentId, elasticId]);
}

/** Validates and deletes a bootstrap token in one statement: two agents racing with it cannot both win. */
export async function consumeBootstrapToken(q: Queryable, token: string): Promise<{ name: string | null; agent_id: string | null } | undefined> {
  const r = await q.query<{ name: string | null; agent_id: string | null }>(
    `delete from agent_bootstrap_tokens where token_hash = $1 and (expires_at is null or expires_at > now()) returning name, agent_id`,
    [sha256(token)],
  );
  return r[0];
}

/** Registers a new agent with a fresh session credential (only its hash is stored). */
export async function registerAgent(q: Queryable, input: { name: string; version: string | null }) {
  const sessionToken = AGENT_SESSION_PREFIX + randomBytes(32).toString('base64url');
  const [row] = await q.query<{ id: string }>(
    `insert into agents (name, version, session_token_hash) values ($1, $2, $3) returning id`,
    [input.name, input.version, sha256(sessionToken)],
  );
  return { agentId: row.id, sessionToken };
}

/** A fresh session credential for an existing agent row (a token minted for it was spent). */
export async function renewAgentCredential(q: Queryable, agentId: string, version: string | null) {
  const sessionToken = AGENT_SESSION_PREFIX + randomBytes(32).toString('base64url');
  const [row] = await q.query<{ id: string }>(
    `update agents set session_token_hash = $2, credential_revoked_at = null, version = $3 where id = $1 returning id`,
    [agentId, sha256(sessionToken), version],
  );
  return row ? { agentId: row.id, sessionToken } : null;
}

export async function agentBySessionToken(q: Queryable, token: string): Promise<AgentRow | undefined> {
  return (
    await q.query<AgentRow>(`select ${AGENT_COLS} from agents a where a.session_token_hash = $1 and a.credential_revoked_at is null`, [sha256(token)])
  )[0];
}

export async function revokeAgentCredential(q: Queryable, agentId: string) {
  await q.query(`update agents set session_token_hash = null, credential_revoked_at = now() where id = $1`, [agentId]);
}
