// The BlobStore of an azure storage backend (Azure Blob Storage / ADLS Gen2 over the Blob REST API, or Azurite),
// through @azure/storage-blob, since DuckDB's azure extension is not available here. Requests are signed either
// with the account key (the api and the catalog service, which hold the backend's secret) or with a SAS token (an
// agent, which holds only the short-lived SAS the catalog service vended for the query).
import { AnonymousCredential, BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import type { Readable } from 'node:stream';
import { ObjectStoreError, type BlobStore, type StoredObject } from './objectStorage.ts';
import { azureContainerUri, parseAzureUri } from './storageUri.ts';

/** What reaching an azure storage account takes: the account and one of its key or a SAS token. */
export interface AzureConnection {
  accountName: string;
  /** The blob service endpoint (an emulator's, e.g. `http://127.0.0.1:10000/devstoreaccount1`); the account's by default. */
  endpoint?: string | null;
  accountKey?: string;
  /** A SAS token (the query string, without `?`). */
  sasToken?: string;
  /** One attempt and a short timeout (a probe answers about reachability, it does not retry into it). */
  probe?: boolean;
}

/** The blob service endpoint of an account, without a trailing slash. */
export const azureBlobEndpoint = (accountName: string, endpoint?: string | null) =>
  (endpoint || `https://${accountName}.blob.core.windows.net`).replace(/\/+$/, '');

/** A failure of the azure SDK as the store's own code and message (HEAD answers carry the code in a header only). */
function toAzureStoreError(e: unknown): ObjectStoreError {
  if (e instanceof ObjectStoreError) return e;
  const err = e as { name?: string; code?: string; statusCode?: number; message?: string; details?: { errorCode?: string } };
  const status = err.statusCode;
  const code = err.details?.errorCode ?? err.code ?? (status === 404 ? 'NotFound' : status ? `HTTP${status}` : (err.name ?? 'Error'));
  // The service's message repeats a request id and time on further lines: the first line says it.
  const message = (err.message ?? String(e)).split('\n')[0] || (status ? `HTTP ${status}` : code);
  return new ObjectStoreError(code, message, status);
}

const DELETE_CONCURRENCY = 8;
/** uploadStream stages blocks of this size, at most this many at once: memory stays bounded whatever the file. */
const BLOCK_BYTES = 8 * 2 ** 20;
const BLOCKS_IN_FLIGHT = 4;

export class AzureBlobStore implements BlobStore {
  readonly accountName: string;
  readonly #service: BlobServiceClient;
  readonly #containers = new Map<string, ContainerClient>();

  constructor(c: AzureConnection) {
    if (!c.accountKey && !c.sasToken) throw new ObjectStoreError('CredentialMissing', `no account key or SAS token for storage account ${c.accountName}`);
    this.accountName = c.accountName;
    const endpoint = azureBlobEndpoint(c.accountName, c.endpoint);
    const options = { retryOptions: c.probe ? { maxTries: 1, tryTimeoutInMs: 10_000 } : { maxTries: 4, tryTimeoutInMs: 120_000 } };
    this.#service = c.accountKey
      ? new BlobServiceClient(endpoint, new StorageSharedKeyCredential(c.accountName, c.accountKey), options)
      : new BlobServiceClient(`${endpoint}?${c.sasToken!.replace(/^\?/, '')}`, new AnonymousCredential(), options);
  }

  /** The container client and blob name of a location on this account. */
  #locate(uri: string): { container: ContainerClient; name: string; base: string } {
    const { container, key, account } = parseAzureUri(uri);
    if (account !== null && account !== this.accountName) {
      throw new ObjectStoreError('AccountMismatch', `${uri} is on storage account ${account}, not ${this.accountName}`);
    }
    let client = this.#containers.get(container);
    if (!client) {
      client = this.#service.getContainerClient(container);
      this.#containers.set(container, client);
    }
    return { container: client, name: key, base: azureContainerUri(uri) };
  }

  async #send<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw toAzureStoreError(e);
    }
  }

  async get(uri: string): Promise<Uint8Array> {
    const { container, name } = this.#locate(uri);
    return this.#send(async () => new Uint8Array(await container.getBlobClient(name).downloadToBuffer()));
  }

  async getStream(uri: string): Promise<{ body: Readable; size: number }> {
    const { container, name } = this.#locate(uri);
    return this.#send(async () => {
      const res = await container.getBlobClient(name).download();
      return { body: res.readableStreamBody as Readable, size: Number(res.contentLength ?? 0) };
    });
  }

  async put(uri: string, body: Uint8Array | string, contentType?: string): Promise<void> {
    const { container, name } = this.#locate(uri);
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    await this.#send(() =>
      container.getBlockBlobClient(name).upload(bytes, bytes.byteLength, contentType ? { blobHTTPHeaders: { blobContentType: contentType } } : {}),
    );
  }

  async putStream(uri: string, body: Readable, size: number): Promise<void> {
    const { container, name } = this.#locate(uri);
    await this.#send(async () => {
      await container.getBlockBlobClient(name).uploadStream(body, BLOCK_BYTES, BLOCKS_IN_FLIGHT);
      const written = (await container.getBlobClient(name).getProperties()).contentLength;
      if (written !== size) throw new ObjectStoreError('SizeMismatch', `${uri} was written with ${written} bytes, ${size} expected`);
    });
  }

  async head(uri: string): Promise<{ size: number } | null> {
    const { container, name } = this.#locate(uri);
    try {
      return await this.#send(async () => ({ size: Number((await container.getBlobClient(name).getProperties()).contentLength ?? 0) }));
    } catch (e) {
      if (e instanceof ObjectStoreError && e.notFound) return null;
      throw e;
    }
  }

  async list(prefixUri: string, max?: number): Promise<StoredObject[]> {
    const { container, name: prefix, base } = this.#locate(prefixUri);
    const out: StoredObject[] = [];
    await this.#send(async () => {
      for await (const page of container.listBlobsFlat({ prefix }).byPage({ maxPageSize: max ? Math.min(5000, max) : 5000 })) {
        for (const b of page.segment.blobItems) {
          out.push({ uri: `${base}${b.name}`, size: Number(b.properties.contentLength ?? 0), lastModifiedMs: b.properties.lastModified?.getTime() });
        }
        if (max && out.length >= max) break;
      }
    });
    return max ? out.slice(0, max) : out;
  }

  async delete(uri: string): Promise<void> {
    const { container, name } = this.#locate(uri);
    await this.#send(() => container.getBlobClient(name).deleteIfExists());
  }

  async deletePrefix(prefixUri: string): Promise<number> {
    const objects = await this.list(prefixUri.replace(/\/*$/, '/'));
    let next = 0;
    const worker = async () => {
      while (next < objects.length) await this.delete(objects[next++].uri);
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, objects.length) }, worker));
    return objects.length;
  }

  close(): void {
    this.#containers.clear();
  }
}
