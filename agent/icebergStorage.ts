// Object-store access for one table with the credentials vended for it (held in memory for the query only).
// All S3 traffic of the bridge goes through here, in Node: DuckDB never reaches the network (no httpfs), it reads
// local cache files only. Credential failures become catalog_error with a message naming the credential problem.
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { processSpan, SpanKind } from '../telemetry/tracing.ts';
import { createWriteStream } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { makeS3Client } from '../iceberg/s3Client.ts';
import { parseS3Uri, StorageUriError, type ObjectLocation } from '../iceberg/storageUri.ts';
import { BridgeError, catalogError } from './icebergErrors.ts';

/** An object the metadata names is not in storage (maintenance tolerates this for files already deleted). */
export class ObjectNotFound extends BridgeError {
  constructor(message: string) {
    super('catalog_error', message);
    this.name = 'ObjectNotFound';
  }
}

export interface ListedObject {
  /** `s3://bucket/key` */
  uri: string;
  size: number;
  /** Infinity when the store did not say: such an object is never old enough to be deleted. */
  lastModifiedMs: number;
}

function locate(uri: string): ObjectLocation {
  try {
    return parseS3Uri(uri);
  } catch (e) {
    if (e instanceof StorageUriError) throw catalogError(`unsupported storage location ${uri} (only s3:// is supported)`);
    throw e;
  }
}

const CREDENTIAL_CODES = new Set(['ExpiredToken', 'InvalidAccessKeyId', 'AccessDenied', 'SignatureDoesNotMatch', 'InvalidToken', 'TokenRefreshRequired']);

export class TableStorage {
  readonly #client: S3Client;
  readonly #table: string;

  constructor(table: string, config: Record<string, string>) {
    this.#table = table;
    const accessKeyId = config['s3.access-key-id'];
    const secretAccessKey = config['s3.secret-access-key'];
    if (!accessKeyId || !secretAccessKey) {
      throw catalogError(`the catalog vended no storage credential for ${table} (is credential vending enabled for its warehouse?)`);
    }
    this.#client = makeS3Client({
      endpoint: config['s3.endpoint'],
      region: config['s3.region'] ?? config['client.region'],
      accessKeyId,
      secretAccessKey,
      sessionToken: config['s3.session-token'],
      pathStyle: config['s3.path-style-access'] !== 'false',
    });
  }

  #fail(error: unknown, what: string): never {
    const e = error as { name?: string; Code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const code = e.Code ?? e.name ?? 'Error';
    if (CREDENTIAL_CODES.has(code)) {
      throw catalogError(`storage credential for ${this.#table} was refused (${code}): ${e.message ?? ''}`.trim());
    }
    if (code === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) {
      throw new ObjectNotFound(`${what}: object not found in storage`);
    }
    throw catalogError(`${what}: ${code}: ${e.message ?? String(error)}`);
  }

  #traced<T>(method: string, bucket: string, fn: () => Promise<T>): Promise<T> {
    return processSpan(`object_store ${method}`, { kind: SpanKind.CLIENT, attributes: { 'aws.s3.bucket': bucket } }, fn);
  }

  async getBytes(uri: string): Promise<Uint8Array> {
    const { bucket, key } = locate(uri);
    try {
      return await this.#traced('GET', bucket, async () => {
        const res = await this.#client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return res.Body!.transformToByteArray();
      });
    } catch (error) {
      this.#fail(error, `reading ${uri}`);
    }
  }

  /** Streams an object to `path` (via a temporary name, so a half-written file is never seen). */
  async download(uri: string, path: string): Promise<void> {
    const { bucket, key } = locate(uri);
    const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.partial`;
    try {
      await this.#traced('GET', bucket, async () => {
        const res = await this.#client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        await pipeline(res.Body as Readable, createWriteStream(partial));
      });
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      this.#fail(error, `fetching ${uri}`);
    }
  }

  async put(uri: string, body: Uint8Array): Promise<void> {
    const { bucket, key } = locate(uri);
    try {
      await this.#traced('PUT', bucket, () => this.#client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.byteLength })));
    } catch (error) {
      this.#fail(error, `writing ${uri}`);
    }
  }

  async putFile(uri: string, path: string): Promise<void> {
    await this.put(uri, await readFile(path));
  }

  /** Every object whose key starts with `prefixUri`'s key (a vended key may list only under its table's prefix). */
  async list(prefixUri: string): Promise<ListedObject[]> {
    const { bucket, key } = locate(prefixUri);
    const out: ListedObject[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.#traced('LIST', bucket, () =>
          this.#client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ContinuationToken: token })),
        );
        for (const o of page.Contents ?? []) {
          if (o.Key === undefined) continue;
          out.push({ uri: `s3://${bucket}/${o.Key}`, size: Number(o.Size ?? 0), lastModifiedMs: o.LastModified ? o.LastModified.getTime() : Number.POSITIVE_INFINITY });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (error) {
      this.#fail(error, `listing ${prefixUri}`);
    }
    return out;
  }

  /** Deletes one object (one request per object: a vended key may not use the bucket-level DeleteObjects). */
  async delete(uri: string): Promise<void> {
    const { bucket, key } = locate(uri);
    try {
      await this.#traced('DELETE', bucket, () => this.#client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return;
      this.#fail(error, `deleting ${uri}`);
    }
  }

  close(): void {
    this.#client.destroy();
  }
}
