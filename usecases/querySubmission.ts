// Submitting queries: a statement admitted (usecases/admission.ts) becomes a queries row with its actor, and what
// its dispatch carries besides the SQL. The REST route, the scheduler, the sample seed and the catalog routes call
// these; session statements read their dispatch catalogs here too.
import { randomUUID } from 'node:crypto';
import { computeWaitMs } from '../domain/elastic.ts';
import * as queries from '../domain/queries.ts';
import { listWorkspaceCatalogs, type WorkspaceCatalogOut } from '../domain/catalogs/attachments.ts';
import { warehouseName } from '../domain/catalogs/warehouses.ts';
import { scopeOf, writeCatalogs } from '../domain/catalogGrants.ts';
import type { SchemaRef, TableRef } from '../domain/statementPolicy/policy.ts';
import type { AuditEvent } from '../domain/audit.ts';
import type { Principal } from '../domain/identity.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import type { ActorStatus, Projection } from '../actors/types.ts';
import { runColumns } from '../actors/queryKind.ts';
import type { QueryProjection } from '../machines/index.ts';
import { PARAM_TYPES, type ParamType } from '../protocol/index.ts';
import { admitStatement } from './admission.ts';
import type { AppContext } from './context.ts';

/** Whether a statement of this type may write: only reads (SELECT, DESCRIBE/SHOW/SUMMARIZE) get a read-only catalog
 *  token, and only their done effect records nothing (actors/queryKind.ts recordProfile). */
export const mayWrite = (statementType: string | null) => !['select', 'describe'].includes(statementType ?? '');

/** A query's row as stored (the caller just submitted it, or already checked it may see it). */
export async function readQuery(ctx: Pick<AppContext, 'db'>, id: string): Promise<queries.QueryRow> {
  return (await queries.readQuery(ctx.db, id))!;
}

/**
 * The query as its row reads after a transition this replica persisted: `row` (read or inserted before it) with the
 * run's columns as that transition's entity write set them from `projection` (runColumns). An answer, not a row:
 * whether the row holds the result (result_held) is not in a projection.
 */
const answerAfter = (row: queries.QueryRow, projection: Projection): queries.QueryOut =>
  queries.toQueryOut({ ...row, ...runColumns(projection as QueryProjection) });

/**
 * The query once a wait for its end returned: from the transition the waiter heard when this replica persisted it
 * (no read), else (another replica's, or the wait passed) read again.
 */
export async function answerAfterWait(ctx: Pick<AppContext, 'db'>, row: queries.QueryRow, heard: ActorStatus): Promise<queries.QueryOut> {
  return heard.projection ? answerAfter(row, heard.projection) : queries.toQueryOut(await readQuery(ctx, row.id));
}

type SchemaTargets = { create: readonly SchemaRef[]; drop: readonly SchemaRef[] };
const NO_SCHEMAS: SchemaTargets = { create: [], drop: [] };

/**
 * What the agent needs besides the SQL: every catalog attached to the workspace (the default one current), with no
 * secret in it (the dispatch effect adds the catalog token at send time, so none is persisted). `writeTo`: the
 * catalogs a write may write (writeCatalogs), given when the caller has them already.
 */
