// Records audit rows for the request being handled: this replica, the request id, the caller as actor.
import type { FastifyRequest } from 'fastify';
import { appendAudit, type AuditEvent, type AuditOrigin } from '../domain/audit.ts';
import type { Queryable } from '../runtime/db.ts';
import type { AppContext } from './context.ts';

export const auditOrigin = (ctx: AppContext, req: Pick<FastifyRequest, 'id'>): AuditOrigin => ({ replicaId: ctx.replica.id, requestId: req.id });

/** Appends one row; pass `q` to write it inside the action's own transaction. */
export const audit = (ctx: AppContext, req: Pick<FastifyRequest, 'id'>, e: AuditEvent, q: Queryable = ctx.db) =>
  appendAudit(q, auditOrigin(ctx, req), e);
