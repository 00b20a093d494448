// Queries as the api shows them, and the history listing with every filter and sort of the spec.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { sql, type SqlFragment } from '../runtime/sql.ts';
import { forbidden, notFound, unprocessable } from './errors.ts';
import { hasPermission, isUuid, type AlongWithCaller, type Caller, type Principal } from './identity.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from './pagination.ts';
import { resolveWorkspace, roleIn, type WorkspaceRole } from './workspaces.ts';

const QUERY_STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'] as const;
type QueryStatus = (typeof QUERY_STATUSES)[number];
const STATEMENT_TYPES = ['select', 'insert', 'update', 'delete', 'merge', 'copy', 'create', 'alter', 'drop', 'describe', 'other'] as const;
/** Statement types that change a table. */
export const STATEMENT_WRITES: readonly string[] = ['insert', 'update', 'delete', 'merge', 'create', 'alter', 'copy'];
/** Origins that exist for internal runs and are never listed (spec: Query resource). */
const HIDDEN_ORIGINS = ['sample', 'metadata', 'maintenance'];

export interface QueryRow {
  id: string;
  workspace_id: string;
  agent_id: string | null;
  user_id: string | null;
  sql: string;
  /** the table's check constraint (migrations/control/020_agents_queries.sql) holds it to these */
  status: QueryStatus;
  statement_type: string | null;
  origin: string;
  session_id: string | null;
  schedule_id: string | null;
  row_count: string | number | null;
  duration_ms: number | null;
  error: string | null;
  error_code: string | null;
  columns: string[] | null;
  column_schema: { name: string; type: string }[] | null;
  result_path: string | null;
  started_at: Date;
  running_at: Date | null;
  finished_at: Date | null;
  user_name: string | null;
  /** The result file is kept in the row (a small result the agent sent inline), not on the agent. */
  result_held: boolean;
  /** What the engine last reported of a running query (recordProgress), null when nothing was. */
  progress: QueryProgress | null;
}

/** A result's columns with their engine type spelling (`DECIMAL(10,2)`), null before a result exists. */
export const ColumnSchema = Schema.NullOr(Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String })));
/**
 * A running query's progress as its engine last reported it (about once a second, for queries running past a
 * second whose plan the engine can measure): percent done, rows its sources read so far, and the rows they will read
 * in all (null when the engine does not know). docs/api-decisions.md "Queries".
 */
const QueryProgressSchema = Schema.Struct({
  percent: Schema.Finite.annotate({ description: 'how far the engine is, 0 to 100 (one decimal)' }),
  rows_processed: Schema.Finite.annotate({ description: 'rows its sources have read so far' }),
  rows_total: Schema.NullOr(Schema.Finite).annotate({ description: 'rows its sources will read in all; null when the engine does not know' }),
}).annotate({
  description: 'present only while the query runs and its engine reports how far it is (about once a second, for a query past its first second)',
});
export type QueryProgress = typeof QueryProgressSchema.Type;

/** A query as every route answers it (REST and the web app's generated types). */
export const QueryOutSchema = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  user_name: Schema.NullOr(Schema.String),
  sql: Schema.String,
  status: Schema.Literals(QUERY_STATUSES),
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
  /** Present only while the query runs and its engine reports progress. */
  progress: Schema.optionalKey(QueryProgressSchema),
});
export type QueryOut = typeof QueryOutSchema.Type;

const QUERY_COLS = `id, workspace_id, agent_id, user_id, sql, status, statement_type, origin, session_id, schedule_id, row_count, duration_ms,
  error, error_code, columns, column_schema, result_path, started_at, running_at, finished_at,
  (select u.name from users u where u.id = queries.user_id) as user_name, result_inline is not null as result_held, progress`;

/** Duration: the agent-reported execution time when present, else finished_at minus started_at; whole ms. */
/** The actor kind running a queries row: a SQL session's statement, or a query. */
export const runKind = (r: Pick<QueryRow, 'session_id'>): 'statement' | 'query' => (r.session_id ? 'statement' : 'query');

function durationOf(r: QueryRow): number | null {
  if (r.duration_ms !== null && r.duration_ms !== undefined) return Math.round(Number(r.duration_ms));
  if (r.finished_at) return r.finished_at.getTime() - r.started_at.getTime();
  return null;
}

