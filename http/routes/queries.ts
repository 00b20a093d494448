// Queries: submit, read (optionally waiting for the end), rows, profile, cancel, and history.
import { Schema } from 'effect';
import { route, asArray, Limit, repeatable, Uuid } from '../route.ts';
import { notFound, unprocessable } from '../../domain/errors.ts';
import * as queries from '../../domain/queries.ts';
import { QueryProfile } from '../../protocol/index.ts';
import { isTimestamp } from '../../domain/pagination.ts';
import { isUuid } from '../../domain/identity.ts';
import { exportResult, readRowsPage } from '../../usecases/resultPages.ts';
import { EXPORT_FORMATS } from '../../protocol/index.ts';
import { Readable } from 'node:stream';
import { ViewQuery, viewFromQuery } from '../resultViewParams.ts';
import { audit } from '../audit.ts';
import { answerAfterWait, readQuery, submitChecked } from '../../usecases/querySubmission.ts';
import type { AppContext } from '../../usecases/context.ts';

export const RowsPage = Schema.Struct({
  // Each row is an object keyed by column name. Declared opaque: encoding a 1,000-row page field by field costs
  // ~1.4 ms (measured), most of a page's budget, and rows carry no field a schema could drop.
  rows: Schema.Array(Schema.Unknown).annotate({ description: 'one JSON object per row, keyed by column name in column order' }),
  columns: Schema.Array(Schema.String),
  column_schema: queries.ColumnSchema,
  cursor: Schema.NullOr(Schema.String),
  total: Schema.Finite,
});
const QueryIdParams = Schema.Struct({ query_id: Schema.String });
const WaitSeconds = Schema.NumberFromString.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0));
const IntFromString = Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER));
// An ISO 8601 date or date-time with a real calendar day (isTimestamp), so PostgreSQL never sees one it refuses.
const IsoTime = Schema.String.check(Schema.makeFilter((s: string) => isTimestamp(s) || 'an ISO 8601 time such as 2024-02-29T12:00:00Z'));

