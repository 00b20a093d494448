// SQL sessions as the API shows them (docs/api-decisions.md "SQL sessions"): the sql_sessions row written by each session
// actor, who may see and close one, and the page of a workspace's sessions.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { hasPermission, isUuid, type AlongWithCaller, type Caller, type Principal } from './identity.ts';
import { CALLER_MEMBERSHIP_JOIN, SEEN_WORKSPACE_COLUMNS } from './workspaces.ts';
import { AppError, notFound, unprocessable } from './errors.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from './pagination.ts';
import { presignStaging, removeStagingArea, stagingRevocable, stagingUrisIn } from './sessionStaging.ts';
import type { StagingCatalog, StagingConfig } from './sessionStaging.ts';

export const SESSION_STATUSES = ['pending', 'opening', 'open', 'closing', 'closed', 'failed'] as const;

// The row shape at the database boundary.
const SqlSessionRowSchema = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  user_id: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  status: Schema.Literals(SESSION_STATUSES),
  active_catalog: Schema.NullOr(Schema.String),
  staging_uri: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(Schema.String),
  close_reason: Schema.NullOr(Schema.String),
  client_name: Schema.NullOr(Schema.String),
  client_version: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  opened_at: Schema.NullOr(Schema.Date),
  last_active_at: Schema.Date,
  closed_at: Schema.NullOr(Schema.Date),
});
export type SqlSessionRow = typeof SqlSessionRowSchema.Type;

/** The row as the API shows it: times as ISO text, the failure code kept inside. */
export type SqlSessionOut = Omit<SqlSessionRow, 'error_code' | 'created_at' | 'opened_at' | 'last_active_at' | 'closed_at'> & {
  created_at: string;
  opened_at: string | null;
  last_active_at: string;
  closed_at: string | null;
};

const SESSION_COL_NAMES = ['id', 'workspace_id', 'user_id', 'agent_id', 'status', 'active_catalog', 'staging_uri', 'error', 'error_code', 'close_reason',
  'client_name', 'client_version', 'created_at', 'opened_at', 'last_active_at', 'closed_at'];
const COLS = sql.trusted(SESSION_COL_NAMES.join(', '));
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const toSessionOut = (r: SqlSessionRow): SqlSessionOut => ({
  id: r.id,
  workspace_id: r.workspace_id,
  user_id: r.user_id,
  agent_id: r.agent_id,
  status: r.status,
  active_catalog: r.active_catalog,
  staging_uri: r.staging_uri,
  error: r.error,
  close_reason: r.close_reason,
  client_name: r.client_name,
  client_version: r.client_version,
  created_at: r.created_at.toISOString(),
  opened_at: iso(r.opened_at),
  last_active_at: r.last_active_at.toISOString(),
  closed_at: iso(r.closed_at),
});

/** `User-Agent`'s first product token (`dbt-eider/1.2 python/3.11` → name dbt-eider, version 1.2). */
export function clientOf(userAgent: string | undefined): { name: string | null; version: string | null } {
  const first = (userAgent ?? '').trim().split(/\s+/)[0] ?? '';
  if (!first) return { name: null, version: null };
  const slash = first.indexOf('/');
  const name = (slash < 0 ? first : first.slice(0, slash)).slice(0, 100) || null;
  const version = slash < 0 ? null : first.slice(slash + 1).slice(0, 50) || null;
  return { name, version };
}

export async function readSession(q: Queryable, id: string): Promise<SqlSessionRow | undefined> {
  const [row] = await rows(q, SqlSessionRowSchema, sql`select ${COLS} from sql_sessions where id = ${id}`);
  return row;
}

/** A session its owner or a query-admin may see: anyone else gets 404, as if it did not exist. */
export async function findVisibleSession(q: Queryable, p: Principal, id: string): Promise<SqlSessionRow> {
  return visibleSession(p, isUuid(id) ? await readSession(q, id) : undefined);
}

function visibleSession(p: Principal, row: SqlSessionRow | undefined): SqlSessionRow {
  if (!row || (row.user_id !== p.user.id && !hasPermission(p, 'query-admin'))) throw notFound('SQL session');
  return row;
}

/**
 * findVisibleSession's read made with the caller's credential (identity's AlongWithCaller), with the session's
 * workspace and the caller's membership there as workspaceAccessOf reads them; undefined for an id that is no UUID.
 */
export function sessionWithCaller(id: string): AlongWithCaller | undefined {
  if (!isUuid(id)) return undefined;
  return {
    select: `${SESSION_COL_NAMES.map((n) => `ss.${n} as ss_${n}`).join(', ')}, ${SEEN_WORKSPACE_COLUMNS}`,
    join: `left join sql_sessions ss on ss.id = $2::uuid left join workspaces w on w.id = ss.workspace_id ${CALLER_MEMBERSHIP_JOIN}`,
    params: [id],
  };
}

