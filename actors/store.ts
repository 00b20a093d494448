// SQL for the actors and actor_transitions tables. Each write is ONE statement: the actor row and its history
// row go together through a data-modifying CTE (and the NOTIFY rides along in RETURNING, delivered at commit),
// because a transition's cost is dominated by round trips and the commit's fsync, not by the rows themselves.
import type { Queryable } from '../runtime/db.ts';
import { exec, sql, type SqlFragment } from '../runtime/sql.ts';
import { decodeJson } from './snapshotCodec.ts';
import type { ActorStatus, EntityWrite } from './types.ts';

/** The NOTIFY channel every replica listens on to wake its waiters for transitions made elsewhere. */
export const TRANSITIONS_CHANNEL = 'eider_actor_transitions';

export interface ActorRow extends ActorStatus {
  deadlineAt: Date | null;
  snapshotText: string;
  /** context keys the snapshot leaves out, read from the entity's row (a kind's `externalContext`) */
  external: Record<string, unknown> | null;
  ownerReplica: string | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One effect as the outbox keeps it: its name and its params as JSON (snapshotCodec's encodeJson). */
interface OutboxEffect {
  effect: string;
  paramsText: string;
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
  /** The transition's effects for the outbox, in order (none: no outbox row). */
  effects: readonly OutboxEffect[];
  /** False for a quiet transition (a heartbeat): the actor row is written, no history row is appended. */
  history: boolean;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** An actors row as ACTOR_COLUMNS and the external column read it (version is a bigint, read as text). */
interface ActorDbRow {
  kind: string;
  id: string;
  version: string | number;
  state: string;
  status: string;
  terminal: boolean;
  deadline_at: Date | null;
  snapshot: string;
  external: Record<string, unknown> | string | null;
  owner_replica: string | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

function toActorRow(r: ActorDbRow): ActorRow {
  return {
    kind: r.kind,
    id: r.id,
    version: Number(r.version),
    state: r.state,
    status: r.status,
    terminal: r.terminal,
    deadlineAt: r.deadline_at ?? null,
    snapshotText: r.snapshot,
    external: r.external ? (typeof r.external === 'string' ? JSON.parse(r.external) : r.external) : null,
    ownerReplica: r.owner_replica ?? null,
    lastError: r.last_error ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const ACTOR_COLUMNS = `a.kind, a.id::text as id, a.version, a.state, a.status, a.terminal, a.deadline_at, a.snapshot::text as snapshot,
  a.owner_replica, a.last_error, a.created_at, a.updated_at`;

/** Per kind, an SQL expression over the actor row `a` giving the jsonb object of the context keys its snapshot
 *  leaves out (they live in the entity's row). */
export type ExternalContexts = Readonly<Record<string, string>>;

const externalColumn = (externals: ExternalContexts) => {
  const cases = Object.entries(externals).map(([kind, expr]) => `when '${kind.replace(/'/g, "''")}' then (${expr})`);
  return cases.length ? `case a.kind ${cases.join(' ')} end as external` : 'null::jsonb as external';
};

/** The outbox rows of a transition (a CTE, with its leading comma), inserted by its own statement once `from` (the
 *  actor write) produced a row. One effect, the usual case, is one row from scalar parameters: unpacking a JSON
 *  array costs the statement about 6% of its throughput. */
function outbox(from: 'a' | 'u', w: TransitionWrite): SqlFragment {
  const source = sql.trusted(from);
  if (w.effects.length === 0) return sql``;
  if (w.effects.length === 1) {
    const [e] = w.effects;
    return sql`, fx as (
     insert into actor_effects (kind, actor_id, version, idx, effect, params, owner_replica)
     select ${w.kind}, ${w.id}::uuid, ${source}.version, 0, ${e.effect}, ${e.paramsText}::jsonb, ${w.replica} from ${source}
     returning 1
   )`;
  }
  return sql`, fx as (
     insert into actor_effects (kind, actor_id, version, idx, effect, params, owner_replica)
     select ${w.kind}, ${w.id}::uuid, ${source}.version, t.ord - 1, t.effect, t.params::jsonb, ${w.replica}
     from ${source}, unnest(${w.effects.map((e) => e.effect)}::text[], ${w.effects.map((e) => e.paramsText)}::text[]) with ordinality as t(effect, params, ord)
     returning 1
   )`;
}

/** Announces the transition to other replicas when it carries a notice (status changes only). */
const notifyColumn = (w: TransitionWrite) =>
  w.notifyPayload === null ? sql`null as n` : sql`pg_notify(${sql.trusted(`'${TRANSITIONS_CHANNEL}'`)}, ${w.notifyPayload}::text) as n`;

/** Inserts a new actor at version 1 with its first history row; a duplicate (kind, id) raises 23505. */
export async function insertActor(q: Queryable, w: TransitionWrite, entity?: EntityWrite): Promise<void> {
  // The entity's own row (its INSERT) may ride in the same statement: one round trip, no transaction.
  const entityCte = entity ? sql`, e as (${entity} returning 1)` : sql``;
  await exec(
    q,
    sql`with a as (
       insert into actors (kind, id, version, state, status, terminal, deadline_at, snapshot, owner_replica, last_error)
       values (${w.kind}, ${w.id}::uuid, 1, ${w.state}, ${w.status}, ${w.terminal}, ${iso(w.deadlineAt)}::timestamptz, ${w.snapshotText}::jsonb, ${w.replica}, ${w.lastError})
       returning version
     )${entityCte}${outbox('a', w)}
     insert into actor_transitions (kind, id, seq, event, event_payload, from_state, to_state, at, replica)
     select ${w.kind}, ${w.id}::uuid, a.version, ${w.event}, ${w.payloadText}::jsonb, null, ${w.state}, ${iso(w.at)}::timestamptz, ${w.replica} from a
     returning seq, ${notifyColumn(w)}`,
  );
}

/** Finished transitions' outbox rows deleted by another statement (a CTE, with its leading comma): a data-modifying
 *  CTE runs whatever the rest of the statement does, so they go even when its version check is lost. */
function finishedEffects(done: readonly FinishedEffects[]): SqlFragment {
  if (done.length === 0) return sql``;
  return sql`, done_fx as (
     delete from actor_effects where (kind, actor_id, version) in (select * from unnest(${done.map((d) => d.kind)}::text[], ${done.map((d) => d.id)}::uuid[], ${done.map((d) => d.version)}::bigint[]))
     returning 1
   )`;
}

/** A transition whose effects all ran, named by its actor and version. */
export interface FinishedEffects {
  kind: string;
  id: string;
  version: number;
}

/**
 * Writes a transition if the actor is still at `expectedVersion`; returns the new version, or null when another
 * writer got there first (the caller reloads and re-delivers). `finished`: other transitions whose outbox rows go in
 * the same statement (whatever its version check), saving them a statement of their own.
 */
export async function writeTransition(
  q: Queryable,
  expectedVersion: number,
  w: TransitionWrite,
  entity?: EntityWrite,
  finished: readonly FinishedEffects[] = [],
): Promise<number | null> {
  // The entity update rides in the same statement, guarded on the actor update having won the version check.
  const entityCte = entity ? sql`, e as (${entity} and exists (select 1 from u) returning 1)` : sql``;
  const last = w.history
    ? sql`insert into actor_transitions (kind, id, seq, event, event_payload, from_state, to_state, at, replica)
       select ${w.kind}, ${w.id}::uuid, u.version, ${w.event}, ${w.payloadText}::jsonb, ${w.fromState}, ${w.state}, ${iso(w.at)}::timestamptz, ${w.replica} from u
       returning seq, ${notifyColumn(w)}`
    : sql`select u.version as seq, ${notifyColumn(w)} from u`;
  const rows = await exec(
    q,
    sql`with u as (
       update actors set version = version + 1, state = ${w.state}, status = ${w.status}, terminal = ${w.terminal},
         deadline_at = ${iso(w.deadlineAt)}::timestamptz, snapshot = ${w.snapshotText}::jsonb, last_error = ${w.lastError}, updated_at = now()
       where kind = ${w.kind} and id = ${w.id}::uuid and version = ${expectedVersion}
       returning version
     )${entityCte}${outbox('u', w)}${finishedEffects(finished)}
     ${last}`,
  );
  return rows.length === 0 ? null : Number(rows[0].seq);
}

/** Where an actor stands, without its snapshot: what waiters read. */
export async function loadStatus(q: Queryable, kind: string, id: string): Promise<ActorStatus | null> {
  const rows = await q.query<{ version: number; state: string; status: string; terminal: boolean }>(
    `select version, state, status, terminal from actors where kind = $1 and id = $2::uuid`,
    [kind, id],
  );
  return rows.length === 0 ? null : { kind, id, version: Number(rows[0].version), state: rows[0].state, status: rows[0].status, terminal: rows[0].terminal };
}

export async function loadActor(q: Queryable, kind: string, id: string, externals: ExternalContexts = {}): Promise<ActorRow | null> {
  const rows = await q.query<ActorDbRow>(`select ${ACTOR_COLUMNS}, ${externalColumn(externals)} from actors a where a.kind = $1 and a.id = $2::uuid`, [kind, id]);
  return rows.length === 0 ? null : toActorRow(rows[0]);
}

export interface TransitionRow {
  seq: number;
  event: string;
  replica: string;
  toState: string;
}

export async function loadTransition(q: Queryable, kind: string, id: string, seq: number): Promise<TransitionRow | null> {
  const rows = await q.query<{ seq: string | number; event: string; replica: string; to_state: string }>(
    `select seq, event, replica, to_state from actor_transitions where kind = $1 and id = $2::uuid and seq = $3`,
    [kind, id, seq],
  );
  if (rows.length === 0) return null;
  return { seq: Number(rows[0].seq), event: rows[0].event, replica: rows[0].replica, toState: rows[0].to_state };
}

/** The live actors of the given kinds that `replica` owns, for rehydration at startup. */
export async function listOwnedLive(q: Queryable, replica: string, kinds: readonly string[], externals: ExternalContexts = {}): Promise<ActorRow[]> {
  const rows = await q.query<ActorDbRow>(
    `select ${ACTOR_COLUMNS}, ${externalColumn(externals)} from actors a where a.owner_replica = $1 and not a.terminal and a.kind = any($2::text[])`,
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

/** A pending effect of the outbox, as the effect runner claims it. */
export interface EffectRow {
  kind: string;
  id: string;
  version: number;
  idx: number;
  effect: string;
  params: unknown;
}

/** Removes the outbox rows of transitions whose effects have all run (or were given up). */
export async function deleteEffects(q: Queryable, done: readonly FinishedEffects[]): Promise<void> {
  if (done.length === 0) return;
  await q.query(
    `delete from actor_effects where (kind, actor_id, version) in (select * from unnest($1::text[], $2::uuid[], $3::bigint[]))`,
    [done.map((d) => d.kind), done.map((d) => d.id), done.map((d) => d.version)],
  );
}

/**
 * Claims pending effects for `replica`, whole transitions at a time and each actor's in version order: its own that
 * are not running here (`running`, as `kind:id:version`) and at least `minAgeS` old (younger ones are still on their
 * way through the fast path), and, unless `presenceTtlS` is null, those of replicas without a heartbeat in the last
 * `presenceTtlS` (adopted). An actor is claimed through the first row of its earliest pending transition (locked, so
 * a concurrent claimer skips the whole actor) together with its later pending transitions up to the first one this
 * replica may not run; `limit` counts actors. Claiming rows one by one let a limit, or another replica's lock, cut
 * through a transition, whose outbox rows were then deleted with the part that ran.
 */
export async function claimEffects(
  q: Queryable,
  replica: string,
  opts: { kinds: readonly string[]; running: readonly string[]; minAgeS: number; presenceTtlS: number | null; limit: number },
): Promise<EffectRow[]> {
  // Which transitions (their first row `x`) this replica may run; repeated on the locked row so that a claim another
  // replica committed meanwhile (its owner changed) is re-checked on the row's newest version.
  const claimable = `x.idx = 0 and x.kind = any($2::text[])
         and x.created_at <= now() - make_interval(secs => $3)
         and (x.owner_replica = $1 or ($4::float8 is not null and not exists (
           select 1 from replicas r where r.id = x.owner_replica and r.heartbeat_at > now() - make_interval(secs => $4::float8))))
         and not (x.kind || ':' || x.actor_id::text || ':' || x.version::text = any($5::text[]))`;
  const rows = await q.query<{ kind: string; id: string; version: string; idx: number; effect: string; params: string | null }>(
    `with cand as (
       select x.kind, x.actor_id, x.version from actor_effects x where ${claimable}
     ), heads as (
       select x.kind, x.actor_id, x.version from actor_effects x
       where ${claimable}
         and not exists (select 1 from actor_effects y where y.kind = x.kind and y.actor_id = x.actor_id and y.version < x.version)
       order by x.created_at, x.kind, x.actor_id
       limit $6
       for update skip locked
     ), claim as (
       select c.kind, c.actor_id, c.version from cand c join heads h on h.kind = c.kind and h.actor_id = c.actor_id and c.version >= h.version
       where not exists (
         select 1 from actor_effects y
         where y.kind = c.kind and y.actor_id = c.actor_id and y.idx = 0 and y.version > h.version and y.version < c.version
           and not exists (select 1 from cand c2 where c2.kind = y.kind and c2.actor_id = y.actor_id and c2.version = y.version))
     )
     update actor_effects e set owner_replica = $1, attempts = e.attempts + 1
     from claim c where e.kind = c.kind and e.actor_id = c.actor_id and e.version = c.version
     returning e.kind, e.actor_id::text as id, e.version, e.idx, e.effect, e.params::text as params`,
    [replica, opts.kinds, opts.minAgeS, opts.presenceTtlS, opts.running, opts.limit],
  );
  return rows
    .map((r) => ({ kind: r.kind, id: r.id, version: Number(r.version), idx: r.idx, effect: r.effect, params: r.params === null ? undefined : decodeJson(r.params) }))
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.id.localeCompare(b.id) || a.version - b.version || a.idx - b.idx);
}
