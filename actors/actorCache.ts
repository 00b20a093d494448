// The live actors this replica keeps in memory, as last persisted: a delivery decides on the cached snapshot
// without reading the row. Bounded (beyond `size` the oldest are dropped; they reload on their next event), and
// terminal actors are never kept. An entry may be stale (another replica moved the actor): the version check of the
// write catches that, and a NOTIFY of a newer version drops the entry early.
import type { AnyMachineSnapshot } from 'xstate';
import type { Db } from '../runtime/db.ts';
import { ActorError } from './errors.ts';
import type { ActorKind, ActorView, Projection } from './types.ts';
import { decodeSnapshot, encodeSnapshot, stateName } from './snapshotCodec.ts';
import { loadActor, type ActorRow, type ExternalContexts } from './store.ts';

export interface CacheEntry {
  snapshot: AnyMachineSnapshot;
  snapshotText: string;
  version: number;
  state: string;
  status: string;
  terminal: boolean;
  deadlineAt: number | null;
}

export const actorKey = (kind: string, id: string) => `${kind}:${id}`;

export interface ActorCacheDeps {
  db: Db;
  kinds: Record<string, ActorKind>;
  externals: ExternalContexts;
  /** Live actors kept; the oldest are dropped beyond this. */
  size: number;
}

export class ActorCache {
  private readonly d: ActorCacheDeps;
  private readonly entries = new Map<string, CacheEntry>();

  constructor(deps: ActorCacheDeps) {
    this.d = deps;
  }

  get(k: string): CacheEntry | undefined {
    return this.entries.get(k);
  }

  delete(k: string): void {
    this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }

  remember(k: string, entry: CacheEntry): void {
    this.entries.delete(k);
    this.entries.set(k, entry);
    if (this.entries.size > this.d.size) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  /** The actor as cached, or loaded from its row (and cached while it lives); `not_found` when there is none. */
  async current(reg: ActorKind, kind: string, id: string): Promise<CacheEntry> {
    const k = actorKey(kind, id);
    const hit = this.entries.get(k);
    if (hit) return hit;
    const entry = await this.read(reg, kind, id);
    if (!entry) throw new ActorError('not_found', kind, id, `actor ${kind} ${id} not found`);
    if (!entry.terminal) this.remember(k, entry);
    return entry;
  }

  /** The actor's persisted row, read from the database whatever the cache holds; not cached. */
  async read(reg: ActorKind, kind: string, id: string): Promise<CacheEntry | null> {
    const row = await loadActor(this.d.db, kind, id, this.d.externals);
    return row ? this.entryFromRow(reg, row) : null;
  }

  entryFromRow(reg: ActorKind, row: ActorRow): CacheEntry {
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

  entryFor(kind: string, snapshot: AnyMachineSnapshot, version: number, p: Projection): CacheEntry {
    return {
      snapshot,
      snapshotText: encodeSnapshot(snapshot, this.d.kinds[kind]?.externalContext?.keys ?? []),
      version,
      state: stateName(snapshot.value),
      status: p.status,
      terminal: p.terminal,
      deadlineAt: p.deadlineAt,
    };
  }
}

export function viewOf(kind: string, id: string, e: CacheEntry): ActorView {
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
