// Submitting queries: the checks every submission gets (size, statement policy, script shape, role, agent tier and
// connection, attached catalog, scoped grants) and the queries row with its actor. The REST route, the scheduler,
// the sample seed and the catalog routes call these; session statements read their dispatch catalogs here too.
import { randomUUID } from 'node:crypto';
import { AppError, forbidden, unavailable, unprocessable } from '../domain/errors.ts';
import { policyRejection } from '../domain/statementPolicy.ts';
import { checkPolicyOffThread } from './policyPool.ts';
import { requireAgentTier, visibleAgents } from '../domain/agents.ts';
import { agentPool, computeWaitMs, healthyPoolAgent, poolOf } from '../domain/elastic.ts';
import * as queries from '../domain/queries.ts';
import { listWorkspaceCatalogs, warehouseName, type WorkspaceCatalogOut } from '../domain/catalogs.ts';
import { checkScopedAccess, scopeOf, writeCatalogs } from '../domain/catalogGrants.ts';
import type { SchemaRef, TableRef } from '../domain/statementPolicy.ts';
import { assertCatalogsWritable, writtenCatalogs } from '../domain/storageMigrations.ts';
import type { AppContext } from './context.ts';
import { actorOf, type AuditEvent } from '../domain/audit.ts';
import type { Principal } from '../domain/identity.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import { sql } from '../runtime/sql.ts';

/** Whether a statement of this type may write: only reads (SELECT, DESCRIBE/SHOW/SUMMARIZE) get a read-only catalog
 *  token, and only their done effect records nothing (actors/queryKind.ts recordProfile). */
const mayWrite = (statementType: string | null) => !['select', 'describe'].includes(statementType ?? '');

export async function readQuery(ctx: AppContext, id: string) {
  const [row] = await ctx.db.query<queries.QueryRow>(`select ${queries.QUERY_COLS} from queries where id = $1`, [id]);
  return row;
}

type SchemaTargets = { create: readonly SchemaRef[]; drop: readonly SchemaRef[] };
const NO_SCHEMAS: SchemaTargets = { create: [], drop: [] };

/**
 * What the agent needs besides the SQL: every catalog attached to the workspace (the default one current), with no
 * secret in it (the dispatch effect adds the catalog token at send time, so none is persisted). `writeTo`: the
 * catalogs a write may write (writeCatalogs), given when the caller has them already.
 */
export async function dispatchExtras(
  ctx: Pick<AppContext, 'db' | 'config' | 'catalog'>,
  workspaceId: string,
  defaultSlug: string | null,
  tables: unknown[],
  known?: WorkspaceCatalogOut[],
  write = true,
  writeTo?: readonly string[],
) {
  const attached = known ?? (await listWorkspaceCatalogs(ctx.db, workspaceId));
  // An elastic agent gets ELASTIC_AGENT_CATALOG_BASE_URL instead, at dispatch (actors/queryKind.ts dispatchCatalogs).
  const catalogUrl = ctx.catalog?.baseUrl ?? null;
  // A scoped attachment's catalog shows on the agent (information_schema, duckdb_schemas(), SHOW) only the schemas
  // its grants show, as the REST listing does; unqualified and granted names are checked before dispatch anyway.
  const visible = async (c: WorkspaceCatalogOut) => (c.access_mode === 'scoped' ? (await scopeOf(ctx.db, workspaceId, c)).visibleSchemas() : null);
  return {
    backend: attached.find((c) => c.slug === defaultSlug)?.storage_kind ?? 'object_store',
    catalogs: catalogUrl
      ? await Promise.all(
          attached.map(async (c) => {
            const schemas = await visible(c);
            return { name: c.slug, default: c.slug === defaultSlug, catalog_url: catalogUrl, warehouse: warehouseName(c), access_mode: c.access_mode, ...(schemas ? { schemas } : {}) };
          }),
        )
      : [],
    tables,
    // Whether the catalog token it gets may write, and which catalogs (actors/queryKind.ts dispatchScope).
    write,
    write_catalogs: write ? [...(writeTo ?? writeCatalogs(tables as TableRef[], NO_SCHEMAS, defaultSlug, attached))] : [],
  };
}

