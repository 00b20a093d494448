// Scan planning: snapshot → manifest list → manifests → live data files, pruned by the manifest list's partition
// summaries, then by each file's partition values and column bounds (icebergPredicates.ts), each with the position
// delete files that apply to it (iceberg/positionDeletes.ts). Also what a write needs to know about the files it
// read: which manifest held each of them.
import { inheritFromManifest, readManifest, readManifestList, type DataFile, type ManifestEntry, type ManifestFile } from '../../iceberg/avro.ts';
import { toBigInt } from '../../iceberg/json.ts';
import { currentSchema, type PartitionSpec, type Schema, type Snapshot, type TableMetadata } from '../../iceberg/metadata.ts';
import { catalogError, unsupported } from './errors.ts';
import { positionDeletesApply, type ScanEntry } from '../../iceberg/positionDeletes.ts';
import { bindPredicates, fileMayMatch, manifestMayMatch, type Predicate } from '../../iceberg/predicates.ts';
import type { TableStorage } from './storage.ts';

interface PlannedDelete {
  file: DataFile;
  /** The manifest (path) the delete file's live entry is in. */
  manifestPath: string;
}

export interface PlannedFile {
  file: DataFile;
  /** The manifest (path) the file's live entry is in. */
  manifestPath: string;
  /** The partition spec the file was written with. */
  specId: number;
  /** The position delete files that apply to this data file (empty: every row of it is live). */
  deletes: PlannedDelete[];
}

export interface ScanPlan {
  snapshot: Snapshot | undefined;
  schema: Schema;
  files: PlannedFile[];
  manifestsRead: number;
  manifestsSkipped: number;
  filesSkipped: number;
}

export interface ScanOptions {
  /** Time travel: read this snapshot instead of the current one. */
  snapshotId?: bigint;
  predicates?: readonly Predicate[];
  /** Names the table is referred to by in the statement (name, alias), lower case: predicate qualifiers. */
  qualifiers?: readonly string[];
}

export function findSnapshot(metadata: TableMetadata, id: bigint | null | undefined): Snapshot | undefined {
  if (id === null || id === undefined || id === -1n) return undefined;
  return metadata.snapshots.find((s) => toBigInt(s['snapshot-id']) === id);
}

export function mainSnapshotId(metadata: TableMetadata): bigint | null {
  const ref = metadata.refs?.main;
  if (ref) return toBigInt(ref['snapshot-id']);
  const cur = metadata['current-snapshot-id'];
  return cur === null || cur === undefined || toBigInt(cur) === -1n ? null : toBigInt(cur);
}

function schemaOf(metadata: TableMetadata, snapshot: Snapshot | undefined): Schema {
  if (snapshot && snapshot['schema-id'] !== undefined) {
    const s = metadata.schemas.find((x) => x['schema-id'] === snapshot['schema-id']);
    if (s) return s;
  }
  return currentSchema(metadata);
}

/**
 * Manifest lists and manifests are immutable once written (a change writes new ones), so their bytes are kept in
 * memory across queries, bounded by size. Only paths taken from a loadTable the query was authorized for are ever
 * looked up, so the cache hands no query a file its catalog token could not have read.
 */
