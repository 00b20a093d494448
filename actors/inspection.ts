// Read-only views of the actors for operators: the machine definitions (for state-chart inspection), one actor's
// persisted state, and its transition history. Response-shaped (snake_case) for the http layer to return as is.
// Nothing secret-looking in a context or event payload ever leaves through here.
import { Schema, type Types } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { machineDefinition, type MachineDefinition } from '../machines/definition.ts';
import { machineKinds } from '../machines/index.ts';
import { ActorError } from './errors.ts';
import { redactSecrets } from './redact.ts';
import { decodeJson, type PersistedSnapshot } from './snapshotCodec.ts';
import { loadActor } from './store.ts';

// machines/definition.ts builds a MachineDefinition without effect (machines/ stays pure); this is its wire shape.
const StateDefinitionSchema = Schema.Struct({
  name: Schema.String,
  type: Schema.Literals(['atomic', 'compound', 'parallel', 'final', 'history']),
  transient: Schema.Boolean,
  description: Schema.optionalKey(Schema.String),
  entry: Schema.Array(Schema.String),
  exit: Schema.Array(Schema.String),
});
const TransitionDefinitionSchema = Schema.Struct({
  from: Schema.String,
  event: Schema.String,
  to: Schema.String,
  guard: Schema.optionalKey(Schema.String),
  actions: Schema.Array(Schema.String),
  targetless: Schema.Boolean,
  reenter: Schema.Boolean,
  eventless: Schema.Boolean,
});
const MachineDefinitionSchema = Schema.Struct({
  id: Schema.String,
  description: Schema.optionalKey(Schema.String),
  initial: Schema.String,
  states: Schema.Array(StateDefinitionSchema),
  events: Schema.Array(Schema.String),
  transitions: Schema.Array(TransitionDefinitionSchema),
});
// The reply's serializer drops fields its schema does not name: this stops compiling until a field added to
// MachineDefinition is added here too.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const _sameShape: Same<Types.DeepMutable<typeof MachineDefinitionSchema.Type>, MachineDefinition> = true;

/** A lifecycle machine as the inspection api lists it. */
export const MachineDefinitionOutSchema = Schema.Struct({
  kind: Schema.String,
  description: Schema.String,
  definition: MachineDefinitionSchema,
});
export type MachineDefinitionOut = typeof MachineDefinitionOutSchema.Type;

export function listMachineDefinitions(): MachineDefinitionOut[] {
  return Object.entries(machineKinds).map(([kind, k]) => ({
    kind,
    description: k.description,
    definition: machineDefinition(k.machine),
  }));
}

const Instant = Schema.String;

export const ActorOutSchema = Schema.Struct({
  kind: Schema.String,
  id: Schema.String,
  state: Schema.String,
  status: Schema.String,
  version: Schema.Finite,
  terminal: Schema.Boolean,
  deadline_at: Schema.NullOr(Instant),
  owner_replica: Schema.NullOr(Schema.String),
  last_error: Schema.NullOr(Schema.String),
  /** the machine's context without secret-looking keys, long strings and arrays shortened */
  context: Schema.Unknown,
  created_at: Instant,
  updated_at: Instant,
});
export type ActorOut = typeof ActorOutSchema.Type;

export const TransitionOutSchema = Schema.Struct({
  seq: Schema.Finite,
  event: Schema.String,
  /** the event's payload, secret-looking keys redacted */
  payload: Schema.Unknown,
  from_state: Schema.NullOr(Schema.String),
  to_state: Schema.String,
  at: Instant,
  /** the replica that made the transition */
  replica: Schema.String,
});
type TransitionOut = typeof TransitionOutSchema.Type;