/** The session sessionWithCaller read beside the caller's credential: the same answers as findVisibleSession. */
export function visibleSessionOf(caller: Caller): SqlSessionRow {
  const a = caller.along;
  const row = a.ss_id === null || a.ss_id === undefined ? undefined : Schema.decodeUnknownSync(SqlSessionRowSchema)(Object.fromEntries(SESSION_COL_NAMES.map((n) => [n, a[`ss_${n}`]])));
  return visibleSession(caller.principal, row);
}

/** A workspace's sessions, newest first: the caller's own, or everyone's for a query-admin. */
export async function listSessions(
  q: Queryable,
  p: Principal,
  workspaceId: string,
  f: { status: string[]; cursor?: string; limit: number },
): Promise<Page<SqlSessionOut>> {
  for (const s of f.status) {
    if (!(SESSION_STATUSES as readonly string[]).includes(s)) {
      throw unprocessable(`unknown status ${s}`, 'unprocessable_content', { fields: [{ field: 'status', message: `one of ${SESSION_STATUSES.join(', ')}` }] });
    }
  }
  const where = [sql`workspace_id = ${workspaceId}`];
  if (!hasPermission(p, 'query-admin')) where.push(sql`user_id = ${p.user.id}`);
  if (f.status.length) where.push(sql`status = any(${f.status}::text[])`);
  const sort = 'created_at:desc';
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!(await readSession(q, c.id))) throw staleCursor();
    where.push(sql`(created_at, id) < (${c.k}::timestamptz, ${c.id}::uuid)`);
  }
  const found = await rows(
    q,
    Schema.Struct({ ...SqlSessionRowSchema.fields, sort_key: Schema.String }),
    sql`select ${COLS}, created_at::text as sort_key from sql_sessions where ${sql.join(where, ' and ')}
         order by created_at desc, id desc limit ${f.limit + 1}`,
  );
  return pageOf(found, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), toSessionOut);
}

/**
 * Sessions not yet ended whose user is deactivated (all users', or one's): deactivation closes them. Asked right after
 * a deactivation and again by the session reaper, so a replica dying between the two does not leave one open.
 */
export async function liveSessionsOfInactiveUsers(q: Queryable, userId?: string): Promise<string[]> {
  const found = await rows(
    q,
    Schema.Struct({ id: Schema.String }),
    sql`select s.id from sql_sessions s join users u on u.id = s.user_id
         where not u.is_active and s.status in ('pending', 'opening', 'open') ${userId ? sql`and u.id = ${userId}` : sql``}`,
  );
  return found.map((r) => r.id);
}

/**
 * The catalog a session's unqualified names resolve in: the one its latest statement ran in (a `USE <catalog>` sets
 * it), else the one it opened with. Each statement records it, grants are checked in it, and the agent makes it
 * current before running the statement, so the check and the run agree whatever order statements finish in.
 */
export async function currentCatalog(q: Queryable, s: Pick<SqlSessionRow, 'id' | 'active_catalog'>): Promise<string | null> {
  const [last] = await rows(
    q,
    Schema.Struct({ catalog: Schema.NullOr(Schema.String) }),
    sql`select catalog from queries where session_id = ${s.id} order by started_at desc, id desc limit 1`,
  );
  return last ? last.catalog : s.active_catalog;
}

/** What the metrics endpoint reports about sessions, across the cluster. */
export async function sessionCounts(q: Queryable) {
  const counts = await rows(
    q,
    Schema.Struct({ kind: Schema.String, k: Schema.String, n: Schema.Number }),
    sql`select 'session' as kind, status as k, count(*)::int as n from sql_sessions where status in ('pending', 'opening', 'open', 'closing') group by status
        union all
        select 'ended', coalesce(close_reason, status), count(*)::int from sql_sessions where status in ('closed', 'failed') group by coalesce(close_reason, status)
        union all
        select 'statement', status, count(*)::int from queries where session_id is not null and status in ('queued', 'running') group by status`,
  );
  const pick = (kind: string) => Object.fromEntries(counts.filter((r) => r.kind === kind).map((r) => [r.k, r.n]));
  return { sessions: pick('session'), statements: pick('statement'), ended: pick('ended') };
}

/**
 * Presigned staging URLs of a session (for its client, or its agent's statement). On a store that cannot revoke
 * them, their expiry is recorded first (committed before any URL is handed out): the sweep after the session's end
 * waits for it, and a URL issued after a sweep asks for another one. The arguments are presignStaging's.
 */
export async function sessionStagingUrls(...args: Parameters<typeof presignStaging>) {
  const [q, config, , session, , ttlSeconds] = args;
  if (!(await stagingRevocable(q, config, session.active_catalog))) {
    await exec(
      q,
      sql`update sql_sessions
             set staging_urls_expire_at = greatest(staging_urls_expire_at, now() + make_interval(secs => ${ttlSeconds})), staging_swept_at = null
           where id = ${session.id}`,
    );
  }
  return presignStaging(...args);
}

