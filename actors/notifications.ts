// The host's notifications: every transition persisted on this replica is announced in process once it committed;
// status changes persisted by other replicas arrive through PostgreSQL NOTIFY on TRANSITIONS_CHANNEL (only those
// are announced across replicas: see the delivery loop). Subscribers and waiters hear both. A notice from another
// replica also drops the cached actor it makes stale.
import { EventEmitter } from 'node:events';
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import { actorKey, type ActorCache } from './actorCache.ts';
import { ActorError } from './errors.ts';
import type { ActorStatus, ActorWatch, TransitionNotice } from './types.ts';
import { TRANSITIONS_CHANNEL, loadStatus } from './store.ts';

/** Emitted on `notices` after LISTEN was re-subscribed: waiters re-read what they wait for (a NOTIFY may be lost). */
const RESYNC = Symbol('resync');
/** Emitted once when the replica drains: every waiter answers with where its actor stands now. */
const RELEASE = Symbol('release');
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export interface NotificationsDeps {
  db: Db;
  replicaId: string;
  logger: Logger;
  cache: ActorCache;
}

export class Notifications {
  private readonly d: NotificationsDeps;
  private readonly notices = new EventEmitter();
  private unlisten: (() => Promise<void>) | null = null;
  private released = false;

  constructor(deps: NotificationsDeps) {
    this.d = deps;
    this.notices.setMaxListeners(0);
  }

  async listen(): Promise<void> {
    const { db, replicaId, logger, cache } = this.d;
    const onPayload = (payload: string) => {
      let n: TransitionNotice;
      try {
        n = JSON.parse(payload);
      } catch {
        return;
      }
      if (n.replica === replicaId) return; // already announced locally, before the NOTIFY arrived
      const cached = cache.get(actorKey(n.kind, n.id));
      if (cached && cached.version < n.version) cache.delete(actorKey(n.kind, n.id));
      this.notices.emit(actorKey(n.kind, n.id), n);
    };
    this.unlisten = await db.listen(TRANSITIONS_CHANNEL, onPayload, {
      onError: (e) => logger.warn({ err: message(e) }, 'lost the LISTEN connection; subscribing again'),
      onResubscribed: () => {
        // Notifications sent while the connection was down are gone: drop what they would have invalidated and wake
        // every waiter to re-read the database.
        logger.info('LISTEN subscribed again');
        cache.clear();
        this.notices.emit(RESYNC);
      },
    });
  }

  /** Announces a transition this replica committed to its local subscribers. */
  announce(notice: TransitionNotice): void {
    this.notices.emit(actorKey(notice.kind, notice.id), notice);
  }

  subscribe(kind: string, id: string, listener: (n: TransitionNotice) => void): () => void {
    const k = actorKey(kind, id);
    this.notices.on(k, listener);
    return () => this.notices.off(k, listener);
  }

  /** Resolves once `until` holds for the actor (or it ended), or with where it stands when `timeoutMs` passes. */
  waitFor(kind: string, id: string, until: (v: { state: string; status: string; terminal: boolean }) => boolean, timeoutMs: number): Promise<ActorStatus> {
    // Subscribed before the first read, so a transition landing between the two still wakes this waiter.
    return this.watch([kind], id, until).wait(kind, timeoutMs, { readFirst: true });
  }

  /**
   * A waiter registered now, whose first look at the actor is the caller's own read made after this call, in place
   * of the read `waitFor` starts with: the GET of a query reads its queries row anyway, and that row's status is
   * written in the same statement as the actor's (the kind's entityWrite), so it tells as much as the actor row.
   * The race stays closed as in `waitFor`: a transition that commits before the caller's read shows in it; one that
   * commits after announces itself after the commit, so to a subscription already in place; its notice, or a
   * resync meanwhile, is kept until `wait` is called. `kinds`: the kinds the actor may be of (the caller learns
   * which from its read); `cancel` when done, also when `wait` was never called.
   */
  watch(kinds: readonly string[], id: string, until: (v: { state: string; status: string; terminal: boolean }) => boolean): ActorWatch {
    const heard = new Map<string, TransitionNotice>();
    let resynced = false;
    let wake: (() => void) | null = null;
    const listeners = kinds.map((kind) => {
      const listener = (n: TransitionNotice) => {
        if (!heard.has(kind) && (n.terminal || until(n))) heard.set(kind, n);
        wake?.();
      };
      this.notices.on(actorKey(kind, id), listener);
      return { key: actorKey(kind, id), listener };
    });
    const onResync = () => {
      resynced = true;
      wake?.();
    };
    this.notices.on(RESYNC, onResync);
    let releasedNow = this.released;
    const onRelease = () => {
      releasedNow = true;
      wake?.();
    };
    this.notices.on(RELEASE, onRelease);
    let cancelled = false;
    const cancel = () => {
      if (cancelled) return;
      cancelled = true;
      wake = null;
      for (const l of listeners) this.notices.off(l.key, l.listener);
      this.notices.off(RESYNC, onResync);
      this.notices.off(RELEASE, onRelease);
    };
    const wait = (kind: string, timeoutMs: number, opts: { readFirst?: boolean } = {}) =>
      new Promise<ActorStatus>((resolve, reject) => {
        if (cancelled || !kinds.includes(kind)) return reject(new Error(`watch of ${id}: not watching ${kind}`));
        let settled = false;
        let timer: NodeJS.Timeout | undefined;
        const finish = (err: unknown, view?: ActorStatus | null) => {
          if (settled) return;
          settled = true;
          cancel();
          clearTimeout(timer);
          if (err) reject(err);
          else if (!view) reject(new ActorError('not_found', kind, id, `actor ${kind} ${id} not found`));
          else resolve(view);
        };
        // A narrow read (no snapshot): after a resync (notices may have been lost) and when the wait passes.
        const check = (force: boolean) =>
          loadStatus(this.d.db, kind, id).then(
            (v) => {
              if (!v || v.terminal || until(v) || force) finish(null, v);
            },
            (e) => finish(e),
          );
        wake = () => {
          const n = heard.get(kind);
          if (n) return finish(null, { kind, id, version: n.version, state: n.state, status: n.status, terminal: n.terminal, ...(n.projection ? { projection: n.projection } : {}) });
          if (releasedNow) return void check(true);
          if (resynced) {
            resynced = false;
            void check(false);
          }
        };
        timer = setTimeout(() => void check(true), timeoutMs);
        wake();
        if (opts.readFirst && !settled) void check(false);
      });
    return { wait, cancel };
  }

  /** The replica drains: every waiter (a long-poll) answers now with where its actor stands, and a later one at once,
   *  so no request waits out its wait_timeout_s on a replica that is shutting down. */
  release(): void {
    this.released = true;
    this.notices.emit(RELEASE);
  }

  /** Ends the LISTEN subscription (the host closing); local notices still reach subscribers until `clear`. */
  async stopListening(): Promise<void> {
    await this.unlisten?.();
  }

  clear(): void {
    this.notices.removeAllListeners();
  }
}
