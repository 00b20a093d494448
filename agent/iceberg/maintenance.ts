// Table maintenance the agent carries out for `CALL system.…` statements (Spark's Iceberg procedure names), so the
// api dispatches them like any write: compaction of small data files, snapshot expiry with the deletion of the files
// only expired snapshots reached, manifest rewriting, and orphan-file removal. Every change to the table is a REST
// commit with requirements (table uuid, main's snapshot); files are deleted only after the commit that stops
// referencing them has landed, and only under the table's location, with the credentials vended for this query.
import { randomBytes } from 'node:crypto';
import { readManifest, writeManifest, writeManifestList, type DataFile, type ManifestEntry, type ManifestFile } from '../../iceberg/avro.ts';
import { stringifyJson, toBigInt, type Long } from '../../iceberg/json.ts';
import { currentSchema, defaultSpec, type Snapshot, type TableMetadata } from '../../iceberg/metadata.ts';
import { objectPath, StorageUriError } from '../../iceberg/storageUri.ts';
import type { TableRequirement, TableUpdate } from '../../iceberg/updates.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { DataFileCache } from '../dataCache.ts';
import { CatalogHttpError, type LoadedTable } from './catalog.ts';
import { addSnapshotUpdates, commitSnapshot, newSnapshotId, onBaseRequirements, partitionSummaries, type TableHandle } from './commit.ts';
import { catalogError } from './errors.ts';
import { findSnapshot, liveEntries, mainSnapshotId, planScan, readImmutable, readManifestFiles, type PlannedFile } from './scan.ts';
import { ObjectNotFound, type TableStorage } from './storage.ts';
import type { ProcedureCall, ProcedureName, ProcedureOptions } from './statements.ts';
import { deletedPositionsSql, type LocalDeletes } from './deletes.ts';
import { writeDataFiles } from './write.ts';
import type { Logger } from '../logger.ts';

const MIB = 2 ** 20;
const DAY_MS = 86_400_000;
const DEFAULT_TARGET_FILE_SIZE_BYTES = 128 * MIB;
const DEFAULT_MIN_INPUT_FILES = 2;
/** A data file below this fraction of the target size is small: a candidate for compaction. */
const SMALL_FILE_FRACTION = 0.75;
const DELETE_CONCURRENCY = 8;
const MAX_ATTEMPTS = 20;

export interface MaintenanceContext {
  readonly connection: DuckDBConnection;
  /** The query's scratch directory: rewritten data files are written here first. */
  readonly workDir: string;
  readonly cache: DataFileCache;
  /** Cache paths in use by this query (unpinned when it ends). */
  readonly pinned: string[];
  /**
   * Fetches data files and their delete files into the cache and returns a SELECT over the files' live rows with
   * the table's current schema, and per file the local copies of its delete files (in `PlannedFile.deletes` order).
   */
  scan(handle: TableHandle, files: readonly PlannedFile[]): Promise<{ sql: string; deletes: ReadonlyArray<LocalDeletes | null> }>;
  readonly logger: Logger;
  /** Between uploading a compaction's files and committing it (tests interleave writers here). */
  readonly beforeCommit?: () => Promise<void>;
}

/** The one result row: column name → count, in column order. */
export type ProcedureRow = Record<string, number>;

/** The result columns of each procedure (all BIGINT), also for the empty result table EXPLAIN binds against. */
export const RESULT_COLUMNS: Record<ProcedureName, readonly string[]> = {
  rewrite_data_files: ['rewritten_data_files_count', 'added_data_files_count', 'rewritten_bytes_count'],
  expire_snapshots: ['deleted_data_files_count', 'deleted_manifest_files_count', 'deleted_manifest_lists_count', 'expired_snapshots_count'],
  rewrite_manifests: ['rewritten_manifests_count', 'added_manifests_count'],
  remove_orphan_files: ['orphan_file_location_count'],
};

export function runProcedure(call: ProcedureCall, handle: TableHandle, ctx: MaintenanceContext): Promise<ProcedureRow> {
  switch (call.procedure) {
    case 'rewrite_data_files':
      return rewriteDataFiles(handle, ctx, call.options);
    case 'expire_snapshots':
      return expireSnapshots(handle, ctx, call.options);
    case 'rewrite_manifests':
      return rewriteManifests(handle);
    case 'remove_orphan_files':
      return removeOrphanFiles(handle, call.options);
  }
}

