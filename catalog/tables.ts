// Table operations of the catalog: create (direct or staged), load, commit (one table or a multi-table
// transaction), drop (optionally purging files) and rename. A one-table commit writes its new metadata file, then
// moves the table's metastore pointer with a compare-and-set on the location it started from (retrying from the
// new state when another commit moved it first). Multi-table transactions (and a one-table commit that keeps losing)
// serialize on the rows instead (SELECT … FOR UPDATE): requirements are checked while they are locked, the files are
// written, then the rows move, all before the locks are released.
import type { Db, Queryable } from '../runtime/db.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import { parseJson, stringifyJson } from '../iceberg/json.ts';
import {
  newTableMetadata,
  metadataFileLocation,
  MetadataError,
  type TableMetadata,
  type StructType,
  type UnboundPartitionSpec,
  type UnboundSortOrder,
} from '../iceberg/metadata.ts';
import {
  applyUpdates,
  checkRequirements,
  emptyMetadata,
  validateNewTable,
  withMetadataLog,
  RequirementFailed,
  InvalidUpdate,
  type TableRequirement,
  type TableUpdate,
} from '../iceberg/updates.ts';
import { TransformError } from '../iceberg/transforms.ts';
import * as store from './metastore.ts';
import type { Warehouse } from './metastore.ts';
import { WarehouseStorage, normalizeRootUri } from './storage.ts';
import { isUnderRoot } from '../iceberg/storageUri.ts';
import { readAvroFile, type ManifestEntry, type ManifestFile } from '../iceberg/avro.ts';
import { badRequest, commitFailed, noSuchTable, CatalogError } from './errors.ts';

export interface TableIdent {
  namespace: string[];
  name: string;
}

export interface CreateTableRequest {
  name: string;
  location?: string;
  schema: StructType & { 'schema-id'?: number; 'identifier-field-ids'?: number[] };
  'partition-spec'?: UnboundPartitionSpec;
  'write-order'?: UnboundSortOrder;
  'stage-create'?: boolean;
  properties?: Record<string, string>;
}

export interface CommitRequest {
  identifier?: TableIdent;
  requirements: TableRequirement[];
  updates: TableUpdate[];
}

export interface LoadedTable {
  metadataLocation: string | null;
  /** The metadata JSON text, exactly as stored. */
  metadataJson: string;
  metadata?: TableMetadata;
}

/** Maps errors from the iceberg/ model to REST errors. */
function asCatalogError(e: unknown): unknown {
  if (e instanceof RequirementFailed) return commitFailed(e.message);
  if (e instanceof InvalidUpdate || e instanceof MetadataError || e instanceof TransformError) return badRequest(e.message);
  return e;
}

/** A metadata file just written for a table: where, its text and its parsed form. */
type WrittenMetadata = { metadataLocation: string; metadataJson: string; metadata: TableMetadata };

/** A table's key in this process's caches. */
const tableKey = (w: Warehouse, id: TableIdent) => [w.name, ...id.namespace, id.name].join('\u0000');

const validName = (name: unknown): name is string => typeof name === 'string' && name.length > 0 && name.length <= 255;

/**
 * Parsed metadata by metadata file location. A location's content never changes, so entries never go stale;
 * a commit then parses nothing (its base was cached by the commit before). Bounded by count.
 * Beside it, per table, the location this process last saw the pointer at: only a guess to start a commit from
 * (another replica may have moved the pointer); the commit's compare-and-set on the database decides.
 */
