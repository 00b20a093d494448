// One interface over the object stores a storage backend can be (S3 and S3-compatible; Azure Blob in
// objectStorageAzure.ts), addressed by the URIs Iceberg metadata spells. What the api side needs to move a catalog
// between backends, to probe a backend and to clean up after a migration: streamed reads and writes (no file is
// held whole in memory), HEAD for verification, listing and deleting under a prefix.
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { deletePrefix, makeS3Client } from './s3Client.ts';
import { parseS3Uri } from './storageUri.ts';

export interface StoredObject {
  uri: string;
  size: number;
  /** When the store said. */
  lastModifiedMs?: number;
}

/** A failure the store answered (or a transport failure), with the store's own code and message. */
export class ObjectStoreError extends Error {
  readonly code: string;
  readonly status: number | undefined;
  constructor(code: string, message: string, status?: number) {
    super(message);
    this.name = 'ObjectStoreError';
    this.code = code;
    this.status = status;
  }
  get notFound(): boolean {
    return this.status === 404 || this.code === 'NoSuchKey' || this.code === 'NotFound' || this.code === 'BlobNotFound';
  }
}

export interface BlobStore {
  get(uri: string): Promise<Uint8Array>;
  /** The object as a stream, with its size. */
  getStream(uri: string): Promise<{ body: Readable; size: number }>;
  put(uri: string, body: Uint8Array | string, contentType?: string): Promise<void>;
  /** Writes `size` bytes read from `body` without holding them whole. */
  putStream(uri: string, body: Readable, size: number): Promise<void>;
  /** The object's size, or null when there is none. */
  head(uri: string): Promise<{ size: number } | null>;
  /** Every object whose URI starts with `prefixUri` (the first `max` of them when given). */
  list(prefixUri: string, max?: number): Promise<StoredObject[]>;
  delete(uri: string): Promise<void>;
  /** Deletes every object under `prefixUri` (a prefix ending with `/`); returns how many. */
  deletePrefix(prefixUri: string): Promise<number>;
  close(): void;
}

/** What reaching an S3 backend takes. */
export interface S3Connection {
  endpoint?: string | null;
  region?: string | null;
  accessKeyId: string;
  secretAccessKey: string;
  /** With short-lived (STS-style) keys. */
  sessionToken?: string;
  pathStyle?: boolean;
  /** One attempt and a short timeout (a probe answers about reachability, it does not retry into it). */
  probe?: boolean;
}

function toStoreError(e: unknown): ObjectStoreError {
  if (e instanceof ObjectStoreError) return e;
  const err = e as { name?: string; Code?: string; message?: string; $metadata?: { httpStatusCode?: number }; cause?: { code?: string; message?: string } };
  const status = err.$metadata?.httpStatusCode;
  const code = err.Code ?? (err.name && err.name !== 'Error' ? err.name : undefined) ?? err.cause?.code ?? 'Error';
  const message = err.message && err.message !== 'UnknownError' ? err.message : (err.cause?.message ?? (status ? `HTTP ${status}` : String(e)));
  return new ObjectStoreError(code, message, status);
}

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly #timeoutMs: number | undefined;

  constructor(c: S3Connection) {
    this.client = makeS3Client({
      endpoint: c.endpoint ?? undefined,
      region: c.region ?? undefined,
      accessKeyId: c.accessKeyId,
      secretAccessKey: c.secretAccessKey,
      sessionToken: c.sessionToken,
      pathStyle: c.pathStyle,
      maxAttempts: c.probe ? 1 : undefined,
    });
    this.#timeoutMs = c.probe ? 10_000 : undefined;
  }

  async #send<T>(fn: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    try {
      return await fn(this.#timeoutMs ? AbortSignal.timeout(this.#timeoutMs) : undefined);
    } catch (e) {
      throw toStoreError(e);
    }
  }

  async get(uri: string): Promise<Uint8Array> {
    const { bucket, key } = parseS3Uri(uri);
    return this.#send(async (abortSignal) => {
      const res = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal });
      return res.Body!.transformToByteArray();
    });
  }

  async getStream(uri: string): Promise<{ body: Readable; size: number }> {
    const { bucket, key } = parseS3Uri(uri);
    return this.#send(async (abortSignal) => {
      const res = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal });
      return { body: res.Body as Readable, size: Number(res.ContentLength ?? 0) };
    });
  }

  async put(uri: string, body: Uint8Array | string, contentType?: string): Promise<void> {
    const { bucket, key } = parseS3Uri(uri);
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    await this.#send((abortSignal) =>
      this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentLength: bytes.byteLength, ContentType: contentType }), { abortSignal }),
    );
  }

  async putStream(uri: string, body: Readable, size: number): Promise<void> {
    const { bucket, key } = parseS3Uri(uri);
    // One PUT streams up to 5 GiB (S3's single-request limit); Iceberg data files stay far below it.
    await this.#send((abortSignal) => this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: size }), { abortSignal }));
  }

  async head(uri: string): Promise<{ size: number } | null> {
    const { bucket, key } = parseS3Uri(uri);
    try {
      return await this.#send(async (abortSignal) => {
        const res = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal });
        return { size: Number(res.ContentLength ?? 0) };
      });
    } catch (e) {
      if (e instanceof ObjectStoreError && e.notFound) return null;
      throw e;
    }
  }

  async list(prefixUri: string, max?: number): Promise<StoredObject[]> {
    const { bucket, key } = parseS3Uri(prefixUri);
    const out: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.#send((abortSignal) =>
        this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ContinuationToken: token, MaxKeys: max ? Math.min(1000, max) : undefined }), { abortSignal }),
      );
      for (const o of page.Contents ?? []) if (o.Key !== undefined) out.push({ uri: `s3://${bucket}/${o.Key}`, size: Number(o.Size ?? 0), lastModifiedMs: o.LastModified?.getTime() });
      token = page.IsTruncated && (!max || out.length < max) ? page.NextContinuationToken : undefined;
    } while (token);
    return max ? out.slice(0, max) : out;
  }

  async delete(uri: string): Promise<void> {
    const { bucket, key } = parseS3Uri(uri);
    try {
      await this.#send((abortSignal) => this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), { abortSignal }));
    } catch (e) {
      if (e instanceof ObjectStoreError && e.notFound) return;
      throw e;
    }
  }

  async deletePrefix(prefixUri: string): Promise<number> {
    const { bucket, key } = parseS3Uri(prefixUri);
    return this.#send(() => deletePrefix(this.client, bucket, key));
  }

  close(): void {
    this.client.destroy();
  }
}
