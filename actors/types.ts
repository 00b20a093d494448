// The actor host's contract: what a hosted kind declares (machine, projection, effects, entity writes), what senders
// and waiters get back, and the host's interface. Its own module, so the systems that implement the host
// (delivery.ts, transitionWrites.ts, effectRunner.ts, actorCache.ts, notifications.ts…) and host.ts that wires them
// import it without importing one another in a circle.
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import type { Db, Queryable } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import type { SqlFragment } from '../runtime/sql.ts';
import type { AgentConnectionEvent, ElasticAgentEvent, QueryEvent, SqlSessionEvent, StatementEvent, StorageMigrationEvent } from '../machines/index.ts';
import type { GroupCommitOptions } from './groupCommit.ts';

/** An entity row's write (`INSERT …` at spawn, `UPDATE … WHERE …` after), written by the transition's own statement. */
export type EntityWrite = SqlFragment;

/** What `machines/<kind>.ts` `project<Kind>(snapshot)` returns at least; a kind's own fields (agent id, row
 *  count…) reach its onPersist hook untouched. */
export interface Projection {
  status: string;
  deadlineAt: number | null;
  terminal: boolean;
  error?: string | null;
}

export interface ActorEvent {
  type: string;
  /** Epoch ms; the host fills it in when the sender did not, once per delivery (retries reuse it). */
  at?: number;
  [field: string]: unknown;
}

/** The events each hosted lifecycle accepts, from its machine's own event type. */
interface KindEvents {
  query: QueryEvent;
  sqlSession: SqlSessionEvent;
  statement: StatementEvent;
  agentConnection: AgentConnectionEvent;
  elasticAgent: ElasticAgentEvent;
  storageMigration: StorageMigrationEvent;
}

/** An event as a sender writes it: `at` may be left to the host. */
type Sent<E> = E extends { at: number } ? Omit<E, 'at'> & { at?: number } : E;

/** What `send` takes for a kind: a lifecycle's own events (checked at compile time), anything for other kinds
 *  (test machines, and callers holding the kind as a plain string, like the reaper's `deadline`). */
export type EventFor<K extends string> = K extends keyof KindEvents ? Sent<KindEvents[K]> : ActorEvent;

export interface EffectContext {
  kind: string;
  id: string;
  /** The version the transition that asked for this effect was persisted at. */
  version: number;
  /** Sends a follow-up event to this actor (it queues behind the current delivery; never deadlocks). */
  send(event: ActorEvent): Promise<SendResult>;
  host: ActorHost;
  logger: Logger;
}

/** Implements one named action of a machine. Effects run after the commit, at least once per accepted transition
 *  (a failing one is retried; one a dead process never finished is run again from the outbox), so they must
 *  tolerate repetition. */
export type EffectImpl = EffectSignature['run'];
/** `params` are the machine action's own params, whose shape the machine that names the action fixes: a method
 *  signature (checked bivariantly) lets each implementation declare that shape, while the host hands them on as
 *  `unknown`. */
interface EffectSignature {
  run(ctx: EffectContext, params: unknown): unknown;
}

/** `onPersist` and `entityWrite` are method signatures so that a kind typed with its own projection (a query's
 *  QueryProjection) is registered among kinds of the base `Projection`: the host hands each the projection its own
 *  `project` returned. */
export interface ActorKind<P extends Projection = Projection> {
  machine: AnyStateMachine;
  project: (snapshot: AnyMachineSnapshot) => P;
  effects: Record<string, EffectImpl>;
  /** Writes the kind's entity columns (queries, agents, sessions…) in the same transaction as the actor row.
   *  When supervision fails an actor whose machine ignores `supervisor.failed`, it receives the projection of
   *  the last snapshot with status `failed`, terminal, no deadline and the reason as `error`. */
  onPersist?(tx: Queryable, id: string, snapshot: AnyMachineSnapshot, projection: P): Promise<void>;
  /** The same, as one `UPDATE … WHERE …` statement the host folds into the transition's own statement (no
   *  BEGIN/COMMIT round trips): the hot path for kinds whose entity is a single row. Same projection rules. */
  entityWrite?(id: string, projection: P, attachments?: Readonly<Record<string, unknown>>): EntityWrite;
  /** Event fields the entity's row keeps and the machine ignores (a small result file sent inline): handed to
   *  `entityWrite` with the transition that carries them, left out of its history row. */
  eventAttachments?: readonly string[];
  /** Effects that do nothing in this deployment (elastic bookkeeping with elastic compute off): never written to
   *  the outbox nor run. */
  inertEffects?: readonly string[];
  /** Effects that must happen however long the part they need is away (a terminal state's cleanup, which
   *  supervision cannot help: a terminal actor moves nowhere, so giving the effect up would only lose it). They are
   *  retried with backoff (capped at maxBackoffMs) until they succeed, never handed to supervision; their outbox row
   *  stays meanwhile, so a host that closes or dies leaves them to its next start or another replica. Their
   *  implementation returns normally when nothing is left to do (what it would clean up is gone). */
  durableEffects?: readonly string[];
  /** Events that only refresh presence (heartbeats): when one changes neither state nor status and asks for no
   *  effect, the snapshot is written but no history row is appended. */
  quietEvents?: readonly string[];
  /** Context keys the entity's row already holds (a query's SQL): left out of the persisted snapshot and of the
   *  spawn's history row, and read back on load with `select`, an SQL expression over the actor row `a` giving a
   *  jsonb object of those keys. */
  externalContext?: { keys: readonly string[]; select: string };
  /** Which transitions other replicas hear of through NOTIFY: every change of status (the default), or only the
   *  end (`terminal`), for a kind whose waiters on other replicas wait only for its end. A NOTIFY holds a global
   *  lock through the commit and wakes every replica's LISTEN. */
  announceAcross?: 'status' | 'terminal';
}

