// Queries: submit, read (optionally waiting for the end), rows, profile, cancel, and history.
import { randomUUID } from 'node:crypto';
import { Schema } from 'effect';
import { route, asArray, Limit, repeatable, Uuid } from '../route.ts';
import { AppError, forbidden, notFound, unavailable, unprocessable } from '../../domain/errors.ts';
import { policyRejection } from '../../domain/statementPolicy.ts';
import { checkPolicyOffThread } from '../policyPool.ts';
import { requireAgentTier } from '../../domain/agents.ts';
import * as queries from '../../domain/queries.ts';
import { isTimestamp } from '../../domain/pagination.ts';
import { readRowsPage } from '../rows.ts';
import { listWorkspaceCatalogs, warehouseName, type WorkspaceCatalogOut } from '../../domain/catalogs.ts';
import { checkScopedAccess } from '../../domain/catalogGrants.ts';
import type { AppContext } from '../context.ts';
import { actorOf, type AuditEvent } from '../../domain/audit.ts';
import type { Principal } from '../../domain/identity.ts';
import type { WorkspaceAccess } from '../../domain/workspaces.ts';
import { audit } from '../audit.ts';

const ColumnSchema = Schema.NullOr(Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String })));
export const QueryOutSchema = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  user_name: Schema.NullOr(Schema.String),
  sql: Schema.String,
  status: Schema.String,
  statement_type: Schema.NullOr(Schema.String),
  origin: Schema.String,
  session_id: Schema.NullOr(Schema.String),
  schedule_id: Schema.NullOr(Schema.String),
  row_count: Schema.NullOr(Schema.Finite),
  duration_ms: Schema.NullOr(Schema.Finite),
  error: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(Schema.String),
  columns: Schema.NullOr(Schema.Array(Schema.String)),
  column_schema: ColumnSchema,
  started_at: Schema.String,
  running_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
});
export const RowsPage = Schema.Struct({
  // Each row is an object keyed by column name. Declared opaque: encoding a 1,000-row page field by field costs
  // ~1.4 ms (measured), most of a page's budget, and rows carry no field a schema could drop.
  rows: Schema.Array(Schema.Unknown).annotate({ description: 'one JSON object per row, keyed by column name in column order' }),
  columns: Schema.Array(Schema.String),
  column_schema: ColumnSchema,
  cursor: Schema.NullOr(Schema.String),
  total: Schema.Finite,
});
const QueryIdParams = Schema.Struct({ query_id: Schema.String });
const WaitSeconds = Schema.NumberFromString.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0));
const IntFromString = Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER));
// An ISO 8601 date or date-time with a real calendar day (isTimestamp), so PostgreSQL never sees one it refuses.
const IsoTime = Schema.String.check(Schema.makeFilter((s: string) => isTimestamp(s) || 'an ISO 8601 time such as 2024-02-29T12:00:00Z'));

export async function readQuery(ctx: AppContext, id: string) {
  const [row] = await ctx.db.query<queries.QueryRow>(`select ${queries.QUERY_COLS} from queries where id = $1`, [id]);
  return row;
}

/**
 * What the agent needs besides the SQL: every catalog attached to the workspace (the default one current), with no
 * secret in it (the dispatch effect adds the catalog token at send time, so none is persisted).
 */
export async function dispatchExtras(ctx: Pick<AppContext, 'db' | 'config' | 'catalog'>, workspaceId: string, defaultSlug: string | null, tables: unknown[], known?: WorkspaceCatalogOut[], write = true) {
  const attached = known ?? (await listWorkspaceCatalogs(ctx.db, workspaceId));
  const catalogUrl = ctx.config.ELASTIC_AGENT_CATALOG_BASE_URL ?? ctx.catalog?.baseUrl ?? null;
  return {
    backend: attached.find((c) => c.slug === defaultSlug)?.storage_kind ?? 'object_store',
    catalogs: catalogUrl
      ? attached.map((c) => ({ name: c.slug, default: c.slug === defaultSlug, catalog_url: catalogUrl, warehouse: warehouseName(c), access_mode: c.access_mode }))
      : [],
    tables,
    // Whether the catalog token it gets may write (actors/queryKind.ts dispatchScope).
    write,
  };
}

