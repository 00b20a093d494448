// SQL sessions: opening one (agent choice, attached catalog, the session row and its actor) and admitting a
// statement into one (admitStatement with the session policy, then the session's acceptance), for the `/sql/sessions`
// routes and the PostgreSQL wire endpoint (pgwire/) alike, so both enforce the same rules.
import { randomUUID } from 'node:crypto';
import { AppError, conflict, forbidden, notFound, unavailable, unprocessable } from '../domain/errors.ts';
import * as sessions from '../domain/sqlSessions.ts';
import { newQueryRow, queuedRow, readHeldResult, type HeldResult, type NewQuery, type QueryRow } from '../domain/queries.ts';
import { runColumns } from '../actors/queryKind.ts';
import type { QueryProjection } from '../machines/index.ts';
import type { Projection } from '../actors/types.ts';
import type { ParamType } from '../protocol/index.ts';
import { listWorkspaceCatalogs } from '../domain/catalogs/attachments.ts';
import { resolveWorkspace, type WorkspaceAccess } from '../domain/workspaces.ts';
import type { AuditEvent } from '../domain/audit.ts';
import type { Principal } from '../domain/identity.ts';
import { computeWaitMs } from '../domain/elastic.ts';
import { admitStatement } from './admission.ts';
import { mayWrite, readQuery } from './querySubmission.ts';
import { readRowsPage } from './resultPages.ts';
import { chooseCompute } from './compute.ts';
import type { AppContext } from './context.ts';

/**
 * Records the session row and starts its actor (opening on the chosen agent, or pending for elastic compute).
 * Returns the new session's id; the caller waits for it to open as it sees fit.
 */
export async function openSqlSession(
  ctx: AppContext,
  principal: Principal,
  ws: WorkspaceAccess,
  body: { agent_id?: string | null; catalog?: string | null },
  userAgent: string | undefined,
): Promise<string> {
  const c = ctx.config;
  const workspace = ws.workspace;
  // A named connected agent opens now; with elastic compute the session may wait `pending` for compute.
  const compute = await chooseCompute(ctx, principal, ws, body.agent_id ?? null, { pickConnected: true });
  const attached = await listWorkspaceCatalogs(ctx.db, workspace.id);
  if (body.catalog && !attached.some((x) => x.slug === body.catalog)) {
    throw unprocessable(`catalog ${body.catalog} is not attached to workspace ${workspace.slug}`, 'unprocessable_content', { fields: [{ field: 'catalog', message: 'not attached' }] });
  }
  const active = attached.find((x) => x.slug === (body.catalog ?? attached.find((d) => d.is_default)?.slug)) ?? null;
  const id = randomUUID();
  const now = Date.now();
  const root = active ? (active.root_uri.endsWith('/') ? active.root_uri : `${active.root_uri}/`) : null;
  const staging = root ? `${root}${c.SQL_SESSION_STAGING_PREFIX_SEGMENT}/${id}/` : null;
  const client = sessions.clientOf(userAgent);
  const spawned = await ctx.host.spawn(
    'sqlSession',
    id,
    {
      sessionId: id,
      workspace: workspace.slug,
      agentId: compute.agentId,
      at: now,
      idleTimeoutMs: c.SQL_SESSION_IDLE_TIMEOUT_S * 1000,
      maxLifetimeMs: c.SQL_SESSION_MAX_LIFETIME_S * 1000,
      openingDeadlineMs: c.SQL_SESSION_OPENING_DEADLINE_S * 1000,
      // Compute gets as long to start as an elastic agent has to dial home.
      pendingTimeoutMs: compute.agentId ? c.SQL_SESSION_OPENING_DEADLINE_S * 1000 : computeWaitMs(c),
      closeTimeoutMs: c.SQL_SESSION_OPEN_TIMEOUT_S * 1000,
    },
    {
      entity: sessions.newSessionRow({
        id,
        workspaceId: workspace.id,
        userId: principal.user.id,
        agentId: compute.agentId,
        computePool: compute.pool,
        activeCatalog: active?.slug ?? null,
        stagingUri: staging,
        client,
        at: now,
      }),
    },
  );
  await spawned.start();
  return id;
}

/**
 * Opens a session and waits up to `waitS` for it to open: `open` once it is, else (still opening or pending) with
 * `onWait` continue the caller answers it is on its way, with cancel it is closed again and the answer is 503
 * compute_starting. One that failed or closed meanwhile is 503 unavailable.
 */