interface SupervisionOptions {
  /** Consecutive failures of one delivery or one effect before the actor is moved to failed (a kind's durable
   *  effects excepted). */
  maxFailures?: number;
  backoffMs?: number;
  maxBackoffMs?: number;
}

export interface ActorHostOptions {
  db: Db;
  replicaId: string;
  kinds: Record<string, ActorKind>;
  logger: Logger;
  now?: () => number;
  supervision?: SupervisionOptions;
  /** Reload-and-redeliver attempts after losing the optimistic version check. */
  maxConflictRetries?: number;
  /** Live actors kept in memory; the oldest are dropped beyond this (they reload on their next event). */
  cacheSize?: number;
  /** How transitions of different actors ready at the same time share a commit (groupCommit.ts). */
  groupCommit?: GroupCommitOptions;
  /** How long the outbox rows of a transition whose effects ran wait for the next transition's statement to delete
   *  them with its own writes, before a statement of their own does (default 20 ms). */
  outboxDeleteWaitMs?: number;
}

export interface ActorView extends ActorStatus {
  deadlineAt: number | null;
  snapshot: AnyMachineSnapshot;
}

type SendOutcome = 'persisted' | 'unchanged' | 'failed';

export interface SendResult {
  /** persisted: a new transition was written; unchanged: the machine ignored the event (or the actor is
   *  terminal); failed: the delivery kept throwing and supervision moved the actor to failed. */
  outcome: SendOutcome;
  actor: ActorView;
  /** Settles when this transition's effects have run (or were given up); never rejects. */
  effectsDone: Promise<void>;
}

export interface SpawnResult {
  actor: ActorView;
  /** Runs the initial effects (after the caller's transaction committed, when `tx` was given); idempotent. */
  start(): Promise<void>;
}

/** Where an actor stands, as a waiter learns it: from a transition's notice, or one narrow read. */
export interface ActorStatus {
  kind: string;
  id: string;
  version: number;
  state: string;
  status: string;
  terminal: boolean;
  /** The projection the transition wrote (the kind's entity columns came from it): known only when this replica
   *  persisted the transition, so a waiter can answer without reading the entity row again. */
  projection?: Projection;
}

/** An actor's status as announced after each transition persisted by this replica (with its projection), and after
 *  each status change persisted by another (through NOTIFY, without one): with the replica that persisted it, so a
 *  replica skips its own. */
export type TransitionNotice = ActorStatus & { replica: string };

/** See `Notifications.watch`. */
export interface ActorWatch {
  /** Resolves as `waitFor` does, counting what was heard since the watch began; `readFirst` reads the actor's
   *  status at once (a caller that did not read its entity row after the watch began). */
  wait(kind: string, timeoutMs: number, opts?: { readFirst?: boolean }): Promise<ActorStatus>;
  cancel(): void;
}

export interface ActorHost {
  readonly replicaId: string;
  /** `entity`: the entity row's INSERT, written in the actor's own statement; it must hold the initial projection. */
  spawn(kind: string, id: string, input: unknown, opts?: { tx?: Queryable; entity?: EntityWrite }): Promise<SpawnResult>;
  send<K extends string>(kind: K, id: string, event: EventFor<K>): Promise<SendResult>;
  /** The actor's persisted state, read from the database. */
  get(kind: string, id: string): Promise<ActorView | null>;
  subscribe(kind: string, id: string, listener: (n: TransitionNotice) => void): () => void;
  /** Resolves with the actor's state once it is terminal, or with its current state when `timeoutMs` passes first. */
  waitForTerminal(kind: string, id: string, timeoutMs: number): Promise<ActorStatus>;
  /** A terminal wait registered before the caller reads the actor's entity row itself (Notifications.watch). */
  watchTerminal(kinds: readonly string[], id: string): ActorWatch;
  /** The same, until `until` holds for the actor's state (or it ended, or the wait passed). */
  waitFor(kind: string, id: string, until: (v: { state: string; status: string; terminal: boolean }) => boolean, timeoutMs: number): Promise<ActorStatus>;
  /** Loads the live actors this replica owns into memory and runs the effects it left pending; returns how many
   *  actors. */
  rehydrate(): Promise<number>;
  /** Claims and runs pending outbox effects: this replica's own that are not running here, and (unless
   *  `presenceTtlS` is null) those of replicas not seen for `presenceTtlS`. Returns how many effects were run. */
  recoverEffects(opts: { presenceTtlS: number | null; minAgeS?: number; limit?: number }): Promise<number>;
  /** The replica drains: every waiter answers now with its actor's current state, and later ones at once. */
  releaseWaiters(): void;
  /** Resolves once every queued delivery and effect has settled. */
  idle(): Promise<void>;
  close(): Promise<void>;
}