export const toQueryOut = (r: QueryRow): QueryOut => ({
  id: r.id,
  workspace_id: r.workspace_id,
  agent_id: r.agent_id,
  user_id: r.user_id,
  user_name: r.user_name ?? null,
  sql: r.sql,
  status: r.status,
  statement_type: r.statement_type,
  origin: r.origin,
  session_id: r.session_id,
  schedule_id: r.schedule_id,
  row_count: r.row_count === null ? null : Number(r.row_count),
  duration_ms: durationOf(r),
  error: r.error,
  error_code: r.error_code,
  columns: r.columns,
  column_schema: r.column_schema,
  started_at: r.started_at.toISOString(),
  running_at: r.running_at?.toISOString() ?? null,
  finished_at: r.finished_at?.toISOString() ?? null,
  ...(r.status === 'running' && r.progress ? { progress: r.progress } : {}),
});

/** A result file kept in the queries row, read with the row (see findVisibleQuery's `heldResult`). */
export interface HeldResult {
  bytes: Uint8Array | null;
  /** Past RESULT_RETENTION_HOURS, whether or not the pruner has dropped the bytes yet. */
  expired: boolean;
}

/** Whether a held result is past the retention (`$n`: the bind parameter holding RESULT_RETENTION_HOURS). */
const heldExpired = (param: string) => `coalesce(finished_at < now() - make_interval(secs => ${param} * 3600), false)`;

/** A query's held result, read on its own (callers that did not read it with the row). */
export async function readHeldResult(q: Queryable, id: string, retentionHours: number): Promise<HeldResult | undefined> {
  const [held] = await q.query<HeldResult>(`select result_inline as bytes, ${heldExpired('$2')} as expired from queries where id = $1`, [id, retentionHours]);
  return held;
}

type SeenQuery = QueryRow & { member_role: WorkspaceRole | null; session_owner: string | null; held_bytes?: Uint8Array | null; held_expired?: boolean };
type HeldOpts = { heldResult: { retentionHours: number } };

/**
 * The statement that reads query `idParam` with what deciding its visibility needs: the role of user `userExpr` in its
 * workspace and its session's owner (every page of /rows and every wait asks), and with `heldParam` (the retention
 * hours) an inline result's bytes and whether they expired. The bytes are selected only when a page can be read from
 * them (done, with a result file): other callers, and other states, never fetch the bytea.
 */
const visibleQuerySelect = (idParam: string, userExpr: string, heldParam?: string) =>
  `select ${QUERY_COLS}${heldParam ? `, case when status = 'done' and result_path is not null then result_inline end as held_bytes, ${heldExpired(heldParam)} as held_expired` : ''},
          (select m.role from workspace_members m where m.workspace_id = queries.workspace_id and m.user_id = ${userExpr}) as member_role,
          (select s.user_id from sql_sessions s where s.id = queries.session_id) as session_owner
     from queries where id = ${idParam}`;

/** The caller's view of a query as read (undefined: none), or 404. */
function visibleQuery(p: Principal, row: SeenQuery | undefined, opts?: HeldOpts): QueryRow & { held?: HeldResult } {
  // Any role may read (reader is the lowest).
  if (!row || !roleIn(p, row.member_role)) throw notFound('query');
  if (row.session_id !== null && row.session_owner !== p.user.id && !hasPermission(p, 'query-admin')) throw notFound('query');
  const { member_role: _role, session_owner: _owner, held_bytes, held_expired, ...query } = row;
  return opts ? { ...query, held: { bytes: held_bytes ?? null, expired: held_expired === true } } : query;
}

/**
 * A query the caller may see: a member of its workspace (404 otherwise, like the workspace itself). A SQL session's
 * statement is as private as its session (findVisibleSession): its owner's and a query-admin's, 404 for other members.
 */
export async function findVisibleQuery(q: Queryable, p: Principal, id: string): Promise<QueryRow>;
/** With `heldResult` (the rows route), an inline result's bytes and whether they expired come in the same statement. */
export async function findVisibleQuery(q: Queryable, p: Principal, id: string, opts: HeldOpts): Promise<QueryRow & { held: HeldResult }>;
export async function findVisibleQuery(q: Queryable, p: Principal, id: string, opts?: HeldOpts): Promise<QueryRow & { held?: HeldResult }> {
  const [row] = isUuid(id)
    ? await q.query<SeenQuery>(visibleQuerySelect('$1', '$2', opts ? '$3' : undefined), opts ? [id, p.user.id, opts.heldResult.retentionHours] : [id, p.user.id])
    : [];
  return visibleQuery(p, row, opts);
}