/** What a session statement's dispatch carries, as a query's would: read at dispatch time from its queries row. */
export async function statementCatalogs(ctx: Pick<AppContext, 'db' | 'config' | 'catalog'>, statementId: string) {
  const [row] = await ctx.db.query<{ workspace_id: string; catalog: string | null; tables: unknown[]; statement_type: string | null }>(
    `select workspace_id, catalog, tables, statement_type from queries where id = $1`,
    [statementId],
  );
  if (!row) return null;
  const write = !['select', 'describe'].includes(row.statement_type ?? '');
  const extras = await dispatchExtras(ctx, row.workspace_id, row.catalog, row.tables ?? [], undefined, write);
  return { catalogs: extras.catalogs as Array<Record<string, unknown>>, extras: extras as Record<string, unknown> };
}

/** Submits a checked statement: a queries row and its actor in one statement, then dispatch. */
export async function submitQuery(
  ctx: AppContext,
  args: { workspaceId: string; workspaceSlug: string; userId: string | null; sql: string; agentId: string; timeoutS: number; statementType: string | null; tables: unknown[]; catalog: string | null; origin?: string; scheduleId?: string; attached?: WorkspaceCatalogOut[] },
) {
  const id = randomUUID();
  const now = Date.now();
  // Only reads (SELECT, DESCRIBE/SHOW/SUMMARIZE) get a read-only catalog token; anything else may write.
  const write = !['select', 'describe'].includes(args.statementType ?? '');
  const traceparent = ctx.tracing.traceparent();
  const extras = { ...(await dispatchExtras(ctx, args.workspaceId, args.catalog, args.tables, args.attached, write)), ...(traceparent ? { traceparent } : {}) };
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
      computeWaitTimeoutMs: ctx.config.ELASTIC_PROVISIONING_DEADLINE_S * 1000,
      dispatchExtras: extras as any,
    },
    {
      entity: {
        sql: `insert into queries (id, workspace_id, agent_id, user_id, sql, status, statement_type, origin, catalog, timeout_s, tables, started_at, schedule_id)
              values ($1, $2, $3, $4, $5, 'queued', $6, $7, $8, $9, $10::jsonb, $11::timestamptz, $12)`,
        params: [id, args.workspaceId, args.agentId, args.userId, args.sql, args.statementType, args.origin ?? 'api', args.catalog, args.timeoutS, JSON.stringify(args.tables), new Date(now).toISOString(), args.scheduleId ?? null],
      },
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
  if (!body.agent_id) {
    throw unprocessable('agent_id is required: elastic compute is off', 'agent_required', { fields: [{ field: 'agent_id', message: 'required' }] });
  }
  const { agent } = await requireAgentTier(ctx.db, principal, body.agent_id, 'use', ws.workspace.id);
  if (!(await ctx.link.reachable(agent.id))) throw unavailable(`agent ${agent.name} is not connected`, 'agent_unavailable');
  // Scoped grants are checked against the catalog the statement resolves in, before anything is dispatched (I10).
  const attached = await listWorkspaceCatalogs(ctx.db, ws.workspace.id);
  const defaultSlug = body.catalog ?? attached.find((c) => c.is_default)?.slug ?? null;
  if (body.catalog && !attached.some((c) => c.slug === body.catalog)) {
    throw unprocessable(`catalog ${body.catalog} is not attached to workspace ${ws.workspace.slug}`, 'unprocessable_content', { fields: [{ field: 'catalog', message: 'not attached' }] });
  }
  await checkScopedAccess(ctx.db, ws.workspace.id, policy.tables, defaultSlug, policy.isWrite ? 'write' : 'read', policy.schemas).catch((e) =>
    e instanceof AppError && e.status === 403 ? refuse(e, policy.statementType) : Promise.reject(e),
  );
  const maxTimeout = Number((agent.capabilities as any)?.max_timeout_s ?? Infinity);
  const timeoutS = Math.min(body.timeout_s ?? ctx.config.QUERY_DEFAULT_TIMEOUT_S, maxTimeout);
  const id = await submitQuery(ctx, {
    workspaceId: ws.workspace.id,
    workspaceSlug: ws.workspace.slug,
    userId: principal.user.id,
    sql: body.sql,
    agentId: agent.id,
    timeoutS,
    statementType: policy.statementType,
    tables: policy.tables,
    catalog: defaultSlug,
    attached,
    origin: opts.origin,
    scheduleId: opts.scheduleId,
  });
  return id;
}