async function dispatchExtras(
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

/** What a session statement's dispatch carries, as a query's would: read at dispatch time from its queries row, with
 *  the `$n` values it was bound with (the PostgreSQL wire endpoint's Bind). */
export async function statementCatalogs(ctx: Pick<AppContext, 'db' | 'config' | 'catalog'>, statementId: string) {
  const row = await queries.dispatchFactsOf(ctx.db, statementId);
  if (!row) return null;
  const extras = await dispatchExtras(ctx, row.workspace_id, row.catalog, row.tables ?? [], undefined, mayWrite(row.statement_type), row.write_catalogs ?? undefined);
  return {
    catalogs: extras.catalogs as Array<Record<string, unknown>>,
    extras: extras as Record<string, unknown>,
    params: row.params,
    paramTypes: row.param_types?.map((t) => (PARAM_TYPES as readonly (string | null)[]).includes(t) ? (t as ParamType) : null) ?? null,
  };
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
): Promise<string> {
  return (await submit(ctx, args)).id;
}

/**
 * A submission's id, and the query as it stood once dispatched (the spawn and the dispatch's transition, persisted
 * here, told it: no read), or null when that is not known (the submitter's name, or no transition heard).
 */
export interface Submitted {
  id: string;
  answer: queries.QueryOut | null;
}

async function submit(ctx: AppContext, args: Parameters<typeof submitQuery>[1] & { userName?: string | null }): Promise<Submitted> {
  const id = randomUUID();
  const now = Date.now();
  const write = mayWrite(args.statementType);
  const traceparent = ctx.tracing.traceparent();
  const attached = args.attached ?? (await listWorkspaceCatalogs(ctx.db, args.workspaceId));
  const writeTo = write ? writeCatalogs(args.tables as TableRef[], args.schemas ?? NO_SCHEMAS, args.catalog, attached) : [];
  const extras = { ...(await dispatchExtras(ctx, args.workspaceId, args.catalog, args.tables, attached, write, writeTo)), ...(traceparent ? { traceparent } : {}) };
  const row: queries.NewQuery = {
    id,
    workspaceId: args.workspaceId,
    agentId: args.agentId,
    userId: args.userId,
    sql: args.sql,
    statementType: args.statementType,
    origin: args.origin ?? 'api',
    catalog: args.catalog,
    timeoutS: args.timeoutS,
    tables: args.tables,
    writeCatalogs: writeTo,
    startedAt: now,
    scheduleId: args.scheduleId,
    computePool: args.computePool,
  };
  const input = {
    queryId: id,
    workspace: args.workspaceSlug,
    sql: args.sql,
    agentId: args.agentId,
    at: now,
    timeoutMs: args.timeoutS * 1000,
    graceMs: Math.max(5_000, ctx.config.AGENT_HEARTBEAT_TTL_S * 1000),
    dispatchAckTimeoutMs: 30_000,
    computeWaitTimeoutMs: computeWaitMs(ctx.config),
    dispatchExtras: extras,
  };
  // The last transition this replica persisted by the time the dispatch returned (a local notice carries what it wrote).
  let last: Projection | undefined;
  const unsubscribe = ctx.host.subscribe('query', id, (n) => {
    if (n.projection) last = n.projection;
  });
  try {
    // The row and its actor in one statement; the row holds the actor's initial projection (queued).
    const spawned = await ctx.host.spawn('query', id, input, { entity: queries.newQueryRow(row) });
    await spawned.start();
  } finally {
    unsubscribe();
  }
  const known = last !== undefined && (args.userId === null || args.userName !== undefined);
  return { id, answer: known ? answerAfter(queries.queuedRow(row, args.userName ?? null), last!) : null };
}

/**
 * A query submitted through every check (admitStatement): the REST route, MCP through it, and the scheduler acting
 * as a schedule's creator.
 */
export async function submitChecked(
  ctx: AppContext,
  principal: Principal,
  ws: WorkspaceAccess,
  body: { sql: string; agent_id?: string | null; catalog?: string | null; timeout_s?: number | null },
  opts: { origin?: string; scheduleId?: string; audit?: (e: AuditEvent) => Promise<unknown> } = {},
): Promise<Submitted> {
  const sender = { principal, access: ws, audit: opts.audit, auditTarget: { kind: 'workspace', id: ws.workspace.id } };
  const admitted = await admitStatement(ctx, sender, { kind: 'query', agentId: body.agent_id ?? null, catalog: body.catalog ?? null }, body.sql);
  const compute = admitted.compute!;
  const maxTimeout = Number(compute.capabilities?.max_timeout_s ?? Infinity);
  const timeoutS = Math.min(body.timeout_s ?? ctx.config.QUERY_DEFAULT_TIMEOUT_S, maxTimeout);
  return submit(ctx, {
    workspaceId: ws.workspace.id,
    workspaceSlug: ws.workspace.slug,
    userId: principal.user.id,
    userName: principal.user.name,
    sql: body.sql,
    agentId: compute.agentId,
    computePool: compute.pool,
    timeoutS,
    statementType: admitted.policy.statementType,
    tables: admitted.policy.tables,
    schemas: admitted.policy.schemas,
    catalog: admitted.catalog,
    attached: admitted.attached,
    origin: opts.origin,
    scheduleId: opts.scheduleId,
  });
}