// The names visibleQuerySelect answers with, in order: read beside the caller, they are renamed q_<name> (the
// caller's user row has an id and a name of its own).
const QUERY_COL_NAMES = QUERY_COLS.split(',').map((c) => c.trim().split(/\s+as\s+/i).pop()!.trim());
const SEEN_NAMES = {
  plain: [...QUERY_COL_NAMES, 'member_role', 'session_owner'],
  held: [...QUERY_COL_NAMES, 'held_bytes', 'held_expired', 'member_role', 'session_owner'],
};
const seenNames = (opts?: HeldOpts) => (opts ? SEEN_NAMES.held : SEEN_NAMES.plain);

/** findVisibleQuery's read, made with the caller's credential (identity's AlongWithCaller); undefined for an id that is no UUID. */
export function visibleQueryWithCaller(id: string, opts?: HeldOpts): AlongWithCaller | undefined {
  if (!isUuid(id)) return undefined;
  const names = seenNames(opts).map((n) => `q_${n}`);
  return {
    select: 'vq.*',
    join: `left join lateral (${visibleQuerySelect('$2::uuid', 'f.id', opts ? '$3' : undefined)}) as vq(${names.join(', ')}) on true`,
    params: opts ? [id, opts.heldResult.retentionHours] : [id],
  };
}

/** The query visibleQueryWithCaller read beside the caller's credential: the same answers as findVisibleQuery. */
export function visibleQueryOf(p: Principal, along: Caller['along']): QueryRow;
export function visibleQueryOf(p: Principal, along: Caller['along'], opts: HeldOpts): QueryRow & { held: HeldResult };
export function visibleQueryOf(p: Principal, along: Caller['along'], opts?: HeldOpts): QueryRow & { held?: HeldResult } {
  const a = along;
  let row: SeenQuery | undefined;
  if (a.q_id !== null && a.q_id !== undefined) {
    const r: Record<string, unknown> = {};
    for (const n of seenNames(opts)) r[n] = a[`q_${n}`];
    row = r as unknown as SeenQuery;
  }
  return visibleQuery(p, row, opts);
}

/**
 * Cancelling a query: the submitter, a workspace writer, or a query-admin. A session's statement: only those who may
 * see it (findVisibleQuery already let through only its session's owner or a query-admin), never another writer.
 */
export async function assertMayCancel(q: Queryable, p: Principal, row: QueryRow) {
  if (row.user_id === p.user.id || hasPermission(p, 'query-admin')) return;
  if (row.session_id !== null) throw notFound('query');
  await resolveWorkspace(q, p, row.workspace_id, 'writer');
}

