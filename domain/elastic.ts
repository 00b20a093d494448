// Elastic compute's rules and rows: the sizes offered, the pool a workspace's work goes to (its storage shape), an
// elastic agent's identity (an `agents` row) and its incarnations (`elastic_agents`, one per provider instance), the
// work an agent holds, and the work waiting for compute. The actors that act on them are in actors/elasticAgentKind.ts and actors/elasticCompute.ts.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { rows, sql } from '../runtime/sql.ts';
import { unprocessable } from './errors.ts';

/** A named elastic agent restarting: work naming it waits on this pool key. */
const AGENT_POOL_PREFIX = 'agent:';
export const agentPool = (agentId: string) => `${AGENT_POOL_PREFIX}${agentId}`;
export const pooledAgentId = (pool: string) => (pool.startsWith(AGENT_POOL_PREFIX) ? pool.slice(AGENT_POOL_PREFIX.length) : null);

/** The elastic incarnation states the API shows (docs/api-decisions.md), from the machine's statuses. */
const ElasticStateSchema = Schema.Literals(['provisioning', 'running', 'terminating', 'terminated', 'failed']);
export type ElasticState = typeof ElasticStateSchema.Type;
const STATE_OF: Record<string, ElasticState> = {
  requested: 'provisioning',
  provisioning: 'provisioning',
  registered: 'running',
  idle: 'running',
  busy: 'running',
  terminating: 'terminating',
  terminated: 'terminated',
  failed: 'failed',
};
export const elasticState = (status: string): ElasticState => STATE_OF[status] ?? 'failed';
export const LIVE_STATUSES = ['requested', 'provisioning', 'registered', 'idle', 'busy', 'terminating'];
const STARTING_STATUSES = ['requested', 'provisioning'];
export const RUNNING_STATUSES = ['registered', 'idle', 'busy'];

export interface ElasticSettings {
  enabled: boolean;
  provider: string;
  defaultCpu: number;
  defaultMemoryGb: number;
  maxAgentsPerPool: number;
  provisioningDeadlineMs: number;
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  currency: string;
  hourlyCost: (cpu: number, memoryGb: number) => number | null;
  /** ELASTIC_AGENT_CATALOG_BASE_URL: the catalog address elastic agents are given instead of the api's own */
  agentCatalogUrl: string | null;
}

export interface ComputeSize {
  size: string;
  cpu: number;
  memory_gb: number;
  hourly_cost: number | null;
  currency: string;
}

/** The sizes offered: `medium` is ELASTIC_DEFAULT_CPU / ELASTIC_DEFAULT_MEMORY_GB, the others halve or double it. */
export function computeSizes(s: ElasticSettings): ComputeSize[] {
  const scaled = (size: string, f: number): ComputeSize => {
    const cpu = Math.max(0.25, s.defaultCpu * f);
    const memory_gb = Math.max(0.5, s.defaultMemoryGb * f);
    return { size, cpu, memory_gb, hourly_cost: s.hourlyCost(cpu, memory_gb), currency: s.currency };
  };
  return [scaled('small', 0.5), scaled('medium', 1), scaled('large', 2), scaled('xlarge', 4)];
}

export function sizeNamed(s: ElasticSettings, name: string | undefined): ComputeSize {
  const sizes = computeSizes(s);
  const found = sizes.find((x) => x.size === (name ?? 'medium'));
  if (!found) {
    throw unprocessable(`unknown size ${name}; one of ${sizes.map((x) => x.size).join(', ')}`, 'unprocessable_content', {
      fields: [{ field: 'size', in: 'body', message: `one of ${sizes.map((x) => x.size).join(', ')}` }],
    });
  }
  return found;
}

/** The pool a workspace's work goes to: its storage shape, the sorted storage kinds of its attached catalogs. */
export async function poolOf(q: Queryable, workspaceId: string): Promise<string> {
  const kinds = await rows(
    q,
    Schema.Struct({ kind: Schema.String }),
    sql`select distinct b.kind from workspace_catalogs wc join catalogs c on c.id = wc.catalog_id
          join storage_backends b on b.id = c.storage_backend_id where wc.workspace_id = ${workspaceId} order by b.kind`,
  );
  return kinds.length ? kinds.map((r) => r.kind).join('+') : 'none';
}

/** An elastic agent's current incarnation as the api answers it (docs/api-decisions.md "Elastic compute"). */
export const ElasticOutSchema = Schema.Struct({
  state: ElasticStateSchema,
  provider: Schema.String,
  size: Schema.String,
  reason: Schema.NullOr(Schema.String),
  provisioned_at: Schema.NullOr(Schema.String),
  terminated_at: Schema.NullOr(Schema.String),
  hourly_cost: Schema.NullOr(Schema.Number),
});
export type ElasticOut = typeof ElasticOutSchema.Type;