const sum = (values: Iterable<bigint>) => {
  let s = 0n;
  for (const v of values) s += v;
  return s;
};

async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

const tableName = (h: TableHandle) => `${h.namespace}.${h.name}`;

/** The table loaded again; a different uuid means it was dropped and created anew meanwhile. */
async function reload(handle: TableHandle): Promise<LoadedTable> {
  const loaded = await handle.client.loadTable(handle.namespace, handle.name);
  if (!loaded || loaded.metadata['table-uuid'] !== handle.loaded.metadata['table-uuid']) {
    throw catalogError(`table ${tableName(handle)} was dropped or replaced while this statement ran`);
  }
  return loaded;
}

const isConflict = (error: unknown) => error instanceof CatalogHttpError && error.status === 409;

const pause = (attempt: number) => new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * Math.min(attempt, 5)));

// ---------------------------------------------------------------------------------------------------------------
// rewrite_data_files: bin-packing compaction

/**
 * Rewrites the small data files (below 75% of the target) of each partition that has at least `min_input_files` of
 * them into files of about the target size, in one `replace` snapshot that removes exactly the files read. Files of
 * one partition (of one spec) are packed into bins of at most the target size; a bin of one file is left alone.
 * Position deletes are folded: every data file that delete files apply to is rewritten without the deleted rows
 * (whatever its size, alone if need be), and each delete file whose data files are all rewritten (or gone) is
 * removed in the same snapshot. A conflict is retried on the new base as long as every file read is still live
 * (concurrent appends stay) and no delete file committed meanwhile touches them.
 */
async function rewriteDataFiles(handle: TableHandle, ctx: MaintenanceContext, options: ProcedureOptions): Promise<ProcedureRow> {
  const target = options.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE_BYTES;
  const minInput = options.minInputFiles ?? DEFAULT_MIN_INPUT_FILES;
  const row = { rewritten_data_files_count: 0, added_data_files_count: 0, rewritten_bytes_count: 0 };
  const metadata = handle.loaded.metadata;
  const snapshot = findSnapshot(metadata, mainSnapshotId(metadata));
  if (!snapshot) return row;
  const plan = await planScan(metadata, handle.storage); // refuses tables with equality delete files
  const hasDeletes = (f: PlannedFile) => f.deletes.length > 0;
  const groups = new Map<string, PlannedFile[]>();
  for (const f of plan.files) {
    if (Number(f.file.file_size_in_bytes) >= target * SMALL_FILE_FRACTION && !hasDeletes(f)) continue;
    const key = `${f.specId}:${stringifyJson(f.file.partition)}`;
    const group = groups.get(key);
    if (group) group.push(f);
    else groups.set(key, [f]);
  }
  const bins: PlannedFile[][] = [];
  for (const files of groups.values()) {
    if (files.length < minInput && !files.some(hasDeletes)) continue;
    bins.push(...binPack(files, target).filter((b) => b.length > 1 || b.some(hasDeletes)));
  }
  if (bins.length === 0) return row;

  const schema = currentSchema(metadata);
  const target_ = { schema, spec: defaultSpec(metadata), location: metadata.location.replace(/\/+$/, '') };
  const added: DataFile[] = [];
  const removed = new Map<string, string>();
  /** Delete files of the rewritten data files: path → its manifest and local copy. */
  const folded = new Map<string, { manifestPath: string; local: string }>();
  let bytes = 0n;
  let deletedRows = 0n;
  for (const bin of bins) {
    const { sql: source, deletes } = await ctx.scan(handle, bin);
    const written = await writeDataFiles(ctx.connection, source, target_, handle.storage, ctx.workDir, ctx.cache, ctx.pinned);
    // The rows expected: what the files record, less the distinct positions within them their deletes remove.
    let expected = sum(bin.map((f) => f.file.record_count));
    for (let i = 0; i < bin.length; i++) {
      const d = deletes[i];
      if (!d) continue;
      const gone = await ctx.connection.runAndReadAll(`SELECT count(DISTINCT pos) FROM (${deletedPositionsSql(d)}) WHERE pos < ${bin[i].file.record_count}`);
      const n = BigInt(gone.getRows()[0][0] as bigint);
      expected -= n;
      deletedRows += n;
      bin[i].deletes.forEach((del, j) => folded.set(del.file.file_path, { manifestPath: del.manifestPath, local: d.files[j] }));
    }
    const wrote = sum(written.files.map((f) => f.record_count));
    if (wrote !== expected || BigInt(written.rows) !== expected) {
      throw new Error(`internal: compaction of ${tableName(handle)} read ${written.rows} rows from files holding ${expected} live rows; nothing was committed`);
    }
    added.push(...written.files);
    for (const f of bin) {
      removed.set(f.file.file_path, f.manifestPath);
      bytes += f.file.file_size_in_bytes;
    }
  }
  // A delete file goes when no data file it names is still live after this rewrite.
  const liveAfter = new Set(plan.files.map((f) => f.file.file_path).filter((p) => !removed.has(p)));
  let droppedDeletes = 0;
  for (const [path, { manifestPath, local }] of folded) {
    const named = await ctx.connection.runAndReadAll(`SELECT DISTINCT file_path FROM read_parquet('${local.replace(/'/g, "''")}')`);
    if (named.getRows().some((row) => liveAfter.has(String(row[0])))) continue;
    removed.set(path, manifestPath);
    droppedDeletes++;
  }
  const result = await commitSnapshot(handle, { added, removed }, { operation: 'replace', relocate: true, ...(ctx.beforeCommit ? { beforeCommit: ctx.beforeCommit } : {}) });
  handle.loaded.metadata = result.metadata;
  const rewrittenFiles = removed.size - droppedDeletes;
  ctx.logger.info(
    { table: tableName(handle), snapshotId: String(result.snapshotId), attempts: result.attempts, rewritten: rewrittenFiles, added: added.length, deleteFilesRemoved: droppedDeletes, deletedRows: String(deletedRows) },
    'iceberg compaction',
  );
  return { rewritten_data_files_count: rewrittenFiles, added_data_files_count: added.length, rewritten_bytes_count: Number(bytes) };
}