export interface HistoryFilters {
  workspaceId: string | null;
  q?: string;
  query_id?: string;
  since?: string;
  until?: string;
  status: string[];
  statement_type: string[];
  slower_than_ms?: number;
  sort: 'started_at' | 'duration';
  dir: 'asc' | 'desc';
  cursor?: string;
  limit: number;
  origin: string[];
  session_id?: string;
  agent_id?: string;
  user_id?: string;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

const UUID_TEXT = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';
/**
 * The ids whose text begins with `prefix` (lower case), as the least and the greatest of them, or null when no id's
 * text can begin so. A uuid's text sorts as its bytes do (fixed width, hex digits ascending, hyphens in fixed places),
 * so they are exactly the ids in that range.
 */
function idRange(prefix: string): [string, string] | null {
  if (prefix.length > UUID_TEXT.length) return null;
  for (let i = 0; i < prefix.length; i++) if (UUID_TEXT[i] === '-' ? prefix[i] !== '-' : !/[0-9a-f]/.test(prefix[i])) return null;
  const pad = (digit: string) => prefix + UUID_TEXT.slice(prefix.length).replaceAll('x', digit);
  return [pad('0'), pad('f')];
}
const DURATION_SQL = `coalesce(duration_ms, extract(epoch from (finished_at - started_at)) * 1000)`;

/** History with every filter applied to the whole set before keyset paging. */
export async function listHistory(q: Queryable, p: Principal, f: HistoryFilters): Promise<Page<QueryOut>> {
  for (const s of f.status) if (!(QUERY_STATUSES as readonly string[]).includes(s)) throw unprocessable(`unknown status ${s}`, 'unprocessable_content', { fields: [{ field: 'status', message: `one of ${QUERY_STATUSES.join(', ')}` }] });
  for (const s of f.statement_type) if (!(STATEMENT_TYPES as readonly string[]).includes(s)) throw unprocessable(`unknown statement_type ${s}`, 'unprocessable_content', { fields: [{ field: 'statement_type', message: `one of ${STATEMENT_TYPES.join(', ')}` }] });
  if (f.user_id && f.user_id !== p.user.id && !hasPermission(p, 'query-admin')) throw forbidden('filtering by another user needs the query-admin permission');
  if (f.workspaceId === null && !hasPermission(p, 'query-admin')) throw forbidden('all_workspaces needs the query-admin permission');

  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, v: unknown) => {
    params.push(v);
    where.push(sql.replaceAll('$?', `$${params.length}`));
  };
  if (f.workspaceId) add('workspace_id = $?', f.workspaceId);
  // A session's statements are listed to its owner and query-admins only, as the session itself is.
  if (!hasPermission(p, 'query-admin')) add('(session_id is null or exists (select 1 from sql_sessions s where s.id = queries.session_id and s.user_id = $?))', p.user.id);
  where.push(`origin <> all(array['${HIDDEN_ORIGINS.join("','")}'])`);
  if (f.q) add(`sql ilike '%' || $? || '%' escape '\\'`, likeEscape(f.q));
  if (f.query_id) {
    // The ids whose text starts with the given characters are one range of ids (read through the primary key); the
    // same rows as `id::text like '…%'`, which read the workspace's whole history to find a pasted id.
    const range = idRange(f.query_id.toLowerCase());
    if (range) {
      add('id >= $?::uuid', range[0]);
      add('id <= $?::uuid', range[1]);
    } else where.push('false');
  }
  if (f.since) add('started_at >= $?::timestamptz', f.since);
  if (f.until) add('started_at < $?::timestamptz', f.until);
  if (f.status.length) add('status = any($?::text[])', f.status);
  if (f.statement_type.length) add('statement_type = any($?::text[])', f.statement_type);
  if (f.slower_than_ms !== undefined) add(`finished_at is not null and ${DURATION_SQL} > $?`, f.slower_than_ms);
  if (f.origin.length) add('origin = any($?::text[])', f.origin);
  if (f.session_id) add('session_id = $?::uuid', isUuid(f.session_id) ? f.session_id : '00000000-0000-0000-0000-000000000000');
  if (f.agent_id) add('agent_id = $?::uuid', isUuid(f.agent_id) ? f.agent_id : '00000000-0000-0000-0000-000000000000');
  if (f.user_id) add('user_id = $?::uuid', isUuid(f.user_id) ? f.user_id : '00000000-0000-0000-0000-000000000000');

