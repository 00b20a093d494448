// The catalog's own access to warehouse storage over the S3 protocol: writing metadata files, and purging a
// dropped table's files. One client per warehouse connection, rebuilt when the connection settings change.
import { PutObjectCommand, GetObjectCommand, ListObjectsV2Command, DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { makeS3Client } from '../iceberg/s3Client.ts';
import type { Warehouse } from './metastore.ts';
import { badRequest } from './errors.ts';

export interface S3Location {
  bucket: string;
  key: string;
}

/** `s3://bucket/key` (s3a:// and s3n:// too) → bucket and key. */
export function parseS3Uri(uri: string): S3Location {
  const m = /^s3[an]?:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!m) throw badRequest(`not an s3:// location: ${uri}`);
  return { bucket: m[1], key: m[2] };
}

/** The warehouse root as `s3://bucket/path/` (always one trailing slash). */
export function normalizeRootUri(uri: string): string {
  const { bucket, key } = parseS3Uri(uri.trim());
  const path = key.replace(/^\/+|\/+$/g, '');
  return `s3://${bucket}/${path ? path + '/' : ''}`;
}

/** True when `location` lies under the warehouse root (I4: every table location derives from root_uri). */
export function isUnderRoot(location: string, rootUri: string): boolean {
  const root = normalizeRootUri(rootUri);
  return `${location.replace(/\/+$/, '')}/`.startsWith(root) && location.replace(/\/+$/, '') + '/' !== root;
}

export class WarehouseStorage {
  private readonly clients = new Map<string, { fingerprint: string; client: S3Client }>();

  client(w: Warehouse): S3Client {
    const fingerprint = [w.endpoint, w.region, w.accessKeyId, w.secretAccessKey, w.pathStyle, w.credentialEpoch].join('\u0000');
    const cached = this.clients.get(w.name);
    if (cached && cached.fingerprint === fingerprint) return cached.client;
    cached?.client.destroy();
    const client = makeS3Client({
      endpoint: w.endpoint ?? undefined,
      region: w.region,
      accessKeyId: w.accessKeyId,
      secretAccessKey: w.secretAccessKey,
      pathStyle: w.pathStyle,
    });
    this.clients.set(w.name, { fingerprint, client });
    return client;
  }

  async writeText(w: Warehouse, uri: string, text: string): Promise<void> {
    const { bucket, key } = parseS3Uri(uri);
    await this.client(w).send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: text, ContentType: 'application/json' }));
  }

  async readText(w: Warehouse, uri: string): Promise<string> {
    const { bucket, key } = parseS3Uri(uri);
    const out = await this.client(w).send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return out.Body!.transformToString('utf8');
  }

  /** Deletes every object under `location/`; returns how many. */
  async purgePrefix(w: Warehouse, location: string): Promise<number> {
    const { bucket, key } = parseS3Uri(location);
    const prefix = key.replace(/\/+$/, '') + '/';
    const client = this.client(w);
    let deleted = 0;
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
      if (keys.length) {
        await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
        deleted += keys.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  }

  close(): void {
    for (const { client } of this.clients.values()) client.destroy();
    this.clients.clear();
  }
}
