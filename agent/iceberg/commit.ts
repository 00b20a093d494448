// Committing a new snapshot: a manifest for the added data files, a delete manifest per partition spec for the
// added position delete files (merge-on-read), rewritten manifests for the ones whose files were replaced
// (copy-on-write, or a compaction dropping data and delete files: removed entries marked deleted, the others carried
// as existing), every other manifest of the base carried over untouched, a manifest list, then the REST commit with
// requirements (table uuid, main's snapshot id). A 409 means another writer committed first: the table is loaded
// again and the snapshot is rebuilt on the new base, as long as every manifest holding a file this change removes is
// still there (else the change conflicts and fails); a compaction (`relocate`) instead only needs every file it
// removes to be still live. On the new base, the data files the change's delete files point at must still be live,
// and no delete file committed meanwhile may touch a data file this change removes or deletes rows of (two
// statements updating one row would both add it back).
import { randomBytes } from 'node:crypto';
import {
  encodeBound,
  partitionFieldTypes,
  readManifest,
  inheritFromManifest,
  writeManifest,
  writeManifestList,
  type DataFile,
  type FieldSummary,
  type ManifestEntry,
  type ManifestFile,
} from '../../iceberg/avro.ts';
import { toBigInt } from '../../iceberg/json.ts';
import { currentSchema, defaultSpec, type PartitionSpec, type Schema, type Snapshot, type TableMetadata } from '../../iceberg/metadata.ts';
import { deletePathBounds } from '../../iceberg/positionDeletes.ts';
import type { TableUpdate, TableRequirement } from '../../iceberg/updates.ts';
import { CatalogHttpError, type IcebergCatalogClient, type LoadedTable } from './catalog.ts';
import { catalogError } from './errors.ts';
import { findSnapshot, liveEntries, mainSnapshotId, readImmutable, readManifestFiles } from './scan.ts';
import type { TableStorage } from './storage.ts';

export interface TableHandle {
  client: IcebergCatalogClient;
  namespace: string;
  name: string;
  loaded: LoadedTable;
  storage: TableStorage;
}

export interface AddedDeleteFile {
  file: DataFile;
  /** The partition spec of the data files it deletes rows of (its partition is theirs). */
  specId: number;
}

export interface SnapshotChange {
  added: DataFile[];
  /** Removed data or delete files: file path → path of the manifest its live entry is in. */
  removed: Map<string, string>;
  /** Position delete files (merge-on-read). */
  addedDeletes?: AddedDeleteFile[];
  /** The data files `addedDeletes` delete rows of: still live when the commit lands, or the change conflicts. */
  referenced?: ReadonlySet<string>;
}

export interface CommitOptions {
  /** Called after the data files are uploaded, before manifests and the catalog commit (tests abort here). */
  beforeCommit?: () => Promise<void>;
  maxAttempts?: number;
  /** The snapshot summary's operation; by default append, delete or overwrite from what the change does. */
  operation?: 'replace';
  /**
   * After a conflict, find each removed file again in the new base (in whatever manifest now holds it) instead of
   * requiring its manifest to be unchanged: a compaction may land on top of concurrent commits as long as every file
   * it rewrites is still live. A removed file that is no longer live, or delete files in the new base, abort.
   */
  relocate?: boolean;
  /**
   * The handle's table is staged (createTable with stage): the commit creates it with this snapshot in one step
   * (`assert-create` and the table's creation updates), so a failure before it leaves no table behind. A 409 means
   * another statement created the table meanwhile: not retried.
   */
  create?: boolean;
}

export interface CommitResult {
  snapshotId: bigint;
  attempts: number;
  metadata: TableMetadata;
}

export function newSnapshotId(): bigint {
  // Positive 63-bit, as the reference implementation's ids are.
  return randomBytes(8).readBigUInt64BE() & 0x7fffffffffffffffn;
}

/**
 * The updates that add the snapshot of manifest list `listPath` on top of `parent` (none for a table's first) and
 * make it main's head; what a commit of data and a manifest rewrite both send.
 */
