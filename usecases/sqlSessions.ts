// Opening a SQL session and admitting a statement into one: the admission chain the `/sql/sessions` routes run
// (agent choice, attached catalog, session policy, role, scoped grants, writable catalogs, the session's acceptance,
// the audit of a refusal), shared with the PostgreSQL wire endpoint (pgwire/) so both enforce the same rules.
import { randomUUID } from 'node:crypto';
import { AppError, conflict, forbidden, notFound, unprocessable } from '../domain/errors.ts';
import { policyRejection } from '../domain/statementPolicy.ts';
import * as sessions from '../domain/sqlSessions.ts';
import { listWorkspaceCatalogs } from '../domain/catalogs.ts';
import { resolveWorkspace, type WorkspaceAccess } from '../domain/workspaces.ts';
import { assertCatalogsWritable, writtenCatalogs } from '../domain/storageMigrations.ts';
import { checkScopedAccess, writeCatalogs } from '../domain/catalogGrants.ts';
import { actorOf, type AuditEvent } from '../domain/audit.ts';
import type { Principal } from '../domain/identity.ts';
import { checkPolicyOffThread } from './policyPool.ts';
import { chooseCompute } from './querySubmission.ts';
import { computeWaitMs } from '../domain/elastic.ts';
import type { AppContext } from './context.ts';
import { sql } from '../runtime/sql.ts';

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
      entity: sql`insert into sql_sessions (id, workspace_id, user_id, agent_id, status, active_catalog, staging_uri, client_name, client_version, created_at, last_active_at, compute_pool)
        values (${id}, ${workspace.id}, ${principal.user.id}, ${compute.agentId}, ${compute.agentId ? 'opening' : 'pending'}, ${active?.slug ?? null}, ${staging},
          ${client.name}, ${client.version}, ${new Date(now).toISOString()}::timestamptz, ${new Date(now).toISOString()}::timestamptz, ${compute.pool})`,
    },
  );
  await spawned.start();
  return id;
}

export interface StatementSubmission {
  sql: string;
  timeout_s?: number | null;
  /** `$n` values bound on the agent through a prepared statement (text form; null is SQL NULL), never spliced. */
  params?: readonly (string | null)[] | null;
}

/**
 * Admits `body` into session `s` (its owner's, open) and starts the statement actor: size, session policy, script
 * shape, role, scoped grants, writable catalogs, then the session's acceptance. A refusal by policy, role or grant
 * is audited (`policy.reject`, through `audit`: the caller knows its request) and thrown; the statement's id is returned.
 */
export async function submitSessionStatement(
  ctx: AppContext,
  audit: (e: AuditEvent) => Promise<unknown>,
  principal: Principal,
  s: sessions.SqlSessionRow,
  body: StatementSubmission,
): Promise<string> {
  const c = ctx.config;
  if (s.status !== 'open') throw conflict(`the session is ${s.status}`, 'session_not_open');
  const bytes = Buffer.byteLength(body.sql, 'utf8');
  if (bytes > c.SQL_MAX_BYTES) throw new AppError(413, 'payload_too_large', `the SQL is ${bytes} bytes; at most ${c.SQL_MAX_BYTES} are accepted (SQL_MAX_BYTES)`);
  // The caller's role in the session's workspace, as every workspace route resolves it.
  const access = await resolveWorkspace(ctx.db, principal, s.workspace_id).catch(() => {
    throw notFound('SQL session');
  });
  const refuse = async (e: AppError, statementType: string | null): Promise<never> => {
    await audit({
      action: 'policy.reject',
      outcome: 'failure',
      actor: actorOf(principal),
      target: { kind: 'sql_session', id: s.id },
      details: { workspace: access.workspace.slug, code: e.code, statement_type: statementType },
    });
    throw e;
  };
  const attached = await listWorkspaceCatalogs(ctx.db, s.workspace_id);
  const policy = await ctx.tracing.span('policy', {}, () =>
    checkPolicyOffThread(
      body.sql,
      { mode: 'session', maxStatements: c.SQL_MAX_STATEMENTS, stagingPrefix: s.staging_uri ?? undefined, managedCatalogs: attached.map((x) => x.slug) },
      c.SQL_POLICY_TIME_BUDGET_MS,
    ),
  );
  if (!policy.ok) {
    const e = policyRejection(policy);
    if (e.status === 403) await refuse(e, policy.statementType);
    throw e;
  }
  const read = policy.statements.findIndex((x) => x.type === 'select' || x.type === 'describe');
  if (policy.statements.length > 1 && read >= 0) {
    throw unprocessable(`statement ${read + 1} of ${policy.statements.length} is a read; a script of several statements returns no rows: send the read on its own`, 'unprocessable_content', {
      fields: [{ field: 'sql', in: 'body', message: 'a script with several statements may not contain a read' }],
    });
  }
  if (body.params?.length && policy.statements.length > 1) {
    throw unprocessable('parameters bind to one statement; a script of several takes none', 'unprocessable_content', { fields: [{ field: 'params', in: 'body', message: 'one statement only' }] });
  }
  if (policy.isWrite && access.role === 'reader') await refuse(forbidden(`writing needs the writer role in workspace ${access.workspace.slug}`), policy.statementType);
  // Unqualified names resolve in the session's current catalog (USE); a USE makes its catalog current from itself on.
  const catalog = policy.use ?? (await sessions.currentCatalog(ctx.db, s));
  await checkScopedAccess(ctx.db, s.workspace_id, policy.tables, catalog, policy.isWrite ? 'write' : 'read', policy.schemas).catch((e) =>
    e instanceof AppError && e.status === 403 ? refuse(e, policy.statementType) : Promise.reject(e),
  );
  // The catalogs its token may write (actors/queryKind.ts dispatchScope), resolved as the grant check just did.
  const writeTo = writeCatalogs(policy.tables, policy.schemas, catalog, attached);
  if (policy.isWrite) await assertCatalogsWritable(ctx.db, writtenCatalogs(writeTo, attached));

  // The session decides acceptance (only an open one accepts); the accepted statement is then spawned here.
  const statementId = randomUUID();
  const accepted = await ctx.host.send('sqlSession', s.id, { type: 'statementSubmitted', statementId });
  const running = (accepted.actor.snapshot.context as { runningStatements?: string[] }).runningStatements ?? [];
  if (accepted.actor.status !== 'open' || !running.includes(statementId)) throw conflict(`the session is ${accepted.actor.status}`, 'session_not_open');
  const now = Date.now();
  const timeoutS = body.timeout_s ?? null;
  const params = body.params?.length ? JSON.stringify(body.params) : null;
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
    },
    {
      entity: sql`insert into queries (id, workspace_id, agent_id, user_id, sql, status, statement_type, origin, session_id, catalog, timeout_s, tables, write_catalogs, started_at, params)
        values (${statementId}, ${s.workspace_id}, ${s.agent_id}, ${principal.user.id}, ${body.sql}, 'queued', ${policy.statementType}, 'session', ${s.id},
          ${catalog}, ${timeoutS === null ? null : Math.ceil(timeoutS)}, ${JSON.stringify(policy.tables)}::jsonb, ${writeTo}::text[], ${new Date(now).toISOString()}::timestamptz, ${params}::jsonb)`,
    },
  );
  await spawned.start();
  return statementId;
}

/** The owner's check every statement route makes before admission. */
export function assertSessionOwner(principal: Principal, s: sessions.SqlSessionRow, what = 'runs statements in it'): void {
  if (s.user_id !== principal.user.id) throw forbidden(`only the session’s owner ${what}`);
}