/** First-fit decreasing: bins of at most `capacity` bytes (a file alone larger than that gets a bin of its own). */
export function binPack<T extends { file: { file_size_in_bytes: bigint } }>(files: readonly T[], capacity: number): T[][] {
  const size = (f: T) => Number(f.file.file_size_in_bytes);
  const bins: Array<{ size: number; files: T[] }> = [];
  for (const f of [...files].sort((a, b) => size(b) - size(a))) {
    const bin = bins.find((b) => b.size + size(f) <= capacity);
    if (bin) {
      bin.files.push(f);
      bin.size += size(f);
    } else bins.push({ size: size(f), files: [f] });
  }
  return bins.map((b) => b.files);
}

// ---------------------------------------------------------------------------------------------------------------
// expire_snapshots

/**
 * The snapshots to expire: older than `olderThanMs`, except every snapshot a branch or tag points at and the
 * `retainLast` most recent ancestors of main (main's own snapshot first).
 */
export function snapshotsToExpire(metadata: TableMetadata, olderThanMs: number, retainLast: number): Snapshot[] {
  const byId = new Map(metadata.snapshots.map((s) => [toBigInt(s['snapshot-id']), s]));
  const keep = new Set<bigint>(Object.values(metadata.refs ?? {}).map((r) => toBigInt(r['snapshot-id'])));
  let id = mainSnapshotId(metadata);
  for (let n = 0; id !== null && n < retainLast; n++) {
    keep.add(id);
    const parent = byId.get(id)?.['parent-snapshot-id'];
    id = parent === null || parent === undefined ? null : toBigInt(parent);
  }
  return metadata.snapshots.filter((s) => !keep.has(toBigInt(s['snapshot-id'])) && Number(s['timestamp-ms']) < olderThanMs);
}

/**
 * Removes the expired snapshots with one commit (`remove-snapshots`, with their statistics), asserting that no ref
 * moved since they were chosen, then deletes what only they reached: data files live in no remaining snapshot,
 * manifests listed by no remaining snapshot, and the expired snapshots' manifest lists.
 */