export function addSnapshotUpdates(s: {
  snapshotId: bigint;
  parent: Snapshot | null | undefined;
  sequenceNumber: bigint;
  listPath: string;
  summary: Record<string, string>;
  schemaId: number;
}): TableUpdate[] {
  return [
    {
      action: 'add-snapshot',
      snapshot: {
        'snapshot-id': s.snapshotId,
        ...(s.parent ? { 'parent-snapshot-id': s.parent['snapshot-id'] } : {}),
        'sequence-number': s.sequenceNumber,
        'timestamp-ms': Date.now(),
        'manifest-list': s.listPath,
        summary: s.summary,
        'schema-id': s.schemaId,
      },
    },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': s.snapshotId },
  ];
}

/** What a commit on top of `base` (main's head when it was read; none for an empty table) requires: the same table, main unmoved. */
export function onBaseRequirements(metadata: TableMetadata, base: Snapshot | null | undefined): TableRequirement[] {
  return [
    { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': base ? base['snapshot-id'] : null },
  ];
}

function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    const x = BigInt(a as bigint);
    const y = BigInt(b as bigint);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return (a as number | string) < (b as number | string) ? -1 : (a as number | string) > (b as number | string) ? 1 : 0;
}

/** The manifest list's per-partition-field summaries for a manifest's live entries. */
export function partitionSummaries(spec: PartitionSpec, schema: Schema, entries: readonly ManifestEntry[]): FieldSummary[] {
  const types = partitionFieldTypes(spec, schema);
  return types.map((t) => {
    let lower: unknown;
    let upper: unknown;
    let containsNull = false;
    let containsNan = false;
    for (const e of entries) {
      if (e.status === 2) continue;
      const v = e.data_file.partition[t.name];
      if (v === null || v === undefined) {
        containsNull = true;
        continue;
      }
      if (typeof v === 'number' && Number.isNaN(v)) {
        containsNan = true;
        continue;
      }
      if (lower === undefined || compareValues(v, lower) < 0) lower = v;
      if (upper === undefined || compareValues(v, upper) > 0) upper = v;
    }
    return {
      contains_null: containsNull,
      contains_nan: containsNan,
      lower_bound: lower === undefined ? null : encodeBound(t.type, lower),
      upper_bound: upper === undefined ? null : encodeBound(t.type, upper),
    };
  });
}

/**
 * A manifest of `files`, each added by snapshot `snapshotId`, written under the table's metadata folder (its name
 * ending `-{suffix}.avro`), and its manifest-list record.
 */
async function putAddedManifest(
  storage: TableStorage,
  location: string,
  snapshotId: bigint,
  m: { schema: Schema; spec: PartitionSpec; content: 'data' | 'deletes'; files: readonly DataFile[]; suffix: string },
): Promise<ManifestFile> {
  const entries: ManifestEntry[] = m.files.map((f) => ({ status: 1, snapshot_id: snapshotId, sequence_number: null, file_sequence_number: null, data_file: f }));
  const bytes = writeManifest({ schema: m.schema, spec: m.spec, content: m.content, entries });
  const path = `${location}/metadata/${snapshotId}-${randomBytes(6).toString('hex')}-${m.suffix}.avro`;
  await storage.put(path, bytes);
  return {
    manifest_path: path,
    manifest_length: BigInt(bytes.byteLength),
    partition_spec_id: m.spec['spec-id'],
    content: m.content === 'data' ? 0 : 1,
    sequence_number: 0n,
    min_sequence_number: 0n,
    added_snapshot_id: snapshotId,
    added_files_count: entries.length,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: sum(m.files.map((f) => f.record_count)),
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: partitionSummaries(m.spec, m.schema, entries),
  };
}

function sum(values: Iterable<bigint>): bigint {
  let s = 0n;
  for (const v of values) s += v;
  return s;
}

interface RewrittenManifest {
  record: Omit<ManifestFile, 'sequence_number'>;
  /** 0 data, 1 deletes: what the removed entries are (records of a delete file are deleted positions). */
  content: number;
  removedFiles: number;
  removedRecords: bigint;
  removedBytes: bigint;
}

