// What a scan reads of one table, all of it metadata: the table's metadata through the catalog (with vended,
// short-lived storage credentials), the current snapshot's manifest list and manifests for file sizes and counts,
// and on a deep scan the objects under the table location against every file a snapshot or metadata file
// references. Never a data file's contents.
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { CatalogClient } from '../../runtime/catalogClient.ts';
import type { TableMetadata } from '../../iceberg/metadata.ts';
import { readManifest, readManifestList } from '../../iceberg/avro.ts';
import { makeS3Client } from '../../iceberg/s3Client.ts';
import { parseS3Uri } from '../../iceberg/storageUri.ts';
import type { TableFigures } from './assess.ts';
import type { Thresholds } from './thresholds.ts';

const DAY = 86_400_000;

async function readObject(s3: S3Client, uri: string): Promise<Uint8Array> {
  const { bucket, key } = parseS3Uri(uri);
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return r.Body!.transformToByteArray();
}

/** Every object under `uri` (a directory), with its size and last modification. */
async function listObjects(s3: S3Client, uri: string): Promise<Array<{ uri: string; size: number; modified: number }>> {
  const { bucket, key } = parseS3Uri(uri.endsWith('/') ? uri : `${uri}/`);
  const out: Array<{ uri: string; size: number; modified: number }> = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ContinuationToken: token }));
    for (const o of page.Contents ?? []) out.push({ uri: `s3://${bucket}/${o.Key}`, size: Number(o.Size ?? 0), modified: o.LastModified?.getTime() ?? 0 });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

function storageClient(config: Record<string, string>): S3Client {
  const accessKeyId = config['s3.access-key-id'];
  const secretAccessKey = config['s3.secret-access-key'];
  if (!accessKeyId || !secretAccessKey) throw new Error('the catalog vended no storage credentials for the table');
  return makeS3Client({
    endpoint: config['s3.endpoint'],
    region: config['s3.region'] ?? config['client.region'],
    accessKeyId,
    secretAccessKey,
    sessionToken: config['s3.session-token'],
    pathStyle: config['s3.path-style-access'] !== 'false',
  });
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
  const s3 = storageClient(loaded.config);
  try {
    if (current) {
      const list = readManifestList(await readObject(s3, current['manifest-list'])).manifests;
      figures.manifests = list.length;
      for (const mf of list) {
        if (mf.content !== 0) continue;
        for (const e of readManifest(await readObject(s3, mf.manifest_path)).entries) {
          if (e.status === 2 || e.data_file.content !== 0) continue;
          const size = Number(e.data_file.file_size_in_bytes);
          figures.dataFiles++;
          figures.dataBytes += size;
          figures.records += Number(e.data_file.record_count);
          if (size < t.smallFileBytes) {
            figures.smallFiles++;
            figures.smallBytes += size;
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
        for (const mf of readManifestList(await readObject(s3, s['manifest-list'])).manifests) {
          if (reachable.has(mf.manifest_path)) continue;
          reachable.add(mf.manifest_path);
          for (const e of readManifest(await readObject(s3, mf.manifest_path)).entries) reachable.add(e.data_file.file_path);
        }
      }
      const cutoff = opts.now - t.orphanMinAgeDays * DAY;
      const orphans = (await listObjects(s3, m.location)).filter((o) => !reachable.has(o.uri));
      const eligible = orphans.filter((o) => o.modified < cutoff);
      figures.orphans = {
        files: orphans.length,
        bytes: orphans.reduce((n, o) => n + o.size, 0),
        eligibleFiles: eligible.length,
        eligibleBytes: eligible.reduce((n, o) => n + o.size, 0),
      };
    }
  } finally {
    s3.destroy();
  }
  return figures;
}
