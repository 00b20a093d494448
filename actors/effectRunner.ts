// The actor host's effects system. A transition's effects are already in the outbox (actor_effects, written by the
// transition's own statement); this runs them after the commit, one transition's effects after the actor's earlier
// ones, each retried with backoff (a kind's durable effects until they succeed), and deletes their outbox rows in batches once all ran (with the next transition's
// statement, or on their own). `recover` claims what a dead process (this replica before a restart, or another one
// gone) committed and never finished.
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ActorEvent, ActorHost, ActorKind, EffectContext, SendResult } from './types.ts';
import { Mailboxes } from './mailbox.ts';
import { claimEffects, deleteEffects, type FinishedEffects } from './store.ts';

export type Action = { type: string; params?: unknown };

export interface EffectRunnerDeps {
  db: Db;
  replicaId: string;
  kinds: Record<string, ActorKind>;
  logger: Logger;
  host: ActorHost;
  maxFailures: number;
  isClosed(): boolean;
  /** Backoff before the `failures`-th retry; rejects when the host closes meanwhile. */
  sleepAfter(failures: number): Promise<void>;
  /** Moves an actor whose effect keeps failing to failed, through its mailbox. */
  fail(kind: string, id: string, reason: string): Promise<SendResult>;
  /** How long finished transitions wait for a transition's statement to delete their outbox rows (takeFinished). */
  deleteWaitMs?: number;
}

const actorKey = (kind: string, id: string) => `${kind}:${id}`;
const transitionKey = (kind: string, id: string, version: number) => `${kind}:${id}:${version}`;
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class EffectRunner {
  private readonly d: EffectRunnerDeps;
  private readonly chains = new Mailboxes();
  /** Transitions whose effects are running on this replica (`kind:id:version`): recovery leaves them alone. */
  private readonly running = new Set<string>();
  /** Transitions whose effects finished, deleted from the outbox in batches (a lost batch only re-runs effects):
   *  by the next transition's statement (takeFinished), or by a statement of their own when none came in
   *  `deleteWaitMs` (20 ms). */
  private done: FinishedEffects[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(deps: EffectRunnerDeps) {
    this.d = deps;
  }

  get busy(): number {
    return this.chains.size;
  }

  drain(): Promise<void> {
    return this.chains.drain();
  }

  /** Runs one transition's effects behind the actor's earlier ones; its outbox rows go once they all ran. */
  schedule(kind: string, id: string, version: number, effects: readonly Action[]): Promise<void> {
    const runKey = transitionKey(kind, id, version);
    this.running.add(runKey);
    let finished = false;
    return this.chains
      .enqueue(actorKey(kind, id), async () => {
        finished = await this.run(this.d.kinds[kind], kind, id, version, effects);
        if (finished) this.finished(kind, id, version);
      })
      .catch((e) => {
        this.d.logger.error({ kind, id, err: message(e) }, 'actor effects abandoned');
      })
      // A finished transition stays `running` until its outbox rows are deleted, so recovery never re-runs it.
      .finally(() => {
        if (!finished) this.running.delete(runKey);
      });
  }

  async recover(opts: { presenceTtlS: number | null; minAgeS?: number; limit?: number }): Promise<number> {
    if (this.d.isClosed()) return 0;
    const rows = await claimEffects(this.d.db, this.d.replicaId, {
      kinds: Object.keys(this.d.kinds),
      running: [...this.running],
      minAgeS: opts.minAgeS ?? 5,
      presenceTtlS: opts.presenceTtlS,
      limit: opts.limit ?? 500,
    });
    const byTransition = new Map<string, { kind: string; id: string; version: number; effects: Action[] }>();
    for (const r of rows) {
      const t = transitionKey(r.kind, r.id, r.version);
      let group = byTransition.get(t);
      if (!group) byTransition.set(t, (group = { kind: r.kind, id: r.id, version: r.version, effects: [] }));
      group.effects.push({ type: r.effect, params: r.params });
    }
    if (byTransition.size > 0) this.d.logger.info({ transitions: byTransition.size, effects: rows.length }, 'running pending effects from the outbox');
    await Promise.all([...byTransition.values()].map((g) => this.schedule(g.kind, g.id, g.version, g.effects)));
    return rows.length;
  }

  /** Deletes the outbox rows of every finished transition now (the host closing). */
  flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.done;
    this.done = [];
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing
      .then(() => deleteEffects(this.d.db, batch))
      .catch((e) => this.d.logger.warn({ err: message(e), transitions: batch.length }, 'could not clear finished effects; they will run again'))
      .finally(() => {
        for (const d of batch) this.running.delete(transitionKey(d.kind, d.id, d.version));
      });
    return this.flushing;
  }

  /**
   * The finished transitions whose outbox rows are still there, handed to the next transition's statement, which
   * deletes them with its own writes (no statement of their own); `settleFinished` says whether it committed.
   */
  takeFinished(): FinishedEffects[] {
    const batch = this.done;
    this.done = [];
    return batch;
  }

  /** After a statement that carried `batch` (takeFinished): deleted, or (it failed) kept for the next one. */
  settleFinished(batch: readonly FinishedEffects[], deleted: boolean): void {
    if (batch.length === 0) return;
    if (deleted) {
      for (const d of batch) this.running.delete(transitionKey(d.kind, d.id, d.version));
      return;
    }
    this.done.push(...batch);
    this.flushTimer ??= setTimeout(() => void this.flush(), this.d.deleteWaitMs ?? 20);
  }

  private finished(kind: string, id: string, version: number): void {
    this.done.push({ kind, id, version });
    if (this.done.length >= 500) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), this.d.deleteWaitMs ?? 20);
  }

  /** True when every effect ran (or was given up and the actor failed); false when the host closed midway. A
   *  durable effect is never given up: it is retried until it succeeds or the host closes (its row then stays). */
  private async run(reg: ActorKind, kind: string, id: string, version: number, effects: readonly Action[]): Promise<boolean> {
    const { host, logger } = this.d;
    const ctx: EffectContext = { kind, id, version, send: (event: ActorEvent) => host.send(kind, id, event), host, logger };
    for (const action of effects) {
      const impl = reg.effects[action.type];
      if (!impl) throw new Error(`actor kind ${kind}: no effect implementation for ${action.type}`);
      const durable = reg.durableEffects?.includes(action.type) === true;
      for (let failures = 0; ; ) {
        if (this.d.isClosed()) return false;
        try {
          await impl(ctx, action.params);
          break;
        } catch (e) {
          failures++;
          logger.warn({ kind, id, effect: action.type, failures, err: message(e) }, 'actor effect threw');
          if (!durable && failures >= this.d.maxFailures) {
            const reason = `effect ${action.type} failed: ${message(e)}`;
            void this.d.fail(kind, id, reason).then(undefined, (err) => logger.error({ kind, id, err: message(err) }, 'could not fail actor'));
            return true;
          }
          try {
            await this.d.sleepAfter(failures);
          } catch {
            return false; // the host closed during the backoff
          }
        }
      }
    }
    return true;
  }
}