  const sortTag = `${f.sort}:${f.dir}`;
  const cmp = f.dir === 'desc' ? '<' : '>';
  // Under duration, unfinished runs (null key) sort last in both directions.
  const keyExpr = f.sort === 'started_at' ? 'started_at' : `case when finished_at is null then null else ${DURATION_SQL} end`;
  // The rows of a page: one part, or under duration two (the finished runs, then the unfinished), each read in the
  // order of an index (queries_ws_duration, forward for desc and backward for asc) from the cursor on, and the page
  // their first rows in the API's order. As one statement, an ascending page or one past a cursor sorted the
  // workspace's whole history (an OR of the two parts, or nulls last both ways, is no index's order).
  let parts: string[][] = [[]];
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sortTag);
    const exists = isUuid(c.id) ? await q.query(`select 1 from queries where id = $1`, [c.id]) : [];
    if (!exists.length) throw staleCursor();
    // past an unfinished run only the id is a parameter (an unused one has no type: PostgreSQL refused the statement)
    params.push(c.id);
    const id = `$${params.length}::uuid`;
    if (c.k !== null) params.push(c.k);
    const k = `$${params.length}`;
    if (f.sort === 'started_at') parts = [[`(started_at, id) ${cmp} (${k}::timestamptz, ${id})`]];
    else if (c.k === null) parts = [[`(${keyExpr}) is null and id ${cmp} ${id}`]];
    else parts = [[`((${keyExpr}), id) ${cmp} (${k}::double precision, ${id})`], [`(${keyExpr}) is null`]];
  } else if (f.sort === 'duration' && f.dir === 'asc') {
    parts = [[`(${keyExpr}) is not null`], [`(${keyExpr}) is null`]];
  }
  params.push(f.limit + 1);
  const limit = `$${params.length}`;
  const order =
    f.sort === 'started_at' ? `started_at ${f.dir}, id ${f.dir}` : `(${keyExpr}) ${f.dir} nulls last, id ${f.dir}`;
  const select = (extra: string[], partOrder: string) =>
    `select ${QUERY_COLS}, (${f.sort === 'started_at' ? 'started_at::text' : `(${keyExpr})::text`}) as sort_key, (${keyExpr}) as sort_value
       from queries where ${[...where, ...extra].join(' and ')} order by ${partOrder} limit ${limit}`;
  // A part's keys are all null or none (but for a first descending page, in the index's order already), so it may
  // place nulls first under asc, as the index read backward has them.
  const partOrder = f.sort === 'started_at' || f.dir === 'desc' ? order : `(${keyExpr}) asc nulls first, id asc`;
  const rows = await q.query<QueryRow & { sort_key: string | null }>(
    parts.length === 1
      ? select(parts[0], partOrder)
      : `select * from (${parts.map((x) => `(${select(x, partOrder)})`).join(' union all ')}) page
          order by sort_value ${f.dir} nulls last, id ${f.dir} limit ${limit}`,
    params,
  );
  return pageOf(rows, f.limit, sortTag, (r) => ({ k: r.sort_key, id: r.id }), toQueryOut);
}

/** The execution profile stored for a query (as the agent sent it, checked by the frame's schema), or null. */
export async function profileOf(db: Queryable, queryId: string): Promise<unknown> {
  const [p] = await db.query<{ profile: unknown }>(`select profile from queries where id = $1`, [queryId]);
  return p?.profile ?? null;
}

/** A query's row as stored, with no visibility check: for the code that just submitted it or acts for the system. */
export async function readQuery(q: Queryable, id: string): Promise<QueryRow | undefined> {
  const [row] = await q.query<QueryRow>(`select ${QUERY_COLS} from queries where id = $1`, [id]);
  return row;
}

/** What a queued statement's dispatch is built from (its catalogs and write scope are derived at send time), and
 *  the `$n` values it was bound with (and their declared types). */
export async function dispatchFactsOf(q: Queryable, id: string) {
  const [row] = await q.query<{
    workspace_id: string;
    catalog: string | null;
    tables: unknown[];
    statement_type: string | null;
    write_catalogs: string[] | null;
    params: (string | null)[] | null;
    param_types: (string | null)[] | null;
  }>(
    `select workspace_id, catalog, tables, statement_type, write_catalogs, params, param_types from queries where id = $1`,
    [id],
  );
  return row;
}

/** Queued and running queries per agent, for the agents given (an agent with none is absent). */
export async function liveLoadOf(q: Queryable, agentIds: readonly string[]): Promise<Map<string, number>> {
  const load = await q.query<{ agent_id: string; n: number }>(
    `select agent_id, count(*)::int as n from queries where agent_id = any($1::uuid[]) and status in ('queued', 'running') group by agent_id`,
    [agentIds],
  );
  return new Map(load.map((r) => [r.agent_id, r.n]));
}

/** The agent a query was sent to and its SQL session, if any (the agent's frames name only the query). */
export async function placementOf(q: Queryable, id: string): Promise<{ agent_id: string | null; session_id: string | null } | undefined> {
  const [row] = await q.query<{ agent_id: string | null; session_id: string | null }>(`select agent_id, session_id from queries where id = $1`, [id]);
  return row;
}

/**
 * Keeps a running query's latest progress, reported by `agentId`: only while it runs on that agent (a report from
 * another agent, or one that arrives after the outcome, changes nothing) and only when it differs from the kept one.
 * The caller holds it to one write a second per query. True when the row changed.
 */
