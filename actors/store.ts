// SQL for the actors and actor_transitions tables. Each write is ONE statement: the actor row and its history
// row go together through a data-modifying CTE (and the NOTIFY rides along in RETURNING, delivered at commit),
// because a transition's cost is dominated by round trips and the commit's fsync, not by the rows themselves.
import type { Queryable } from '../runtime/db.ts';

/** The NOTIFY channel every replica listens on to wake its waiters for transitions made elsewhere. */
export const TRANSITIONS_CHANNEL = 'eider_actor_transitions';

export interface ActorRow {
  kind: string;
  id: string;
  version: number;
  state: string;
  status: string;
  terminal: boolean;
  deadlineAt: Date | null;
  snapshotText: string;
  ownerReplica: string | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What a transition writes: the projected columns, the snapshot, and its history row. */
export interface TransitionWrite {
  kind: string;
  id: string;
  state: string;
  status: string;
  terminal: boolean;
  deadlineAt: number | null;
  snapshotText: string;
  lastError: string | null;
  event: string;
  payloadText: string;
  fromState: string | null;
  at: number;
  replica: string;
  /** JSON sent on TRANSITIONS_CHANNEL when the write commits; null sends nothing. */
  notifyPayload: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function toActorRow(r: any): ActorRow {
  return {
    kind: r.kind,
    id: r.id,
    version: Number(r.version),
    state: r.state,
    status: r.status,
    terminal: r.terminal,
    deadlineAt: r.deadline_at ?? null,
    snapshotText: r.snapshot,
    ownerReplica: r.owner_replica ?? null,
    lastError: r.last_error ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const ACTOR_COLUMNS = `kind, id::text as id, version, state, status, terminal, deadline_at, snapshot::text as snapshot,
  owner_replica, last_error, created_at, updated_at`;

/** Inserts a new actor at version 1 with its first history row; a duplicate (kind, id) raises 23505. */
export async function insertActor(q: Queryable, w: TransitionWrite, entity?: EntityWrite): Promise<void> {
  // The entity's own row (its INSERT) may ride in the same statement: one round trip, no transaction.
  const entityCte = entity ? `, e as (${renumber(entity.sql, INSERT_PARAMS)} returning 1)` : '';
  await q.query(
    `with a as (
       insert into actors (kind, id, version, state, status, terminal, deadline_at, snapshot, owner_replica, last_error)
       values ($1, $2::uuid, 1, $3, $4, $5, $6::timestamptz, $7::jsonb, $8, $9)
       returning version
     )${entityCte}
     insert into actor_transitions (kind, id, seq, event, event_payload, from_state, to_state, at, replica)
     select $1, $2::uuid, a.version, $10, $11::jsonb, null, $3, $12::timestamptz, $8 from a
     returning seq, case when $13::text is null then null else pg_notify('${TRANSITIONS_CHANNEL}', $13::text) end as n`,
    [w.kind, w.id, w.state, w.status, w.terminal, iso(w.deadlineAt), w.snapshotText, w.replica, w.lastError,
      w.event, w.payloadText, iso(w.at), w.notifyPayload, ...(entity?.params ?? [])],
  );
}

const INSERT_PARAMS = 13;
const renumber = (sql: string, offset: number) => sql.replace(/\$(\d+)/g, (_m, n) => `$${Number(n) + offset}`);

/**
 * Writes a transition if the actor is still at `expectedVersion`; returns the new version, or null when another
 * writer got there first (the caller reloads and re-delivers).
 */
/** An entity row update (`UPDATE … WHERE …`, its own $1…$n parameters) written with the transition. */
export interface EntityWrite {
  sql: string;
  params: unknown[];
}

const TRANSITION_PARAMS = 15;

export async function writeTransition(q: Queryable, expectedVersion: number, w: TransitionWrite, entity?: EntityWrite): Promise<number | null> {
  // The entity update rides in the same statement, guarded on the actor update having won the version check.
  const entityCte = entity
    ? `, e as (${renumber(entity.sql, TRANSITION_PARAMS)} and exists (select 1 from u) returning 1)`
    : '';
  const rows = await q.query<{ seq: bigint }>(
    `with u as (
       update actors set version = version + 1, state = $4, status = $5, terminal = $6, deadline_at = $7::timestamptz,
         snapshot = $8::jsonb, last_error = $9, updated_at = now()
       where kind = $1 and id = $2::uuid and version = $3
       returning version
     )${entityCte}
     insert into actor_transitions (kind, id, seq, event, event_payload, from_state, to_state, at, replica)
     select $1, $2::uuid, u.version, $10, $11::jsonb, $12, $4, $13::timestamptz, $14 from u
     returning seq, case when $15::text is null then null else pg_notify('${TRANSITIONS_CHANNEL}', $15::text) end as n`,
    [w.kind, w.id, expectedVersion, w.state, w.status, w.terminal, iso(w.deadlineAt), w.snapshotText, w.lastError,
      w.event, w.payloadText, w.fromState, iso(w.at), w.replica, w.notifyPayload, ...(entity?.params ?? [])],
  );
  return rows.length === 0 ? null : Number(rows[0].seq);
}

export async function loadActor(q: Queryable, kind: string, id: string): Promise<ActorRow | null> {
  const rows = await q.query(`select ${ACTOR_COLUMNS} from actors where kind = $1 and id = $2::uuid`, [kind, id]);
  return rows.length === 0 ? null : toActorRow(rows[0]);
}

export interface TransitionRow {
  seq: number;
  event: string;
  replica: string;
  toState: string;
}

export async function loadTransition(q: Queryable, kind: string, id: string, seq: number): Promise<TransitionRow | null> {
  const rows = await q.query(
    `select seq, event, replica, to_state from actor_transitions where kind = $1 and id = $2::uuid and seq = $3`,
    [kind, id, seq],
  );
  if (rows.length === 0) return null;
  return { seq: Number(rows[0].seq), event: rows[0].event, replica: rows[0].replica, toState: rows[0].to_state };
}

/** The live actors of the given kinds that `replica` owns, for rehydration at startup. */
export async function listOwnedLive(q: Queryable, replica: string, kinds: readonly string[]): Promise<ActorRow[]> {
  const rows = await q.query(
    `select ${ACTOR_COLUMNS} from actors where owner_replica = $1 and not terminal and kind = any($2::text[])`,
    [replica, kinds],
  );
  return rows.map(toActorRow);
}

/** Live actors whose deadline has passed at `nowMs`, earliest first (the partial deadline index serves this). */
export async function listDue(
  q: Queryable,
  nowMs: number,
  kinds: readonly string[],
  limit: number,
): Promise<{ kind: string; id: string }[]> {
  return q.query(
    `select kind, id::text as id from actors
     where not terminal and deadline_at is not null and deadline_at <= $1::timestamptz and kind = any($2::text[])
     order by deadline_at limit $3`,
    [new Date(nowMs).toISOString(), kinds, limit],
  );
}
