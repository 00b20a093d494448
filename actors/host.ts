// The actor host: runs each lifecycle machine instance as a persisted, supervised actor. The machines decide
// (xstate's pure `initialTransition`/`transition`); the host persists every accepted transition with an optimistic
// version check, appends it to the history, and records the effects the machine asked for in the outbox
// (actor_effects) in the same statement. It then runs them; effects a dead process never ran are found in the outbox
// by `recoverEffects` (on this replica after a restart, or on another once this one is gone).
//
// The host's contract (its types) is actors/types.ts; this file is its facade. The work is done by systems sharing one
// resources type (systems.ts), wired in the constructor: delivery.ts (spawn, the delivery loop, supervision),
// transitionWrites.ts (a transition's store writes), effectRunner.ts (the outbox's effects), actorCache.ts (the live
// actors in memory), notifications.ts (local notices, LISTEN, waiters), ownership.ts (rehydrate, effect recovery)
// and backoff.ts (the waits between attempts).
import type { Queryable } from '../runtime/db.ts';
import { viewOf, type ActorCache } from './actorCache.ts';
import { Delivery } from './delivery.ts';
import { EffectRunner } from './effectRunner.ts';
import { ActorError } from './errors.ts';
import { Ownership } from './ownership.ts';
import { createResources, type HostResources } from './systems.ts';
import type { FinishedEffects } from './store.ts';
import { TransitionWrites } from './transitionWrites.ts';
import type { ActorEvent, ActorHost, ActorHostOptions, ActorKind, ActorStatus, ActorView, ActorWatch, EntityWrite, SendResult, SpawnResult, TransitionNotice } from './types.ts';

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
      const named = Object.entries(reg.machine.implementations?.actions ?? {})
        .filter(([, impl]) => typeof (impl as { resolve?: unknown } | undefined)?.resolve !== 'function')
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
      deleteWaitMs: opts.outboxDeleteWaitMs,
    });
    const finished = { take: () => this.effects.takeFinished(), settle: (batch: readonly FinishedEffects[], deleted: boolean) => this.effects.settleFinished(batch, deleted) };
    this.delivery = new Delivery(r, new TransitionWrites({ ...r, groupCommit: opts.groupCommit, finished }), this.effects);
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
