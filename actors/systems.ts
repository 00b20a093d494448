// The resources the host's systems share, built once from the host's options: the database, this replica, the
// registered kinds, logging, the clock, supervision settings, and the parts more than one system uses (mailboxes,
// the live-actor cache, notifications, backoff). Each system takes what it needs from here; host.ts wires them.
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import { ActorCache } from './actorCache.ts';
import { Backoff } from './backoff.ts';
import type { ActorHostOptions, ActorKind } from './types.ts';
import { Mailboxes } from './mailbox.ts';
import { Notifications } from './notifications.ts';
import type { ExternalContexts } from './store.ts';

export interface HostResources {
  readonly db: Db;
  readonly replicaId: string;
  readonly kinds: Record<string, ActorKind>;
  /** Per kind with an external context, the SQL that reads it back on load (ActorKind.externalContext). */
  readonly externals: ExternalContexts;
  readonly logger: Logger;
  readonly now: () => number;
  /** Consecutive failures of one delivery or one effect before the actor is moved to failed. */
  readonly maxFailures: number;
  /** Reload-and-redeliver attempts after losing the optimistic version check. */
  readonly maxConflictRetries: number;
  readonly backoff: Backoff;
  /** One per actor: its deliveries (and spawn) run one at a time, in arrival order. */
  readonly mailboxes: Mailboxes;
  readonly cache: ActorCache;
  readonly notifications: Notifications;
  isClosed(): boolean;
}

export function createResources(opts: ActorHostOptions, isClosed: () => boolean): HostResources {
  const { db, replicaId, kinds, logger } = opts;
  const externals: ExternalContexts = Object.fromEntries(
    Object.entries(kinds).flatMap(([k, reg]) => (reg.externalContext ? [[k, reg.externalContext.select]] : [])),
  );
  const cache = new ActorCache({ db, kinds, externals, size: opts.cacheSize ?? 50_000 });
  return {
    db,
    replicaId,
    kinds,
    externals,
    logger,
    now: opts.now ?? Date.now,
    maxFailures: opts.supervision?.maxFailures ?? 5,
    maxConflictRetries: opts.maxConflictRetries ?? 20,
    backoff: new Backoff({ backoffMs: opts.supervision?.backoffMs ?? 100, maxBackoffMs: opts.supervision?.maxBackoffMs ?? 10_000 }),
    mailboxes: new Mailboxes(),
    cache,
    notifications: new Notifications({ db, replicaId, logger, cache }),
    isClosed,
  };
}
