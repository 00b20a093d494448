// The actor host: runs each lifecycle machine instance as a persisted, supervised actor. The machines decide
// (xstate's pure `initialTransition`/`transition`); the host persists every accepted transition with an optimistic
// version check, appends it to the history, and records the effects the machine asked for in the outbox
// (actor_effects) in the same statement. It then runs them; effects a dead process never ran are found in the outbox
// by `recoverEffects` (on this replica after a restart, or on another once this one is gone).
import { EventEmitter } from 'node:events';
import { initialTransition, transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import type { Db, Queryable } from '../runtime/db.ts';
import { isUniqueViolation } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import { ActorError } from './errors.ts';
import type { AgentConnectionEvent, ElasticAgentEvent, QueryEvent, SqlSessionEvent, StatementEvent, StorageMigrationEvent } from '../machines/index.ts';
import { Mailboxes } from './mailbox.ts';
import { EffectRunner, type Action } from './effectRunner.ts';
import { redactSecrets } from './redact.ts';
import { decodeSnapshot, encodeJson, encodeSnapshot, stateName, withoutKeys } from './snapshotCodec.ts';
import {
  TRANSITIONS_CHANNEL,
  insertActor,
  listOwnedLive,
  type ExternalContexts,
  loadActor,
  loadStatus,
  type ActorStatus,
  loadTransition,
  writeTransition,
  type ActorRow,
  type EntityWrite,
  type TransitionWrite,
} from './store.ts';

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
  /** The same, until `until` holds for the actor's state (or it ended, or the wait passed). */
  waitFor(kind: string, id: string, until: (v: { state: string; status: string; terminal: boolean }) => boolean, timeoutMs: number): Promise<ActorStatus>;
  /** Loads the live actors this replica owns into memory and runs the effects it left pending; returns how many
   *  actors. */
  rehydrate(): Promise<number>;
  /** Claims and runs pending outbox effects: this replica's own that are not running here, and (unless
   *  `presenceTtlS` is null) those of replicas not seen for `presenceTtlS`. Returns how many effects were run. */
  recoverEffects(opts: { presenceTtlS: number | null; minAgeS?: number; limit?: number }): Promise<number>;
  /** Resolves once every queued delivery and effect has settled. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

interface CacheEntry {
  snapshot: AnyMachineSnapshot;
  snapshotText: string;
  version: number;
  state: string;
  status: string;
  terminal: boolean;
  deadlineAt: number | null;
}


interface Committed {
  entry: CacheEntry;
  event: ActorEvent;
  projection: Projection;
  /** The transition's effects (its actions without xstate's built-ins), as the outbox recorded them. */
  effects: readonly Action[];
}

/** The actions that are effects (built-ins such as assign and raise were applied inside transition()). */
const effectsOf = (actions: readonly Action[], reg: ActorKind) =>
  actions.filter((a) => !a.type.startsWith('xstate.') && !reg.inertEffects?.includes(a.type));

/** The event's fields the kind keeps on its entity row (ActorKind.eventAttachments). */
function attachmentsOf(reg: ActorKind, event: ActorEvent): Record<string, unknown> | undefined {
  if (!reg.eventAttachments) return undefined;
  const picked: Record<string, unknown> = {};
  for (const k of reg.eventAttachments) if ((event as Record<string, unknown>)[k] !== undefined) picked[k] = (event as Record<string, unknown>)[k];
  return picked;
}

/** One transition's effects, as recovery and the outbox name them. */

const SUPERVISOR_FAILED = 'supervisor.failed';
/** Emitted on `notices` after LISTEN was re-subscribed: waiters re-read what they wait for (a NOTIFY may be lost). */
const RESYNC = Symbol('resync');
const key = (kind: string, id: string) => `${kind}:${id}`;
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function createActorHost(opts: ActorHostOptions): Promise<ActorHost> {
  const host = new Host(opts);
  await host.listen();
  return host;
}

class Host implements ActorHost {
  readonly replicaId: string;
  private readonly db: Db;
  private readonly kinds: Record<string, ActorKind>;
  private readonly externals: ExternalContexts;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly maxFailures: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxConflictRetries: number;
  private readonly cacheSize: number;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly mailboxes = new Mailboxes();
  private readonly notices = new EventEmitter();
  private readonly sleeps = new Set<{ timer: NodeJS.Timeout; reject: (e: unknown) => void }>();
  private unlisten: (() => Promise<void>) | null = null;
  private closed = false;
  private readonly effects: EffectRunner;

