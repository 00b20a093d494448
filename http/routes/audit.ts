// The audit trail for admins: newest first, paged, filtered by action, outcome, actor and time.
import { Schema } from 'effect';
import { route, asArray, Cursor, Limit, pageOfSchema, repeatable, Uuid } from '../route.ts';
import { AuditActionSchema, AuditOutSchema, listAudit, OutcomeSchema } from '../../domain/audit.ts';
import { isTimestamp } from '../../domain/pagination.ts';
import { unprocessable } from '../../domain/errors.ts';

const IsoTime = Schema.String.check(Schema.makeFilter((s: string) => isTimestamp(s) || 'an ISO 8601 time such as 2024-02-29T12:00:00Z'));

export const auditRoutes = [
  route({
    method: 'GET',
    path: '/api/admin/audit',
    operationId: 'list_audit_events',
    summary: 'The audit trail, newest first: sign-ins, tokens, roles, grants, agent credentials, catalogs, backends, policy rejections',
    description:
      'Filters: `action` (repeatable), `outcome` (`success` or `failure`: a refusal is a failure), `actor_id`, `since` (inclusive) and `until` (exclusive) as ISO 8601 times. ' +
      'Rows are append-only; rows older than AUDIT_RETENTION_DAYS are pruned. No row holds a password, token or secret.',
    tags: ['admin'],
    access: { kind: 'admin' },
    query: Schema.Struct({
      limit: Limit,
      cursor: Cursor,
      action: repeatable(AuditActionSchema),
      outcome: Schema.optionalKey(OutcomeSchema),
      actor_id: Schema.optionalKey(Uuid),
      since: Schema.optionalKey(IsoTime),
      until: Schema.optionalKey(IsoTime),
    }),
    responses: { 200: pageOfSchema(AuditOutSchema), 400: null, 422: null },
    handler: async ({ ctx, query }) => {
      if (query.since && query.until && Date.parse(query.since) >= Date.parse(query.until)) {
        throw unprocessable('since must be before until', 'unprocessable_content', { fields: [{ field: 'since', in: 'query', message: 'must be before until' }] });
      }
      const page = await listAudit(ctx.db, {
        limit: query.limit ?? 100,
        cursor: query.cursor,
        action: asArray(query.action),
        outcome: query.outcome,
        actorId: query.actor_id,
        since: query.since,
        until: query.until,
      });
      return { status: 200, body: page };
    },
  }),
];