export async function commitSnapshot(handle: TableHandle, initial: SnapshotChange, options: CommitOptions = {}): Promise<CommitResult> {
  let change = initial;
  const snapshotId = newSnapshotId();
  const maxAttempts = options.maxAttempts ?? 40;
  const location = handle.loaded.metadata.location.replace(/\/+$/, '');
  let added: ManifestFile | null = null;
  let addedDeletes: ManifestFile[] | null = null;
  const rewritten = new Map<string, RewrittenManifest>();
  let metadata = handle.loaded.metadata;
  const plannedOn = findSnapshot(metadata, mainSnapshotId(metadata));
  // The data files are uploaded; nothing references them until the commit lands.
  if (options.beforeCommit) await options.beforeCommit();
  for (let attempt = 1; ; attempt++) {
    const schema = currentSchema(metadata);
    const spec = defaultSpec(metadata);
    const base = findSnapshot(metadata, mainSnapshotId(metadata));
    const baseManifests = await readManifestFiles(handle.storage, base);
    const basePaths = new Set(baseManifests.map((m) => m.manifest_path));
    if (options.relocate && attempt > 1) change = { ...change, removed: await relocateRemoved(handle, baseManifests, change.removed) };
    if (attempt > 1) await checkConcurrentDeletes(handle, plannedOn, baseManifests, change);
    for (const manifestPath of new Set(change.removed.values())) {
      if (!basePaths.has(manifestPath)) {
        throw catalogError(`concurrent modification of ${handle.namespace}.${handle.name}: files this statement rewrites were changed by another commit; run it again`);
      }
    }
    if (change.added.length && added === null) {
      added = await putAddedManifest(handle.storage, location, snapshotId, { schema, spec, content: 'data', files: change.added, suffix: 'm0' });
    }
    const deleteGroups = new Map<number, AddedDeleteFile[]>();
    for (const d of change.addedDeletes ?? []) deleteGroups.set(d.specId, [...(deleteGroups.get(d.specId) ?? []), d]);
    if (deleteGroups.size && addedDeletes === null) {
      addedDeletes = [];
      for (const [specId, files] of deleteGroups) {
        const dSpec = metadata['partition-specs'].find((s) => s['spec-id'] === specId) ?? spec;
        const manifest = { schema, spec: dSpec, content: 'deletes' as const, files: files.map((d) => d.file), suffix: `d${addedDeletes.length}` };
        addedDeletes.push(await putAddedManifest(handle.storage, location, snapshotId, manifest));
      }
    }
    for (const m of baseManifests) {
      if (rewritten.has(m.manifest_path)) continue;
      const removedHere = [...change.removed.entries()].filter(([, mp]) => mp === m.manifest_path).map(([fp]) => fp);
      if (removedHere.length === 0) continue;
      const gone = new Set(removedHere);
      const contents = readManifest(await readImmutable(handle.storage, m.manifest_path));
      const entries: ManifestEntry[] = [];
      let removedRecords = 0n;
      let removedBytes = 0n;
      for (const raw of contents.entries) {
        if (raw.status === 2) continue;
        const e = inheritFromManifest(raw, m);
        if (gone.has(e.data_file.file_path)) {
          entries.push({ ...e, status: 2, snapshot_id: snapshotId });
          removedRecords += e.data_file.record_count;
          removedBytes += e.data_file.file_size_in_bytes;
          gone.delete(e.data_file.file_path);
        } else entries.push({ ...e, status: 0 });
      }
      if (gone.size) throw catalogError(`concurrent modification of ${handle.namespace}.${handle.name}: a file this statement rewrites is no longer live`);
      const mSpec = metadata['partition-specs'].find((s) => s['spec-id'] === m.partition_spec_id) ?? spec;
      const bytes = writeManifest({ schema, spec: mSpec, content: m.content === 1 ? 'deletes' : 'data', entries });
      const path = `${location}/metadata/${snapshotId}-${randomBytes(6).toString('hex')}-m${rewritten.size + 1}.avro`;
      await handle.storage.put(path, bytes);
      const live = entries.filter((e) => e.status === 0);
      rewritten.set(m.manifest_path, {
        removedRecords,
        removedBytes,
        removedFiles: entries.length - live.length,
        content: m.content,
        record: {
          manifest_path: path,
          manifest_length: BigInt(bytes.byteLength),
          partition_spec_id: m.partition_spec_id,
          content: m.content,
          min_sequence_number: live.reduce((a, e) => (e.sequence_number !== null && e.sequence_number < a ? e.sequence_number : a), m.min_sequence_number),
          added_snapshot_id: snapshotId,
          added_files_count: 0,
          existing_files_count: live.length,
          deleted_files_count: entries.length - live.length,
          added_rows_count: 0n,
          existing_rows_count: sum(live.map((e) => e.data_file.record_count)),
          deleted_rows_count: removedRecords,
          partitions: partitionSummaries(mSpec, schema, live),
        },
      });
    }

    const sequenceNumber = toBigInt(metadata['last-sequence-number']) + 1n;
    const manifests: ManifestFile[] = [];
    if (added) manifests.push({ ...added, sequence_number: sequenceNumber, min_sequence_number: sequenceNumber });
    for (const d of addedDeletes ?? []) manifests.push({ ...d, sequence_number: sequenceNumber, min_sequence_number: sequenceNumber });
    for (const m of baseManifests) {
      const r = rewritten.get(m.manifest_path);
      if (!r) manifests.push(m);
      else if (r.record.existing_files_count > 0 || r.record.deleted_files_count > 0) {
        const minSeq = r.record.existing_files_count > 0 ? r.record.min_sequence_number : sequenceNumber;
        manifests.push({ ...r.record, sequence_number: sequenceNumber, min_sequence_number: minSeq });
      }
    }
    const listBytes = writeManifestList({
      snapshotId,
      parentSnapshotId: base ? toBigInt(base['snapshot-id']) : null,
      sequenceNumber,
      manifests,
    });
    const listPath = `${location}/metadata/snap-${snapshotId}-${attempt}-${randomBytes(6).toString('hex')}.avro`;
    await handle.storage.put(listPath, listBytes);

    const addedRecords = sum(change.added.map((f) => f.record_count));
    // Only the manifests of this base: after a relocation, earlier attempts' rewrites may be of manifests now gone.
    const used = baseManifests.flatMap((m) => rewritten.get(m.manifest_path) ?? []);
    const usedData = used.filter((r) => r.content === 0);
    const usedDeletes = used.filter((r) => r.content === 1);
    const deletedRecords = sum(usedData.map((r) => r.removedRecords));
    const removedDataFiles = usedData.reduce((a, r) => a + r.removedFiles, 0);
    const removedDeleteFiles = usedDeletes.reduce((a, r) => a + r.removedFiles, 0);
    const removedPositions = sum(usedDeletes.map((r) => r.removedRecords));
    const newDeletes = change.addedDeletes ?? [];
    const addedPositions = sum(newDeletes.map((d) => d.file.record_count));
    const prev = base?.summary ?? { operation: 'append' };
    const totalRecords = BigInt(prev['total-records'] ?? '0') + addedRecords - deletedRecords;
    const totalFiles = BigInt(prev['total-data-files'] ?? '0') + BigInt(change.added.length) - BigInt(removedDataFiles);
    const totalDeleteFiles = BigInt(prev['total-delete-files'] ?? '0') + BigInt(newDeletes.length) - BigInt(removedDeleteFiles);
    const totalPositions = BigInt(prev['total-position-deletes'] ?? '0') + addedPositions - removedPositions;
    const addedBytes = sum(change.added.map((f) => f.file_size_in_bytes)) + sum(newDeletes.map((d) => d.file.file_size_in_bytes));
    const removedBytes = sum(used.map((r) => r.removedBytes));
    // A base written before sizes were recorded has no total: keep it unknown rather than guess.
    const totalBytes = base && prev['total-files-size'] === undefined ? null : BigInt(prev['total-files-size'] ?? '0') + addedBytes - removedBytes;
    // As Iceberg's RowDelta: only deletes is `delete`, deletes with new rows `overwrite`.
    const operation =
      options.operation ??
      (change.removed.size === 0 && newDeletes.length === 0 ? 'append' : change.added.length === 0 ? 'delete' : 'overwrite');
    const summary: Record<string, string> = {
      operation,
      'added-data-files': String(change.added.length),
      'added-records': String(addedRecords),
      'deleted-data-files': String(removedDataFiles),
      'deleted-records': String(deletedRecords),
      ...(newDeletes.length
        ? { 'added-delete-files': String(newDeletes.length), 'added-position-delete-files': String(newDeletes.length), 'added-position-deletes': String(addedPositions) }
        : {}),
      ...(removedDeleteFiles
        ? { 'removed-delete-files': String(removedDeleteFiles), 'removed-position-delete-files': String(removedDeleteFiles), 'removed-position-deletes': String(removedPositions) }
        : {}),
      'total-records': String(totalRecords),
      'added-files-size': String(addedBytes),
      'removed-files-size': String(removedBytes),
      ...(totalBytes === null ? {} : { 'total-files-size': String(totalBytes) }),
      'total-data-files': String(totalFiles),
      'total-delete-files': String(totalDeleteFiles),
      'total-position-deletes': String(totalPositions),
      'total-equality-deletes': prev['total-equality-deletes'] ?? '0',
      'engine-name': 'eider-agent',
    };
    const requirements: TableRequirement[] = options.create ? [{ type: 'assert-create' }] : onBaseRequirements(metadata, base);
    const updates: TableUpdate[] = [
      ...(options.create ? creationUpdates(metadata) : []),
      ...addSnapshotUpdates({ snapshotId, parent: base, sequenceNumber, listPath, summary, schemaId: schema['schema-id'] }),
    ];
    try {
      const next = await handle.client.commit(handle.namespace, handle.name, requirements, updates);
      return { snapshotId, attempts: attempt, metadata: next };
    } catch (error) {
      if (options.create && error instanceof CatalogHttpError && error.status === 409) throw createdMeanwhile(handle);
      if (!(error instanceof CatalogHttpError) || error.status !== 409 || attempt >= maxAttempts) {
        if (error instanceof CatalogHttpError && error.status === 409) {
          throw catalogError(`commit to ${handle.namespace}.${handle.name} kept conflicting after ${attempt} attempts: ${error.message}`);
        }
        throw error;
      }
      const reloaded = await handle.client.loadTable(handle.namespace, handle.name);
      if (!reloaded || reloaded.metadata['table-uuid'] !== metadata['table-uuid']) {
        throw catalogError(`table ${handle.namespace}.${handle.name} was dropped or replaced while this statement ran`);
      }
      metadata = reloaded.metadata;
      // Jittered pause so that writers racing on one table spread out.
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * Math.min(attempt, 5)));
    }
  }
}

