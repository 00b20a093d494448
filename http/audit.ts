// Records audit rows for the request being handled: this replica, the request id, the caller as actor.
import type { FastifyRequest } from 'fastify';
import { appendAudit, type AuditEvent, type AuditOrigin } from '../domain/audit.ts';
import { joinTransaction, type Db, type Queryable } from '../runtime/db.ts';
import type { AppContext } from './context.ts';

export const auditOrigin = (ctx: AppContext, req: Pick<FastifyRequest, 'id'>): AuditOrigin => ({ replicaId: ctx.replica.id, requestId: req.id });

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
