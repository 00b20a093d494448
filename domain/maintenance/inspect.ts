// What a scan reads of one table, all of it metadata: the table's metadata through the catalog (with vended,
// short-lived storage credentials), the current snapshot's manifest list and manifests for file sizes and counts,
// and on a deep scan the objects under the table location against every file a snapshot or metadata file
// references. Never a data file's contents.
import type { CatalogClient } from '../../runtime/catalogClient.ts';
import type { TableMetadata } from '../../iceberg/metadata.ts';
import { readManifest, readManifestList } from '../../iceberg/avro.ts';
import type { BlobStore } from '../../iceberg/objectStorage.ts';
import { blobStoreForVended } from '../../iceberg/vendedStorage.ts';
import { stringifyJson } from '../../iceberg/json.ts';
import type { TableFigures } from './assess.ts';
import type { Thresholds } from './thresholds.ts';

const DAY = 86_400_000;

/** Every object under `uri` (a directory), with its size and last modification. */
async function listObjects(store: BlobStore, uri: string): Promise<Array<{ uri: string; size: number; modified: number }>> {
  const objects = await store.list(uri.endsWith('/') ? uri : `${uri}/`);
  return objects.map((o) => ({ uri: o.uri, size: o.size, modified: o.lastModifiedMs ?? 0 }));
}

export interface InspectTarget {
  warehouse: string;
  /** `catalog.schema.table`, the name statements use */
  qualified: string;
  schema: string;
  table: string;
}

export async function inspectTable(
  client: CatalogClient,
  target: InspectTarget,
  t: Thresholds,
  opts: { deep: boolean; now: number; previous?: TableFigures['previous'] },
): Promise<TableFigures> {
  const loaded = await client.loadTable<TableMetadata>(target.warehouse, [target.schema], target.table, { vendedCredentials: true });
  const m = loaded.metadata;
  const snapshots = m.snapshots ?? [];
  const currentId = m['current-snapshot-id'] === null || m['current-snapshot-id'] === undefined ? null : String(m['current-snapshot-id']);
  const current = snapshots.find((s) => String(s['snapshot-id']) === currentId) ?? null;
  const figures: TableFigures = {
    qualified: target.qualified,
    dataFiles: 0,
    dataBytes: 0,
    records: 0,
    smallFiles: 0,
    smallBytes: 0,
    snapshots: snapshots.length,
    snapshotTimes: snapshots.map((s) => Number(s['timestamp-ms'])),
    currentSnapshotId: currentId === null ? null : Number(currentId),
    manifests: 0,
    ...(opts.previous ? { previous: opts.previous } : {}),
  };
  if (!current && !opts.deep) return figures;
  // Compaction rewrites within a partition (of one spec): the small files' sizes per partition say what it can do.
  const smallByPartition = new Map<string, number[]>();
  // The store the vended credentials open: S3 with short-lived keys, or an azure account with a SAS.
  const store = blobStoreForVended(loaded.config);
  try {
    if (current) {
      const list = readManifestList(await store.get(current['manifest-list'])).manifests;
      figures.manifests = list.length;
      for (const mf of list) {
        if (mf.content !== 0) continue;
        for (const e of readManifest(await store.get(mf.manifest_path)).entries) {
          if (e.status === 2 || e.data_file.content !== 0) continue;
          const size = Number(e.data_file.file_size_in_bytes);
          figures.dataFiles++;
          figures.dataBytes += size;
          figures.records += Number(e.data_file.record_count);
          if (size < t.smallFileBytes) {
            figures.smallFiles++;
            figures.smallBytes += size;
            const key = `${mf.partition_spec_id}:${stringifyJson(e.data_file.partition ?? {})}`;
            const sizes = smallByPartition.get(key);
            if (sizes) sizes.push(size);
            else smallByPartition.set(key, [size]);
          }
        }
      }
    }
    if (opts.deep) {
      // Everything some snapshot or metadata file still reaches; anything else under the location is an orphan.
      const reachable = new Set<string>(m['metadata-log']?.map((l) => l['metadata-file']) ?? []);
      if (loaded.metadataLocation) reachable.add(loaded.metadataLocation);
      for (const s of snapshots) {
        reachable.add(s['manifest-list']);
        for (const mf of readManifestList(await store.get(s['manifest-list'])).manifests) {
          if (reachable.has(mf.manifest_path)) continue;
          reachable.add(mf.manifest_path);
          for (const e of readManifest(await store.get(mf.manifest_path)).entries) reachable.add(e.data_file.file_path);
        }
      }
      const cutoff = opts.now - t.orphanMinAgeDays * DAY;
      const orphans = (await listObjects(store, m.location)).filter((o) => !reachable.has(o.uri));
      const eligible = orphans.filter((o) => o.modified < cutoff);
      figures.orphans = {
        files: orphans.length,
        bytes: orphans.reduce((n, o) => n + o.size, 0),
        eligibleFiles: eligible.length,
        eligibleBytes: eligible.reduce((n, o) => n + o.size, 0),
      };
    }
  } finally {
    store.close();
  }
  figures.smallFileSizesByPartition = [...smallByPartition.values()];
  return figures;
}
