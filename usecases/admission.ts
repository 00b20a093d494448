// Admitting a statement: the one chain every statement passes before anything is recorded or dispatched, whether it
// arrives as a query (REST, MCP, a schedule's fire) or in a SQL session (REST or the wire endpoint). In order: size,
// statement policy, script shape, parameters, the workspace role, compute (a query's agent tier and connection; a
// session's statements run on its agent), the catalog it resolves in, scoped grants (I10), catalogs being migrated.
import { AppError, forbidden, unprocessable } from '../domain/errors.ts';
import { policyRejection, type PolicyResult } from '../domain/statementPolicy/policy.ts';
import { listWorkspaceCatalogs, type WorkspaceCatalogOut } from '../domain/catalogs/attachments.ts';
import { checkScopedAccess, writeCatalogs } from '../domain/catalogGrants.ts';
import { assertCatalogsWritable, writtenCatalogs } from '../domain/storageMigrations/records.ts';
import { currentCatalog, type SqlSessionRow } from '../domain/sqlSessions.ts';
import { actorOf, type AuditEvent } from '../domain/audit.ts';
import type { Principal } from '../domain/identity.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import { checkPolicyOffThread } from './policyPool.ts';
import { chooseCompute, type Compute } from './compute.ts';
import type { AppContext } from './context.ts';

/** Who sends the statement, and where a refusal is recorded. */
export interface Sender {
  principal: Principal;
  /** the sender's role in the statement's workspace */
  access: WorkspaceAccess;
  /** records a refusal by policy, role or grant (`policy.reject`); absent: not recorded (the scheduler records its
   *  run's failure instead) */
  audit?: (e: AuditEvent) => Promise<unknown>;
  /** what the refusal's audit row points at (the workspace of a query, the session of a statement) */
  auditTarget: { kind: string; id: string };
}

/** How the statement arrived: as a query naming its agent and catalog, or into an open SQL session. */
export type Door = { kind: 'query'; agentId: string | null; catalog: string | null } | { kind: 'session'; session: SqlSessionRow };

export interface Admitted {
  policy: Extract<PolicyResult, { ok: true }>;
  /** the catalog unqualified names resolve in */
  catalog: string | null;
  /** the workspace's attached catalogs, as read for the checks */
  attached: WorkspaceCatalogOut[];
  /** the catalogs the statement's token may write */
  writeTo: string[];
  /** where a query runs (a session statement runs on its session's agent: null) */
  compute: Compute | null;
}

/** Admits `text` sent by `sender` through `door`, or throws the refusal (audited when it is the policy's, the role's or a grant's). */
export async function admitStatement(ctx: AppContext, sender: Sender, door: Door, text: string, params?: readonly (string | null)[] | null): Promise<Admitted> {
  const c = ctx.config;
  const { principal, access } = sender;
  const workspace = access.workspace;
  const refuse = async (e: AppError, statementType: string | null): Promise<never> => {
    // Audited with its code and the statement kind, never its text (SQL may carry literals that are secrets).
    await sender.audit?.({
      action: 'policy.reject',
      outcome: 'failure',
      actor: actorOf(principal),
      target: sender.auditTarget,
      details: { workspace: workspace.slug, code: e.code, statement_type: statementType },
    });
    throw e;
  };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > c.SQL_MAX_BYTES) throw new AppError(413, 'payload_too_large', `the SQL is ${bytes} bytes; at most ${c.SQL_MAX_BYTES} are accepted (SQL_MAX_BYTES)`);
  const attached = await listWorkspaceCatalogs(ctx.db, workspace.id);
  const options =
    door.kind === 'query'
      ? { mode: 'query' as const, maxStatements: c.SQL_MAX_STATEMENTS }
      : { mode: 'session' as const, maxStatements: c.SQL_MAX_STATEMENTS, stagingPrefix: door.session.staging_uri ?? undefined, managedCatalogs: attached.map((x) => x.slug) };
  const policy = await ctx.tracing.span('policy', {}, () => checkPolicyOffThread(text, options, c.SQL_POLICY_TIME_BUDGET_MS));
  if (!policy.ok) {
    const e = policyRejection(policy);
    if (e.status === 403) await refuse(e, policy.statementType);
    throw e;
  }
  // A script returns no rows (only a single read is materialized): a read inside one would end `done` with nothing
  // to show, so it is refused instead of silently dropping its rows.
  const read = policy.statements.findIndex((s) => s.type === 'select' || s.type === 'describe');
  if (policy.statements.length > 1 && read >= 0) {
    throw unprocessable(
      `statement ${read + 1} of ${policy.statements.length} is a read; a script of several statements returns no rows, so it may hold only writes: submit the read on its own`,
      'unprocessable_content',
      { fields: [{ field: 'sql', in: 'body', message: 'a script with several statements may not contain a read' }] },
    );
  }
  if (params?.length && policy.statements.length > 1) {
    throw unprocessable('parameters bind to one statement; a script of several takes none', 'unprocessable_content', { fields: [{ field: 'params', in: 'body', message: 'one statement only' }] });
  }
  if (policy.isWrite && access.role === 'reader') await refuse(forbidden(`writing needs the writer role in workspace ${workspace.slug}`), policy.statementType);
  let compute: Compute | null = null;
  let catalog: string | null;
  if (door.kind === 'query') {
    compute = await chooseCompute(ctx, principal, access, door.agentId);
    catalog = door.catalog ?? attached.find((x) => x.is_default)?.slug ?? null;
    if (door.catalog && !attached.some((x) => x.slug === door.catalog)) {
      throw unprocessable(`catalog ${door.catalog} is not attached to workspace ${workspace.slug}`, 'unprocessable_content', { fields: [{ field: 'catalog', message: 'not attached' }] });
    }
  } else {
    // Unqualified names resolve in the session's current catalog (USE); a USE makes its catalog current from itself on.
    catalog = policy.use ?? (await currentCatalog(ctx.db, door.session));
  }
  // Checked against the catalog the statement resolves in, before anything is recorded or dispatched.
  await checkScopedAccess(ctx.db, workspace.id, policy.tables, catalog, policy.isWrite ? 'write' : 'read', policy.schemas, attached).catch((e) =>
    e instanceof AppError && e.status === 403 ? refuse(e, policy.statementType) : Promise.reject(e),
  );
  // The catalogs its token may write (actors/queryKind.ts dispatchScope); one being moved to other storage takes no
  // writes (409 catalog_read_only), reads go on.
  const writeTo = [...writeCatalogs(policy.tables, policy.schemas, catalog, attached)];
  if (policy.isWrite) await assertCatalogsWritable(ctx.db, writtenCatalogs(writeTo, attached));
  return { policy, catalog, attached, writeTo, compute };
}
