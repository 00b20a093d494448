// The catalog's own access to warehouse storage: writing metadata files, and purging a dropped table's files.
// One BlobStore per warehouse connection (S3 for object_store and s3, the Blob API for azure), rebuilt when the
// connection settings change.
import { SpanKind, type Tracing } from '../telemetry/tracing.ts';
import { S3BlobStore, type BlobStore } from '../iceberg/objectStorage.ts';
import { AzureBlobStore } from '../iceberg/objectStorageAzure.ts';
import { isAzureUri, normalizeStorageRoot, parseAzureUri, parseS3Uri, StorageUriError } from '../iceberg/storageUri.ts';
import type { Warehouse } from './metastore.ts';
import { badRequest } from './errors.ts';
import { openSecret, sealSecret, isSealed } from '../settings/secretBox.ts';

/** The purpose warehouse secrets are sealed under (settings/secretBox.ts). */
const SEAL_PURPOSE = 'catalog.warehouses.secret_access_key';

/** Where a location is: its bucket (S3) or container (azure), and the key under it. A bad location is a 400. */
export function locate(uri: string): { bucket: string; key: string } {
  try {
    if (isAzureUri(uri)) {
      const { container, key } = parseAzureUri(uri);
      return { bucket: container, key };
    }
    return parseS3Uri(uri);
  } catch (e) {
    if (e instanceof StorageUriError) throw badRequest(e.message);
    throw e;
  }
}

/** The warehouse root as stored, always one trailing slash (`s3://bucket/path/`, `az://container/path/`); a bad root is a 400. */
export function normalizeRootUri(uri: string): string {
  try {
    return normalizeStorageRoot(uri);
  } catch (e) {
    if (e instanceof StorageUriError) throw badRequest(e.message);
    throw e;
  }
}

export class WarehouseStorage {
  private readonly stores = new Map<string, { fingerprint: string; store: BlobStore }>();
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

  /** The store of a warehouse: an azure account (access key id = account name, secret = account key) or S3. */
  store(w: Warehouse): BlobStore {
    const fingerprint = [w.kind, w.endpoint, w.region, w.accessKeyId, w.secretAccessKey, w.pathStyle, w.credentialEpoch].join('\u0000');
    const cached = this.stores.get(w.name);
    if (cached && cached.fingerprint === fingerprint) return cached.store;
    cached?.store.close();
    const store: BlobStore =
      w.kind === 'azure'
        ? new AzureBlobStore({ accountName: w.accessKeyId, endpoint: w.endpoint, accountKey: this.secretOf(w) })
        : new S3BlobStore({ endpoint: w.endpoint, region: w.region, accessKeyId: w.accessKeyId, secretAccessKey: this.secretOf(w), pathStyle: w.pathStyle });
    this.stores.set(w.name, { fingerprint, store });
    return store;
  }

  async writeText(w: Warehouse, uri: string, text: string): Promise<void> {
    const { bucket } = locate(uri);
    await this.traced('PUT', bucket, () => this.store(w).put(uri, text, 'application/json'));
  }

  async readText(w: Warehouse, uri: string): Promise<string> {
    const { bucket } = locate(uri);
    return this.traced('GET', bucket, async () => Buffer.from(await this.store(w).get(uri)).toString('utf8'));
  }

  async readBytes(w: Warehouse, uri: string): Promise<Uint8Array> {
    const { bucket } = locate(uri);
    return this.traced('GET', bucket, () => this.store(w).get(uri));
  }

  /** Removes one object (a metadata file whose commit lost its compare-and-set); gone already is fine. */
  async remove(w: Warehouse, uri: string): Promise<void> {
    const { bucket } = locate(uri);
    await this.traced('DELETE', bucket, () => this.store(w).delete(uri));
  }

  private traced<T>(method: string, bucket: string, fn: () => Promise<T>): Promise<T> {
    if (!this.tracing?.enabled) return fn();
    return this.tracing.span(`object_store ${method}`, { kind: SpanKind.CLIENT, attributes: { 'storage.container': bucket } }, fn);
  }

  close(): void {
    for (const { store } of this.stores.values()) store.close();
    this.stores.clear();
  }
}
