// SQL sessions (spec "SQL sessions", docs/api-decisions.md "SQL sessions"): a connection held open on one agent for an
// external client (a DB-API connector, dbt, a BI tool), its statements run in order with session state kept
// between them. Off unless SQL_SESSIONS_ENABLED: then every route answers 404 "not enabled", which existing clients
// read as "switched off".
import { Schema } from 'effect';
import { route, asArray, Limit, repeatable, Uuid } from '../route.ts';
import { AppError, conflict, forbidden, unprocessable } from '../../domain/errors.ts';
import * as queries from '../../domain/queries.ts';
import * as sessions from '../../domain/sqlSessions.ts';
import { workspaceAccessOf } from '../../domain/workspaces.ts';
import type { AppContext } from '../../usecases/context.ts';
import { QueryOutSchema } from '../../domain/queries.ts';
import { RowsPage } from './queries.ts';
import { checkStagingName } from '../../domain/sessionStaging.ts';
import { assertSessionOwner, openSessionWaiting, runSessionStatement } from '../../usecases/sqlSessions.ts';
import { catalogClientOf } from '../catalogService.ts';
import { audit } from '../audit.ts';

// Worded for clients that read a 404 containing "not enabled" as "SQL sessions are switched off".
const gate = (ctx: AppContext) => {
  if (!ctx.config.SQL_SESSIONS_ENABLED) throw new AppError(404, 'not_found', 'SQL sessions are not enabled on this server (SQL_SESSIONS_ENABLED)');
};

const SessionOut = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  user_id: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  status: Schema.Literals(sessions.SESSION_STATUSES),
  active_catalog: Schema.NullOr(Schema.String),
  staging_uri: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  close_reason: Schema.NullOr(Schema.String),
  client_name: Schema.NullOr(Schema.String),
  client_version: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  opened_at: Schema.NullOr(Schema.String),
  last_active_at: Schema.String,
  closed_at: Schema.NullOr(Schema.String),
});
const SessionParams = Schema.Struct({ session_id: Schema.String });
const Seconds = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0));
const StatementOut = Schema.Struct({ ...QueryOutSchema.fields, first_page: Schema.optionalKey(RowsPage) });

const waitTooLong = (field: string, max: number, variable: string) =>
  unprocessable(`${field} is at most ${max} (${variable})`, 'unprocessable_content', { fields: [{ field, in: 'body', message: `at most ${max}` }] });