class ImmutableBytes {
  readonly #entries = new Map<string, Uint8Array>();
  #bytes = 0;
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  async get(uri: string, load: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const hit = this.#entries.get(uri);
    if (hit) {
      // refresh its place: the map's order is the eviction order
      this.#entries.delete(uri);
      this.#entries.set(uri, hit);
      return hit;
    }
    const bytes = await load();
    if (bytes.byteLength <= this.#maxBytes / 4) {
      this.#entries.set(uri, bytes);
      this.#bytes += bytes.byteLength;
      for (const [k, v] of this.#entries) {
        if (this.#bytes <= this.#maxBytes) break;
        this.#entries.delete(k);
        this.#bytes -= v.byteLength;
      }
    }
    return bytes;
  }
}

const manifestBytes = new ImmutableBytes(64 * 1024 * 1024);

export const readImmutable = (storage: TableStorage, uri: string) => manifestBytes.get(uri, () => storage.getBytes(uri));

export async function readManifestFiles(storage: TableStorage, snapshot: Snapshot | undefined): Promise<ManifestFile[]> {
  if (!snapshot) return [];
  return readManifestList(await readImmutable(storage, snapshot['manifest-list'])).manifests;
}

/** Live (status added/existing) entries of one manifest, with inherited snapshot and sequence numbers. */
export async function liveEntries(storage: TableStorage, manifest: ManifestFile): Promise<ManifestEntry[]> {
  const contents = readManifest(await readImmutable(storage, manifest.manifest_path));
  return contents.entries.filter((e) => e.status !== 2).map((e) => inheritFromManifest(e, manifest));
}

export async function planScan(metadata: TableMetadata, storage: TableStorage, options: ScanOptions = {}): Promise<ScanPlan> {
  const snapshot = options.snapshotId !== undefined ? findSnapshot(metadata, options.snapshotId) : findSnapshot(metadata, mainSnapshotId(metadata));
  if (options.snapshotId !== undefined && !snapshot) {
    throw catalogError(`snapshot ${options.snapshotId} does not exist in this table`);
  }
  // The current table reads with the current schema: a schema-only change (ALTER … ADD/RENAME/DROP COLUMN) makes no
  // snapshot, so the snapshot's schema-id is stale until the next write. Only time travel reads a snapshot's schema.
  const schema = options.snapshotId !== undefined ? schemaOf(metadata, snapshot) : currentSchema(metadata);
  // Bounds and partition values are by field id: bind predicate columns with the current schema's names.
  const bound = bindPredicates(options.predicates ?? [], currentSchema(metadata), options.qualifiers ?? []);
  const specs = new Map<number, PartitionSpec>(metadata['partition-specs'].map((s) => [s['spec-id'], s]));
  const manifests = await readManifestFiles(storage, snapshot);
  const plan: ScanPlan = { snapshot, schema, files: [], manifestsRead: 0, manifestsSkipped: 0, filesSkipped: 0 };
  // Delete manifests are read whole: the partition summaries of deletes do not say which rows of a kept data file
  // they remove, and they are few and small (compaction folds them).
  const wanted = manifests.filter((m) => {
    if (m.content !== 0) return true;
    const keep = manifestMayMatch(bound, specs.get(m.partition_spec_id), m.partitions);
    if (!keep) plan.manifestsSkipped++;
    return keep;
  });
  const read = await Promise.all(wanted.map(async (m) => ({ m, entries: await liveEntries(storage, m) })));
  const deletes: Array<ScanEntry & { manifestPath: string }> = [];
  const data: Array<ScanEntry & { manifestPath: string }> = [];
  for (const { m, entries } of read) {
    plan.manifestsRead++;
    const spec = specs.get(m.partition_spec_id);
    for (const e of entries) {
      if (String(e.data_file.file_format).toUpperCase() !== 'PARQUET') {
        throw unsupported(`${e.data_file.content === 0 ? 'data' : 'delete'} file format ${e.data_file.file_format} is not supported (Parquet only)`);
      }
      const entry = { file: e.data_file, sequenceNumber: e.sequence_number ?? 0n, specId: m.partition_spec_id, manifestPath: m.manifest_path };
      if (e.data_file.content === 2) throw unsupported('this table has equality delete files, which this agent cannot apply yet (position deletes only)');
      if (e.data_file.content === 1) {
        deletes.push(entry);
        continue;
      }
      if (!fileMayMatch(bound, spec, e.data_file)) {
        plan.filesSkipped++;
        continue;
      }
      data.push(entry);
    }
  }
  const unpartitioned = new Set(metadata['partition-specs'].filter((s) => s.fields.length === 0).map((s) => s['spec-id']));
  for (const d of data) {
    const applying = deletes.filter((del) => positionDeletesApply(d, del, unpartitioned)).map((del) => ({ file: del.file, manifestPath: del.manifestPath }));
    plan.files.push({ file: d.file, manifestPath: d.manifestPath, specId: d.specId, deletes: applying });
  }
  return plan;
}