async function expireSnapshots(handle: TableHandle, ctx: MaintenanceContext, options: ProcedureOptions): Promise<ProcedureRow> {
  const olderThan = options.olderThanMs ?? Date.now() - 5 * DAY_MS;
  const retainLast = options.retainLast ?? 1;
  let metadata = handle.loaded.metadata;
  for (let attempt = 1; ; attempt++) {
    const expired = snapshotsToExpire(metadata, olderThan, retainLast);
    if (expired.length === 0) break;
    const ids = new Set(expired.map((s) => toBigInt(s['snapshot-id'])));
    const updates: TableUpdate[] = [{ action: 'remove-snapshots', 'snapshot-ids': expired.map((s) => s['snapshot-id']) }];
    for (const st of (metadata.statistics ?? []) as Array<{ 'snapshot-id': Long }>) {
      if (ids.has(toBigInt(st['snapshot-id']))) updates.push({ action: 'remove-statistics', 'snapshot-id': st['snapshot-id'] });
    }
    for (const st of (metadata['partition-statistics'] ?? []) as Array<{ 'snapshot-id': Long }>) {
      if (ids.has(toBigInt(st['snapshot-id']))) updates.push({ action: 'remove-partition-statistics', 'snapshot-id': st['snapshot-id'] });
    }
    // Every ref as it was when the snapshots were chosen: a ref moved meanwhile could protect one of them.
    const requirements: TableRequirement[] = [
      { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
      ...Object.entries(metadata.refs ?? {}).map(([ref, r]): TableRequirement => ({ type: 'assert-ref-snapshot-id', ref, 'snapshot-id': r['snapshot-id'] })),
    ];
    if (!metadata.refs?.main) requirements.push({ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null });
    try {
      const before = metadata;
      metadata = await handle.client.commit(handle.namespace, handle.name, requirements, updates);
      handle.loaded.metadata = metadata;
      ctx.logger.info({ table: tableName(handle), expired: expired.length, attempts: attempt }, 'iceberg snapshots expired');
      return { ...(await deleteUnreachable(handle, before, metadata, expired)), expired_snapshots_count: expired.length };
    } catch (error) {
      if (!isConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
      metadata = (await reload(handle)).metadata;
      await pause(attempt);
    }
  }
  return { deleted_data_files_count: 0, deleted_manifest_files_count: 0, deleted_manifest_lists_count: 0, expired_snapshots_count: 0 };
}

async function readListOrNull(storage: TableStorage, snapshot: Snapshot): Promise<ManifestFile[] | null> {
  try {
    return await readManifestFiles(storage, snapshot);
  } catch (error) {
    if (error instanceof ObjectNotFound) return null;
    throw error;
  }
}

async function deleteUnreachable(handle: TableHandle, before: TableMetadata, after: TableMetadata, expired: readonly Snapshot[]) {
  const storage = handle.storage;
  // What the remaining snapshots need; any failure to read it fails the procedure before anything is deleted.
  const keptLists = new Set<string>();
  const keptManifests = new Map<string, ManifestFile>();
  for (const s of after.snapshots) {
    keptLists.add(s['manifest-list']);
    for (const m of await readManifestFiles(storage, s)) keptManifests.set(m.manifest_path, m);
  }
  const live = new Set<string>();
  for (const m of keptManifests.values()) for (const e of await liveEntries(storage, m)) live.add(e.data_file.file_path);
  // What only the expired snapshots reached (a list or manifest already gone is skipped: an earlier run's leftovers).
  const lists = new Set<string>();
  const manifests = new Set<string>();
  const files = new Set<string>();
  for (const s of expired) {
    if (!keptLists.has(s['manifest-list'])) lists.add(s['manifest-list']);
    for (const m of (await readListOrNull(storage, s)) ?? []) {
      if (keptManifests.has(m.manifest_path) || manifests.has(m.manifest_path)) continue;
      manifests.add(m.manifest_path);
      let entries: ManifestEntry[];
      try {
        entries = readManifest(await readImmutable(storage, m.manifest_path)).entries;
      } catch (error) {
        if (error instanceof ObjectNotFound) continue;
        throw error;
      }
      for (const e of entries) if (!live.has(e.data_file.file_path)) files.add(e.data_file.file_path);
    }
  }
  const location = `${before.location.replace(/\/+$/, '')}/`;
  const inside = (paths: Set<string>) => [...paths].filter((p) => p.startsWith(location));
  const outside = [...files, ...manifests, ...lists].filter((p) => !p.startsWith(location)).length;
  if (outside) {
    // The vended credential covers the table location only; such files were written there by another engine.
    throw catalogError(`expired snapshots of ${tableName(handle)} reference ${outside} files outside the table location ${location}; they were not deleted`);
  }
  const del = async (paths: string[]) => {
    try {
      await pool(paths, DELETE_CONCURRENCY, (p) => storage.delete(p));
    } catch (error) {
      throw catalogError(`snapshots of ${tableName(handle)} were expired, but deleting their files failed (the rest are left for remove_orphan_files): ${(error as Error).message}`);
    }
    return paths.length;
  };
  // Data files first, then the manifests and lists naming them: an interrupted run leaves no dangling manifest.
  return {
    deleted_data_files_count: await del(inside(files)),
    deleted_manifest_files_count: await del(inside(manifests)),
    deleted_manifest_lists_count: await del(inside(lists)),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// rewrite_manifests

/**
 * Rewrites the current snapshot's data manifests into one manifest per partition spec (entries kept as EXISTING
 * with their snapshot ids and sequence numbers, tombstones of removed files dropped) in a `replace` snapshot with
 * the same data files. Specs with a single manifest without tombstones are left alone; delete manifests are carried.
 */
async function rewriteManifests(handle: TableHandle): Promise<ProcedureRow> {
  for (let attempt = 1; ; attempt++) {
    const metadata = handle.loaded.metadata;
    const base = findSnapshot(metadata, mainSnapshotId(metadata));
    if (!base) return { rewritten_manifests_count: 0, added_manifests_count: 0 };
    const manifests = await readManifestFiles(handle.storage, base);
    const bySpec = new Map<number, ManifestFile[]>();
    for (const m of manifests) {
      if (m.content !== 0) continue;
      bySpec.set(m.partition_spec_id, [...(bySpec.get(m.partition_spec_id) ?? []), m]);
    }
    const rewrite = [...bySpec.entries()].filter(([, ms]) => ms.length > 1 || ms.some((m) => m.deleted_files_count > 0));
    if (rewrite.length === 0) return { rewritten_manifests_count: 0, added_manifests_count: 0 };
    const replaced = new Set(rewrite.flatMap(([, ms]) => ms.map((m) => m.manifest_path)));
    const snapshotId = newSnapshotId();
    const sequenceNumber = toBigInt(metadata['last-sequence-number']) + 1n;
    const schema = currentSchema(metadata);
    const location = metadata.location.replace(/\/+$/, '');
    const created: ManifestFile[] = [];
    let entriesProcessed = 0;
    for (const [specId, ms] of rewrite) {
      const spec = metadata['partition-specs'].find((s) => s['spec-id'] === specId);
      if (!spec) throw catalogError(`manifest of ${tableName(handle)} uses partition spec ${specId}, which the table metadata does not have`);
      const entries: ManifestEntry[] = [];
      for (const m of ms) {
        for (const e of await liveEntries(handle.storage, m)) {
          if (e.sequence_number === null || e.file_sequence_number === null) {
            throw catalogError(`manifest ${m.manifest_path} has an entry without a sequence number; it cannot be rewritten`);
          }
          entries.push({ ...e, status: 0 });
        }
      }
      entriesProcessed += entries.length;
      if (entries.length === 0) continue;
      const bytes = writeManifest({ schema, spec, content: 'data', entries });
      const path = `${location}/metadata/${snapshotId}-${randomBytes(6).toString('hex')}-m${created.length}.avro`;
      await handle.storage.put(path, bytes);
      created.push({
        manifest_path: path,
        manifest_length: BigInt(bytes.byteLength),
        partition_spec_id: specId,
        content: 0,
        sequence_number: sequenceNumber,
        min_sequence_number: entries.reduce((a, e) => (e.sequence_number! < a ? e.sequence_number! : a), sequenceNumber),
        added_snapshot_id: snapshotId,
        added_files_count: 0,
        existing_files_count: entries.length,
        deleted_files_count: 0,
        added_rows_count: 0n,
        existing_rows_count: sum(entries.map((e) => e.data_file.record_count)),
        deleted_rows_count: 0n,
        partitions: partitionSummaries(spec, schema, entries),
      });
    }
    const kept = manifests.filter((m) => !replaced.has(m.manifest_path));
    const listBytes = writeManifestList({ snapshotId, parentSnapshotId: toBigInt(base['snapshot-id']), sequenceNumber, manifests: [...created, ...kept] });
    const listPath = `${location}/metadata/snap-${snapshotId}-${attempt}-${randomBytes(6).toString('hex')}.avro`;
    await handle.storage.put(listPath, listBytes);
    const totals = Object.fromEntries(Object.entries(base.summary).filter(([k]) => k.startsWith('total-')));
    const summary: Record<string, string> = {
      operation: 'replace',
      'manifests-created': String(created.length),
      'manifests-replaced': String(replaced.size),
      'manifests-kept': String(kept.length),
      'entries-processed': String(entriesProcessed),
      ...totals,
      'engine-name': 'eider-agent',
    };
    try {
      handle.loaded.metadata = await handle.client.commit(
        handle.namespace,
        handle.name,
        onBaseRequirements(metadata, base),
        addSnapshotUpdates({ snapshotId, parent: base, sequenceNumber, listPath, summary, schemaId: schema['schema-id'] }),
      );
      return { rewritten_manifests_count: replaced.size, added_manifests_count: created.length };
    } catch (error) {
      if (!isConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
      handle.loaded = await reload(handle);
      await pause(attempt);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// remove_orphan_files

/** `bucket/key` (`container/key`) of a location, the form listings and metadata paths are compared in. */
function objectKey(uri: string): string {
  try {
    return objectPath(uri);
  } catch (error) {
    if (error instanceof StorageUriError) throw catalogError(`the table metadata names ${uri}, which is not a storage location the agent can reach; no file was deleted`);
    throw error;
  }
}

/** Every file the metadata reaches: itself, the metadata log, statistics, and per snapshot its list, manifests, files. */
async function referencedFiles(storage: TableStorage, loaded: LoadedTable, into: Set<string>): Promise<void> {
  const m = loaded.metadata;
  into.add(objectKey(loaded.metadataLocation));
  for (const e of m['metadata-log'] ?? []) into.add(objectKey(e['metadata-file']));
  for (const st of [...(m.statistics ?? []), ...(m['partition-statistics'] ?? [])] as Array<{ 'statistics-path'?: string }>) {
    if (st['statistics-path']) into.add(objectKey(st['statistics-path']));
  }
  const manifests = new Map<string, ManifestFile>();
  for (const s of m.snapshots) {
    into.add(objectKey(s['manifest-list']));
    // A snapshot whose list cannot be read makes reachability unknown: the procedure fails before deleting anything.
    for (const mf of await readManifestFiles(storage, s)) manifests.set(mf.manifest_path, mf);
  }
  for (const mf of manifests.values()) {
    into.add(objectKey(mf.manifest_path));
    // Every entry, deleted ones too: what a snapshot still names is expire_snapshots' to delete, never an orphan.
    for (const e of readManifest(await readImmutable(storage, mf.manifest_path)).entries) into.add(objectKey(e.data_file.file_path));
  }
}

/**
 * Deletes the files under the table's `data/` and `metadata/` folders that no snapshot, manifest, metadata file of
 * the metadata log or statistics file references and that were last modified before `older_than` (never later than
 * the procedure's start: a file written since may belong to a commit under way). References are taken from the
 * metadata loaded before the listing and again after it, so a commit landing meanwhile keeps its files.
 */
async function removeOrphanFiles(handle: TableHandle, options: ProcedureOptions): Promise<ProcedureRow> {
  const started = Date.now();
  const cutoff = Math.min(options.olderThanMs ?? started - 3 * DAY_MS, started);
  // Deleting needs no commit, and vended credentials are the same for read and write tokens: an empty commit (the
  // catalog refuses it to a token that may only read) checks that this query may change the table at all.
  await handle.client.commit(handle.namespace, handle.name, [{ type: 'assert-table-uuid', uuid: handle.loaded.metadata['table-uuid'] }], []);
  const location = handle.loaded.metadata.location.replace(/\/+$/, '');
  const listed = [...(await handle.storage.list(`${location}/data/`)), ...(await handle.storage.list(`${location}/metadata/`))];
  const again = await reload(handle);
  const referenced = new Set<string>();
  await referencedFiles(handle.storage, handle.loaded, referenced);
  await referencedFiles(handle.storage, again, referenced);
  handle.loaded = again;
  const orphans = listed.filter((o) => o.lastModifiedMs < cutoff && !referenced.has(objectKey(o.uri)));
  await pool(orphans, DELETE_CONCURRENCY, (o) => handle.storage.delete(o.uri));
  return { orphan_file_location_count: orphans.length };
}