/** What a session statement's dispatch carries, as a query's would: read at dispatch time from its queries row. */
export async function statementCatalogs(ctx: Pick<AppContext, 'db' | 'config' | 'catalog'>, statementId: string) {
  const [row] = await ctx.db.query<{ workspace_id: string; catalog: string | null; tables: unknown[]; statement_type: string | null; write_catalogs: string[] | null }>(
    `select workspace_id, catalog, tables, statement_type, write_catalogs from queries where id = $1`,
    [statementId],
  );
  if (!row) return null;
  const extras = await dispatchExtras(ctx, row.workspace_id, row.catalog, row.tables ?? [], undefined, mayWrite(row.statement_type), row.write_catalogs ?? undefined);
  return { catalogs: extras.catalogs as Array<Record<string, unknown>>, extras: extras as Record<string, unknown> };
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
): Promise<{ agentId: string | null; pool: string | null; capabilities: Record<string, unknown> }> {
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
  if (await ctx.link.reachable(agent.id)) return { agentId: agent.id, pool: null, capabilities: agent.capabilities };
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
    const load = await ctx.db.query<{ agent_id: string; n: number }>(
      `select agent_id, count(*)::int as n from queries where agent_id = any($1::uuid[]) and status in ('queued', 'running') group by agent_id`,
      [usable.map((a) => a.id)],
    );
    const busy = new Map(load.map((r) => [r.agent_id, r.n]));
    usable.sort((a, b) => (busy.get(a.id) ?? 0) - (busy.get(b.id) ?? 0));
    for (const agent of usable) if (await ctx.link.reachable(agent.id)) return { agentId: agent.id, pool: null, capabilities: agent.capabilities };
  }
  throw unavailable('no connected agent available: name one with agent_id, or connect an agent you may use', 'agent_unavailable');
}

/** Submits a checked statement: a queries row and its actor in one statement, then dispatch. */
export async function submitQuery(
  ctx: AppContext,
  args: {
    workspaceId: string;
    workspaceSlug: string;
    userId: string | null;
    sql: string;
    agentId: string | null;
    computePool?: string | null;
    timeoutS: number;
    statementType: string | null;
    tables: unknown[];
    /** CREATE SCHEMA / DROP SCHEMA targets (the policy's `schemas`): their catalogs are written too */
    schemas?: SchemaTargets;
    catalog: string | null;
    origin?: string;
    scheduleId?: string;
    attached?: WorkspaceCatalogOut[];
  },
) {
  const id = randomUUID();
  const now = Date.now();
  const write = mayWrite(args.statementType);
  const traceparent = ctx.tracing.traceparent();
  const attached = args.attached ?? (await listWorkspaceCatalogs(ctx.db, args.workspaceId));
  const writeTo = write ? writeCatalogs(args.tables as TableRef[], args.schemas ?? NO_SCHEMAS, args.catalog, attached) : [];
  const extras = { ...(await dispatchExtras(ctx, args.workspaceId, args.catalog, args.tables, attached, write, writeTo)), ...(traceparent ? { traceparent } : {}) };
  // The row and its actor in one statement; the row holds the actor's initial projection (queued).
  const spawned = await ctx.host.spawn(
    'query',
    id,
    {
      queryId: id,
      workspace: args.workspaceSlug,
      sql: args.sql,
      agentId: args.agentId,
      at: now,
      timeoutMs: args.timeoutS * 1000,
      graceMs: Math.max(5_000, ctx.config.AGENT_HEARTBEAT_TTL_S * 1000),
      dispatchAckTimeoutMs: 30_000,
      computeWaitTimeoutMs: computeWaitMs(ctx.config),
      dispatchExtras: extras as any,
    },
    {
      entity: sql`insert into queries (id, workspace_id, agent_id, user_id, sql, status, statement_type, origin, catalog, timeout_s, tables, write_catalogs, started_at, schedule_id, compute_pool)
        values (${id}, ${args.workspaceId}, ${args.agentId}, ${args.userId}, ${args.sql}, 'queued', ${args.statementType}, ${args.origin ?? 'api'}, ${args.catalog},
          ${args.timeoutS}, ${JSON.stringify(args.tables)}::jsonb, ${writeTo}::text[], ${new Date(now).toISOString()}::timestamptz, ${args.scheduleId ?? null}, ${args.computePool ?? null})`,
    },
  );
  await spawned.start();
  return id;
}


/**
 * A query submitted through every check the REST route applies (size, statement policy, script shape, role, agent
 * tier and connection, attached catalog, scoped grants): the route, and the scheduler acting as a schedule's creator.
 */