/** The rows route reads a small result held in its row, with whether it is past retention (RESULT_RETENTION_HOURS). */
const heldOf = (ctx: AppContext) => ({ heldResult: { retentionHours: ctx.config.RESULT_RETENTION_HOURS } });

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
    responses: { 202: queries.QueryOutSchema, 400: null, 403: null, 409: null, 413: null, 422: null, 503: null },
    handler: async ({ ctx, req, principal, ws, body }) => {
      const { id, answer } = await submitChecked(ctx, principal, ws!, body, { audit: (e) => audit(ctx, req, e) });
      return { status: 202, body: answer ?? queries.toQueryOut(await readQuery(ctx, id)) };
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
    responses: { 200: Schema.Struct({ items: Schema.Array(queries.QueryOutSchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean }) },
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
    responses: { 200: queries.QueryOutSchema, 404: null },
    // A wait's watch begins before the statement that checks the credential and reads the row, so the row's status
    // is its first look at the actor (the status is written in the same statement as the actor's) and no separate
    // read of the actor is needed; a transition after the read still wakes it (Notifications.watch). Either kind,
    // as the row tells which. The wait's value is checked once decoded; a malformed one began no watch.
    watchFirst: (params, query, ctx) =>
      Number((query as Record<string, unknown> | undefined)?.wait_timeout_s) > 0 && isUuid(params.query_id ?? '')
        ? ctx.host.watchTerminal(['query', 'statement'], params.query_id)
        : null,
    along: (params) => queries.visibleQueryWithCaller(params.query_id ?? ''),
    handler: async ({ ctx, principal, params, query, along, watch }) => {
      const wait = query.wait_timeout_s ?? 0;
      const row = along ? queries.visibleQueryOf(principal, along) : await queries.findVisibleQuery(ctx.db, principal, params.query_id);
      if (wait > ctx.config.SQL_STATEMENT_MAX_WAIT_TIMEOUT_S) {
        throw unprocessable(`wait_timeout_s is at most ${ctx.config.SQL_STATEMENT_MAX_WAIT_TIMEOUT_S}`, 'unprocessable_content', { fields: [{ field: 'wait_timeout_s', message: 'too large' }] });
      }
      if (watch && wait > 0 && ['queued', 'running'].includes(row.status)) {
        // Answered from the transition it woke on when this replica persisted it, else read again.
        return { status: 200, body: await answerAfterWait(ctx, row, await watch.wait(queries.runKind(row), wait * 1000)) };
      }
      return { status: 200, body: queries.toQueryOut(row) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/queries/:query_id/rows',
    operationId: 'get_query_rows',
    summary: 'A page of result rows, read from the agent’s result file',
    description:
      'Pages follow each other by `cursor` (the previous page’s, opaque), or start at a row: `offset` (0-based) reads ' +
      'the page that begins there in one request, whatever came before; the page’s own `cursor` continues from it. ' +
      'Give one of the two, not both (400 `invalid_cursor`). An offset at or past `total` is an empty last page. ' +
      '`order_by`, `filter` and `search` page a view of the result instead: sorted and filtered by the agent holding it, over ' +
      'the whole result; `total` is then the rows that pass the filter, and a cursor continues only the same view. ' +
      'A column the result does not have is 400 `unknown_column`; a malformed parameter, an unknown operator or a ' +
      'value not of the column’s type 400 `invalid_filter` (or `invalid_order_by`).',
    tags: ['queries'],
    access: { kind: 'resource', note: 'member of the query’s workspace' },
    params: QueryIdParams,
    query: Schema.Struct({
      limit: Limit,
      cursor: Schema.optionalKey(Schema.String),
      offset: Schema.optionalKey(IntFromString),
      ...ViewQuery,
    }),
    responses: { 200: RowsPage, 400: null, 404: null, 409: null },
    // Every page reads its query: with the caller's credential, in one statement.
    along: (params, ctx) => queries.visibleQueryWithCaller(params.query_id ?? '', heldOf(ctx)),
    handler: async ({ ctx, principal, params, query, along }) => {
      const view = viewFromQuery(query);
      const held = heldOf(ctx);
      const row = along ? queries.visibleQueryOf(principal, along, held) : await queries.findVisibleQuery(ctx.db, principal, params.query_id, held);
      return { status: 200, body: await readRowsPage(ctx, row, query.limit ?? 100, { cursor: query.cursor, offset: query.offset }, view) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/queries/:query_id/export',
    operationId: 'export_query_result',
    summary: 'The whole result as a CSV, Parquet or JSON file (a download), in the order and filter asked',
    description:
      'Written by the agent holding the result (DuckDB’s COPY: CSV with a header row, Parquet, or JSON as one array ' +
      'of objects) and streamed through as it is read. `order_by`, `filter` and `search` as for the rows. ' +
      '`Content-Disposition: attachment` names the file `query-{first 8 of the id}.{format}`.',
    tags: ['queries'],
    access: { kind: 'resource', note: 'member of the query’s workspace' },
    params: QueryIdParams,
    query: Schema.Struct({ format: Schema.Literals(EXPORT_FORMATS), ...ViewQuery }),
    produces: 'application/octet-stream',
    responses: { 200: Schema.String.annotate({ description: 'the file (text/csv, application/vnd.apache.parquet or application/json)' }), 400: null, 404: null, 409: null, 410: null, 503: null },
    handler: async ({ ctx, principal, params, query, reply }) => {
      const view = viewFromQuery(query);
      const row = await queries.findVisibleQuery(ctx.db, principal, params.query_id);
      // The response closing (sent, or the client gone) ends the read from the agent.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const file = await exportResult(ctx, row, query.format, view, gone.signal);
      const headers: Record<string, string> = {
        'content-type': file.contentType,
        'content-disposition': `attachment; filename="query-${row.id.slice(0, 8)}.${query.format}"`,
        'cache-control': 'no-store',
      };
      if (file.contentLength !== null) headers['content-length'] = String(file.contentLength);
      // A stream, not the string the schema documents: the server sends a raw route's body as it is.
      const body = Readable.fromWeb(file.body as import('node:stream/web').ReadableStream<Uint8Array>) as unknown as string;
      return { status: 200, body, headers };
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
    responses: { 200: QueryProfile, 404: null },
    handler: async ({ ctx, principal, params }) => {
      const row = await queries.findVisibleQuery(ctx.db, principal, params.query_id);
      const profile = await queries.profileOf(ctx.db, row.id);
      if (!profile) throw notFound('profile');
      // Stored as the query_done frame's schema decoded it; the reply is encoded (so checked) by the same schema.
      return { status: 200, body: profile as typeof QueryProfile.Type };
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
    responses: { 202: queries.QueryOutSchema, 404: null },
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

