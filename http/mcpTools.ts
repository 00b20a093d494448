// The tools of /mcp (docs/api-decisions.md "MCP and the assistant"). Each is a thin call of the REST API itself, made
// in-process with the caller's own bearer token: the routes' authentication, workspace roles, agent tiers, policy
// and grants apply unchanged, so a tool reaches exactly what the token reaches through REST and nothing more.
import { Schema } from 'effect';
import type { Principal } from '../domain/identity.ts';
import { readDocPage, searchDocs } from '../domain/docsIndex.ts';
import { checkPolicyOffThread } from '../usecases/policyPool.ts';
import { encodeRowsCursor, readRowsCursor, type RowsCursor } from '../usecases/resultPages.ts';
import type { AppContext } from '../usecases/context.ts';
import type { QueryOut } from '../domain/queries.ts';
import type { RowsPage } from './routes/queries.ts';

export interface ApiAnswer {
  status: number;
  /** The parsed JSON body (the raw text when it is not JSON; undefined when empty). */
  body: unknown;
}

/** The REST API called in-process with `authorization` (the caller's own bearer token): tools reach exactly what it
 *  may, through the same routes, checks and envelope. */
export function injectedApi(
  server: { inject: (o: { method: 'GET' | 'POST' | 'DELETE'; url: string; headers: Record<string, string>; payload?: string }) => Promise<{ statusCode: number; body: string }> },
  authorization: string,
) {
  return async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<ApiAnswer> => {
    const r = await server.inject({
      method,
      url: path,
      headers: { authorization, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    let parsed: unknown = undefined;
    try {
      parsed = r.body ? JSON.parse(r.body) : undefined;
    } catch {
      parsed = r.body;
    }
    return { status: r.statusCode, body: parsed };
  };
}

interface ToolCall {
  ctx: AppContext;
  principal: Principal;
  /** A REST call as the caller: `/api/...` with their token. */
  api(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<ApiAnswer>;
  /** rows and bytes of rows per result; MCP_RESULT_ROW_CAP and MCP_RESULT_BYTE_CAP when absent (the assistant has its own) */
  caps?: { rows: number; bytes: number };
  /** whether run_sql may write; MCP_ALLOW_WRITES (re-read per call) when absent. The assistant sets it once the
   *  user approved the call. */
  allowWrites?: boolean;
}

/** A failure the calling model should read (a tool error, not a protocol error). */
export class ToolError extends Error {}

export interface Tool {
  name: string;
  description: string;
  input: Schema.Top;
  /** documentation tools: listed only while ASSISTANT_DOCS_ENABLED and the docs were indexed */
  docs?: boolean;
  /** whether these (decoded) arguments would write: the assistant asks the user before running such a call */
  writes?(ctx: AppContext, args: unknown): Promise<boolean>;
  /** `args` decoded by `input` (method signatures: each tool, made by `tool`, takes its input's own type) */
  run(call: ToolCall, args: unknown): Promise<unknown>;
}

/** A tool whose `run` and `writes` take the type its `input` schema decodes to. */
function tool<S extends Schema.Top>(t: {
  name: string;
  description: string;
  input: S;
  docs?: boolean;
  writes?(ctx: AppContext, args: S['Type']): Promise<boolean>;
  run(call: ToolCall, args: S['Type']): Promise<unknown>;
}): Tool {
  return t;
}

const enc = encodeURIComponent;
const Text = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1000));

/** The answer's body, or a ToolError carrying the API's own error code and message. `T`: the route's answer. */
function ok<T = unknown>(a: ApiAnswer): T {
  if (a.status >= 400) {
    const envelope = a.body as { error?: unknown; message?: unknown } | null | undefined;
    throw new ToolError(`${envelope?.error ?? a.status}: ${envelope?.message ?? 'request refused'}`);
  }
  return a.body as T;
}

const capsOf = (call: ToolCall) => call.caps ?? { rows: call.ctx.config.MCP_RESULT_ROW_CAP, bytes: call.ctx.config.MCP_RESULT_BYTE_CAP };

/** At most the row cap, then fewer rows until the JSON fits the byte cap. */
function capped(call: ToolCall, rows: readonly unknown[]): { rows: unknown[]; truncated: boolean } {
  const caps = capsOf(call);
  let out = rows.slice(0, caps.rows);
  let truncated = rows.length > out.length;
  while (out.length > 0 && Buffer.byteLength(JSON.stringify(out)) > caps.bytes) {
    out = out.slice(0, Math.max(0, Math.floor(out.length * 0.8)));
    truncated = true;
  }
  return { rows: out, truncated };
}

/** A page of a finished query's rows within the caps; next_cursor continues where the page stopped. */
async function resultPage(call: ToolCall, queryId: string, offset: number) {
  const q = ok<QueryOut>(await call.api('GET', `/api/queries/${enc(queryId)}`));
  if (q.status !== 'done') return { query_id: queryId, status: q.status, error: q.error ?? null, columns: q.columns ?? [], rows: [], truncated: false, next_cursor: null };
  const cap = capsOf(call).rows;
  const cursor = offset > 0 ? `&cursor=${enc(encodeRowsCursor(queryId, offset))}` : '';
  const page = ok<typeof RowsPage.Type>(await call.api('GET', `/api/queries/${enc(queryId)}/rows?limit=${Math.max(1, Math.min(1000, cap))}${cursor}`));
  const { rows, truncated } = capped(call, page.rows);
  const next = offset + rows.length;
  const more = next < Number(page.total);
  return {
    query_id: queryId,
    status: q.status,
    columns: page.columns,
    rows,
    total_rows: page.total,
    truncated: truncated || more,
    next_cursor: more ? encodeRowsCursor(queryId, next) : null,
  };
}

/** Whether the statement policy reads `sql` as a write (one it refuses is not: the API refuses it anyway). */
async function sqlWrites(ctx: AppContext, sql: string): Promise<boolean> {
  const policy = await checkPolicyOffThread(sql, { mode: 'query', maxStatements: ctx.config.SQL_MAX_STATEMENTS }, ctx.config.SQL_POLICY_TIME_BUDGET_MS);
  return policy.ok && policy.isWrite;
}

/** Runs SQL as the caller: writes only while MCP_ALLOW_WRITES (re-read per call); cancelled past MCP_QUERY_TIMEOUT_S. */
async function runSql(call: ToolCall, args: { workspace: string; sql: string; agent_id?: string; catalog?: string }) {
  const { ctx } = call;
  if (!(call.allowWrites ?? ctx.config.MCP_ALLOW_WRITES) && (await sqlWrites(ctx, args.sql))) {
    throw new ToolError(
      call.allowWrites === false
        ? 'this statement writes: it runs only once the user approves it'
        : 'writes are disabled for MCP clients (MCP_ALLOW_WRITES is false): only reads may run',
    );
  }
  let agentId = args.agent_id;
  if (!agentId) {
    const agents = ok<Array<{ id: string; status: string }>>(await call.api('GET', '/api/agents'));
    agentId = agents.find((a) => a.status === 'healthy')?.id;
    if (!agentId) throw new ToolError('no healthy agent this token may use: pass agent_id');
  }
  const submitted = ok<QueryOut>(
    await call.api('POST', `/api/workspaces/${enc(args.workspace)}/queries`, { sql: args.sql, agent_id: agentId, ...(args.catalog ? { catalog: args.catalog } : {}) }),
  );
  const deadline = Date.now() + ctx.config.MCP_QUERY_TIMEOUT_S * 1000;
  let q = submitted;
  while (['queued', 'running'].includes(q.status) && Date.now() < deadline) {
    const wait = Math.max(1, Math.min(ctx.config.SQL_STATEMENT_MAX_WAIT_TIMEOUT_S, Math.ceil((deadline - Date.now()) / 1000)));
    q = ok<QueryOut>(await call.api('GET', `/api/queries/${enc(submitted.id)}?wait_timeout_s=${wait}`));
  }
  if (['queued', 'running'].includes(q.status)) {
    await call.api('DELETE', `/api/queries/${enc(submitted.id)}`);
    throw new ToolError(`the query did not finish within ${ctx.config.MCP_QUERY_TIMEOUT_S} s (MCP_QUERY_TIMEOUT_S) and was cancelled`);
  }
  if (q.status !== 'done') throw new ToolError(`the query ${q.status}: ${q.error_code ?? ''} ${q.error ?? ''}`.trim());
  return resultPage(call, submitted.id, 0);
}

/** A next_cursor of run_sql or get_query_result: the REST rows cursor itself. */
function decodeCursor(cursor: string): RowsCursor {
  const c = readRowsCursor(cursor);
  if (!c) throw new ToolError('next_cursor is not one this server issued');
  return c;
}

const Compile = {
  workspace: Text,
  model: Text,
  metrics: Schema.Array(Text).check(Schema.isMinLength(1), Schema.isMaxLength(20)),
  dimensions: Schema.optionalKey(Schema.Array(Text).check(Schema.isMaxLength(20))),
  grain: Schema.optionalKey(Text),
  time_range: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  filters: Schema.optionalKey(Schema.Array(Schema.Record(Schema.String, Schema.Unknown))),
  limit: Schema.optionalKey(Schema.Finite.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100_000 }))),
};