export async function openSessionWaiting(
  ctx: AppContext,
  principal: Principal,
  ws: WorkspaceAccess,
  body: { agent_id?: string | null; catalog?: string | null },
  userAgent: string | undefined,
  wait: { waitS: number; onWait: 'cancel' | 'continue' },
): Promise<{ open: boolean; row: sessions.SqlSessionRow }> {
  const id = await openSqlSession(ctx, principal, ws, body, userAgent);
  const settled = (v: { status: string }) => v.status !== 'opening' && v.status !== 'pending';
  const view = wait.waitS > 0 ? await ctx.host.waitFor('sqlSession', id, settled, wait.waitS * 1000) : null;
  const row = (await sessions.readSession(ctx.db, id))!;
  if (view?.status === 'open' || row.status === 'open') return { open: true, row };
  if (row.status === 'failed' || row.status === 'closed') throw unavailable(`the session could not be opened: ${row.error ?? row.status}`, 'unavailable');
  if (wait.onWait === 'continue') return { open: false, row };
  await ctx.host.send('sqlSession', id, { type: 'close' });
  throw new AppError(503, 'compute_starting', `the session did not open within ${wait.waitS} s; try again`, undefined, { 'retry-after': '5' });
}

export interface StatementSubmission {
  sql: string;
  timeout_s?: number | null;
  /** `$n` values bound on the agent through a prepared statement (text form; null is SQL NULL), never spliced. */
  params?: readonly (string | null)[] | null;
  /** the type the client declared for each (the wire endpoint's Parse); null: text, cast by its position */
  paramTypes?: readonly (ParamType | null)[] | null;
}

/**
 * Admits `body` into session `s` (its owner's, open) and starts the statement actor `statementId`: admitStatement
 * with the session policy, then the session's acceptance. A refusal by policy, role or grant is audited
 * (`policy.reject`, through `audit`: the caller knows its request) and thrown; the row inserted is returned.
 */
async function submitSessionStatement(
  ctx: AppContext,
  audit: (e: AuditEvent) => Promise<unknown>,
  principal: Principal,
  s: sessions.SqlSessionRow,
  body: StatementSubmission,
  statementId: string,
  knownAccess?: () => WorkspaceAccess,
): Promise<NewQuery> {
  const c = ctx.config;
  if (s.status !== 'open') throw conflict(`the session is ${s.status}`, 'session_not_open');
  // The caller's role in the session's workspace, as every workspace route resolves it (`knownAccess`: as read with
  // the credential).
  const access = await (knownAccess ? Promise.resolve().then(knownAccess) : resolveWorkspace(ctx.db, principal, s.workspace_id)).catch(() => {
    throw notFound('SQL session');
  });
  const sender = { principal, access, audit, auditTarget: { kind: 'sql_session', id: s.id } };
  const { policy, catalog, writeTo } = await admitStatement(ctx, sender, { kind: 'session', session: s }, body.sql, body.params);

  // The session decides acceptance (only an open one accepts); the accepted statement is then spawned here.
  const accepted = await ctx.host.send('sqlSession', s.id, { type: 'statementSubmitted', statementId });
  const running = (accepted.actor.snapshot.context as { runningStatements?: string[] }).runningStatements ?? [];
  if (accepted.actor.status !== 'open' || !running.includes(statementId)) throw conflict(`the session is ${accepted.actor.status}`, 'session_not_open');
  const now = Date.now();
  const timeoutS = body.timeout_s ?? null;
  const row: NewQuery = {
    id: statementId,
    workspaceId: s.workspace_id,
    agentId: s.agent_id,
    userId: principal.user.id,
    sql: body.sql,
    statementType: policy.statementType,
    origin: 'session',
    sessionId: s.id,
    catalog,
    timeoutS: timeoutS === null ? null : Math.ceil(timeoutS),
    tables: policy.tables,
    writeCatalogs: writeTo,
    startedAt: now,
    params: body.params?.length ? JSON.stringify(body.params) : null,
    paramTypes: body.params?.length && body.paramTypes?.some((t) => t !== null) ? JSON.stringify(body.paramTypes) : null,
  };
  const spawned = await ctx.host.spawn(
    'statement',
    statementId,
    {
      statementId,
      sessionId: s.id,
      agentId: s.agent_id,
      sql: body.sql,
      at: now,
      timeoutMs: timeoutS === null ? null : timeoutS * 1000,
      defaultTimeoutMs: c.SQL_STATEMENT_DEFAULT_TIMEOUT_S * 1000,
      graceMs: Math.max(1, c.SQL_STATEMENT_TIMEOUT_GRACE_S * 1000),
      ackDeadlineMs: c.SQL_STATEMENT_ACK_DEADLINE_S * 1000,
      ackSupported: true,
      readOnly: !mayWrite(policy.statementType),
    },
    { entity: newQueryRow(row) },
  );
  await spawned.start();
  return row;
}

