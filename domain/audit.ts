// The audit trail: security-relevant actions appended to audit_events (migrations/control/070_audit.sql), read back
// newest first by admins, and pruned after AUDIT_RETENTION_DAYS. Rows are append-only in the database itself.
// A row names who did what to what; it never holds a password, a token or a secret: callers pass ids, emails,
// names and codes only, and `details` keys that look like credentials are refused here as a last line.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { decodeCursor, pageOf, type Page } from './pagination.ts';
import type { Principal } from './identity.ts';

const AUDIT_ACTIONS = [
  'auth.login',
  'auth.logout',
  'token.create',
  'token.revoke',
  'user.role_change',
  'workspace.member_change',
  'grant.change',
  'agent.bootstrap',
  'agent.credential_revoke',
  'catalog.change',
  'backend.change',
  'policy.reject',
  // a worksheet shared with its workspace, or made private again: who may read its SQL changed
  'worksheet.share',
  // an admin-only or permission-gated route refused to a caller without the role or permission
  'access.denied',
  // a schedule fired by hand (run-now)
  'schedule.run',
  // a semantic-model or lineage import (it creates, changes and retires models or edges in bulk)
  'semantic.import',
  'lineage.import',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export const AuditActionSchema = Schema.Literals(AUDIT_ACTIONS);

const ActorKindSchema = Schema.Literals(['user', 'service_account', 'agent', 'anonymous']);
export type ActorKind = typeof ActorKindSchema.Type;
const AUDIT_OUTCOMES = ['success', 'failure'] as const;
export const OutcomeSchema = Schema.Literals(AUDIT_OUTCOMES);
const AuditActorSchema = Schema.Struct({ kind: ActorKindSchema, id: Schema.NullOr(Schema.String), email: Schema.NullOr(Schema.String) });
export type AuditActor = typeof AuditActorSchema.Type;

/** Where the action was asked for: this replica and the request (or agent socket) that carried it. */
export interface AuditOrigin {
  replicaId: string;
  requestId: string | null;
}

type DetailValue = string | number | boolean | null | readonly string[];

export interface AuditEvent {
  action: AuditAction;
  outcome: 'success' | 'failure';
  actor: AuditActor;
  target?: { kind: string; id: string | null } | null;
  details?: Record<string, DetailValue | undefined>;
}

export const ANONYMOUS: AuditActor = { kind: 'anonymous', id: null, email: null };

export const actorOf = (p: Principal | undefined): AuditActor =>
  p ? { kind: p.user.kind === 'service_account' ? 'service_account' : 'user', id: p.user.id, email: p.user.email } : ANONYMOUS;

// Same spellings the log redaction refuses (settings/redaction.ts): a details key like these is a caller's bug.
const CREDENTIAL_KEY = /pass(word|wd|phrase)?$|secret|token|authorization|cookie|credential|api_?key|access_?key|private_?key|signature|database_?url|dsn$/i;

class AuditSecretError extends Error {
  constructor(key: string) {
    super(`audit details key ${key} looks like a credential; audit rows never hold secrets`);
    this.name = 'AuditSecretError';
  }
}

function cleanDetails(details: AuditEvent['details']): Record<string, DetailValue> {
  const out: Record<string, DetailValue> = {};
  for (const [k, v] of Object.entries(details ?? {})) {
    if (v === undefined) continue;
    if (CREDENTIAL_KEY.test(k)) throw new AuditSecretError(k);
    out[k] = v;
  }
  return out;
}

const isUuid = (s: string | null) => s !== null && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

/** Appends one row. `q` may be the transaction of the action itself, so both commit or neither does. */
export async function appendAudit(q: Queryable, origin: AuditOrigin, e: AuditEvent): Promise<void> {
  const details = cleanDetails(e.details);
  await exec(
    q,
    sql`insert into audit_events (action, outcome, actor_kind, actor_id, actor_email, target_kind, target_id, replica_id, request_id, details)
        values (${e.action}, ${e.outcome}, ${e.actor.kind}, ${isUuid(e.actor.id) ? e.actor.id : null}::uuid, ${e.actor.email},
                ${e.target?.kind ?? null}, ${e.target?.id ?? null}, ${origin.replicaId}, ${origin.requestId}, ${JSON.stringify(details)}::jsonb)`,
  );
}

// ---- reading ---------------------------------------------------------------------------------------------------

const AuditRow = Schema.Struct({
  id: Schema.String,
  at: Schema.Date,
  ck: Schema.String,
  action: AuditActionSchema,
  outcome: OutcomeSchema,
  actor_kind: ActorKindSchema,
  actor_id: Schema.NullOr(Schema.String),
  actor_email: Schema.NullOr(Schema.String),
  target_kind: Schema.NullOr(Schema.String),
  target_id: Schema.NullOr(Schema.String),
  replica_id: Schema.String,
  request_id: Schema.NullOr(Schema.String),
  details: Schema.Record(Schema.String, Schema.Unknown),
});
type AuditRow = typeof AuditRow.Type;

/** An audit event as the api answers it. */
export const AuditOutSchema = Schema.Struct({
  id: Schema.String,
  at: Schema.String,
  action: AuditActionSchema,
  outcome: OutcomeSchema,
  actor: AuditActorSchema,
  target: Schema.NullOr(Schema.Struct({ kind: Schema.String, id: Schema.NullOr(Schema.String) })),
  replica_id: Schema.String,
  request_id: Schema.NullOr(Schema.String),
  details: Schema.Record(Schema.String, Schema.Unknown),
});
export type AuditOut = typeof AuditOutSchema.Type;

const toAuditOut = (r: AuditRow): AuditOut => ({
  id: r.id,
  at: r.at.toISOString(),
  action: r.action,
  outcome: r.outcome,
  actor: { kind: r.actor_kind, id: r.actor_id, email: r.actor_email },
  target: r.target_kind ? { kind: r.target_kind, id: r.target_id } : null,
  replica_id: r.replica_id,
  request_id: r.request_id,
  details: r.details,
});

export interface AuditFilter {
  limit: number;
  cursor?: string;
  action?: readonly string[];
  actorId?: string;
  outcome?: 'success' | 'failure';
  since?: string;
  until?: string;
}

const SORT = 'audit:at:desc';

/** Newest first; `since` inclusive, `until` exclusive. Paging is by (at, id), so rows pruned meanwhile skip nothing. */
export async function listAudit(q: Queryable, f: AuditFilter): Promise<Page<AuditOut>> {
  const where = [sql`true`];
  if (f.action?.length) where.push(sql`action = any(${[...f.action]}::text[])`);
  if (f.actorId !== undefined) where.push(isUuid(f.actorId) ? sql`actor_id = ${f.actorId}::uuid` : sql`false`);
  if (f.outcome) where.push(sql`outcome = ${f.outcome}`);
  if (f.since) where.push(sql`at >= ${f.since}::timestamptz`);
  if (f.until) where.push(sql`at < ${f.until}::timestamptz`);
  if (f.cursor) {
    const c = decodeCursor(f.cursor, SORT);
    where.push(sql`(at, id) < (${c.k}::timestamptz, ${isUuid(c.id) ? c.id : '00000000-0000-0000-0000-000000000000'}::uuid)`);
  }
  // The key travels as PostgreSQL's own text form: a JS Date would drop the microseconds and repeat rows.
  const found = await rows(
    q,
    AuditRow,
    sql`select id::text, at, at::text as ck, action, outcome, actor_kind, actor_id::text, actor_email, target_kind, target_id,
               replica_id, request_id, details
          from audit_events where ${sql.join(where, ' and ')}
         order by at desc, id desc limit ${f.limit + 1}`,
  );
  return pageOf(found, f.limit, SORT, (r) => ({ k: r.ck, id: r.id }), toAuditOut);
}

// ---- retention -------------------------------------------------------------------------------------------------

/** Deletes rows older than `days` (0 keeps everything); returns how many. Runs inside the caller's transaction. */
export async function pruneAudit(tx: Queryable, days: number): Promise<number> {
  if (days <= 0) return 0;
  await tx.query(`select set_config('eider.audit_prune', 'on', true)`);
  const gone = await rows(
    tx,
    Schema.Struct({ n: Schema.Number }),
    sql`with d as (delete from audit_events where at < now() - make_interval(days => ${days}) returning 1) select count(*)::int as n from d`,
  );
  await tx.query(`select set_config('eider.audit_prune', 'off', true)`);
  return gone[0]?.n ?? 0;
}