  constructor(opts: ActorHostOptions) {
    this.db = opts.db;
    this.replicaId = opts.replicaId;
    this.kinds = opts.kinds;
    this.externals = Object.fromEntries(
      Object.entries(opts.kinds).flatMap(([k, reg]) => (reg.externalContext ? [[k, reg.externalContext.select]] : [])),
    );
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.maxFailures = opts.supervision?.maxFailures ?? 5;
    this.backoffMs = opts.supervision?.backoffMs ?? 100;
    this.maxBackoffMs = opts.supervision?.maxBackoffMs ?? 10_000;
    this.maxConflictRetries = opts.maxConflictRetries ?? 20;
    this.cacheSize = opts.cacheSize ?? 50_000;
    this.effects = new EffectRunner({
      db: this.db,
      replicaId: this.replicaId,
      kinds: this.kinds,
      logger: this.logger,
      host: this,
      maxFailures: this.maxFailures,
      isClosed: () => this.closed,
      sleepAfter: (failures) => this.sleep(this.backoff(failures)),
      // Through the mailbox like any event (it is free while effects run, so this cannot deadlock).
      fail: (kind, id, reason) => this.mailboxes.enqueue(key(kind, id), () => this.fail(this.kinds[kind], kind, id, reason)),
    });
    this.notices.setMaxListeners(0);
    for (const [kind, reg] of Object.entries(this.kinds)) {
      // A machine action without an implementation would be silently skipped at run time: refuse it up front.
      // Built-ins registered by name (assign, raise…) carry `resolve` and are applied inside transition().
      const named = Object.entries((reg.machine as any).implementations?.actions ?? {})
        .filter(([, impl]) => typeof (impl as any)?.resolve !== 'function')
        .map(([name]) => name);
      const missing = named.filter((a) => !(a in reg.effects));
      if (missing.length > 0) throw new Error(`actor kind ${kind}: no effect implementation for ${missing.join(', ')}`);
    }
  }

  async listen(): Promise<void> {
    const onPayload = (payload: string) => {
      let n: TransitionNotice;
      try {
        n = JSON.parse(payload);
      } catch {
        return;
      }
      if (n.replica === this.replicaId) return; // already announced locally, before the NOTIFY arrived
      const cached = this.cache.get(key(n.kind, n.id));
      if (cached && cached.version < n.version) this.cache.delete(key(n.kind, n.id));
      this.notices.emit(key(n.kind, n.id), n);
    };
    this.unlisten = await this.db.listen(TRANSITIONS_CHANNEL, onPayload, {
      onError: (e) => this.logger.warn({ err: message(e) }, 'lost the LISTEN connection; subscribing again'),
      onResubscribed: () => {
        // Notifications sent while the connection was down are gone: drop what they would have invalidated and wake
        // every waiter to re-read the database.
        this.logger.info('LISTEN subscribed again');
        this.cache.clear();
        this.notices.emit(RESYNC);
      },
    });
  }

  // ---- public interface ----

  async spawn(kind: string, id: string, input: unknown, opts: { tx?: Queryable; entity?: EntityWrite } = {}): Promise<SpawnResult> {
    const reg = this.kindOf(kind);
    const run = async (): Promise<SpawnResult> => {
      this.assertOpen(kind, id);
      // Machines take their creation time from `input.at` when given; the history row records the same instant.
      const inputAt = (input as { at?: unknown } | null | undefined)?.at;
      const at = typeof inputAt === 'number' ? inputAt : this.now();
      const [snapshot, actions] = initialTransition(reg.machine, input as any) as [AnyMachineSnapshot, any[]];
      const effects = effectsOf(actions, reg);
      const projection = reg.project(snapshot);
      const entry = this.entryFor(kind, snapshot, 1, projection);
      const write = this.transitionWrite(kind, id, entry, projection, 'xstate.init', input, null, at, { effects });
      try {
        // An entity created with the actor (its INSERT carrying the initial projection) needs no entity update.
        if (opts.entity) await insertActor(opts.tx ?? this.db, write, opts.entity);
        else if (opts.tx) await this.insertWith(opts.tx, reg, id, write, snapshot, projection);
        else if (reg.onPersist || reg.entityWrite) await this.db.tx((tx) => this.insertWith(tx, reg, id, write, snapshot, projection));
        else await insertActor(this.db, write);
      } catch (e) {
        if (isUniqueViolation(e)) throw new ActorError('conflict', kind, id, `actor ${kind} ${id} already exists`);
        throw e;
      }
      const committed: Committed = { entry, event: { type: 'xstate.init', at }, projection, effects };
      let started: Promise<void> | null = null;
      const start = () => (started ??= this.afterCommit(reg, kind, id, committed).effectsDone);
      if (!opts.tx) void start();
      return { actor: this.view(kind, id, entry), start };
    };
    // Inside the caller's transaction the row is not visible until it commits: no mailbox ordering to keep yet.
    return opts.tx ? run() : this.mailboxes.enqueue(key(kind, id), run);
  }