/** The staging files a session statement's SQL names, with presigned URLs for its agent. */
export async function statementStaging(q: Queryable, config: StagingConfig, catalog: StagingCatalog, sessionId: string, statement: string, ttlSeconds: number) {
  // A staging file is named by a string literal (stagingUrisIn): a statement without one names none, and its
  // session's row is not read.
  if (!statement.includes("'")) return [];
  const row = await readSession(q, sessionId);
  if (!row?.staging_uri || !row.active_catalog) return [];
  const uris = stagingUrisIn(statement, row.staging_uri);
  return uris.length ? sessionStagingUrls(q, config, catalog, { ...row, staging_uri: row.staging_uri, active_catalog: row.active_catalog }, uris, ttlSeconds) : [];
}

/**
 * The retention of staging areas whose URLs cannot be revoked (sts, static keys, azure SAS): a session's end
 * removes its files at once, but a URL it handed out still works until it expires. Once the latest of them has
 * expired, plus `graceS` (a store checks a URL's expiry when a request starts, so a long upload begun just before
 * may still land), each ended session's staging area is emptied again and marked swept: what a leftover URL put
 * there after the end is gone before anything could read it (no statement reads a closed session's files). Run by
 * the session reaper's leader; a failure is retried at its next tick. Returns the sessions swept and files removed.
 */
export async function sweepEndedStaging(
  q: Queryable,
  config: StagingConfig,
  catalog: StagingCatalog,
  graceS: number,
  onError: (sessionId: string, e: unknown) => void = () => undefined,
): Promise<{ sessions: number; files: number }> {
  const due = await rows(
    q,
    Schema.Struct({ id: Schema.String }),
    sql`select id from sql_sessions
         where status in ('closed', 'failed') and staging_swept_at is null
           and staging_urls_expire_at <= now() - make_interval(secs => ${graceS})
         order by staging_urls_expire_at limit 100`,
  );
  let files = 0;
  let sessions = 0;
  for (const { id } of due) {
    try {
      files += await removeSessionStaging(q, config, catalog, id);
    } catch (e) {
      // Tried again at the next tick.
      onError(id, e);
      continue;
    }
    // Marked only when no URL newer than the sweep was issued meanwhile (that one gets a sweep of its own).
    const marked = await exec(
      q,
      sql`update sql_sessions set staging_swept_at = now()
           where id = ${id} and staging_urls_expire_at <= now() - make_interval(secs => ${graceS}) returning 1`,
    );
    sessions += marked.length;
  }
  return { sessions, files };
}

/**
 * Revokes an ended session's staging URLs and removes its staged files; returns how many. A catalog that is gone (or
 * whose warehouse is) has no storage of the session's left to clean: 0. Any other failure (a part unreachable) throws,
 * for the caller to try again.
 */
export async function removeSessionStaging(q: Queryable, config: StagingConfig, catalog: StagingCatalog, sessionId: string): Promise<number> {
  const row = await readSession(q, sessionId);
  if (!row?.staging_uri || !row.active_catalog) return 0;
  try {
    return await removeStagingArea(q, config, catalog, { ...row, staging_uri: row.staging_uri, active_catalog: row.active_catalog });
  } catch (e) {
    if (e instanceof AppError && e.status === 422) return 0;
    throw e;
  }
}

/** The agent a session was opened on (the agent's frames name only the session). */
export async function agentOfSession(q: Queryable, id: string): Promise<{ agent_id: string | null } | undefined> {
  const [row] = await rows(q, Schema.Struct({ agent_id: Schema.NullOr(Schema.String) }), sql`select agent_id from sql_sessions where id = ${id}`);
  return row;
}

/** A new session's row (its actor's initial projection): the actor host writes it in the spawn's statement. */
export const newSessionRow = (r: {
  id: string;
  workspaceId: string;
  userId: string;
  agentId: string | null;
  computePool: string | null;
  activeCatalog: string | null;
  stagingUri: string | null;
  client: { name: string | null; version: string | null };
  at: number;
}) =>
  sql`insert into sql_sessions (id, workspace_id, user_id, agent_id, status, active_catalog, staging_uri, client_name, client_version, created_at, last_active_at, compute_pool)
    values (${r.id}, ${r.workspaceId}, ${r.userId}, ${r.agentId}, ${r.agentId ? 'opening' : 'pending'}, ${r.activeCatalog}, ${r.stagingUri},
      ${r.client.name}, ${r.client.version}, ${new Date(r.at).toISOString()}::timestamptz, ${new Date(r.at).toISOString()}::timestamptz, ${r.computePool})`;