export interface TransitionPage {
  items: TransitionOut[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_STRING = 2_000;
const MAX_ITEMS = 100;
const DEFAULT_TRANSITIONS_LIMIT = 50;
const MAX_TRANSITIONS_LIMIT = 500;

/** Shortens what an operator does not need whole (a 1 MB SQL text, a 10,000-item list) after redaction. */
function summarize(value: unknown): unknown {
  if (typeof value === 'string') return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}… (${value.length} chars)` : value;
  if (Array.isArray(value)) {
    const head = value.slice(0, MAX_ITEMS).map(summarize);
    return value.length > MAX_ITEMS ? [...head, `… (${value.length - MAX_ITEMS} more)`] : head;
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, summarize(v)]));
  }
  return value;
}

export async function getActor(db: Queryable, kind: string, id: string): Promise<ActorOut | null> {
  if (!UUID.test(id)) return null;
  const row = await loadActor(db, kind, id);
  if (!row) return null;
  const snapshot = decodeJson<PersistedSnapshot>(row.snapshotText);
  return {
    kind: row.kind,
    id: row.id,
    state: row.state,
    status: row.status,
    version: row.version,
    terminal: row.terminal,
    deadline_at: row.deadlineAt ? row.deadlineAt.toISOString() : null,
    owner_replica: row.ownerReplica,
    last_error: row.lastError,
    context: summarize(redactSecrets(snapshot.context)),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function encodeCursor(seq: number): string {
  return Buffer.from(JSON.stringify({ seq }), 'utf8').toString('base64url');
}

function decodeCursor(kind: string, id: string, cursor: string): number {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Number.isSafeInteger(parsed?.seq) && parsed.seq >= 0) return parsed.seq;
  } catch {
    // falls through to the error below
  }
  throw new ActorError('invalid_cursor', kind, id, 'malformed cursor');
}

/** One actor's transitions in seq order, keyset-paged. */
export async function listTransitions(
  db: Queryable,
  kind: string,
  id: string,
  opts: { cursor?: string | null; limit?: number } = {},
): Promise<TransitionPage> {
  const limit = Math.min(Math.max(1, Math.trunc(opts.limit ?? DEFAULT_TRANSITIONS_LIMIT)), MAX_TRANSITIONS_LIMIT);
  const after = opts.cursor ? decodeCursor(kind, id, opts.cursor) : 0;
  if (!UUID.test(id)) return { items: [], next_cursor: null };
  const rows = await db.query<{ seq: string | number; event: string; event_payload: unknown; from_state: string | null; to_state: string; at: Date; replica: string }>(
    `select seq, event, event_payload, from_state, to_state, at, replica from actor_transitions
     where kind = $1 and id = $2::uuid and seq > $3 order by seq limit $4`,
    [kind, id, after, limit + 1],
  );
  const items: TransitionOut[] = rows.slice(0, limit).map((r) => ({
    seq: Number(r.seq),
    event: r.event,
    payload: redactSecrets(r.event_payload),
    from_state: r.from_state,
    to_state: r.to_state,
    at: r.at.toISOString(),
    replica: r.replica,
  }));
  return { items, next_cursor: rows.length > limit ? encodeCursor(items[items.length - 1].seq) : null };
}

const Backlog = Schema.Struct({ count: Schema.Finite, oldest_at: Schema.NullOr(Instant) });

export const ClusterOutSchema = Schema.Struct({
  replicas: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      internal_url: Schema.String,
      started_at: Instant,
      heartbeat_at: Instant,
      live: Schema.Boolean,
      draining: Schema.Boolean,
      live_actors: Schema.Finite,
      pending_effects: Schema.Finite,
    }),
  ),
  /** live actors whose deadline passed and the reaper has not moved on yet */
  overdue_deadlines: Backlog,
  /** effects committed with their transitions and not yet run */
  pending_effects: Backlog,
});
export type ClusterOut = typeof ClusterOutSchema.Type;

/** The cluster as operators see it: each replica with what it owns, overdue deadlines and pending effects. */
export async function clusterView(db: Queryable, presenceTtlS: number): Promise<ClusterOut> {
  const replicas = await db.query<{
    id: string;
    internal_url: string;
    started_at: Date;
    heartbeat_at: Date;
    draining: boolean;
    live: boolean;
    live_actors: number;
    pending_effects: number;
  }>(
    `select r.id, r.internal_url, r.started_at, r.heartbeat_at, r.draining,
            r.heartbeat_at > now() - make_interval(secs => $1) as live,
            (select count(*) from actors a where a.owner_replica = r.id and not a.terminal)::int as live_actors,
            (select count(*) from actor_effects e where e.owner_replica = r.id)::int as pending_effects
       from replicas r order by r.id`,
    [presenceTtlS],
  );
  const [overdue] = await db.query<{ count: number; oldest: Date | null }>(
    `select count(*)::int as count, min(deadline_at) as oldest from actors where not terminal and deadline_at < now()`,
  );
  const [pending] = await db.query<{ count: number; oldest: Date | null }>(`select count(*)::int as count, min(created_at) as oldest from actor_effects`);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    replicas: replicas.map((r) => ({
      id: r.id,
      internal_url: r.internal_url,
      started_at: r.started_at.toISOString(),
      heartbeat_at: r.heartbeat_at.toISOString(),
      live: r.live,
      draining: r.draining,
      live_actors: r.live_actors,
      pending_effects: r.pending_effects,
    })),
    overdue_deadlines: { count: overdue.count, oldest_at: iso(overdue.oldest) },
    pending_effects: { count: pending.count, oldest_at: iso(pending.oldest) },
  };
}

const PG_TIMESTAMP = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,6})?([+-]\d\d(:\d\d)?|Z)?$/;

export const ActorSummarySchema = Schema.Struct({
  kind: Schema.String,
  id: Schema.String,
  state: Schema.String,
  status: Schema.String,
  terminal: Schema.Boolean,
  version: Schema.Finite,
  deadline_at: Schema.NullOr(Instant),
  owner_replica: Schema.NullOr(Schema.String),
  updated_at: Instant,
});
export type ActorSummaryOut = typeof ActorSummarySchema.Type;

/** Actors newest first, filtered by kind, state, owner and liveness; keyset-paged. */
export async function listActors(
  db: Queryable,
  opts: { kind?: string; state?: string; owner?: string; live?: boolean; cursor?: string; limit?: number },
): Promise<{ items: ActorSummaryOut[]; next_cursor: string | null }> {
  const limit = Math.min(Math.max(1, Math.trunc(opts.limit ?? DEFAULT_TRANSITIONS_LIMIT)), MAX_TRANSITIONS_LIMIT);
  let after: { u: string; id: string } | null = null;
  if (opts.cursor) {
    try {
      after = JSON.parse(Buffer.from(opts.cursor, 'base64url').toString('utf8'));
    } catch {
      after = null;
    }
    if (!after || typeof after.u !== 'string' || typeof after.id !== 'string' || !UUID.test(after.id) || !PG_TIMESTAMP.test(after.u)) {
      throw new ActorError('invalid_cursor', opts.kind ?? '', '', 'malformed cursor');
    }
  }
  const rows = await db.query<{
    kind: string;
    id: string;
    state: string;
    status: string;
    terminal: boolean;
    version: string | number;
    deadline_at: Date | null;
    owner_replica: string | null;
    updated_at: Date;
    updated_exact: string;
  }>(
    `select kind, id::text as id, state, status, terminal, version, deadline_at, owner_replica, updated_at,
            updated_at::text as updated_exact from actors
      where ($1::text is null or kind = $1) and ($2::text is null or state = $2) and ($3::text is null or owner_replica = $3)
        and ($4::boolean is null or terminal = not $4)
        and ($5::timestamptz is null or (updated_at, id) < ($5::timestamptz, $6::uuid))
      order by updated_at desc, id desc limit $7`,
    [opts.kind ?? null, opts.state ?? null, opts.owner ?? null, opts.live ?? null, after?.u ?? null, after?.id ?? null, limit + 1],
  );
  const items: ActorSummaryOut[] = rows.slice(0, limit).map((r) => ({
    kind: r.kind,
    id: r.id,
    state: r.state,
    status: r.status,
    terminal: r.terminal,
    version: Number(r.version),
    deadline_at: r.deadline_at ? r.deadline_at.toISOString() : null,
    owner_replica: r.owner_replica,
    updated_at: r.updated_at.toISOString(),
  }));
  const last = rows.length > limit ? rows[limit - 1] : null;
  // The cursor keeps PostgreSQL's microseconds: a millisecond ISO time would skip or repeat rows at a page boundary.
  return { items, next_cursor: last ? Buffer.from(JSON.stringify({ u: last.updated_exact, id: last.id })).toString('base64url') : null };
}