/** The updates that make a staged table's metadata a table (as a create transaction commits them). */
function creationUpdates(staged: TableMetadata): TableUpdate[] {
  const sortOrder = staged['sort-orders'].find((o) => o['order-id'] === staged['default-sort-order-id']) ?? { 'order-id': 0, fields: [] };
  return [
    { action: 'assign-uuid', uuid: staged['table-uuid'] },
    { action: 'upgrade-format-version', 'format-version': staged['format-version'] },
    { action: 'add-schema', schema: currentSchema(staged), 'last-column-id': staged['last-column-id'] },
    { action: 'set-current-schema', 'schema-id': -1 },
    { action: 'add-spec', spec: defaultSpec(staged) },
    { action: 'set-default-spec', 'spec-id': -1 },
    { action: 'add-sort-order', 'sort-order': sortOrder },
    { action: 'set-default-sort-order', 'sort-order-id': -1 },
    { action: 'set-location', location: staged.location },
    { action: 'set-properties', updates: staged.properties },
  ];
}

/** Creates a staged table with no snapshot (a CREATE TABLE … AS SELECT whose query returned no rows). */
export async function commitCreate(handle: TableHandle): Promise<TableMetadata> {
  try {
    return await handle.client.commit(handle.namespace, handle.name, [{ type: 'assert-create' }], creationUpdates(handle.loaded.metadata));
  } catch (error) {
    if (error instanceof CatalogHttpError && error.status === 409) throw createdMeanwhile(handle);
    throw error;
  }
}

