// Delivery: an actor's spawn and every event sent to it, one at a time through its mailbox. The machine decides
// (xstate's pure `initialTransition`/`transition`), the transition is written with an optimistic version check, and
// only after the commit are local subscribers told and the effects scheduled. Supervision lives here too: a
// transition that throws and a database that fails are retried with backoff, and an actor that keeps failing (or
// whose effect keeps failing, reported by the effects system) is moved to failed.
import { initialTransition, type AnyMachineSnapshot } from 'xstate';
import type { Queryable } from '../runtime/db.ts';
import { actorKey, viewOf, type ActorCache, type CacheEntry } from './actorCache.ts';
import type { Action, EffectRunner } from './effectRunner.ts';
import { ActorError } from './errors.ts';
import type { ActorEvent, ActorKind, EntityWrite, Projection, SendResult, SpawnResult, TransitionNotice } from './types.ts';
import { machineStep } from './machineStep.ts';
import { loadTransition } from './store.ts';
import type { HostResources } from './systems.ts';
import { attachmentsOf, effectsOf, type TransitionWrites } from './transitionWrites.ts';

interface Committed {
  entry: CacheEntry;
  event: ActorEvent;
  projection: Projection;
  /** The transition's effects (its actions without xstate's built-ins), as the outbox recorded them. */
  effects: readonly Action[];
}

