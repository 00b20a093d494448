// The actor host: runs each lifecycle machine instance as a persisted, supervised actor. The machines decide
// (xstate's pure `initialTransition`/`transition`); the host persists every accepted transition with an optimistic
// version check, appends it to the history, and records the effects the machine asked for in the outbox
// (actor_effects) in the same statement. It then runs them; effects a dead process never ran are found in the outbox
// by `recoverEffects` (on this replica after a restart, or on another once this one is gone).
//
// This file is the host's contract (the types below) and its facade. The work is done by systems sharing one
// resources type (systems.ts), wired in the constructor: delivery.ts (spawn, the delivery loop, supervision),
// transitionWrites.ts (a transition's store writes), effectRunner.ts (the outbox's effects), actorCache.ts (the live
// actors in memory), notifications.ts (local notices, LISTEN, waiters), ownership.ts (rehydrate, effect recovery)
// and backoff.ts (the waits between attempts).
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import type { Db, Queryable } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import type { AgentConnectionEvent, ElasticAgentEvent, QueryEvent, SqlSessionEvent, StatementEvent, StorageMigrationEvent } from '../machines/index.ts';
import { viewOf, type ActorCache } from './actorCache.ts';
import { Delivery } from './delivery.ts';
import { EffectRunner } from './effectRunner.ts';
import { ActorError } from './errors.ts';
import { Ownership } from './ownership.ts';
import { createResources, type HostResources } from './systems.ts';
import { TransitionWrites } from './transitionWrites.ts';
import type { GroupCommitOptions } from './groupCommit.ts';
import type { ActorStatus, EntityWrite } from './store.ts';
import type { ActorWatch } from './notifications.ts';

export type { EntityWrite };

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
export type EffectImpl = (ctx: EffectContext, params: any) => unknown;

export interface ActorKind<P extends Projection = Projection> {
  machine: AnyStateMachine;
  project: (snapshot: any) => P;
  effects: Record<string, EffectImpl>;
  /** Writes the kind's entity columns (queries, agents, sessions…) in the same transaction as the actor row.
   *  When supervision fails an actor whose machine ignores `supervisor.failed`, it receives the projection of
   *  the last snapshot with status `failed`, terminal, no deadline and the reason as `error`. */
  onPersist?: (tx: Queryable, id: string, snapshot: any, projection: P) => Promise<void>;
  /** The same, as one `UPDATE … WHERE …` statement the host folds into the transition's own statement (no
   *  BEGIN/COMMIT round trips): the hot path for kinds whose entity is a single row. Same projection rules. */
  entityWrite?: (id: string, projection: P, attachments?: Readonly<Record<string, unknown>>) => EntityWrite;
  /** Event fields the entity's row keeps and the machine ignores (a small result file sent inline): handed to
   *  `entityWrite` with the transition that carries them, left out of its history row. */
  eventAttachments?: readonly string[];
  /** Effects that do nothing in this deployment (elastic bookkeeping with elastic compute off): never written to
   *  the outbox nor run. */
  inertEffects?: readonly string[];
  /** Events that only refresh presence (heartbeats): when one changes neither state nor status and asks for no
   *  effect, the snapshot is written but no history row is appended. */
  quietEvents?: readonly string[];
  /** Context keys the entity's row already holds (a query's SQL): left out of the persisted snapshot and of the
   *  spawn's history row, and read back on load with `select`, an SQL expression over the actor row `a` giving a
   *  jsonb object of those keys. */
  externalContext?: { keys: readonly string[]; select: string };
}

export interface SupervisionOptions {
  /** Consecutive failures of one delivery or one effect before the actor is moved to failed. */
  maxFailures?: number;
  backoffMs?: number;
  maxBackoffMs?: number;
}

export interface ActorHostOptions {
  db: Db;
  replicaId: string;
  kinds: Record<string, ActorKind<any>>;
  logger: Logger;
  now?: () => number;
  supervision?: SupervisionOptions;
  /** Reload-and-redeliver attempts after losing the optimistic version check. */
  maxConflictRetries?: number;
  /** Live actors kept in memory; the oldest are dropped beyond this (they reload on their next event). */
  cacheSize?: number;
  /** How transitions of different actors ready at the same time share a commit (groupCommit.ts). */
  groupCommit?: GroupCommitOptions;
}

export type { ActorStatus };

export interface ActorView extends ActorStatus {
  deadlineAt: number | null;
  snapshot: AnyMachineSnapshot;
}

export type SendOutcome = 'persisted' | 'unchanged' | 'failed';

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

