// The catalog's own access to warehouse storage over the S3 protocol: writing metadata files, and purging a
// dropped table's files. One client per warehouse connection, rebuilt when the connection settings change.
import { PutObjectCommand, GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SpanKind, type Tracing } from '../telemetry/tracing.ts';
import { deletePrefix, makeS3Client } from '../iceberg/s3Client.ts';
import { normalizeS3Root, parseS3Uri, StorageUriError, type ObjectLocation } from '../iceberg/storageUri.ts';
import type { Warehouse } from './metastore.ts';
import { badRequest } from './errors.ts';
import { openSecret, sealSecret, isSealed } from '../settings/secretBox.ts';

/** The purpose warehouse secrets are sealed under (settings/secretBox.ts). */
const SEAL_PURPOSE = 'catalog.warehouses.secret_access_key';

/** Parses with the shared parser; a location the catalog cannot use is the client's 400. */
export function locate(uri: string): ObjectLocation {
  try {
    return parseS3Uri(uri);
  } catch (e) {
    if (e instanceof StorageUriError) throw badRequest(e.message);
    throw e;
  }
}

/** The warehouse root as `s3://bucket/path/` (always one trailing slash); a bad root is the client's 400. */
export function normalizeRootUri(uri: string): string {
  try {
    return normalizeS3Root(uri);
  } catch (e) {
    if (e instanceof StorageUriError) throw badRequest(e.message);
    throw e;
  }
}

export class WarehouseStorage {
  private readonly clients = new Map<string, { fingerprint: string; client: S3Client }>();
  private readonly tracing: Tracing | undefined;
  private readonly secretKey: string | undefined;

  /** `secretKey`: SECRET_KEY, sealing warehouse secrets at rest; without it they are stored as given. */
  constructor(tracing?: Tracing, secretKey?: string) {
    this.tracing = tracing;
    this.secretKey = secretKey || undefined;
  }

  /** A secret as the metastore should keep it. */
  seal(secret: string): string {
    return this.secretKey ? sealSecret(this.secretKey, SEAL_PURPOSE, secret) : secret;
  }

  /** A stored secret that is not sealed yet (written before sealing existed), sealed; null when nothing to do. */
  reseal(stored: string): string | null {
    return this.secretKey && !isSealed(stored) ? this.seal(stored) : null;
  }

  /** The warehouse's secret, opened. */
  secretOf(w: Warehouse): string {
    return openSecret(this.secretKey ?? '', SEAL_PURPOSE, w.secretAccessKey);
  }

  client(w: Warehouse): S3Client {
    const fingerprint = [w.endpoint, w.region, w.accessKeyId, w.secretAccessKey, w.pathStyle, w.credentialEpoch].join('\u0000');
    const cached = this.clients.get(w.name);
    if (cached && cached.fingerprint === fingerprint) return cached.client;
    cached?.client.destroy();
    const client = makeS3Client({
      endpoint: w.endpoint ?? undefined,
      region: w.region,
      accessKeyId: w.accessKeyId,
      secretAccessKey: this.secretOf(w),
      pathStyle: w.pathStyle,
    });
    this.clients.set(w.name, { fingerprint, client });
    return client;
  }

  async writeText(w: Warehouse, uri: string, text: string): Promise<void> {
    const { bucket, key } = locate(uri);
    await this.traced('PUT', bucket, () => this.client(w).send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: text, ContentType: 'application/json' })));
  }

  async readText(w: Warehouse, uri: string): Promise<string> {
    const { bucket, key } = locate(uri);
    return this.traced('GET', bucket, async () => {
      const out = await this.client(w).send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return out.Body!.transformToString('utf8');
    });
  }

  private traced<T>(method: string, bucket: string, fn: () => Promise<T>): Promise<T> {
    if (!this.tracing?.enabled) return fn();
    return this.tracing.span(`object_store ${method}`, { kind: SpanKind.CLIENT, attributes: { 'aws.s3.bucket': bucket } }, fn);
  }

  /** Deletes every object under `location/`; returns how many. */
  async purgePrefix(w: Warehouse, location: string): Promise<number> {
    const { bucket, key } = locate(location);
    return deletePrefix(this.client(w), bucket, key.replace(/\/+$/, '') + '/');
  }

  close(): void {
    for (const { client } of this.clients.values()) client.destroy();
    this.clients.clear();
  }
}