const createdMeanwhile = (handle: TableHandle) => catalogError(`table ${handle.namespace}.${handle.name} was created by another statement while this one ran; nothing was written`);

/**
 * Where each removed file's live entry is in `manifests` (a newer base than the one the change was planned on).
 * Files are immutable and their paths unique, so a file still live is still the file that was read.
 */
async function relocateRemoved(handle: TableHandle, manifests: readonly ManifestFile[], removed: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const where = new Map<string, string>();
  for (const m of manifests) {
    for (const e of await liveEntries(handle.storage, m)) if (removed.has(e.data_file.file_path)) where.set(e.data_file.file_path, m.manifest_path);
  }
  const gone = [...removed.keys()].filter((p) => !where.has(p));
  if (gone.length) {
    throw catalogError(
      `concurrent modification of ${handle.namespace}.${handle.name}: ${gone.length} of the ${removed.size} files being rewritten were removed or rewritten by another commit; nothing was committed, run it again`,
    );
  }
  return where;
}

/**
 * On a newer base than the change was planned on: every data file the change's delete files point at is still
 * live, and no delete file added since may delete rows of a data file the change removes or deletes rows of (its
 * file_path bounds, when recorded, tell; without them it is taken to). Either would lose or duplicate rows.
 */
async function checkConcurrentDeletes(handle: TableHandle, plannedOn: Snapshot | undefined, manifests: readonly ManifestFile[], change: SnapshotChange): Promise<void> {
  const name = `${handle.namespace}.${handle.name}`;
  const touched = new Set([...change.removed.keys(), ...(change.referenced ?? [])]);
  if (touched.size === 0) return;
  if (change.referenced?.size) {
    const live = new Set<string>();
    for (const m of manifests) if (m.content === 0) for (const e of await liveEntries(handle.storage, m)) live.add(e.data_file.file_path);
    const gone = [...change.referenced].filter((p) => !live.has(p));
    if (gone.length) {
      throw catalogError(`concurrent modification of ${name}: ${gone.length} data files this statement deletes rows of were rewritten by another commit; nothing was committed, run it again`);
    }
  }
  const known = new Set<string>();
  for (const m of await readManifestFiles(handle.storage, plannedOn)) {
    if (m.content === 1) for (const e of await liveEntries(handle.storage, m)) known.add(e.data_file.file_path);
  }
  for (const m of manifests) {
    if (m.content !== 1) continue;
    for (const e of await liveEntries(handle.storage, m)) {
      if (known.has(e.data_file.file_path) || change.removed.has(e.data_file.file_path)) continue;
      const bounds = deletePathBounds(e.data_file);
      const hits = [...touched].some((p) => !bounds || (p >= bounds.lower && (p <= bounds.upper || p.startsWith(bounds.upper))));
      if (hits) {
        throw catalogError(`concurrent modification of ${name}: another commit deleted rows of the files this statement changes; nothing was committed, run it again`);
      }
    }
  }
}

/** Commits a schema change (add-schema + set-current-schema), retried on 409 by re-deriving it from the new base. */
export async function commitSchema(
  handle: TableHandle,
  evolve: (metadata: TableMetadata) => { schema: Schema; lastColumnId: number },
): Promise<TableMetadata> {
  let metadata = handle.loaded.metadata;
  for (let attempt = 1; ; attempt++) {
    const next = evolve(metadata);
    try {
      return await handle.client.commit(
        handle.namespace,
        handle.name,
        [
          { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
          { type: 'assert-current-schema-id', 'current-schema-id': metadata['current-schema-id'] },
          { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': metadata['last-column-id'] },
        ],
        [
          { action: 'add-schema', schema: next.schema, 'last-column-id': next.lastColumnId },
          { action: 'set-current-schema', 'schema-id': -1 },
        ],
      );
    } catch (error) {
      if (!(error instanceof CatalogHttpError) || error.status !== 409 || attempt >= 10) throw error;
      const reloaded = await handle.client.loadTable(handle.namespace, handle.name);
      if (!reloaded) throw catalogError(`table ${handle.namespace}.${handle.name} was dropped while this statement ran`);
      metadata = reloaded.metadata;
    }
  }
}