export async function recordProgress(q: Queryable, id: string, agentId: string, progress: QueryProgress): Promise<boolean> {
  const rows = await q.query(
    `update queries set progress = $3::jsonb
      where id = $1 and agent_id = $2 and status = 'running' and progress is distinct from $3::jsonb returning 1`,
    [id, agentId, JSON.stringify({ percent: progress.percent, rows_processed: progress.rows_processed, rows_total: progress.rows_total })],
  );
  return rows.length > 0;
}

/** A new query's row: a REST or scheduled query, a SQL session's statement, or the system's own work. */
export interface NewQuery {
  id: string;
  workspaceId: string;
  agentId: string | null;
  userId: string | null;
  sql: string;
  statementType: string | null;
  origin: string;
  catalog: string | null;
  timeoutS: number | null;
  tables: unknown[];
  writeCatalogs: readonly string[];
  startedAt: number;
  sessionId?: string | null;
  scheduleId?: string | null;
  computePool?: string | null;
  /** a session statement's bound `$n` values (text form), as JSON */
  params?: string | null;
  /** the types declared for them (ParamType or null each), as JSON; null when none was declared */
  paramTypes?: string | null;
}

/** The INSERT of a new query's row, queued (its actor's initial projection): the actor host writes it in the spawn's statement. */
export const newQueryRow = (r: NewQuery): SqlFragment =>
  sql`insert into queries (id, workspace_id, agent_id, user_id, sql, status, statement_type, origin, session_id, catalog, timeout_s, tables, write_catalogs, started_at, schedule_id, compute_pool, params, param_types)
    values (${r.id}, ${r.workspaceId}, ${r.agentId}, ${r.userId}, ${r.sql}, 'queued', ${r.statementType}, ${r.origin}, ${r.sessionId ?? null}, ${r.catalog},
      ${r.timeoutS}, ${JSON.stringify(r.tables)}::jsonb, ${r.writeCatalogs}::text[], ${new Date(r.startedAt).toISOString()}::timestamptz, ${r.scheduleId ?? null},
      ${r.computePool ?? null}, ${r.params ?? null}::jsonb, ${r.paramTypes ?? null}::jsonb)`;

/** The row newQueryRow inserts, as a read of it returns it (`userName`: the submitter's, which the read joins in). */
export const queuedRow = (r: NewQuery, userName: string | null): QueryRow => ({
  id: r.id,
  workspace_id: r.workspaceId,
  agent_id: r.agentId,
  user_id: r.userId,
  sql: r.sql,
  status: 'queued',
  statement_type: r.statementType,
  origin: r.origin,
  session_id: r.sessionId ?? null,
  schedule_id: r.scheduleId ?? null,
  row_count: null,
  duration_ms: null,
  error: null,
  error_code: null,
  columns: null,
  column_schema: null,
  result_path: null,
  started_at: new Date(r.startedAt),
  running_at: null,
  finished_at: null,
  user_name: r.userId === null ? null : userName,
  result_held: false,
  progress: null,
});

/** Drops the small results kept inline in queries rows once they are older than the results' retention, as the
 *  agents delete their files. */
export async function pruneInlineResults(q: Queryable, retentionHours: number): Promise<number> {
  const rows = await q.query(
    `update queries set result_inline = null
      where result_inline is not null and finished_at < now() - make_interval(secs => $1 * 3600) returning 1`,
    [retentionHours],
  );
  return rows.length;
}

/** What a finished run's bookkeeping (table provenance, lineage, dropped tables) reads from its row. */
export interface FinishedQuery {
  sql: string;
  finished_at: Date | null;
  statement_type: string | null;
  tables: Array<{ catalog: string | null; schema: string | null; name: string }>;
  catalog: string | null;
  user_id: string | null;
  workspace_id: string;
}

/** A finished run's facts; `profile`, when given, is stored in the same statement (kept when null). */
export async function finishedQuery(q: Queryable, id: string, profile?: unknown): Promise<FinishedQuery | undefined> {
  const cols = 'statement_type, tables, catalog, user_id, workspace_id, sql, finished_at';
  const [row] =
    profile === null || profile === undefined
      ? await q.query<FinishedQuery>(`select ${cols} from queries where id = $1`, [id])
      : await q.query<FinishedQuery>(`update queries set profile = coalesce($2::jsonb, profile) where id = $1 returning ${cols}`, [id, JSON.stringify(profile)]);
  return row;
}