export const sqlSessionRoutes = [
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/sql/sessions',
    operationId: 'create_sql_session',
    summary: 'Open a SQL session on an agent: 201 open, 202 still opening (on_wait_timeout=continue), 503 compute_starting',
    description:
      'The session holds one connection on the agent for its whole life; statements run on it in order and keep ' +
      'session state (temp tables, USE, the safe SET list). With on_wait_timeout=cancel (the default) a session not ' +
      'open within wait_timeout_s is closed again and the answer is 503 compute_starting with Retry-After; with ' +
      'continue it is 202 and the client polls GET /sql/sessions/{session_id} until status is open.',
    tags: ['sql-sessions'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String }),
    body: Schema.Struct({
      agent_id: Schema.optionalKey(Schema.NullOr(Uuid)),
      catalog: Schema.optionalKey(Schema.NullOr(Schema.String)),
      wait_timeout_s: Schema.optionalKey(Schema.NullOr(Seconds)),
      on_wait_timeout: Schema.optionalKey(Schema.NullOr(Schema.Literals(['cancel', 'continue']))),
    }),
    responses: { 201: SessionOut, 202: SessionOut, 403: null, 422: null, 503: null },
    handler: async ({ ctx, req, principal, ws, body }) => {
      const c = ctx.config;
      const waitS = body?.wait_timeout_s ?? c.SQL_SESSION_WAIT_TIMEOUT_S;
      const onWait = body?.on_wait_timeout ?? 'cancel';
      if (waitS > c.SQL_SESSION_MAX_WAIT_TIMEOUT_S) throw waitTooLong('wait_timeout_s', c.SQL_SESSION_MAX_WAIT_TIMEOUT_S, 'SQL_SESSION_MAX_WAIT_TIMEOUT_S');
      if (waitS === 0 && onWait === 'cancel') {
        throw unprocessable('wait_timeout_s 0 with on_wait_timeout=cancel could never open a session', 'unprocessable_content', {
          fields: [{ field: 'wait_timeout_s', in: 'body', message: 'above 0, or on_wait_timeout=continue' }],
        });
      }
      const { open, row } = await openSessionWaiting(ctx, principal, ws!, { agent_id: body?.agent_id ?? null, catalog: body?.catalog ?? null }, req.headers['user-agent'], {
        waitS,
        onWait,
      });
      return { status: open ? 201 : 202, body: sessions.toSessionOut(row), headers: { location: `/api/sql/sessions/${row.id}` } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/sql/sessions',
    operationId: 'list_sql_sessions',
    summary: 'SQL sessions of a workspace, newest first (your own; all of them for a query-admin)',
    tags: ['sql-sessions'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String }),
    query: Schema.Struct({ status: repeatable(Schema.String), cursor: Schema.optionalKey(Schema.String), limit: Limit }),
    responses: { 200: Schema.Struct({ items: Schema.Array(SessionOut), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean }), 422: null },
    handler: async ({ ctx, principal, ws, query }) => ({
      status: 200,
      body: await sessions.listSessions(ctx.db, principal, ws!.workspace.id, { status: asArray(query.status), cursor: query.cursor, limit: query.limit ?? 100 }),
    }),
  }),
  route({
    method: 'GET',
    path: '/api/sql/sessions/:session_id',
    operationId: 'get_sql_session',
    summary: 'One SQL session (its owner, or a query-admin)',
    tags: ['sql-sessions'],
    gate,
    access: { kind: 'resource', note: 'the session’s owner or a query-admin' },
    params: SessionParams,
    responses: { 200: SessionOut, 404: null },
    handler: async ({ ctx, principal, params }) => ({
      status: 200,
      body: sessions.toSessionOut(await sessions.findVisibleSession(ctx.db, principal, params.session_id)),
    }),
  }),
  route({
    method: 'DELETE',
    path: '/api/sql/sessions/:session_id',
    operationId: 'delete_sql_session',
    summary: 'Close a SQL session (204, also when already closed); its running statement is cancelled',
    tags: ['sql-sessions'],
    gate,
    access: { kind: 'resource', note: 'the session’s owner or a query-admin' },
    params: SessionParams,
    responses: { 204: null, 404: null },
    handler: async ({ ctx, principal, params }) => {
      const row = await sessions.findVisibleSession(ctx.db, principal, params.session_id);
      if (!['closed', 'failed'].includes(row.status)) await ctx.host.send('sqlSession', row.id, { type: 'close', byAdmin: row.user_id !== principal.user.id });
      return { status: 204 };
    },
  }),
  route({
    method: 'POST',
    path: '/api/sql/sessions/:session_id/statements',
    operationId: 'create_sql_statement',
    summary: 'Run a statement in an open session: 200 when it finished within wait_timeout_s, 202 otherwise',
    description:
      'Without wait_timeout_s the answer is 202 at once (poll GET /queries/{id}); with it, 200 with the finished ' +
      'statement and, when it produced rows, first_page (first_page_limit rows, at most 200; 0 opts out). ' +
      'A session that is not open is 409 session_not_open. The session policy applies: the query policy plus USE, ' +
      'transaction control, the safe SET list, COPY and read_parquet/read_csv/read_json of files within the session ' +
      'staging prefix, ATTACH of an attached catalog.',
    tags: ['sql-sessions'],
    gate,
    access: { kind: 'resource', note: 'the session’s owner' },
    params: SessionParams,
    body: Schema.Struct({
      sql: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1_000_000)),
      timeout_s: Schema.optionalKey(Schema.NullOr(Schema.Finite.check(Schema.isGreaterThan(0)))),
      wait_timeout_s: Schema.optionalKey(Schema.NullOr(Seconds)),
      first_page_limit: Schema.optionalKey(Schema.NullOr(Schema.Finite.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)))),
    }),
    responses: { 200: StatementOut, 202: StatementOut, 400: null, 403: null, 404: null, 409: null, 413: null, 422: null },
    // The session, its workspace and the caller's role there, read with the credential.
    along: (params) => sessions.sessionWithCaller(params.session_id ?? ''),
    handler: async ({ ctx, req, principal, params, body, along }) => {
      const c = ctx.config;
      const s = along ? sessions.visibleSessionOf({ principal, along }) : await sessions.findVisibleSession(ctx.db, principal, params.session_id);
      assertSessionOwner(principal, s);
      if (body.wait_timeout_s != null && body.wait_timeout_s > c.SQL_STATEMENT_MAX_WAIT_TIMEOUT_S) {
        throw waitTooLong('wait_timeout_s', c.SQL_STATEMENT_MAX_WAIT_TIMEOUT_S, 'SQL_STATEMENT_MAX_WAIT_TIMEOUT_S');
      }
      if (body.first_page_limit != null && body.first_page_limit > 200) throw waitTooLong('first_page_limit', 200, 'the first page holds at most 200 rows');
      const ran = await runSessionStatement(ctx, (e) => audit(ctx, req, e), principal, s, {
        sql: body.sql,
        timeout_s: body.timeout_s ?? null,
        waitS: body.wait_timeout_s ?? 0,
        firstPageLimit: body.first_page_limit ?? c.SQL_STATEMENT_FIRST_PAGE_LIMIT,
      }, along ? () => workspaceAccessOf({ principal, along }) : undefined);
      const out = queries.toQueryOut(ran.row);
      if (!ran.finished) return { status: 202, body: out };
      return { status: 200, body: ran.firstPage ? { ...out, first_page: ran.firstPage } : out };
    },
  }),
  route({
    method: 'GET',
    path: '/api/sql/sessions/:session_id/statements',
    operationId: 'list_sql_statements',
    summary: 'The statements of a session, newest first (each a query readable at /queries/{id})',
    tags: ['sql-sessions'],
    gate,
    access: { kind: 'resource', note: 'the session’s owner or a query-admin' },
    params: SessionParams,
    query: Schema.Struct({ cursor: Schema.optionalKey(Schema.String), limit: Limit }),
    responses: { 200: Schema.Struct({ items: Schema.Array(QueryOutSchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean }), 404: null },
    handler: async ({ ctx, principal, params, query }) => {
      const s = await sessions.findVisibleSession(ctx.db, principal, params.session_id);
      const page = await queries.listHistory(ctx.db, principal, {
        workspaceId: s.workspace_id,
        status: [],
        statement_type: [],
        sort: 'started_at',
        dir: 'desc',
        cursor: query.cursor,
        limit: query.limit ?? 100,
        origin: [],
        session_id: s.id,
      });
      return { status: 200, body: page };
    },
  }),
  route({
    method: 'POST',
    path: '/api/sql/sessions/:session_id/staging-files',
    operationId: 'create_sql_staging_files',
    summary: 'Presigned PUT and GET URLs for files in the session’s staging area (201)',
    description:
      'Each name becomes `<staging_uri><name>` (its `key`, the path a statement names: `COPY t FROM \'<key>\'`, ' +
      '`COPY (…) TO \'<key>\'`, `SELECT * FROM read_parquet(\'<key>\')`, read_csv, read_json). Upload with PUT to put_url, download with GET from get_url, until expires_at ' +
      '(SQL_SESSION_STAGING_URL_TTL_S). A name with /, \\ or .. is 422; a session not open is 409 session_not_open.',
    tags: ['sql-sessions'],
    gate,
    access: { kind: 'resource', note: 'the session’s owner' },
    params: SessionParams,
    body: Schema.Struct({ files: Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(100)) }),
    responses: {
      201: Schema.Struct({
        files: Schema.Array(Schema.Struct({ name: Schema.String, key: Schema.String, put_url: Schema.String, get_url: Schema.String })),
        expires_at: Schema.String,
      }),
      404: null,
      409: null,
      422: null,
    },
    handler: async ({ ctx, principal, params, body }) => {
      const s = await sessions.findVisibleSession(ctx.db, principal, params.session_id);
      if (s.user_id !== principal.user.id) throw forbidden('only the session’s owner stages files');
      body.files.forEach((name, i) => checkStagingName(name, i));
      if (s.status !== 'open') throw conflict(`the session is ${s.status}`, 'session_not_open');
      if (!s.staging_uri || !s.active_catalog) throw conflict('the session has no catalog, so no staging area', 'session_not_open');
      const ttl = ctx.config.SQL_SESSION_STAGING_URL_TTL_S;
      const expires = new Date(Date.now() + ttl * 1000).toISOString();
      const signed = await sessions.sessionStagingUrls(ctx.db, ctx.config, catalogClientOf(ctx), { ...s, staging_uri: s.staging_uri, active_catalog: s.active_catalog }, body.files.map((n) => `${s.staging_uri}${n}`), ttl, true);
      return {
        status: 201,
        body: { files: signed.map((x, i) => ({ name: body.files[i], key: x.uri, put_url: x.put_url, get_url: x.get_url })), expires_at: expires },
      };
    },
  }),
];