class ParsedMetadataCache {
  private readonly entries = new Map<string, TableMetadata>();
  private readonly lastSeen = new Map<string, string>();
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  get(location: string, json: string): TableMetadata {
    const hit = this.peek(location);
    if (hit) return hit;
    const parsed = parseJson<TableMetadata>(json);
    this.put(location, parsed);
    return parsed;
  }
  peek(location: string): TableMetadata | undefined {
    const hit = this.entries.get(location);
    if (hit) {
      this.entries.delete(location);
      this.entries.set(location, hit);
    }
    return hit;
  }
  put(location: string, m: TableMetadata): void {
    this.entries.set(location, m);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
  /** The table's last seen pointer with its metadata, when both are still held. */
  guess(table: string): { location: string; metadata: TableMetadata } | undefined {
    const location = this.lastSeen.get(table);
    const metadata = location === undefined ? undefined : this.peek(location);
    return location !== undefined && metadata ? { location, metadata } : undefined;
  }
  saw(table: string, location: string): void {
    this.lastSeen.delete(table);
    this.lastSeen.set(table, location);
    if (this.lastSeen.size > this.max * 4) this.lastSeen.delete(this.lastSeen.keys().next().value!);
  }
}

/** Compare-and-set attempts of one commit before it queues on the row lock instead (heavy contention). */
const SWAP_ATTEMPTS = 4;

export class TableService {
  private readonly db: Db;
  private readonly storage: WarehouseStorage;
  private readonly parsed = new ParsedMetadataCache(64);
  /** Per table, the end of this process's queue of one-table commits (see commitOne). */
  private readonly queues = new Map<string, Promise<void>>();
  private readonly tracing: Tracing | undefined;
  constructor(db: Db, storage: WarehouseStorage, tracing?: Tracing) {
    this.db = db;
    this.storage = storage;
    this.tracing = tracing;
  }