const SUPERVISOR_FAILED = 'supervisor.failed';
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class Delivery {
  private readonly r: HostResources;
  private readonly writes: TransitionWrites;
  private readonly effects: EffectRunner;

  constructor(r: HostResources, writes: TransitionWrites, effects: EffectRunner) {
    this.r = r;
    this.writes = writes;
    this.effects = effects;
  }

  spawn(reg: ActorKind, kind: string, id: string, input: unknown, opts: { tx?: Queryable; entity?: EntityWrite }): Promise<SpawnResult> {
    const { cache, now } = this.r;
    const run = async (): Promise<SpawnResult> => {
      this.assertOpen(kind, id);
      // Machines take their creation time from `input.at` when given; the history row records the same instant.
      const inputAt = (input as { at?: unknown } | null | undefined)?.at;
      const at = typeof inputAt === 'number' ? inputAt : now();
      const [snapshot, actions] = initialTransition(reg.machine, input) as [AnyMachineSnapshot, Action[]];
      const effects = effectsOf(actions, reg);
      const projection = reg.project(snapshot);
      const entry = cache.entryFor(kind, snapshot, 1, projection);
      const write = this.writes.build(kind, id, entry, projection, 'xstate.init', input, null, at, { effects });
      await this.writes.insert(reg, kind, id, write, snapshot, projection, opts);
      const committed: Committed = { entry, event: { type: 'xstate.init', at }, projection, effects };
      let started: Promise<void> | null = null;
      const start = () => (started ??= this.afterCommit(kind, id, committed).effectsDone);
      if (!opts.tx) void start();
      return { actor: viewOf(kind, id, entry), start };
    };
    // Inside the caller's transaction the row is not visible until it commits: no mailbox ordering to keep yet.
    return opts.tx ? run() : this.r.mailboxes.enqueue(actorKey(kind, id), run);
  }

  send(reg: ActorKind, kind: string, id: string, event: ActorEvent): Promise<SendResult> {
    const stamped: ActorEvent = { ...event, at: typeof event.at === 'number' ? event.at : this.r.now() };
    return this.r.mailboxes.enqueue(actorKey(kind, id), () => this.deliver(reg, kind, id, stamped));
  }

  /** Moves an actor that keeps failing to failed, through its mailbox like any event (the mailbox is free while
   *  effects run, so an effect calling this cannot deadlock). */
  fail(kind: string, id: string, reason: string): Promise<SendResult> {
    return this.r.mailboxes.enqueue(actorKey(kind, id), () => this.failNow(this.r.kinds[kind], kind, id, reason));
  }

  /** Supervision's verdict, delivered by the same loop as any event (inside the actor's mailbox turn). */
  private failNow(reg: ActorKind, kind: string, id: string, reason: string): Promise<SendResult> {
    this.r.logger.error({ kind, id, reason }, 'actor failed under supervision');
    return this.deliver(reg, kind, id, { type: SUPERVISOR_FAILED, reason, at: this.r.now() }, true);
  }

  /**
   * The delivery loop: load, decide, write with the version check, then announce and schedule the effects. A
   * machine that throws is retried with backoff and, after maxFailures, failed by supervision (`failing`: the
   * same loop, deciding with `decideFailure`); a database that fails is retried, and a write whose outcome is unknown
   * is checked before anything is decided again.
   */
  private async deliver(reg: ActorKind, kind: string, id: string, event: ActorEvent, failing = false): Promise<SendResult> {
    const { cache, db, replicaId, logger, maxFailures, maxConflictRetries, backoff } = this.r;
    const k = actorKey(kind, id);
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
          const t = await loadTransition(db, kind, id, u.expectedVersion + 1);
          unknown = null;
          if (t && t.replica === replicaId && t.event === event.type && t.toState === u.committed.entry.state) {
            return this.afterCommit(kind, id, u.committed, failing);
          }
        }
        // Supervision reads the persisted actor: the cached one may be what kept failing.
        if (failing) cache.delete(k);
        entry = await cache.current(reg, kind, id);
      } catch (e) {
        if (e instanceof ActorError) throw e;
        failures = await this.backoffOrThrow(kind, id, failures, e, 'load');
        continue;
      }
      if (entry.terminal) return this.unchanged(kind, id, entry);

      let decision: Decision;
      try {
        decision = failing ? decideFailure(reg, cache, kind, entry, event) : decideEvent(reg, cache, kind, entry, event);
      } catch (e) {
        failures++;
        cache.delete(k);
        logger.warn({ kind, id, event: event.type, failures, err: message(e) }, 'actor transition threw');
        if (failures >= maxFailures) return this.failNow(reg, kind, id, `transition on ${event.type} threw: ${message(e)}`);
        await backoff.after(failures);
        continue;
      }
      const { next, actions, projection, nextEntry } = decision;
      if (!failing && actions.length === 0 && nextEntry.snapshotText === entry.snapshotText) return this.unchanged(kind, id, entry);

      // NOTIFY makes PostgreSQL serialize committing transactions (a global lock held through the commit), which
      // cut concurrent throughput about fourfold when every transition notified; other replicas' waiters only
      // wait for status changes, so only those are announced across replicas (only the end, for a kind whose
      // waiters wait only for it: announceAcross). Every transition is announced locally.
      const announce = failing || nextEntry.status !== entry.status || nextEntry.terminal !== entry.terminal;
      const effects = effectsOf(actions, reg);
      const quiet = !failing && reg.quietEvents?.includes(event.type) === true && !announce && nextEntry.state === entry.state && effects.length === 0;
      const write = this.writes.build(kind, id, nextEntry, projection, event.type, event, entry.state, event.at!, {
        announce: announce && (reg.announceAcross !== 'terminal' || failing || nextEntry.terminal),
        effects,
        history: !quiet,
      });
      if (decision.lastError !== undefined) write.lastError = decision.lastError;
      const committed: Committed = { entry: nextEntry, event, projection, effects };
      let version: number | null;
      try {
        version = await this.writes.commit(reg, id, entry.version, write, next, projection, attachmentsOf(reg, event));
      } catch (e) {
        cache.delete(k);
        unknown = { expectedVersion: entry.version, committed };
        failures = await this.backoffOrThrow(kind, id, failures, e, 'persist');
        continue;
      }
      if (version === null) {
        // Another replica (or a stale cache) moved the actor on: reload and decide again on the newer snapshot.
        cache.delete(k);
        if (++conflicts > maxConflictRetries) {
          throw new ActorError('conflict', kind, id, `actor ${kind} ${id}: version conflict persisted after ${conflicts} attempts`);
        }
        continue;
      }
      return this.afterCommit(kind, id, committed, failing);
    }
  }

  private afterCommit(kind: string, id: string, c: Committed, failed = false): SendResult {
    const { cache, notifications, replicaId } = this.r;
    const k = actorKey(kind, id);
    if (c.entry.terminal) cache.delete(k);
    else cache.remember(k, c.entry);
    const notice: TransitionNotice = {
      kind,
      id,
      version: c.entry.version,
      state: c.entry.state,
      status: c.entry.status,
      terminal: c.entry.terminal,
      replica: replicaId,
      projection: c.projection,
    };
    notifications.announce(notice);
    const effectsDone = c.effects.length === 0 ? Promise.resolve() : this.effects.schedule(kind, id, c.entry.version, c.effects);
    return { outcome: failed ? 'failed' : 'persisted', actor: viewOf(kind, id, c.entry), effectsDone };
  }

  private unchanged(kind: string, id: string, entry: CacheEntry): SendResult {
    return { outcome: 'unchanged', actor: viewOf(kind, id, entry), effectsDone: Promise.resolve() };
  }

  private assertOpen(kind: string, id: string): void {
    if (this.r.isClosed()) throw new ActorError('unavailable', kind, id, 'actor host closed');
  }

  /** Counts a database failure; waits out the backoff, or gives up with the error after maxFailures. */
  private async backoffOrThrow(kind: string, id: string, failures: number, e: unknown, step: string): Promise<number> {
    const n = failures + 1;
    this.r.logger.warn({ kind, id, step, failures: n, err: message(e) }, 'actor persistence failed');
    if (n >= this.r.maxFailures) {
      throw new ActorError('unavailable', kind, id, `actor ${kind} ${id}: ${step} failed: ${message(e)}`, { cause: e });
    }
    await this.r.backoff.after(n);
    return n;
  }
}