// Row shapes at the database boundary.
const IncarnationRowSchema = Schema.Struct({
  id: Schema.String,
  agent_id: Schema.String,
  pool: Schema.String,
  provider: Schema.String,
  size: Schema.String,
  cpu: Schema.Number,
  memory_gb: Schema.Number,
  hourly_cost: Schema.NullOr(Schema.Number),
  status: Schema.String,
  reason: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  provider_ref: Schema.NullOr(Schema.String),
  provisioned_at: Schema.NullOr(Schema.Date),
  terminated_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date,
});
export type IncarnationRow = typeof IncarnationRowSchema.Type;
const INCARNATION_COLS = sql`e.id, e.agent_id, e.pool, e.provider, e.size, e.cpu, e.memory_gb, e.hourly_cost, e.status, e.reason, e.error,
  e.provider_ref, e.provisioned_at, e.terminated_at, e.created_at`;
const IdRow = Schema.Struct({ id: Schema.String });
const Count = Schema.Struct({ n: Schema.Number });

/** The SQL expression (over `agents a`) giving an agent's current incarnation as AgentOut's `elastic` field. */
export const ELASTIC_OUT_COLUMN = `(select jsonb_build_object(
     'state', e.status, 'provider', e.provider, 'size', e.size, 'reason', coalesce(e.reason, e.error),
     'provisioned_at', e.provisioned_at, 'terminated_at', e.terminated_at, 'hourly_cost', e.hourly_cost)
   from elastic_agents e where e.id = a.elastic_id) as elastic`;

/** AgentOut's `elastic` from the column above (its `state` holds the machine status until mapped here). */
export function toElasticOut(raw: Record<string, unknown> | null | undefined): ElasticOut | null {
  if (!raw) return null;
  const ts = (v: unknown) => (v === null || v === undefined ? null : new Date(String(v)).toISOString());
  return {
    state: elasticState(String(raw.state)),
    provider: String(raw.provider),
    size: String(raw.size),
    reason: (raw.reason as string | null) ?? null,
    provisioned_at: ts(raw.provisioned_at),
    terminated_at: ts(raw.terminated_at),
    hourly_cost: raw.hourly_cost === null || raw.hourly_cost === undefined ? null : Number(raw.hourly_cost),
  };
}

/** The incarnation row's INSERT, written in its actor's own spawn statement (it holds the initial projection). */
export function incarnationInsert(r: { id: string; agentId: string; pool: string; provider: string; size: ComputeSize }) {
  return sql`insert into elastic_agents (id, agent_id, pool, provider, size, cpu, memory_gb, hourly_cost, status)
    values (${r.id}, ${r.agentId}, ${r.pool}, ${r.provider}, ${r.size.size}, ${r.size.cpu}, ${r.size.memory_gb}, ${r.size.hourly_cost}, 'requested')`;
}

export async function incarnation(q: Queryable, id: string): Promise<IncarnationRow | undefined> {
  return (await rows(q, IncarnationRowSchema, sql`select ${INCARNATION_COLS} from elastic_agents e where e.id = ${id}`))[0];
}

/** The agent's current incarnation (null for a static agent). */
export async function currentIncarnation(q: Queryable, agentId: string): Promise<IncarnationRow | null> {
  const [row] = await rows(
    q,
    IncarnationRowSchema,
    sql`select ${INCARNATION_COLS} from elastic_agents e join agents a on a.elastic_id = e.id where a.id = ${agentId}`,
  );
  return row ?? null;
}

/** A healthy, open elastic agent serving `pool` (the least loaded), or null. */
export async function healthyPoolAgent(q: Queryable, pool: string): Promise<string | null> {
  const named = pooledAgentId(pool);
  const [row] = await rows(
    q,
    IdRow,
    sql`select a.id from agents a join elastic_agents e on e.id = a.elastic_id
         where a.status = 'healthy' and e.status = any(${RUNNING_STATUSES}::text[])
           and ${named !== null ? sql`a.id = ${named}::uuid` : sql`e.pool = ${pool} and a.access_mode = 'open'`}
         order by (select count(*) from queries qq where qq.agent_id = a.id and qq.status in ('queued', 'running')), a.created_at
         limit 1`,
  );
  return row?.id ?? null;
}

/** Live incarnations of a pool: how many are starting, how many in all (the cap counts every live one). */
export async function poolCounts(q: Queryable, pool: string): Promise<{ starting: number; live: number }> {
  const [row] = await rows(
    q,
    Schema.Struct({ starting: Schema.Number, live: Schema.Number }),
    sql`select count(*) filter (where status = any(${STARTING_STATUSES}::text[]))::int as starting, count(*)::int as live
          from elastic_agents where pool = ${pool} and status = any(${LIVE_STATUSES}::text[])`,
  );
  return row;
}