  async send(kind: string, id: string, event: ActorEvent): Promise<SendResult> {
    const reg = this.kindOf(kind);
    const stamped: ActorEvent = { ...event, at: typeof event.at === 'number' ? event.at : this.now() };
    return this.mailboxes.enqueue(key(kind, id), () => this.deliver(reg, kind, id, stamped));
  }

  async get(kind: string, id: string): Promise<ActorView | null> {
    const reg = this.kindOf(kind);
    const row = await loadActor(this.db, kind, id, this.externals);
    return row ? this.view(kind, id, this.entryFromRow(reg, row)) : null;
  }

  subscribe(kind: string, id: string, listener: (n: TransitionNotice) => void): () => void {
    const k = key(kind, id);
    this.notices.on(k, listener);
    return () => this.notices.off(k, listener);
  }

  waitForTerminal(kind: string, id: string, timeoutMs: number): Promise<ActorStatus> {
    return this.waitFor(kind, id, (v) => v.terminal, timeoutMs);
  }

  waitFor(kind: string, id: string, until: (v: { state: string; status: string; terminal: boolean }) => boolean, timeoutMs: number): Promise<ActorStatus> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (err: unknown, view?: ActorStatus | null) => {
        if (settled) return;
        settled = true;
        unsubscribe();
        this.notices.off(RESYNC, onResync);
        clearTimeout(timer);
        if (err) reject(err);
        else if (!view) reject(new ActorError('not_found', kind, id, `actor ${kind} ${id} not found`));
        else resolve(view);
      };
      // A narrow read (no snapshot): what a waiter needs to decide, on every wait and every resync.
      const check = (force: boolean) =>
        loadStatus(this.db, kind, id).then(
          (v) => {
            if (!v || v.terminal || until(v) || force) finish(null, v);
          },
          (e) => finish(e),
        );
      // Subscribe before the first read, so a transition landing between the two still wakes this waiter; the
      // notice itself says where the actor stands (it is sent once the transition committed).
      const unsubscribe = this.subscribe(kind, id, (n) => {
        if (n.terminal || until(n)) finish(null, { kind, id, version: n.version, state: n.state, status: n.status, terminal: n.terminal });
      });
      const onResync = () => void check(false);
      this.notices.on(RESYNC, onResync);
      timer = setTimeout(() => void check(true), timeoutMs);
      void check(false);
    });
  }

  async rehydrate(): Promise<number> {
    const rows = await listOwnedLive(this.db, this.replicaId, Object.keys(this.kinds), this.externals);
    for (const row of rows) this.remember(key(row.kind, row.id), this.entryFromRow(this.kinds[row.kind], row));
    // Effects this replica committed but never finished before it stopped (nothing of ours runs yet: no age floor).
    const effects = await this.recoverEffects({ presenceTtlS: null, minAgeS: 0 });
    this.logger.info({ replica: this.replicaId, actors: rows.length, effects }, 'actors rehydrated');
    return rows.length;
  }

  recoverEffects(opts: { presenceTtlS: number | null; minAgeS?: number; limit?: number }): Promise<number> {
    return this.effects.recover(opts);
  }

  async idle(): Promise<void> {
    while (this.mailboxes.size > 0 || this.effects.busy > 0) {
      await this.mailboxes.drain();
      await this.effects.drain();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sleeps) {
      clearTimeout(s.timer);
      s.reject(new ActorError('unavailable', '', '', 'actor host closed'));
    }
    this.sleeps.clear();
    await this.unlisten?.();
    await this.idle();
    await this.effects.flush();
    this.cache.clear();
    this.notices.removeAllListeners();
  }

  // ---- delivery ----

  private async deliver(reg: ActorKind, kind: string, id: string, event: ActorEvent): Promise<SendResult> {
    const k = key(kind, id);
    let failures = 0;
    let conflicts = 0;
    // A write whose outcome is unknown (the connection failed around the commit): checked before re-delivering,
    // so an event that did commit is never applied a second time.
    let unknown: { expectedVersion: number; committed: Committed } | null = null;
    for (;;) {
      this.assertOpen(kind, id);
      let entry: CacheEntry;
      try {
        if (unknown) {
          const u = unknown;
          const t = await loadTransition(this.db, kind, id, u.expectedVersion + 1);
          unknown = null;
          if (t && t.replica === this.replicaId && t.event === event.type && t.toState === u.committed.entry.state) {
            return this.afterCommit(reg, kind, id, u.committed);
          }
        }
        entry = await this.current(reg, kind, id);
      } catch (e) {
        if (e instanceof ActorError) throw e;
        failures = await this.backoffOrThrow(kind, id, failures, e, 'load');
        continue;
      }
      if (entry.terminal) return this.unchanged(kind, id, entry);

      let next: AnyMachineSnapshot;
      let actions: any[];
      let projection: Projection;
      try {
        [next, actions] = transition(reg.machine, entry.snapshot, event as any) as [AnyMachineSnapshot, any[]];
        projection = reg.project(next);
      } catch (e) {
        failures++;
        this.cache.delete(k);
        this.logger.warn({ kind, id, event: event.type, failures, err: message(e) }, 'actor transition threw');
        if (failures >= this.maxFailures) {
          return this.fail(reg, kind, id, `transition on ${event.type} threw: ${message(e)}`);
        }
        await this.sleep(this.backoff(failures));
        continue;
      }
      const nextEntry = this.entryFor(kind, next, entry.version + 1, projection);
      if (actions.length === 0 && nextEntry.snapshotText === entry.snapshotText) return this.unchanged(kind, id, entry);

      // NOTIFY makes PostgreSQL serialize committing transactions (a global lock held through the commit), which
      // cut concurrent throughput about fourfold when every transition notified; other replicas' waiters only
      // wait for status changes, so only those are announced across replicas. Every transition is announced locally.
      const announce = nextEntry.status !== entry.status || nextEntry.terminal !== entry.terminal;
      const effects = effectsOf(actions, reg);
      const quiet = reg.quietEvents?.includes(event.type) === true && !announce && nextEntry.state === entry.state && effects.length === 0;
      const write = this.transitionWrite(kind, id, nextEntry, projection, event.type, event, entry.state, event.at!, {
        announce,
        effects,
        history: !quiet,
      });
      const committed: Committed = { entry: nextEntry, event, projection, effects };
      let version: number | null;
      try {
        version = await this.write(reg, id, entry.version, write, next, projection, attachmentsOf(reg, event));
      } catch (e) {
        this.cache.delete(k);
        unknown = { expectedVersion: entry.version, committed };
        failures = await this.backoffOrThrow(kind, id, failures, e, 'persist');
        continue;
      }
      if (version === null) {
        // Another replica (or a stale cache) moved the actor on: reload and decide again on the newer snapshot.
        this.cache.delete(k);
        if (++conflicts > this.maxConflictRetries) {
          throw new ActorError('conflict', kind, id, `actor ${kind} ${id}: version conflict persisted after ${conflicts} attempts`);
        }
        continue;
      }
      return this.afterCommit(reg, kind, id, committed);
    }
  }

  /** Moves an actor that keeps failing to failed: through its machine if it accepts `supervisor.failed`,
   *  otherwise by writing the failed status directly. Runs inside the actor's mailbox turn. */
  private async fail(reg: ActorKind, kind: string, id: string, reason: string): Promise<SendResult> {
    const k = key(kind, id);
    this.logger.error({ kind, id, reason }, 'actor failed under supervision');
    const event: ActorEvent = { type: SUPERVISOR_FAILED, reason, at: this.now() };
    for (let attempt = 0; attempt <= this.maxConflictRetries; attempt++) {
      this.assertOpen(kind, id);
      this.cache.delete(k);
      const entry = await this.current(reg, kind, id);
      if (entry.terminal) return this.unchanged(kind, id, entry);
      let next: AnyMachineSnapshot = entry.snapshot;
      let actions: any[] = [];
      let projection: Projection;
      try {
        [next, actions] = transition(reg.machine, entry.snapshot, event as any) as [AnyMachineSnapshot, any[]];
        projection = reg.project(next);
      } catch {
        next = entry.snapshot;
        actions = [];
        projection = this.lastProjection(reg, entry);
      }
      let nextEntry = this.entryFor(kind, next, entry.version + 1, projection);
      if (nextEntry.snapshotText === entry.snapshotText) {
        // The machine does not model supervision failure: record it on the actor row and entity directly.
        next = entry.snapshot;
        actions = [];
        projection = { ...this.lastProjection(reg, entry), status: 'failed', terminal: true, deadlineAt: null, error: reason };
        nextEntry = { ...entry, version: entry.version + 1, status: 'failed', terminal: true, deadlineAt: null };
      }
      const write = this.transitionWrite(kind, id, nextEntry, projection, SUPERVISOR_FAILED, event, entry.state, event.at!, {
        announce: true,
        effects: effectsOf(actions, reg),
      });
      write.lastError = typeof projection.error === 'string' ? projection.error : reason;
      const version = await this.write(reg, id, entry.version, write, next, projection);
      if (version === null) continue;
      const result = this.afterCommit(reg, kind, id, { entry: nextEntry, event, projection, effects: effectsOf(actions, reg) });
      return { ...result, outcome: 'failed' };
    }
    throw new ActorError('conflict', kind, id, `actor ${kind} ${id}: could not record supervision failure`);
  }

  private afterCommit(reg: ActorKind, kind: string, id: string, c: Committed): SendResult {
    const k = key(kind, id);
    if (c.entry.terminal) this.cache.delete(k);
    else this.remember(k, c.entry);
    const notice: TransitionNotice = {
      kind,
      id,
      version: c.entry.version,
      state: c.entry.state,
      status: c.entry.status,
      terminal: c.entry.terminal,
      replica: this.replicaId,
    };
    this.notices.emit(k, notice);
    const effectsDone = c.effects.length === 0 ? Promise.resolve() : this.effects.schedule(kind, id, c.entry.version, c.effects);
    return { outcome: 'persisted', actor: this.view(kind, id, c.entry), effectsDone };
  }

  // ---- persistence ----

  private async write(
    reg: ActorKind,
    id: string,
    expectedVersion: number,
    write: TransitionWrite,
    snapshot: AnyMachineSnapshot,
    projection: Projection,
    attachments?: Readonly<Record<string, unknown>>,
  ): Promise<number | null> {
    const entity = reg.entityWrite?.(id, projection, attachments);
    if (!reg.onPersist) return writeTransition(this.db, expectedVersion, write, entity);
    const onPersist = reg.onPersist;
    return this.db.tx(async (tx) => {
      const version = await writeTransition(tx, expectedVersion, write, entity);
      if (version !== null) await onPersist(tx, id, snapshot, projection);
      return version;
    });
  }

  private async insertWith(
    tx: Queryable,
    reg: ActorKind,
    id: string,
    write: TransitionWrite,
    snapshot: AnyMachineSnapshot,
    projection: Projection,
  ): Promise<void> {
    await insertActor(tx, write);
    const entity = reg.entityWrite?.(id, projection);
    if (entity) await tx.query(entity.sql, entity.params);
    await reg.onPersist?.(tx, id, snapshot, projection);
  }

  private transitionWrite(
    kind: string,
    id: string,
    entry: CacheEntry,
    projection: Projection,
    eventType: string,
    payload: unknown,
    fromState: string | null,
    at: number,
    opts: { announce?: boolean; effects: readonly Action[]; history?: boolean },
  ): TransitionWrite {
    const stored = redactSecrets(eventType === 'xstate.init' ? withoutKeys(payload, this.omitted(kind)) : payload) as Record<string, unknown> | unknown;
    // For events, `type` and `at` have their own columns; a spawn's payload is the machine's input, kept whole.
    if (eventType !== 'xstate.init' && stored && typeof stored === 'object' && !Array.isArray(stored)) {
      delete (stored as Record<string, unknown>).type;
      delete (stored as Record<string, unknown>).at;
      for (const k of this.kinds[kind]?.eventAttachments ?? []) delete (stored as Record<string, unknown>)[k];
    }
    const notice: TransitionNotice = {
      kind,
      id,
      version: entry.version,
      state: entry.state,
      status: entry.status,
      terminal: entry.terminal,
      replica: this.replicaId,
    };
    return {
      kind,
      id,
      state: entry.state,
      status: entry.status,
      terminal: entry.terminal,
      deadlineAt: entry.deadlineAt,
      snapshotText: entry.snapshotText,
      lastError: typeof projection.error === 'string' ? projection.error : null,
      event: eventType,
      payloadText: encodeJson(stored ?? {}),
      fromState,
      at,
      replica: this.replicaId,
      notifyPayload: opts.announce ? JSON.stringify(notice) : null,
      effectsText: opts.effects.length === 0 ? null : encodeJson(opts.effects.map((a) => ({ effect: a.type, params: a.params ?? null }))),
      history: opts.history ?? true,
    };
  }

  // ---- cache and helpers ----

  private omitted(kind: string): readonly string[] {
    return this.kinds[kind]?.externalContext?.keys ?? [];
  }

  private async current(reg: ActorKind, kind: string, id: string): Promise<CacheEntry> {
    const k = key(kind, id);
    const hit = this.cache.get(k);
    if (hit) return hit;
    const row = await loadActor(this.db, kind, id, this.externals);
    if (!row) throw new ActorError('not_found', kind, id, `actor ${kind} ${id} not found`);
    const entry = this.entryFromRow(reg, row);
    if (!entry.terminal) this.remember(k, entry);
    return entry;
  }

  private entryFromRow(reg: ActorKind, row: ActorRow): CacheEntry {
    const snapshot = decodeSnapshot(reg.machine, row.snapshotText, row.external);
    return {
      snapshot,
      // Re-encoded from the restored snapshot: jsonb reorders keys, and "unchanged" compares encodings.
      snapshotText: encodeSnapshot(snapshot, reg.externalContext?.keys),
      version: row.version,
      state: row.state,
      status: row.status,
      terminal: row.terminal,
      deadlineAt: row.deadlineAt ? row.deadlineAt.getTime() : null,
    };
  }

  private entryFor(kind: string, snapshot: AnyMachineSnapshot, version: number, p: Projection): CacheEntry {
    return {
      snapshot,
      snapshotText: encodeSnapshot(snapshot, this.omitted(kind)),
      version,
      state: stateName(snapshot.value),
      status: p.status,
      terminal: p.terminal,
      deadlineAt: p.deadlineAt,
    };
  }

  /** The kind's projection of the persisted snapshot, or the persisted columns when projecting throws. */
  private lastProjection(reg: ActorKind, entry: CacheEntry): Projection {
    try {
      return reg.project(entry.snapshot);
    } catch {
      return { status: entry.status, terminal: entry.terminal, deadlineAt: entry.deadlineAt };
    }
  }

  private remember(k: string, entry: CacheEntry): void {
    this.cache.delete(k);
    this.cache.set(k, entry);
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }

  private unchanged(kind: string, id: string, entry: CacheEntry): SendResult {
    return { outcome: 'unchanged', actor: this.view(kind, id, entry), effectsDone: Promise.resolve() };
  }

  private view(kind: string, id: string, e: CacheEntry): ActorView {
    return {
      kind,
      id,
      version: e.version,
      state: e.state,
      status: e.status,
      terminal: e.terminal,
      deadlineAt: e.deadlineAt,
      snapshot: e.snapshot,
    };
  }

  private kindOf(kind: string): ActorKind {
    const reg = this.kinds[kind];
    if (!reg) throw new ActorError('internal_error', kind, '', `actor kind ${kind} is not registered with this host`);
    return reg;
  }

  private assertOpen(kind: string, id: string): void {
    if (this.closed) throw new ActorError('unavailable', kind, id, 'actor host closed');
  }

  private backoff(failures: number): number {
    return Math.min(this.maxBackoffMs, this.backoffMs * 2 ** (failures - 1));
  }

  /** Counts a database failure; waits out the backoff, or gives up with the error after maxFailures. */
  private async backoffOrThrow(kind: string, id: string, failures: number, e: unknown, step: string): Promise<number> {
    const n = failures + 1;
    this.logger.warn({ kind, id, step, failures: n, err: message(e) }, 'actor persistence failed');
    if (n >= this.maxFailures) {
      throw new ActorError('unavailable', kind, id, `actor ${kind} ${id}: ${step} failed: ${message(e)}`, { cause: e });
    }
    await this.sleep(this.backoff(n));
    return n;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const s = {
        timer: setTimeout(() => {
          this.sleeps.delete(s);
          resolve();
        }, ms),
        reject,
      };
      this.sleeps.add(s);
    });
  }
}
