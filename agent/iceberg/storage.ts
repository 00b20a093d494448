// Object-store access for one table with the credentials vended for it (held in memory for the query only).
// All storage traffic of the bridge goes through here, in Node: DuckDB never reaches the network (no httpfs, no
// azure extension), it reads local cache files only. The store is the one the vended configuration opens
// (iceberg/vendedStorage.ts): S3 with vended keys, or an azure account with a vended SAS. Credential failures become
// catalog_error with a message naming the credential problem.
import { processSpan, SpanKind } from '../../telemetry/tracing.ts';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { ObjectStoreError, type BlobStore } from '../../iceberg/objectStorage.ts';
import { vendedStoreOpener } from '../../iceberg/vendedStorage.ts';
import { objectPath, StorageUriError } from '../../iceberg/storageUri.ts';
import { BridgeError, catalogError } from './errors.ts';

/** An object the metadata names is not in storage (maintenance tolerates this for files already deleted). */
export class ObjectNotFound extends BridgeError {
  constructor(message: string) {
    super('catalog_error', message);
    this.name = 'ObjectNotFound';
  }
}

export interface ListedObject {
  /** `s3://bucket/key` or `az://container/key` (the location form of the table) */
  uri: string;
  size: number;
  /** Infinity when the store did not say: such an object is never old enough to be deleted. */
  lastModifiedMs: number;
}

const CREDENTIAL_CODES = new Set([
  'ExpiredToken',
  'InvalidAccessKeyId',
  'AccessDenied',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'TokenRefreshRequired',
  'CredentialMissing',
  // azure
  'AuthenticationFailed',
  'AuthorizationFailure',
  'AuthorizationPermissionMismatch',
  'AuthorizationResourceTypeMismatch',
  'AuthorizationProtocolMismatch',
  'AccountMismatch',
]);

export class TableStorage {
  readonly #open: () => BlobStore;
  #opened: BlobStore | null = null;
  readonly #table: string;

  /** The credentials are checked here; the store (an SDK client) is made on the first request: a read whose
   *  manifests and data files are all cached makes none. */
  constructor(table: string, config: Record<string, string>) {
    this.#table = table;
    try {
      this.#open = vendedStoreOpener(config);
    } catch (e) {
      if (e instanceof ObjectStoreError && e.code === 'CredentialMissing') {
        throw catalogError(`the catalog vended no storage credential for ${table} (is credential vending enabled for its warehouse?)`);
      }
      throw e;
    }
  }

  get #store(): BlobStore {
    return (this.#opened ??= this.#open());
  }

  #fail(error: unknown, what: string): never {
    if (error instanceof StorageUriError) throw catalogError(`unsupported storage location: ${error.message}`);
    if (error instanceof ObjectStoreError) {
      if (CREDENTIAL_CODES.has(error.code) || error.status === 403) {
        throw catalogError(`storage credential for ${this.#table} was refused (${error.code}): ${error.message}`.trim());
      }
      if (error.notFound) throw new ObjectNotFound(`${what}: object not found in storage`);
      throw catalogError(`${what}: ${error.code}: ${error.message}`);
    }
    throw catalogError(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  }

  async #do<T>(method: string, uri: string, what: string, fn: () => Promise<T>): Promise<T> {
    let container: string;
    try {
      container = objectPath(uri).split('/')[0];
    } catch (error) {
      this.#fail(error, what);
    }
    try {
      return await processSpan(`object_store ${method}`, { kind: SpanKind.CLIENT, attributes: { 'storage.container': container } }, fn);
    } catch (error) {
      this.#fail(error, what);
    }
  }

  async getBytes(uri: string): Promise<Uint8Array> {
    return this.#do('GET', uri, `reading ${uri}`, () => this.#store.get(uri));
  }

  /** Streams an object to `path` (via a temporary name, so a half-written file is never seen). */
  async download(uri: string, path: string): Promise<void> {
    const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.partial`;
    try {
      await this.#do('GET', uri, `fetching ${uri}`, async () => {
        const { body } = await this.#store.getStream(uri);
        await pipeline(body, createWriteStream(partial));
      });
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async put(uri: string, body: Uint8Array): Promise<void> {
    await this.#do('PUT', uri, `writing ${uri}`, () => this.#store.put(uri, body));
  }

  /** Uploads a local file, streamed. */
  async putFile(uri: string, path: string): Promise<void> {
    const { size } = await stat(path);
    await this.#do('PUT', uri, `writing ${uri}`, () => this.#store.putStream(uri, createReadStream(path), size));
  }

  /** Every object whose key starts with `prefixUri`'s key (a vended credential may list only under its table's prefix). */
  async list(prefixUri: string): Promise<ListedObject[]> {
    const objects = await this.#do('LIST', prefixUri, `listing ${prefixUri}`, () => this.#store.list(prefixUri));
    return objects.map((o) => ({ uri: o.uri, size: o.size, lastModifiedMs: o.lastModifiedMs ?? Number.POSITIVE_INFINITY }));
  }

  /** Deletes one object (one request per object: a vended key may not use the bucket-level DeleteObjects). */
  async delete(uri: string): Promise<void> {
    await this.#do('DELETE', uri, `deleting ${uri}`, () => this.#store.delete(uri));
  }

  close(): void {
    this.#opened?.close();
    this.#opened = null;
  }
}