  private traced<T>(name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T> {
    return this.tracing?.enabled ? this.tracing.span(name, { attributes }, fn) : fn();
  }

  /** `{root}{ns…}/{name}`, or with a suffix when a live table (e.g. one renamed away) still uses that location. */
  private async defaultLocation(q: Queryable, w: Warehouse, id: TableIdent, uuid: string): Promise<string> {
    const base = `${normalizeRootUri(w.rootUri)}${[...id.namespace, id.name].map(encodeURIComponent).join('/')}`;
    return (await store.locationInUse(q, w.name, base)) ? `${base}-${uuid.replace(/-/g, '')}` : base;
  }

  private checkLocation(w: Warehouse, location: string): void {
    if (!isUnderRoot(location, w.rootUri)) {
      throw badRequest(`table location ${location} is outside the warehouse root ${normalizeRootUri(w.rootUri)}`);
    }
  }

  async create(w: Warehouse, namespace: string[], req: CreateTableRequest): Promise<LoadedTable> {
    if (!validName(req.name)) throw badRequest('table name is required');
    if (!req.schema || req.schema.type !== 'struct' || !Array.isArray(req.schema.fields)) throw badRequest('schema must be a struct');
    await store.getNamespace(this.db, w.name, namespace);
    const id = { namespace, name: req.name };
    if (await store.findTableLocation(this.db, w.name, namespace, req.name)) throw store_alreadyExists(id);
    let metadata: TableMetadata;
    try {
      const uuid = crypto.randomUUID();
      const location = req.location ? req.location.replace(/\/+$/, '') : await this.defaultLocation(this.db, w, id, uuid);
      this.checkLocation(w, location);
      metadata = newTableMetadata({
        location,
        schema: req.schema,
        partitionSpec: req['partition-spec'],
        sortOrder: req['write-order'],
        properties: req.properties,
        tableUuid: uuid,
      });
    } catch (e) {
      throw asCatalogError(e);
    }
    const json = stringifyJson(metadata);
    if (req['stage-create']) return { metadataLocation: null, metadataJson: json, metadata };
    const metadataLocation = metadataFileLocation(metadata.location, null);
    await this.storage.writeText(w, metadataLocation, json);
    await store.insertTable(this.db, {
      warehouse: w.name,
      namespace,
      name: req.name,
      tableUuid: metadata['table-uuid'],
      metadataLocation,
      metadataJson: json,
    });
    this.remember(tableKey(w, id), { metadataLocation, metadata });
    return { metadataLocation, metadataJson: json, metadata };
  }

  /** `warehouse`: its name (a load reads only the table's row, so it may be read beside the warehouse's). */
  async load(warehouse: string, id: TableIdent): Promise<LoadedTable> {
    const row = await store.findTable(this.db, warehouse, id.namespace, id.name);
    if (!row) throw noSuchTable(id.namespace, id.name);
    return { metadataLocation: row.metadataLocation, metadataJson: row.metadataJson };
  }

  /** Applies one table's change inside the caller's transaction; the row is locked until it ends. */
  private async commitLocked(q: Queryable, w: Warehouse, id: TableIdent, change: CommitRequest): Promise<LoadedTable> {
    await store.assertWritable(q, w.name);
    const row = await store.findTable(q, w.name, id.namespace, id.name, true);
    const now = Date.now();
    try {
      if (!row) {
        if (!change.requirements.some((r) => r.type === 'assert-create')) throw noSuchTable(id.namespace, id.name);
        checkRequirements(null, change.requirements);
        await store.getNamespace(q, w.name, id.namespace);
        let created = applyUpdates(emptyMetadata(now), change.updates, now);
        if (!created.location) created = { ...created, location: await this.defaultLocation(q, w, id, created['table-uuid']) };
        validateNewTable(created);
        this.checkLocation(w, created.location);
        const json = stringifyJson(created);
        const metadataLocation = metadataFileLocation(created.location, null);
        await this.storage.writeText(w, metadataLocation, json);
        await store.insertTable(q, { warehouse: w.name, ...id, tableUuid: created['table-uuid'], metadataLocation, metadataJson: json });
        return { metadataLocation, metadataJson: json, metadata: created };
      }
      const base = this.parsed.get(row.metadataLocation, row.metadataJson);
      if (change.updates.length === 0) {
        checkRequirements(base, change.requirements);
        return { metadataLocation: row.metadataLocation, metadataJson: row.metadataJson, metadata: base };
      }
      const written = await this.writeNext(w, { location: row.metadataLocation, metadata: base, verified: true }, change);
      await store.updateTableMetadata(q, row, written.metadataLocation, written.metadataJson);
      this.remember(tableKey(w, id), written);
      return written;
    } catch (e) {
      throw asCatalogError(e);
    }
  }

  async commit(w: Warehouse, id: TableIdent, change: CommitRequest): Promise<LoadedTable> {
    return this.traced('commit', { 'eider.warehouse': w.name, 'eider.table': [...id.namespace, id.name].join('.') }, () => this.commitOne(w, id, change));
  }

  /**
   * One table's commit without holding a lock across the metadata write: build the new metadata from a base, write
   * its file, then move the pointer with a compare-and-set on the base's location. Requirements are thus checked
   * against the state current when the pointer moves. The base is first this process's last seen pointer (no read);
   * when that guess fails anything (a requirement, an update, the swap), the base is read from the database and the
   * commit is built again, so only the database's state decides a 409.
   */
  private async commitOne(w: Warehouse, id: TableIdent, change: CommitRequest): Promise<LoadedTable> {
    checkCommitShape(change);
    if (change.updates.length === 0) return this.db.tx((q) => this.commitLocked(q, w, id, change));
    // This process's commits to one table go one at a time: each then starts from the pointer the one before left
    // (a doomed commit fails without writing a file), instead of all writing files and all but one losing the swap.
    // Only a queue in memory: commits from other replicas still meet at the compare-and-set.
    const table = tableKey(w, id);
    const run = (this.queues.get(table) ?? Promise.resolve()).then(() => this.swapCommit(w, id, change, table));
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(table, tail);
    try {
      return await run;
    } finally {
      if (this.queues.get(table) === tail) this.queues.delete(table);
    }
  }

  private async swapCommit(w: Warehouse, id: TableIdent, change: CommitRequest, table: string): Promise<LoadedTable> {
    let base: { location: string; metadata: TableMetadata; verified: boolean } | undefined;
    const guess = this.parsed.guess(table);
    if (guess) base = { ...guess, verified: false };
    for (let attempt = 0; attempt < SWAP_ATTEMPTS; attempt++) {
      if (!base) {
        const stale = this.parsed.guess(table);
        const row = await store.findCommitBase(this.db, w.name, id.namespace, id.name, stale?.location ?? null);
        // No table (assert-create or 404): the locked path says which.
        if (!row) break;
        if (row.readOnly) throw store.readOnlyWarehouse(w.name);
        const metadata = row.metadataJson === null ? stale!.metadata : this.parsed.get(row.metadataLocation, row.metadataJson);
        this.parsed.saw(table, row.metadataLocation);
        base = { location: row.metadataLocation, metadata, verified: true };
      }
      let written: WrittenMetadata;
      try {
        written = await this.writeNext(w, base, change);
      } catch (e) {
        // A guess may be from before a storage migration moved the table (another root, another store).
        if (!base.verified) {
          base = undefined;
          continue;
        }
        throw asCatalogError(e);
      }
      if (await store.swapTableMetadata(this.db, w.name, id.namespace, id.name, base.location, written.metadataLocation, written.metadataJson)) {
        this.remember(table, written);
        return written;
      }
      // The file was never referenced: nobody can read it, so it goes.
      await this.storage.remove(w, written.metadataLocation).catch(() => undefined);
      base = undefined;
    }
    return this.db.tx((q) => this.commitLocked(q, w, id, change));
  }

  /**
   * Writes the metadata file `change` makes of `base` (requirements checked, its log entry added; `base` is never
   * mutated: applyUpdates works on a copy). The pointer is the caller's to move.
   */
  private async writeNext(
    w: Warehouse,
    base: { location: string; metadata: TableMetadata; verified: boolean },
    change: CommitRequest,
  ): Promise<WrittenMetadata> {
    checkRequirements(base.metadata, change.requirements);
    let next = applyUpdates(base.metadata, change.updates, Date.now());
    if (!base.verified || next.location !== base.metadata.location) this.checkLocation(w, next.location);
    next = withMetadataLog(next, { location: base.location, lastUpdatedMs: base.metadata['last-updated-ms'] });
    const metadataJson = stringifyJson(next);
    const metadataLocation = metadataFileLocation(next.location, base.location);
    await this.storage.writeText(w, metadataLocation, metadataJson);
    return { metadataLocation, metadataJson, metadata: next };
  }

  /** The table's pointer as this process last moved it, with its parsed metadata: the next commit's guess. */
  private remember(table: string, t: { metadataLocation: string; metadata: TableMetadata }): void {
    this.parsed.put(t.metadataLocation, t.metadata);
    this.parsed.saw(table, t.metadataLocation);
  }

  /** All changes land or none: one transaction, rows locked in a fixed order so two transactions cannot deadlock. */
  async commitTransaction(w: Warehouse, changes: Array<CommitRequest & { identifier: TableIdent }>): Promise<void> {
    return this.traced('commit transaction', { 'eider.warehouse': w.name, 'eider.tables': Array.isArray(changes) ? changes.length : 0 }, () => this.commitAll(w, changes));
  }

  private async commitAll(w: Warehouse, changes: Array<CommitRequest & { identifier: TableIdent }>): Promise<void> {
    if (!changes.length) throw badRequest('table-changes must not be empty');
    const keyOf = (id: TableIdent) => [...id.namespace, id.name].join('\u001f');
    const seen = new Set<string>();
    for (const c of changes) {
      if (!c.identifier || !Array.isArray(c.identifier.namespace) || !validName(c.identifier.name)) {
        throw badRequest('every table change needs an identifier');
      }
      checkCommitShape(c);
      const k = keyOf(c.identifier);
      if (seen.has(k)) throw badRequest(`table ${c.identifier.name} appears twice in one transaction`);
      seen.add(k);
    }
    const ordered = [...changes].sort((a, b) => (keyOf(a.identifier) < keyOf(b.identifier) ? -1 : 1));
    await this.db.tx(async (q) => {
      for (const c of ordered) await store.findTable(q, w.name, c.identifier.namespace, c.identifier.name, true);
      for (const c of changes) await this.commitLocked(q, w, c.identifier, c);
    });
  }

  async drop(w: Warehouse, id: TableIdent, purge: boolean): Promise<{ purgedFiles: number; keptFiles: number }> {
    const row = await store.deleteTableRow(this.db, w.name, id.namespace, id.name);
    if (!row) throw noSuchTable(id.namespace, id.name);
    if (!purge) return { purgedFiles: 0, keptFiles: 0 };
    const metadata = parseJson<TableMetadata>(row.metadataJson);
    // Another live table may use the same location (created there after a rename, or registered on the same
    // metadata): the files may be its own, so they stay.
    if (await store.locationInUse(this.db, w.name, metadata.location)) return { purgedFiles: 0, keptFiles: 0 };
    return this.purgeFiles(w, row.metadataLocation, metadata);
  }

  /**
   * Deletes the files the table's own metadata references (its metadata files, manifest lists, manifests, data and
   * delete files, statistics), never a prefix: another table whose location shares the prefix (a misconfigured root,
   * a location inside this one) keeps every file. A file referenced from outside the table's location is kept too:
   * a writer of this table could name another table's files in a manifest, and the purge runs with the
   * warehouse's own credentials. A manifest list or manifest that cannot be read is skipped (what it lists stays).
   */
  private async purgeFiles(w: Warehouse, metadataLocation: string, metadata: TableMetadata): Promise<{ purgedFiles: number; keptFiles: number }> {
    const files = new Set<string>([metadataLocation, ...(metadata['metadata-log'] ?? []).map((e) => e['metadata-file'])]);
    for (const s of [...((metadata.statistics ?? []) as Record<string, unknown>[]), ...((metadata['partition-statistics'] ?? []) as Record<string, unknown>[])]) {
      if (typeof s['statistics-path'] === 'string') files.add(s['statistics-path']);
    }
    const ours = (uri: string) => {
      try {
        return isUnderRoot(uri, metadata.location);
      } catch {
        return false;
      }
    };
    const read = async (uri: string) => (ours(uri) ? this.storage.readBytes(w, uri).catch(() => undefined) : undefined);
    const manifests = new Set<string>();
    await inPool([...new Set(metadata.snapshots.map((s) => s['manifest-list']))], 8, async (list) => {
      files.add(list);
      const bytes = await read(list);
      if (bytes) for (const m of readAvroFile<ManifestFile>(bytes).records) manifests.add(m.manifest_path);
    });
    await inPool([...manifests], 8, async (manifest) => {
      files.add(manifest);
      const bytes = await read(manifest);
      if (bytes) for (const e of readAvroFile<ManifestEntry>(bytes).records) files.add(e.data_file.file_path);
    });
    const own = [...files].filter(ours);
    await inPool(own, 8, (f) => this.storage.remove(w, f));
    return { purgedFiles: own.length, keptFiles: files.size - own.length };
  }

  async rename(w: Warehouse, from: TableIdent, to: TableIdent): Promise<void> {
    if (!validName(to.name)) throw badRequest('destination name is required');
    await this.db.tx(async (q) => {
      await store.getNamespace(q, w.name, to.namespace);
      if (!(await store.renameTable(q, w.name, from, to))) throw noSuchTable(from.namespace, from.name);
    });
  }
}

function store_alreadyExists(id: TableIdent): CatalogError {
  return new CatalogError(409, 'AlreadyExistsException', `Table already exists: ${[...id.namespace, id.name].join('.')}`);
}

function checkCommitShape(c: CommitRequest): void {
  if (!Array.isArray(c.requirements) || !Array.isArray(c.updates)) throw badRequest('requirements and updates must be arrays');
  for (const u of c.updates) if (!u || typeof u.action !== 'string') throw badRequest('every update needs an action');
  for (const r of c.requirements) if (!r || typeof r.type !== 'string') throw badRequest('every requirement needs a type');
}

/** Runs `fn` over `items`, at most `width` at a time. */
async function inPool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
