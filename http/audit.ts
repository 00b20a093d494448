// Records audit rows for the request being handled: this replica, the request id, the caller as actor.
import type { FastifyRequest } from 'fastify';
import { actorOf, ANONYMOUS, appendAudit, type AuditEvent, type AuditOrigin } from '../domain/audit.ts';
import { AppError } from '../domain/errors.ts';
import type { Principal } from '../domain/identity.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import type { RouteDef } from './route.ts';
import { joinTransaction, type Db, type Queryable } from '../runtime/db.ts';
import type { AppContext } from '../usecases/context.ts';

const auditOrigin = (ctx: AppContext, req: Pick<FastifyRequest, 'id'>): AuditOrigin => ({ replicaId: ctx.replica.id, requestId: req.id });

/** Appends one row; pass `q` to write it inside the action's own transaction. */
export const audit = (ctx: AppContext, req: Pick<FastifyRequest, 'id'>, e: AuditEvent, q: Queryable = ctx.db) =>
  appendAudit(q, auditOrigin(ctx, req), e);

/**
 * Runs `action` and appends its audit row in one transaction: the action and its record commit together or not at
 * all, so a crash cannot leave a change without its row (or a row for a change that never happened).
 */
export const audited = <T>(ctx: AppContext, req: Pick<FastifyRequest, 'id'>, action: (db: Db) => Promise<T>, event: (result: T) => AuditEvent): Promise<T> =>
  ctx.db.tx(async (q) => {
    const result = await action(joinTransaction(q));
    await appendAudit(q, auditOrigin(ctx, req), event(result));
    return result;
  });

/**
 * The success row of a route that records it itself (its `audit` declares no `success`): `write(q)` appends it with
 * the handler's own transaction, so the change and its row commit together and a crash between them cannot leave
 * the change unrecorded.
 */
export const successRow =
  (ctx: AppContext, req: Pick<FastifyRequest, 'id'>, principal: Principal, e: Omit<AuditEvent, 'outcome' | 'actor'>) =>
  (q: Queryable) =>
    appendAudit(q, auditOrigin(ctx, req), { ...e, outcome: 'success', actor: actorOf(principal) });

/** A route's audit target: its declared path parameter (the workspace's id once resolved). */
function targetOf(def: RouteDef, params: Record<string, string>, ws: WorkspaceAccess | undefined): AuditEvent['target'] {
  const t = def.audit?.target;
  if (!t) return null;
  return { kind: t.kind, id: t.param === 'workspace' && ws ? ws.workspace.id : (params[t.param] ?? '').slice(0, 200) || null };
}

/** The success row of a route that declares `audit.success`. */
export function auditRouteSuccess(ctx: AppContext, req: FastifyRequest, def: RouteDef, principal: Principal | undefined, ws: WorkspaceAccess | undefined) {
  if (!def.audit?.success) return Promise.resolve();
  const params = (req.params ?? {}) as Record<string, string>;
  return audit(ctx, req, { action: def.audit.action, outcome: 'success', actor: actorOf(principal), target: targetOf(def, params, ws), details: { operation: def.operationId } });
}

/**
 * The row of a refused request, once the caller is known: an admin-only or permission-gated route refused at the
 * access check is `access.denied`; any refusal of a route declaring `audit` is a failure of its action. Writing the
 * row never hides the refusal itself (a database outage is logged, and the request keeps its own answer).
 */
export async function auditRefusal(
  ctx: AppContext,
  req: FastifyRequest,
  def: RouteDef,
  principal: Principal | undefined,
  ws: WorkspaceAccess | undefined,
  err: unknown,
  atAccess: boolean,
  inHandler = false,
): Promise<void> {
  const status = err instanceof AppError ? err.status : 500;
  const code = err instanceof AppError ? err.code : 'internal_error';
  if (!principal) {
    // A public route that audits its own outcome (a sign-in) refused before its handler ran (a cross-site form, a
    // content type it does not take, a body it cannot read): the handler could not record it, so it is recorded here.
    if (def.access.kind !== 'public' || !def.audit || inHandler) return;
    const email = typeof (req.body as { email?: unknown } | undefined)?.email === 'string' ? String((req.body as { email: string }).email).slice(0, 320) : null;
    const event: AuditEvent = { action: def.audit.action, outcome: 'failure', actor: { ...ANONYMOUS, email }, details: { operation: def.operationId, status, code } };
    await audit(ctx, req, event).catch((e: unknown) => ctx.logger.warn({ reqId: req.id, action: event.action, err: String((e as Error)?.message ?? e) }, 'audit row not written'));
    return;
  }
  const params = (req.params ?? {}) as Record<string, string>;
  const gated = def.access.kind === 'admin' || def.access.kind === 'permission';
  let event: AuditEvent | undefined;
  if (atAccess && gated && status === 403) {
    const needed = def.access.kind === 'permission' ? def.access.permission : 'admin';
    event = { action: 'access.denied', outcome: 'failure', actor: actorOf(principal), target: { kind: 'operation', id: def.operationId }, details: { method: def.method, path: def.path, needed } };
  } else if (def.audit && !(def.access.kind === 'public' && inHandler)) {
    // (A public route's handler records its own refusals.)
    event = { action: def.audit.action, outcome: 'failure', actor: actorOf(principal), target: targetOf(def, params, ws), details: { operation: def.operationId, status, code } };
  }
  if (!event) return;
  await audit(ctx, req, event).catch((e: unknown) => ctx.logger.warn({ reqId: req.id, action: event.action, err: String((e as Error)?.message ?? e) }, 'audit row not written'));
}