export const queryRoutes = [
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/queries',
    operationId: 'create_query',
    summary: 'Submit SQL to the chosen agent; 202 with the whole query once it is dispatched',
    description:
      'The text may hold one statement or a script of several separated by `;`. A script runs its statements in ' +
      'order and returns no rows, so it may contain only writes (INSERT, UPDATE, DELETE, MERGE, CREATE, ALTER, ' +
      'DROP): a script with a read (SELECT, DESCRIBE, SUMMARIZE, SHOW) is refused with 422, because its rows would ' +
      'be discarded; submit the read on its own. Text that does not parse is 400 `sql_syntax_error` with ' +
      '`details.position` {line, column, offset}; a statement the policy refuses is 403 `sql_not_allowed`.',
    tags: ['queries'],
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String }),
    body: Schema.Struct({
      sql: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1_000_000)),
      agent_id: Schema.optionalKey(Schema.NullOr(Uuid)),
      catalog: Schema.optionalKey(Schema.NullOr(Schema.String)),
      timeout_s: Schema.optionalKey(Schema.NullOr(Schema.Finite.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)))),
    }),
    responses: { 202: QueryOutSchema, 400: null, 403: null, 409: null, 413: null, 422: null, 503: null },
    handler: async ({ ctx, req, principal, ws, body }) => {
      const id = await submitChecked(ctx, principal, ws!, body, { audit: (e) => audit(ctx, req, e) });
      return { status: 202, body: queries.toQueryOut(await readQuery(ctx, id)) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/queries',
    operationId: 'list_queries',
    summary: 'Query history with filters and sort, paged by cursor',
    tags: ['queries'],
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String }),
    query: Schema.Struct({
      q: Schema.optionalKey(Schema.String),
      query_id: Schema.optionalKey(Schema.String),
      since: Schema.optionalKey(IsoTime),
      until: Schema.optionalKey(IsoTime),
      status: repeatable(Schema.String),
      statement_type: repeatable(Schema.String),
      slower_than_ms: Schema.optionalKey(IntFromString),
      sort: Schema.optionalKey(Schema.Literals(['started_at', 'duration'])),
      dir: Schema.optionalKey(Schema.Literals(['asc', 'desc'])),
      cursor: Schema.optionalKey(Schema.String),
      limit: Limit,
      origin: repeatable(Schema.String),
      session_id: Schema.optionalKey(Schema.String),
      agent_id: Schema.optionalKey(Schema.String),
      user_id: Schema.optionalKey(Schema.String),
      all_workspaces: Schema.optionalKey(Schema.Literals(['true', 'false'])),
    }),
    responses: { 200: Schema.Struct({ items: Schema.Array(QueryOutSchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean }) },
    handler: async ({ ctx, principal, ws, query }) => ({
      status: 200,
      body: await queries.listHistory(ctx.db, principal, {
        workspaceId: query.all_workspaces === 'true' ? null : ws!.workspace.id,
        q: query.q,
        query_id: query.query_id,
        since: query.since,
        until: query.until,
        status: asArray(query.status),
        statement_type: asArray(query.statement_type),
        slower_than_ms: query.slower_than_ms,
        sort: query.sort ?? 'started_at',
        dir: query.dir ?? 'desc',
        cursor: query.cursor,
        limit: query.limit ?? 100,
        origin: asArray(query.origin),
        session_id: query.session_id,
        agent_id: query.agent_id,
        user_id: query.user_id,
      }),
    }),
  }),
  route({
    method: 'GET',
    path: '/api/queries/:query_id',
    operationId: 'get_query',
    summary: 'One query; with wait_timeout_s it answers as soon as the query ends (or the wait passes)',
    tags: ['queries'],
    access: { kind: 'resource', note: 'member of the query’s workspace' },
    params: QueryIdParams,
    query: Schema.Struct({ wait_timeout_s: Schema.optionalKey(WaitSeconds) }),
    responses: { 200: QueryOutSchema, 404: null },
    handler: async ({ ctx, principal, params, query }) => {
      let row = await queries.findVisibleQuery(ctx.db, principal, params.query_id);
      const wait = query.wait_timeout_s ?? 0;
      if (wait > ctx.config.SQL_STATEMENT_MAX_WAIT_TIMEOUT_S) {
        throw unprocessable(`wait_timeout_s is at most ${ctx.config.SQL_STATEMENT_MAX_WAIT_TIMEOUT_S}`, 'unprocessable_content', { fields: [{ field: 'wait_timeout_s', message: 'too large' }] });
      }
      if (wait > 0 && ['queued', 'running'].includes(row.status)) {
        await ctx.host.waitForTerminal(queries.runKind(row), row.id, wait * 1000);
        row = await readQuery(ctx, row.id);
      }
      return { status: 200, body: queries.toQueryOut(row) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/queries/:query_id/rows',
    operationId: 'get_query_rows',
    summary: 'A page of result rows, read from the agent’s result file',
    tags: ['queries'],
    access: { kind: 'resource', note: 'member of the query’s workspace' },
    params: QueryIdParams,
    query: Schema.Struct({
      limit: Limit,
      cursor: Schema.optionalKey(Schema.String),
    }),
    responses: { 200: RowsPage, 404: null, 409: null },
    handler: async ({ ctx, principal, params, query }) => {
      const row = await queries.findVisibleQuery(ctx.db, principal, params.query_id);
      return { status: 200, body: await readRowsPage(ctx, row, query.limit ?? 100, query.cursor) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/queries/:query_id/profile',
    operationId: 'get_query_profile',
    summary: 'The normalized execution profile (summary plus operator tree)',
    tags: ['queries'],
    access: { kind: 'resource', note: 'member of the query’s workspace' },
    params: QueryIdParams,
    responses: { 200: Schema.Unknown, 404: null },
    handler: async ({ ctx, principal, params }) => {
      const row = await queries.findVisibleQuery(ctx.db, principal, params.query_id);
      const [p] = await ctx.db.query<{ profile: unknown }>(`select profile from queries where id = $1`, [row.id]);
      if (!p?.profile) throw notFound('profile');
      return { status: 200, body: p.profile };
    },
  }),
  route({
    method: 'POST',
    path: '/api/queries/:query_id/cancel',
    operationId: 'cancel_query',
    summary: 'Cancel a queued or running query (202 with the query)',
    tags: ['queries'],
    access: { kind: 'resource', note: 'submitter, workspace writer, or query-admin' },
    params: QueryIdParams,
    responses: { 202: QueryOutSchema, 404: null },
    handler: async ({ ctx, principal, params }) => {
      const row = await queries.findVisibleQuery(ctx.db, principal, params.query_id);
      await queries.assertMayCancel(ctx.db, principal, row);
      await ctx.host.send(queries.runKind(row), row.id, { type: 'cancel' });
      return { status: 202, body: queries.toQueryOut(await readQuery(ctx, row.id)) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/queries/:query_id',
    operationId: 'delete_query',
    summary: 'Cancel a query (204)',
    tags: ['queries'],
    access: { kind: 'resource', note: 'submitter, workspace writer, or query-admin' },
    params: QueryIdParams,
    responses: { 204: null, 404: null },
    handler: async ({ ctx, principal, params }) => {
      const row = await queries.findVisibleQuery(ctx.db, principal, params.query_id);
      await queries.assertMayCancel(ctx.db, principal, row);
      await ctx.host.send(queries.runKind(row), row.id, { type: 'cancel' });
      return { status: 204 };
    },
  }),
];

