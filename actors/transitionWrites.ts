// Turns a decided transition into its store writes: the actor row, the history row, the outbox rows and the NOTIFY
// payload as one `TransitionWrite` (one statement, actors/store.ts), with the kind's entity write folded in or its
// onPersist hook in the same transaction; and a spawn's insert the same way. Transitions of different actors ready at
// the same time commit together (groupCommit.ts).
import type { AnyMachineSnapshot } from 'xstate';
import type { Db, Queryable } from '../runtime/db.ts';
import { isUniqueViolation } from '../runtime/db.ts';
import type { CacheEntry } from './actorCache.ts';
import type { Action } from './effectRunner.ts';
import { ActorError } from './errors.ts';
import type { ActorEvent, ActorKind, EntityWrite, Projection, TransitionNotice } from './types.ts';
import { redactSecrets } from './redact.ts';
import { encodeJson, withoutKeys } from './snapshotCodec.ts';
import { insertActor, writeTransition, type FinishedEffects, type TransitionWrite } from './store.ts';
import { exec } from '../runtime/sql.ts';
import { GroupCommit, type GroupCommitOptions } from './groupCommit.ts';

/** The actions that are effects (built-ins such as assign and raise were applied inside transition()). */
export const effectsOf = (actions: readonly Action[], reg: ActorKind) =>
  actions.filter((a) => !a.type.startsWith('xstate.') && !reg.inertEffects?.includes(a.type));

/** The event's fields the kind keeps on its entity row (ActorKind.eventAttachments). */
export function attachmentsOf(reg: ActorKind, event: ActorEvent): Record<string, unknown> | undefined {
  if (!reg.eventAttachments) return undefined;
  const picked: Record<string, unknown> = {};
  for (const k of reg.eventAttachments) if ((event as Record<string, unknown>)[k] !== undefined) picked[k] = (event as Record<string, unknown>)[k];
  return picked;
}

export interface TransitionWritesDeps {
  db: Db;
  replicaId: string;
  kinds: Record<string, ActorKind>;
  groupCommit?: GroupCommitOptions;
  /** Finished transitions whose outbox rows a transition's statement deletes with its own writes (the effects
   *  system's): taken before the write, settled with whether it committed. */
  finished?: { take(): FinishedEffects[]; settle(batch: readonly FinishedEffects[], deleted: boolean): void };
}

export class TransitionWrites {
  private readonly d: TransitionWritesDeps;
  private readonly group: GroupCommit;

  constructor(deps: TransitionWritesDeps) {
    this.d = deps;
    this.group = new GroupCommit(deps.db, deps.groupCommit);
  }

  build(
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
    const { kinds, replicaId } = this.d;
    const omitted = kinds[kind]?.externalContext?.keys ?? [];
    const stored = redactSecrets(eventType === 'xstate.init' ? withoutKeys(payload, omitted) : payload) as Record<string, unknown> | unknown;
    // For events, `type` and `at` have their own columns; a spawn's payload is the machine's input, kept whole.
    if (eventType !== 'xstate.init' && stored && typeof stored === 'object' && !Array.isArray(stored)) {
      delete (stored as Record<string, unknown>).type;
      delete (stored as Record<string, unknown>).at;
      for (const k of kinds[kind]?.eventAttachments ?? []) delete (stored as Record<string, unknown>)[k];
    }
    const notice: TransitionNotice = {
      kind,
      id,
      version: entry.version,
      state: entry.state,
      status: entry.status,
      terminal: entry.terminal,
      replica: replicaId,
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
      replica: replicaId,
      notifyPayload: opts.announce ? JSON.stringify(notice) : null,
      effects: opts.effects.map((a) => ({ effect: a.type, paramsText: encodeJson(a.params ?? null) })),
      history: opts.history ?? true,
    };
  }

  /** Writes a transition if the actor is still at `expectedVersion`: its new version, or null when it was not. */
  async commit(
    reg: ActorKind,
    id: string,
    expectedVersion: number,
    write: TransitionWrite,
    snapshot: AnyMachineSnapshot,
    projection: Projection,
    attachments?: Readonly<Record<string, unknown>>,
  ): Promise<number | null> {
    const entity = reg.entityWrite?.(id, projection, attachments);
    const onPersist = reg.onPersist;
    // Outbox rows of transitions whose effects ran go with this statement; kept for the next one if it fails.
    const finished = this.d.finished?.take() ?? [];
    let committed = false;
    try {
      const version = await this.group.write({
        key: `${write.kind}:${id}`,
        needsTx: onPersist !== undefined,
        run: async (q) => {
          const version = await writeTransition(q, expectedVersion, write, entity, finished);
          if (version !== null && onPersist) await onPersist(q, id, snapshot, projection);
          return version;
        },
      });
      committed = true;
      return version;
    } finally {
      this.d.finished?.settle(finished, committed);
    }
  }

  /** Inserts a spawned actor (in `opts.tx` when given); `conflict` when it already exists. */
  async insert(
    reg: ActorKind,
    kind: string,
    id: string,
    write: TransitionWrite,
    snapshot: AnyMachineSnapshot,
    projection: Projection,
    opts: { tx?: Queryable; entity?: EntityWrite },
  ): Promise<void> {
    const { db } = this.d;
    try {
      // An entity created with the actor (its INSERT carrying the initial projection) needs no entity update.
      if (opts.entity) await insertActor(opts.tx ?? db, write, opts.entity);
      else if (opts.tx) await this.insertWith(opts.tx, reg, id, write, snapshot, projection);
      else if (reg.onPersist || reg.entityWrite) await db.tx((tx) => this.insertWith(tx, reg, id, write, snapshot, projection));
      else await insertActor(db, write);
    } catch (e) {
      if (isUniqueViolation(e)) throw new ActorError('conflict', kind, id, `actor ${kind} ${id} already exists`);
      throw e;
    }
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
    if (entity) await exec(tx, entity);
    await reg.onPersist?.(tx, id, snapshot, projection);
  }
}