/** What a delivery writes: the machine's next snapshot, its actions and projection, and the actor row's entry. */
interface Decision {
  next: AnyMachineSnapshot;
  actions: Action[];
  projection: Projection;
  nextEntry: CacheEntry;
  /** The actor row's last_error (supervision records why it failed the actor). */
  lastError?: string;
}

/** The machine decides; throws when it does (the loop retries, then fails the actor). */
function decideEvent(reg: ActorKind, cache: ActorCache, kind: string, entry: CacheEntry, event: ActorEvent): Decision {
  const [next, actions] = machineStep(reg.machine, entry.snapshot, event);
  const projection = reg.project(next);
  return { next, actions, projection, nextEntry: cache.entryFor(kind, next, entry.version + 1, projection) };
}

/**
 * Supervision's failure: through the machine when it accepts `supervisor.failed`; when it ignores it (or throws),
 * the failed status is recorded on the actor row and entity directly. Never throws.
 */
function decideFailure(reg: ActorKind, cache: ActorCache, kind: string, entry: CacheEntry, event: ActorEvent): Decision {
  const reason = String((event as { reason?: unknown }).reason ?? 'failed under supervision');
  let decision: Decision | null = null;
  try {
    decision = decideEvent(reg, cache, kind, entry, event);
  } catch {
    // the machine cannot take it: recorded directly below
  }
  if (!decision || decision.nextEntry.snapshotText === entry.snapshotText) {
    const projection = { ...lastProjection(reg, entry), status: 'failed', terminal: true, deadlineAt: null, error: reason };
    return {
      next: entry.snapshot,
      actions: [],
      projection,
      nextEntry: { ...entry, version: entry.version + 1, status: 'failed', terminal: true, deadlineAt: null },
      lastError: reason,
    };
  }
  return { ...decision, lastError: typeof decision.projection.error === 'string' ? decision.projection.error : reason };
}

/** The kind's projection of the persisted snapshot, or the persisted columns when projecting throws. */
function lastProjection(reg: ActorKind, entry: CacheEntry): Projection {
  try {
    return reg.project(entry.snapshot);
  } catch {
    return { status: entry.status, terminal: entry.terminal, deadlineAt: entry.deadlineAt };
  }
}
