// The work of a catalog storage migration, table by table, between two object stores: what files a table has
// (every metadata file, manifest list, manifest, data, delete and statistics file every snapshot reaches), copying
// the files whose bytes carry no path (streamed, several at a time, skipped when already at the target with the
// right size, so a resumed copy redoes nothing), rewriting the files that carry paths (metadata JSON, manifest
// lists, manifests, position delete files) so every path derives from the target root, and verifying the result
// (every snapshot's files at the target with the right sizes, the same snapshots and the same row counts).
import { createHash } from 'node:crypto';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { readAvroFile, rewriteAvroFile, type DataFile, type ManifestEntry, type ManifestFile } from '../../iceberg/avro.ts';
import { parseJson, stringifyJson } from '../../iceberg/json.ts';
import { DELETE_FILE_PATH_ID } from '../../iceberg/positionDeletes.ts';
import type { TableMetadata } from '../../iceberg/metadata.ts';
import { ObjectStoreError, type BlobStore } from '../../iceberg/objectStorage.ts';

/** Runs `fn` over `items` with at most `n` at once; the first failure stops taking new items and is thrown. */
export async function inPool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (failed === undefined && next < items.length) {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const item = items[next++];
      try {
        await fn(item);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  if (failed !== undefined) throw failed;
}

const normalizeScheme = (p: string) => p.replace(/^s3[an]:\/\//, 's3://');

/**
 * Maps a path of the source catalog root onto the target root (same relative key). A path outside the source root
 * (a file a foreign writer put elsewhere) goes under the table's target location, `external/<hash>-<name>`, so it
 * moves with the table.
 */
export class PathMap {
  readonly sourceRoot: string;
  readonly targetRoot: string;
  constructor(sourceRoot: string, targetRoot: string) {
    this.sourceRoot = sourceRoot;
    this.targetRoot = targetRoot;
  }
  /** The target of `path`; `tableTarget` places files from outside the root. */
  map(path: string, tableTarget: string): string {
    const p = normalizeScheme(path);
    if (p.startsWith(this.sourceRoot)) return this.targetRoot + p.slice(this.sourceRoot.length);
    if (p.startsWith(this.targetRoot)) return p;
    const name = p.slice(p.lastIndexOf('/') + 1);
    return `${tableTarget}/external/${createHash('sha256').update(p).digest('hex').slice(0, 16)}-${name}`;
  }
  location(location: string): string {
    const p = normalizeScheme(location).replace(/\/+$/, '');
    if (`${p}/`.startsWith(this.sourceRoot)) return this.targetRoot + `${p}/`.slice(this.sourceRoot.length).replace(/\/$/, '');
    return p;
  }
}

interface DataFileInfo {
  size: number;
  /** 0 data, 1 position deletes, 2 equality deletes */
  content: number;
  /** Named by an entry that is not DELETED: the file must exist. A file only named as DELETED may be gone. */
  live: boolean;
}

export interface TableFiles {
  metadataLocation: string;
  metadata: TableMetadata;
  metadataText: string;
  /** Earlier metadata files the current one's log names, oldest first (only those still present). */
  previousMetadata: string[];
  manifestLists: string[];
  manifests: Map<string, ManifestFile>;
  /** Data and delete files by path. */
  files: Map<string, DataFileInfo>;
  /** Puffin statistics files by path, with their sizes. */
  statistics: Map<string, number>;
  /** Bytes of every file above (metadata, lists, manifests, data, deletes, statistics). */
  bytes: number;
}

const text = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');

/** Every file of a table, read from `store` starting at its current metadata file. */
export async function tableFiles(store: BlobStore, metadataLocation: string, signal?: AbortSignal): Promise<TableFiles> {
  const metadataBytes = await store.get(metadataLocation);
  const metadataText = text(metadataBytes);
  const metadata = parseJson<TableMetadata>(metadataText);
  let bytes = metadataBytes.byteLength;
  const previousMetadata: string[] = [];
  for (const entry of metadata['metadata-log'] ?? []) {
    const head = await store.head(entry['metadata-file']);
    if (head) {
      previousMetadata.push(entry['metadata-file']);
      bytes += head.size;
    }
  }
  const manifestLists = [...new Set(metadata.snapshots.map((s) => s['manifest-list']))];
  const manifests = new Map<string, ManifestFile>();
  await inPool(
    manifestLists,
    8,
    async (list) => {
      const b = await store.get(list);
      bytes += b.byteLength;
      for (const m of readAvroFile<ManifestFile>(b).records) manifests.set(m.manifest_path, m);
    },
    signal,
  );
  const files = new Map<string, DataFileInfo>();
  await inPool(
    [...manifests.values()],
    8,
    async (m) => {
      bytes += Number(m.manifest_length);
      for (const e of readAvroFile<ManifestEntry>(await store.get(m.manifest_path)).records) {
        const df = e.data_file as DataFile;
        const live = e.status !== 2;
        const seen = files.get(df.file_path);
        if (seen) seen.live ||= live;
        else files.set(df.file_path, { size: Number(df.file_size_in_bytes), content: df.content ?? 0, live });
      }
    },
    signal,
  );
  for (const f of files.values()) bytes += f.size;
  const statistics = new Map<string, number>();
  for (const s of [...((metadata.statistics ?? []) as Record<string, unknown>[]), ...((metadata['partition-statistics'] ?? []) as Record<string, unknown>[])]) {
    const path = s['statistics-path'];
    if (typeof path === 'string') {
      const size = Number(s['file-size-in-bytes'] ?? 0);
      statistics.set(path, size);
      bytes += size;
    }
  }
  return { metadataLocation, metadata, metadataText, previousMetadata, manifestLists, manifests, files, statistics, bytes };
}

export interface CopyContext {
  source: BlobStore;
  target: BlobStore;
  paths: PathMap;
  /** Bytes of source files now at the target (copied, found there already, or rewritten). */
  progress(bytes: number): void;
  log(level: 'info' | 'warn', message: string): Promise<void>;
  concurrency: number;
  signal?: AbortSignal;
}

/** Streams one object unless the target already holds it with the same size. */
async function copyObject(c: CopyContext, from: string, to: string, size: number): Promise<'copied' | 'present' | 'missing'> {
  const have = await c.target.head(to);
  if (have && have.size === size) return 'present';
  let src: { body: NodeJS.ReadableStream; size: number };
  try {
    src = await c.source.getStream(from);
  } catch (e) {
    if (e instanceof ObjectStoreError && e.notFound) return 'missing';
    throw e;
  }
  await c.target.putStream(to, src.body as never, src.size);
  return 'copied';
}

const tableTarget = (c: CopyContext, t: TableFiles) => c.paths.location(t.metadata.location);

/**
 * Copies the files whose bytes hold no path: data and equality delete files, statistics files. Position delete
 * files (they name data files) are rewritten instead (rewriteTable).
 */
export async function copyTableData(c: CopyContext, t: TableFiles): Promise<{ copied: number; present: number; missing: number }> {
  const counts = { copied: 0, present: 0, missing: 0 };
  const target = tableTarget(c, t);
  const jobs: Array<{ from: string; size: number; live: boolean }> = [];
  for (const [path, f] of t.files) if (f.content !== 1) jobs.push({ from: path, size: f.size, live: f.live });
  for (const [path, size] of t.statistics) jobs.push({ from: path, size, live: true });
  await inPool(
    jobs,
    c.concurrency,
    async (j) => {
      const outcome = await copyObject(c, j.from, c.paths.map(j.from, target), j.size);
      if (outcome === 'missing') {
        if (j.live) throw new ObjectStoreError('NoSuchKey', `${j.from} is named by the table's metadata but is not in the source storage`);
        await c.log('warn', `${j.from} is named only as a deleted file and is gone from the source: not copied`);
      }
      counts[outcome]++;
      c.progress(j.size);
    },
    c.signal,
  );
  return counts;
}

/**
 * A position delete file's `file_path` bounds name data files: mapped like its rows, or readers planning with them
 * (ours does) would no longer apply it to the moved data files. A bound that does not map (a truncated prefix) is
 * dropped, which only makes readers open the file.
 */
export function deletePathBoundsMapped(f: DataFile, map: (p: string) => string): Pick<DataFile, 'lower_bounds' | 'upper_bounds'> {
  if ((f.content ?? 0) !== 1) return {};
  const remap = (bounds: DataFile['lower_bounds']) =>
    bounds?.flatMap((kv) => {
      if (kv.key !== DELETE_FILE_PATH_ID) return [kv];
      try {
        return [{ key: kv.key, value: Buffer.from(map(Buffer.from(kv.value).toString('utf8')), 'utf8') }];
      } catch {
        return [];
      }
    }) ?? null;
  return { lower_bounds: remap(f.lower_bounds), upper_bounds: remap(f.upper_bounds) };
}

/** Writes a position delete file again with its data-file paths mapped (file_path, pos; field ids kept). */
export async function rewritePositionDeletes(bytes: Uint8Array, mapPath: (p: string) => string): Promise<Uint8Array> {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const meta = parquetMetadata(buffer);
  const top = meta.schema.slice(1).map((e) => e.name);
  if (top.some((n) => n !== 'file_path' && n !== 'pos')) {
    throw new Error(`a position delete file with columns ${top.join(', ')} (a row column) cannot be rewritten`);
  }
  const rows = (await parquetReadObjects({ file: buffer, columns: ['file_path', 'pos'] })) as Array<{ file_path: string; pos: bigint | number }>;
  return new Uint8Array(
    parquetWriteBuffer({
      schema: meta.schema,
      columnData: [
        { name: 'file_path', data: rows.map((r) => mapPath(r.file_path)) },
        { name: 'pos', data: rows.map((r) => BigInt(r.pos)) },
      ],
    }),
  );
}

/** The metadata JSON with every path on the target: location, manifest lists, metadata log, statistics, paths in properties. */
export function rewriteMetadata(m: TableMetadata, map: (p: string) => string, location: string, keepLog: ReadonlySet<string>): TableMetadata {
  const properties = Object.fromEntries(
    Object.entries(m.properties ?? {}).map(([k, v]) => [k, /^(write\.(data|metadata|object-storage)\.path|write\.folder-storage\.path)$/.test(k) ? map(v) : v]),
  );
  const stats = (list: unknown[] | undefined) =>
    list?.map((s) => {
      const r = s as Record<string, unknown>;
      return typeof r['statistics-path'] === 'string' ? { ...r, 'statistics-path': map(r['statistics-path']) } : r;
    });
  return {
    ...m,
    location,
    properties,
    snapshots: m.snapshots.map((s) => ({ ...s, 'manifest-list': map(s['manifest-list']) })),
    'metadata-log': (m['metadata-log'] ?? []).filter((e) => keepLog.has(e['metadata-file'])).map((e) => ({ ...e, 'metadata-file': map(e['metadata-file']) })),
    ...(m.statistics ? { statistics: stats(m.statistics) } : {}),
    ...(m['partition-statistics'] ? { 'partition-statistics': stats(m['partition-statistics']) } : {}),
  };
}

/**
 * Writes the files that carry paths at the target: position delete files, manifests (with their new lengths in
 * the lists), manifest lists, then the metadata files (the current one last). Returns the target metadata location.
 */
export async function rewriteTable(c: CopyContext, t: TableFiles): Promise<string> {
  const target = tableTarget(c, t);
  const map = (p: string) => c.paths.map(p, target);
  // A rewritten delete file's size changes with its paths' lengths: its manifest entry must say the new one (readers
  // check a file's size against it).
  const deleteSizes = new Map<string, bigint>();
  await inPool(
    [...t.files].filter(([, f]) => f.content === 1),
    c.concurrency,
    async ([path, f]) => {
      let bytes: Uint8Array;
      try {
        bytes = await c.source.get(path);
      } catch (e) {
        if (e instanceof ObjectStoreError && e.notFound && !f.live) return;
        throw e;
      }
      const out = await rewritePositionDeletes(bytes, map);
      await c.target.put(map(path), out);
      deleteSizes.set(path, BigInt(out.byteLength));
      c.progress(f.size);
    },
    c.signal,
  );
  const lengths = new Map<string, bigint>();
  await inPool(
    [...t.manifests.values()],
    c.concurrency,
    async (m) => {
      const out = rewriteAvroFile<ManifestEntry>(await c.source.get(m.manifest_path), (e) => ({
        ...e,
        data_file: {
          ...e.data_file,
          file_path: map(e.data_file.file_path),
          file_size_in_bytes: deleteSizes.get(e.data_file.file_path) ?? e.data_file.file_size_in_bytes,
          ...deletePathBoundsMapped(e.data_file, map),
        },
      }));
      await c.target.put(map(m.manifest_path), out);
      lengths.set(m.manifest_path, BigInt(out.byteLength));
      c.progress(Number(m.manifest_length));
    },
    c.signal,
  );
  await inPool(
    t.manifestLists,
    c.concurrency,
    async (list) => {
      const src = await c.source.get(list);
      const out = rewriteAvroFile<ManifestFile>(src, (m) => ({ ...m, manifest_path: map(m.manifest_path), manifest_length: lengths.get(m.manifest_path) ?? m.manifest_length }));
      await c.target.put(map(list), out);
      c.progress(src.byteLength);
    },
    c.signal,
  );
  const keep = new Set(t.previousMetadata);
  for (const previous of t.previousMetadata) {
    const src = await c.source.get(previous);
    const m = parseJson<TableMetadata>(text(src));
    // An older file names manifest lists of snapshots since expired: they are not copied, but the paths move anyway.
    await c.target.put(map(previous), stringifyJson(rewriteMetadata(m, map, c.paths.location(m.location), keep)), 'application/json');
    c.progress(src.byteLength);
  }
  const current = map(t.metadataLocation);
  await c.target.put(current, stringifyJson(rewriteMetadata(t.metadata, map, target, keep)), 'application/json');
  c.progress(Buffer.byteLength(t.metadataText));
  return current;
}

interface SnapshotCounts {
  snapshotId: string;
  dataFiles: number;
  deleteFiles: number;
  records: bigint;
  deleteRecords: bigint;
}

/** Per snapshot: its live data and delete files and their record counts, read from the manifests. */
async function snapshotCounts(store: BlobStore, m: TableMetadata, signal?: AbortSignal): Promise<SnapshotCounts[]> {
  const manifestCache = new Map<string, Promise<Array<{ content: number; records: bigint }>>>();
  const readManifestEntries = (path: string) => {
    let p = manifestCache.get(path);
    if (!p) {
      p = store.get(path).then((b) =>
        readAvroFile<ManifestEntry>(b)
          .records.filter((e) => e.status !== 2)
          .map((e) => ({ content: e.data_file.content ?? 0, records: BigInt(e.data_file.record_count) })),
      );
      manifestCache.set(path, p);
    }
    return p;
  };
  const out: SnapshotCounts[] = [];
  for (const s of m.snapshots) {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    const counts: SnapshotCounts = { snapshotId: String(s['snapshot-id']), dataFiles: 0, deleteFiles: 0, records: 0n, deleteRecords: 0n };
    for (const mf of readAvroFile<ManifestFile>(await store.get(s['manifest-list'])).records) {
      for (const e of await readManifestEntries(mf.manifest_path)) {
        if (e.content === 0) {
          counts.dataFiles++;
          counts.records += e.records;
        } else {
          counts.deleteFiles++;
          counts.deleteRecords += e.records;
        }
      }
    }
    out.push(counts);
  }
  return out;
}

/**
 * Checks the target copy of a table against its source: the same snapshots with the same files and row counts per
 * snapshot, every file (metadata, lists, manifests, data, deletes) present at the target with the size its
 * manifest records, and no path left outside the target root. Throws with what differs.
 */
export async function verifyTable(c: CopyContext, source: TableFiles, targetMetadataLocation: string): Promise<{ snapshots: number; files: number }> {
  const target = await tableFiles(c.target, targetMetadataLocation, c.signal);
  const problems: string[] = [];
  const ids = (m: TableMetadata) => m.snapshots.map((s) => String(s['snapshot-id']));
  if (ids(source.metadata).join() !== ids(target.metadata).join()) problems.push('the snapshots differ');
  if (String(source.metadata['current-snapshot-id']) !== String(target.metadata['current-snapshot-id'])) problems.push('the current snapshot differs');
  if (target.metadata['table-uuid'] !== source.metadata['table-uuid']) problems.push('the table uuid differs');
  const outside = (p: string) => !normalizeScheme(p).startsWith(c.paths.targetRoot);
  if (outside(target.metadata.location)) problems.push(`the location ${target.metadata.location} is not under the target root`);
  for (const l of target.manifestLists) if (outside(l)) problems.push(`manifest list ${l} is not under the target root`);
  for (const m of target.manifests.values()) {
    if (outside(m.manifest_path)) problems.push(`manifest ${m.manifest_path} is not under the target root`);
  }
  await inPool(
    [...target.manifests.values()],
    c.concurrency,
    async (m) => {
      const head = await c.target.head(m.manifest_path);
      if (!head || BigInt(head.size) !== BigInt(m.manifest_length)) problems.push(`manifest ${m.manifest_path}: ${head ? `${head.size} bytes, the list says ${m.manifest_length}` : 'missing'}`);
    },
    c.signal,
  );
  const files = [...target.files].filter(([, f]) => f.live);
  await inPool(
    files,
    c.concurrency,
    async ([path, f]) => {
      if (outside(path)) problems.push(`${path} is not under the target root`);
      const head = await c.target.head(path);
      // A rewritten position delete file has its own size; data and equality delete files keep theirs exactly.
      if (!head) problems.push(`${path}: missing at the target`);
      else if (f.content !== 1 && head.size !== f.size) problems.push(`${path}: ${head.size} bytes, the manifest says ${f.size}`);
    },
    c.signal,
  );
  const [before, after] = await Promise.all([snapshotCounts(c.source, source.metadata, c.signal), snapshotCounts(c.target, target.metadata, c.signal)]);
  for (let i = 0; i < before.length; i++) {
    const a = before[i];
    const b = after[i];
    if (!b || a.records !== b.records || a.deleteRecords !== b.deleteRecords || a.dataFiles !== b.dataFiles || a.deleteFiles !== b.deleteFiles) {
      problems.push(`snapshot ${a.snapshotId}: ${a.records} rows in ${a.dataFiles} files at the source, ${b ? `${b.records} in ${b.dataFiles}` : 'absent'} at the target`);
    }
  }
  if (problems.length) throw new VerificationError(problems);
  return { snapshots: before.length, files: files.length };
}

export class VerificationError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`${problems.length} difference(s): ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; …' : ''}`);
    this.name = 'VerificationError';
    this.problems = problems;
  }
}