/**
 * Submits `body` into session `s` (submitSessionStatement) and waits up to `waitMs` for the statement's end: its row
 * as it then stands. The watch begins before the statement exists, so an end persisted at any moment is heard (no
 * read of where it stands first); when this replica persisted that end, the row is the one inserted with the end's
 * projection (runColumns: what the end's own write set; `result_held` then false: the projection does not say whether
 * the end carried its result inline), else it is read. Without a wait (`waitMs` 0) it is the row as inserted, with
 * the last transition this replica persisted since, if any.
 */
export async function submitAndAwait(
  ctx: AppContext,
  audit: (e: AuditEvent) => Promise<unknown>,
  principal: Principal,
  s: sessions.SqlSessionRow,
  body: StatementSubmission,
  waitMs: number,
  knownAccess?: () => WorkspaceAccess,
): Promise<QueryRow> {
  const statementId = randomUUID();
  // Waited for: its end, watched from before it exists. Not: the last transition this replica persisted (a local
  // notice carries what it wrote).
  const watch = waitMs > 0 ? ctx.host.watchTerminal(['statement'], statementId) : null;
  let last: Projection | undefined;
  const unsubscribe = watch
    ? () => undefined
    : ctx.host.subscribe('statement', statementId, (n) => {
        if (n.projection) last = n.projection;
      });
  const rowOf = (inserted: NewQuery, projection: Projection | undefined): QueryRow => ({
    ...queuedRow(inserted, principal.user.name),
    ...(projection ? runColumns(projection as QueryProjection) : {}),
  });
  try {
    const inserted = await submitSessionStatement(ctx, audit, principal, s, body, statementId, knownAccess);
    // Not waited for: where it stood when its spawn (and any transition persisted here since) was written.
    if (!watch) return rowOf(inserted, last);
    const heard = await watch.wait('statement', waitMs);
    if (heard.terminal && heard.projection) return rowOf(inserted, heard.projection);
    return await readQuery(ctx, statementId);
  } finally {
    unsubscribe();
    watch?.cancel();
  }
}

/**
 * A finished statement's row with its result's bytes when the row keeps them (a result small enough to come with the
 * agent's `done`): its pages are then read from them, with no request to the agent, else from the agent's file.
 */
export async function withHeldResult(ctx: AppContext, row: QueryRow): Promise<QueryRow & { held?: HeldResult }> {
  if (row.status !== 'done' || !row.result_path) return row;
  const held = await readHeldResult(ctx.db, row.id, ctx.config.RESULT_RETENTION_HOURS);
  return held?.bytes ? { ...row, result_held: true, held } : { ...row, result_held: false };
}

/** The owner's check every statement route makes before admission. */
export function assertSessionOwner(principal: Principal, s: sessions.SqlSessionRow, what = 'runs statements in it'): void {
  if (s.user_id !== principal.user.id) throw forbidden(`only the session’s owner ${what}`);
}

/**
 * Runs a statement in session `s` and waits up to `waitS` for it to finish: its row, whether it finished, and when it
 * finished done with rows, their first page (`firstPageLimit` rows; 0: none). The first page is absent when the rows
 * cannot be read now: the client reads them through /queries/{id}/rows.
 */
export async function runSessionStatement(
  ctx: AppContext,
  audit: (e: AuditEvent) => Promise<unknown>,
  principal: Principal,
  s: sessions.SqlSessionRow,
  body: StatementSubmission & { waitS: number; firstPageLimit: number },
  knownAccess?: () => WorkspaceAccess,
) {
  const row = await submitAndAwait(ctx, audit, principal, s, body, body.waitS * 1000, knownAccess);
  const finished = body.waitS > 0 && !['queued', 'running'].includes(row.status);
  const firstPage =
    finished && body.firstPageLimit > 0 && row.status === 'done' && row.result_path
      ? await readRowsPage(ctx, await withHeldResult(ctx, row), body.firstPageLimit, undefined).catch(() => undefined)
      : undefined;
  return { row, finished, firstPage };
}