const compile = (call: ToolCall, a: { workspace: string; [field: string]: unknown }) => {
  const { workspace, ...request } = a;
  return call.api('POST', `/api/workspaces/${enc(workspace)}/semantic/compile`, request).then((answer) => ok<{ sql: string }>(answer));
};

export const TOOLS: Tool[] = [
  tool({
    name: 'list_workspaces',
    description: 'The workspaces this token is a member of, with its role in each.',
    input: Schema.Struct({}),
    run: async (call) => ok(await call.api('GET', '/api/workspaces')),
  }),
  tool({
    name: 'list_catalogs',
    description: 'The Iceberg catalogs attached to a workspace (the default one marked).',
    input: Schema.Struct({ workspace: Text }),
    run: async (call, a) => ok(await call.api('GET', `/api/workspaces/${enc(a.workspace)}/catalogs`)),
  }),
  tool({
    name: 'list_schemas',
    description: 'The schemas (namespaces) of a catalog.',
    input: Schema.Struct({ workspace: Text, catalog: Text }),
    run: async (call, a) => ok(await call.api('GET', `/api/workspaces/${enc(a.workspace)}/catalogs/${enc(a.catalog)}/schemas`)),
  }),
  tool({
    name: 'list_tables',
    description: 'The tables of a schema.',
    input: Schema.Struct({ workspace: Text, catalog: Text, schema: Text }),
    run: async (call, a) => ok(await call.api('GET', `/api/workspaces/${enc(a.workspace)}/catalogs/${enc(a.catalog)}/schemas/${enc(a.schema)}/tables`)),
  }),
  tool({
    name: 'describe_table',
    description: 'A table: its columns with types, partitioning, statistics and last write.',
    input: Schema.Struct({ workspace: Text, catalog: Text, schema: Text, table: Text }),
    run: async (call, a) =>
      ok(await call.api('GET', `/api/workspaces/${enc(a.workspace)}/catalogs/${enc(a.catalog)}/schemas/${enc(a.schema)}/tables/${enc(a.table)}`)),
  }),
  tool({
    name: 'run_sql',
    description:
      'Runs DuckDB SQL on an agent and returns the first rows (capped by MCP_RESULT_ROW_CAP and MCP_RESULT_BYTE_CAP; ' +
      'page on with get_query_result and next_cursor). Writes run only when the server allows them (MCP_ALLOW_WRITES). ' +
      'agent_id defaults to a healthy agent the token may use; catalog to the workspace default.',
    input: Schema.Struct({
      workspace: Text,
      sql: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1_000_000)),
      agent_id: Schema.optionalKey(Schema.String.check(Schema.isUUID())),
      catalog: Schema.optionalKey(Text),
    }),
    writes: (ctx, a) => sqlWrites(ctx, a.sql),
    run: runSql,
  }),
  tool({
    name: 'get_query_result',
    description: 'More rows of a query this token ran (run_sql): pass its next_cursor, or the query_id for the first page.',
    input: Schema.Struct({ query_id: Schema.optionalKey(Schema.String.check(Schema.isUUID())), cursor: Schema.optionalKey(Text) }),
    run: async (call, a) => {
      const c = a.cursor ? decodeCursor(a.cursor) : a.query_id ? { q: a.query_id as string, o: 0 } : null;
      if (!c) throw new ToolError('pass query_id or cursor');
      const q = ok<QueryOut>(await call.api('GET', `/api/queries/${enc(c.q)}`));
      // Only the token's own queries, even where the workspace lets its members read each other's.
      if (q.user_id !== call.principal.user.id) throw new ToolError('not_found: no query of this token has that id');
      return resultPage(call, c.q, c.o);
    },
  }),
  tool({
    name: 'search_semantic',
    description: 'Searches a workspace’s semantic models, metrics, dimensions and datasets by name, synonym and description.',
    input: Schema.Struct({ workspace: Text, q: Text }),
    run: async (call, a) => ok(await call.api('GET', `/api/workspaces/${enc(a.workspace)}/semantic/search?q=${enc(a.q)}`)),
  }),
  tool({
    name: 'get_semantic_model',
    description: 'A semantic model: datasets, relationships, dimensions, metrics and its validation state.',
    input: Schema.Struct({ workspace: Text, model: Text }),
    run: async (call, a) => ok(await call.api('GET', `/api/workspaces/${enc(a.workspace)}/semantic/models/${enc(a.model)}`)),
  }),
  tool({
    name: 'query_metric',
    description: 'Computes metrics by dimensions: compiles the request to SQL (deterministically) and runs it like run_sql.',
    input: Schema.Struct({ ...Compile, agent_id: Schema.optionalKey(Schema.String.check(Schema.isUUID())) }),
    run: async (call, a) => {
      const compiled = await compile(call, { ...a, agent_id: undefined });
      const result = await runSql(call, { workspace: a.workspace, sql: compiled.sql, ...(a.agent_id ? { agent_id: a.agent_id } : {}) });
      return { sql: compiled.sql, ...result };
    },
  }),
  tool({
    name: 'explain_metric',
    description: 'The SQL a metric request compiles to, and the definitions of the metrics it uses, without running it.',
    input: Schema.Struct(Compile),
    run: async (call, a) => {
      const compiled = await compile(call, a);
      const model = ok<{ metrics: Array<{ name: string }> }>(await call.api('GET', `/api/workspaces/${enc(a.workspace)}/semantic/models/${enc(a.model)}`));
      return { sql: compiled.sql, metrics: model.metrics.filter((m) => a.metrics.includes(m.name)) };
    },
  }),
  tool({
    name: 'get_lineage',
    description: 'The lineage graph around a table: what feeds it (upstream) and what it feeds (downstream), 1-5 hops.',
    input: Schema.Struct({
      workspace: Text,
      catalog: Text,
      schema: Text,
      table: Text,
      direction: Schema.optionalKey(Schema.Literals(['upstream', 'downstream', 'both'])),
      depth: Schema.optionalKey(Schema.Finite.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 5 }))),
    }),
    run: async (call, a) =>
      ok(
        await call.api(
          'GET',
          `/api/workspaces/${enc(a.workspace)}/catalogs/${enc(a.catalog)}/schemas/${enc(a.schema)}/tables/${enc(a.table)}/lineage?direction=${a.direction ?? 'both'}&depth=${a.depth ?? 2}`,
        ),
      ),
  }),
  tool({
    name: 'search_docs',
    description: 'Full-text search of the Eider documentation; returns page paths with matching snippets.',
    // The spec's "Assistant doc search count: 1 to 10 (clamped)": a count outside is brought within, not refused.
    input: Schema.Struct({ query: Text, limit: Schema.optionalKey(Schema.Finite.check(Schema.isInt()).annotate({ description: 'results wanted; clamped to 1..10' })) }),
    docs: true,
    run: async (call, a) => ({ results: await searchDocs(call.ctx.db, a.query, Math.min(10, Math.max(1, a.limit ?? call.ctx.config.ASSISTANT_DOCS_SEARCH_LIMIT))) }),
  }),
  tool({
    name: 'read_doc_page',
    description: 'Reads a documentation page by path (from search_docs), ASSISTANT_DOCS_MAX_PAGE_CHARS at a time from offset.',
    input: Schema.Struct({ path: Text, offset: Schema.optionalKey(Schema.Finite.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))) }),
    docs: true,
    run: async (call, a) => readDocPage(call.ctx.db, a.path, a.offset ?? 0, call.ctx.config.ASSISTANT_DOCS_MAX_PAGE_CHARS),
  }),
];