/** The work an agent holds, as the elastic machine counts it: queries queued or running, sessions not ended. */
export async function agentWork(q: Queryable, agentId: string): Promise<{ inFlightQueries: number; openSessions: number }> {
  const [row] = await rows(
    q,
    Schema.Struct({ queries: Schema.Number, sessions: Schema.Number }),
    sql`select (select count(*) from queries where agent_id = ${agentId} and status in ('queued', 'running'))::int as queries,
               (select count(*) from sql_sessions where agent_id = ${agentId} and status in ('pending', 'opening', 'open', 'closing'))::int as sessions`,
  );
  return { inFlightQueries: row.queries, openSessions: row.sessions };
}

/** Queries and sessions waiting for compute on any of `pools`. */
export async function waitingWork(q: Queryable, pools: string[]): Promise<{ queries: string[]; sessions: string[] }> {
  const queries = await rows(
    q,
    IdRow,
    sql`select id from queries where status = 'queued' and agent_id is null and compute_pool = any(${pools}::text[]) order by started_at`,
  );
  const sessions = await rows(
    q,
    IdRow,
    sql`select id from sql_sessions where status = 'pending' and agent_id is null and compute_pool = any(${pools}::text[]) order by created_at`,
  );
  return { queries: queries.map((r) => r.id), sessions: sessions.map((r) => r.id) };
}

/** Every pool some work is waiting on (the reaper asks for compute for each again). */
export async function waitingPools(q: Queryable): Promise<string[]> {
  const found = await rows(
    q,
    Schema.Struct({ pool: Schema.String }),
    sql`select compute_pool as pool from queries where status = 'queued' and agent_id is null and compute_pool is not null
        union select compute_pool from sql_sessions where status = 'pending' and agent_id is null and compute_pool is not null`,
  );
  return found.map((r) => r.pool);
}

/** Incarnations not yet ended (the reaper compares them with what the provider runs). */
export async function liveIncarnations(q: Queryable): Promise<IncarnationRow[]> {
  return rows(q, IncarnationRowSchema, sql`select ${INCARNATION_COLS} from elastic_agents e where e.status = any(${LIVE_STATUSES}::text[])`);
}

export async function knownIncarnationIds(q: Queryable, ids: string[]): Promise<Set<string>> {
  const known = await rows(q, IdRow, sql`select id from elastic_agents where id = any(${ids}::uuid[]) and status = any(${LIVE_STATUSES}::text[])`);
  return new Set(known.map((r) => r.id));
}

/** Cluster-wide elastic figures for the metrics endpoint, read at scrape time (every replica reports the same). */
export async function elasticCounts(q: Queryable) {
  const [totals] = await rows(
    q,
    Schema.Struct({ provisioned: Schema.Number, p50: Schema.NullOr(Schema.Number), p95: Schema.NullOr(Schema.Number) }),
    sql`select count(*) filter (where provider_ref is not null)::int as provisioned,
            percentile_cont(0.5) within group (order by extract(epoch from provisioned_at - created_at)) filter (where provisioned_at is not null) as p50,
            percentile_cont(0.95) within group (order by extract(epoch from provisioned_at - created_at)) filter (where provisioned_at is not null) as p95
       from elastic_agents`,
  );
  const ended = await rows(
    q,
    Schema.Struct({ ...Count.fields, reason: Schema.String }),
    sql`select coalesce(reason, status) as reason, count(*)::int as n from elastic_agents where status in ('terminated', 'failed') group by 1`,
  );
  const live = await rows(
    q,
    Schema.Struct({ ...Count.fields, status: Schema.String }),
    sql`select status, count(*)::int as n from elastic_agents where status = any(${LIVE_STATUSES}::text[]) group by 1`,
  );
  const byState: Record<string, number> = {};
  for (const r of live) byState[elasticState(r.status)] = (byState[elasticState(r.status)] ?? 0) + r.n;
  return {
    provisioned: totals.provisioned,
    provisioningSeconds: { '0.5': totals.p50 ?? 0, '0.95': totals.p95 ?? 0 },
    ended: Object.fromEntries(ended.map((r) => [r.reason, r.n])),
    live: byState,
  };
}

/** How long work waits for compute: past the agent's own dial-home deadline and the reaper ticks that fire it, so
 *  a failed provisioning reaches the waiting work with its reason (the wait is only the backstop). */
export const computeWaitMs = (c: { ELASTIC_PROVISIONING_DEADLINE_S: number; ELASTIC_REAPER_TICK_S: number }) =>
  (c.ELASTIC_PROVISIONING_DEADLINE_S + 2 * c.ELASTIC_REAPER_TICK_S + 10) * 1000;