/** Sent to subscribers for every transition persisted by this replica, and for every status change persisted by
 *  another replica (announced through NOTIFY). */
export interface TransitionNotice {
  kind: string;
  id: string;
  version: number;
  state: string;
  status: string;
  terminal: boolean;
  replica: string;
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

export async function createActorHost(opts: ActorHostOptions): Promise<ActorHost> {
  const host = new Host(opts);
  await host.listen();
  return host;
}

class Host implements ActorHost {
  readonly replicaId: string;
  private closed = false;
  private readonly r: HostResources;
  /** The live actors in memory (r.cache; tests read a cached snapshot through this field). */
  private readonly cache: ActorCache;
  private readonly effects: EffectRunner;
  private readonly delivery: Delivery;
  private readonly ownership: Ownership;

  constructor(opts: ActorHostOptions) {
    for (const [kind, reg] of Object.entries(opts.kinds)) {
      // A machine action without an implementation would be silently skipped at run time: refuse it up front.
      // Built-ins registered by name (assign, raise…) carry `resolve` and are applied inside transition().
      const named = Object.entries((reg.machine as any).implementations?.actions ?? {})
        .filter(([, impl]) => typeof (impl as any)?.resolve !== 'function')
        .map(([name]) => name);
      const missing = named.filter((a) => !(a in reg.effects));
      if (missing.length > 0) throw new Error(`actor kind ${kind}: no effect implementation for ${missing.join(', ')}`);
    }
    this.replicaId = opts.replicaId;
    const r = (this.r = createResources(opts, () => this.closed));
    this.cache = r.cache;
    this.effects = new EffectRunner({
      db: r.db,
      replicaId: r.replicaId,
      kinds: r.kinds,
      logger: r.logger,
      host: this,
      maxFailures: r.maxFailures,
      isClosed: r.isClosed,
      sleepAfter: (failures) => r.backoff.after(failures),
      fail: (kind, id, reason) => this.delivery.fail(kind, id, reason),
    });
    this.delivery = new Delivery(r, new TransitionWrites({ ...r, groupCommit: opts.groupCommit }), this.effects);
    this.ownership = new Ownership(r, this.effects);
  }

  listen(): Promise<void> {
    return this.r.notifications.listen();
  }

  async spawn(kind: string, id: string, input: unknown, opts: { tx?: Queryable; entity?: EntityWrite } = {}): Promise<SpawnResult> {
    return this.delivery.spawn(this.kindOf(kind), kind, id, input, opts);
  }

  async send(kind: string, id: string, event: ActorEvent): Promise<SendResult> {
    return this.delivery.send(this.kindOf(kind), kind, id, event);
  }

  async get(kind: string, id: string): Promise<ActorView | null> {
    const entry = await this.cache.read(this.kindOf(kind), kind, id);
    return entry ? viewOf(kind, id, entry) : null;
  }

  subscribe(kind: string, id: string, listener: (n: TransitionNotice) => void): () => void {
    return this.r.notifications.subscribe(kind, id, listener);
  }

  waitForTerminal(kind: string, id: string, timeoutMs: number): Promise<ActorStatus> {
    return this.waitFor(kind, id, (v) => v.terminal, timeoutMs);
  }

  watchTerminal(kinds: readonly string[], id: string): ActorWatch {
    return this.r.notifications.watch(kinds, id, (v) => v.terminal);
  }

  waitFor(kind: string, id: string, until: (v: { state: string; status: string; terminal: boolean }) => boolean, timeoutMs: number): Promise<ActorStatus> {
    return this.r.notifications.waitFor(kind, id, until, timeoutMs);
  }

  rehydrate(): Promise<number> {
    return this.ownership.rehydrate();
  }

  recoverEffects(opts: { presenceTtlS: number | null; minAgeS?: number; limit?: number }): Promise<number> {
    return this.ownership.recoverEffects(opts);
  }

  releaseWaiters(): void {
    this.r.notifications.release();
  }

  async idle(): Promise<void> {
    while (this.r.mailboxes.size > 0 || this.effects.busy > 0) {
      await this.r.mailboxes.drain();
      await this.effects.drain();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.r.backoff.cancelAll();
    await this.r.notifications.stopListening();
    await this.idle();
    await this.effects.flush();
    this.cache.clear();
    this.r.notifications.clear();
  }

  private kindOf(kind: string): ActorKind {
    const reg = this.r.kinds[kind];
    if (!reg) throw new ActorError('internal_error', kind, '', `actor kind ${kind} is not registered with this host`);
    return reg;
  }
}