export async function submitChecked(
  ctx: AppContext,
  principal: Principal,
  ws: WorkspaceAccess,
  body: { sql: string; agent_id?: string | null; catalog?: string | null; timeout_s?: number | null },
  opts: { origin?: string; scheduleId?: string; audit?: (e: AuditEvent) => Promise<unknown> } = {},
): Promise<string> {
  // A statement refused by the policy, the workspace role or a scoped grant is audited with its code and the
  // statement kind, never its text (SQL may carry literals that are secrets).
  const refuse = async (e: AppError, statementType: string | null): Promise<never> => {
    await opts.audit?.({
      action: 'policy.reject',
      outcome: 'failure',
      actor: actorOf(principal),
      target: { kind: 'workspace', id: ws.workspace.id },
      details: { workspace: ws.workspace.slug, code: e.code, statement_type: statementType },
    });
    throw e;
  };
  const bytes = Buffer.byteLength(body.sql, 'utf8');
  if (bytes > ctx.config.SQL_MAX_BYTES) {
    throw new AppError(413, 'payload_too_large', `the SQL is ${bytes} bytes; at most ${ctx.config.SQL_MAX_BYTES} are accepted (SQL_MAX_BYTES)`);
  }
  const policy = await ctx.tracing.span('policy', {}, () =>
    checkPolicyOffThread(body.sql, { mode: 'query', maxStatements: ctx.config.SQL_MAX_STATEMENTS }, ctx.config.SQL_POLICY_TIME_BUDGET_MS),
  );
  if (!policy.ok) {
    const e = policyRejection(policy);
    if (e.status === 403) await refuse(e, policy.statementType);
    throw e;
  }
  // A script returns no rows (only a single read is materialized): a read inside one would end `done` with
  // nothing to show, so it is refused instead of silently dropping its rows.
  const read = policy.statements.findIndex((s) => s.type === 'select' || s.type === 'describe');
  if (policy.statements.length > 1 && read >= 0) {
    throw unprocessable(
      `statement ${read + 1} of ${policy.statements.length} is a read; a script of several statements returns no rows, so it may hold only writes: submit the read on its own`,
      'unprocessable_content',
      { fields: [{ field: 'sql', in: 'body', message: 'a script with several statements may not contain a read' }] },
    );
  }
  if (policy.isWrite && ws.role === 'reader') await refuse(forbidden(`writing needs the writer role in workspace ${ws.workspace.slug}`), policy.statementType);
  const compute = await chooseCompute(ctx, principal, ws, body.agent_id ?? null);
  // Scoped grants are checked against the catalog the statement resolves in, before anything is dispatched (I10).
  const attached = await listWorkspaceCatalogs(ctx.db, ws.workspace.id);
  const defaultSlug = body.catalog ?? attached.find((c) => c.is_default)?.slug ?? null;
  if (body.catalog && !attached.some((c) => c.slug === body.catalog)) {
    throw unprocessable(`catalog ${body.catalog} is not attached to workspace ${ws.workspace.slug}`, 'unprocessable_content', { fields: [{ field: 'catalog', message: 'not attached' }] });
  }
  await checkScopedAccess(ctx.db, ws.workspace.id, policy.tables, defaultSlug, policy.isWrite ? 'write' : 'read', policy.schemas, attached).catch((e) =>
    e instanceof AppError && e.status === 403 ? refuse(e, policy.statementType) : Promise.reject(e),
  );
  // A catalog being moved to other storage takes no writes (409 catalog_read_only); reads go on.
  if (policy.isWrite) await assertCatalogsWritable(ctx.db, writtenCatalogs(writeCatalogs(policy.tables, policy.schemas, defaultSlug, attached), attached));
  const maxTimeout = Number((compute.capabilities as any)?.max_timeout_s ?? Infinity);
  const timeoutS = Math.min(body.timeout_s ?? ctx.config.QUERY_DEFAULT_TIMEOUT_S, maxTimeout);
  const id = await submitQuery(ctx, {
    workspaceId: ws.workspace.id,
    workspaceSlug: ws.workspace.slug,
    userId: principal.user.id,
    sql: body.sql,
    agentId: compute.agentId,
    computePool: compute.pool,
    timeoutS,
    statementType: policy.statementType,
    tables: policy.tables,
    schemas: policy.schemas,
    catalog: defaultSlug,
    attached,
    origin: opts.origin,
    scheduleId: opts.scheduleId,
  });
  return id;
}
