// The bundled S3-compatible object store (@20minutes/s3rver behind a thin HTTP wrapper) and the S3 client
// settings every Eider component needs to talk to it (or to any S3-compatible server).
//
// What the wrapper adds to s3rver, without forking it:
//  - anonymous requests are refused (s3rver serves them);
//  - secrets are resolved per server: the root key, plus *vended* keys derived from a signing secret
//    (access key id = `EIDV` + base64url(claims), secret = HMAC-SHA256(signingSecret, access key id)), refused
//    after expiry, after revocation, or outside the bucket/prefix they were issued for;
//  - STS: the AssumeRole Query API, signed with the root key, answers temporary credentials limited by an inline
//    session policy, which is enforced on every request made with them (runtime/objectStoreSts.ts), as MinIO does;
//  - ListObjectsV2 paging uses a plain continuation token: s3rver's DES token needs `--openssl-legacy-provider`
//    on Node 24 (ERR_OSSL_EVP_UNSUPPORTED), so its getBucket is replaced for list-type=2 only;
//  - fewer file operations per request (patchStoreIo).
// s3rver keeps accounts in a process-global registry; it is replaced by one that asks the server handling the
// current request (AsyncLocalStorage), so several stores can run in one process with different keys.
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { mkdir, open, readFile, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AddressInfo } from 'node:net';
import { checkStsRequest, copySourceOf, isStsKeyId, isStsRequest, serveSts, type AssumeRoleRequest } from './objectStoreSts.ts';

const require = createRequire(import.meta.url);

// ---------------------------------------------------------------------------------------------------------------
// Vended keys

const VENDED_KEY_PREFIX = 'EIDV';

/**
 * The warehouse name of the api's probe keys: a backend's registration checks that its store verifies derived keys
 * with one (no warehouse exists yet to ask about revocation). Deriving any key takes the store's secret, so a probe
 * key grants nothing its maker could not do with that secret directly; it lives a minute.
 */
export const PROBE_WAREHOUSE = '';

/** What a vended key grants: one bucket, one key prefix, until `expiresAt` (epoch seconds). */
export interface VendedClaims {
  /** Warehouse name, so a revocation check can look up its epoch. */
  warehouse: string;
  bucket: string;
  /** Key prefix inside the bucket, ending with `/` (or '' for the whole bucket). */
  prefix: string;
  expiresAt: number;
  /** Warehouse credential epoch at issue time; bumping the epoch revokes every key issued before. */
  epoch: number;
  nonce: string;
}

export interface VendedKey {
  accessKeyId: string;
  secretAccessKey: string;
  claims: VendedClaims;
}

export function deriveVendedKey(signingSecret: string, claims: Omit<VendedClaims, 'nonce'> & { nonce?: string }): VendedKey {
  const full: VendedClaims = { ...claims, nonce: claims.nonce ?? randomBytes(9).toString('base64url') };
  const body = Buffer.from(
    JSON.stringify([full.warehouse, full.bucket, full.prefix, full.expiresAt, full.epoch, full.nonce]),
  ).toString('base64url');
  const accessKeyId = `${VENDED_KEY_PREFIX}${body}`;
  return { accessKeyId, secretAccessKey: vendedSecret(signingSecret, accessKeyId), claims: full };
}

function vendedSecret(signingSecret: string, accessKeyId: string): string {
  return createHmac('sha256', signingSecret).update(accessKeyId).digest('base64url');
}

/** The claims inside a vended access key id, or undefined when it is not one. */
export function parseVendedKeyId(accessKeyId: string): VendedClaims | undefined {
  if (!accessKeyId.startsWith(VENDED_KEY_PREFIX)) return undefined;
  try {
    const arr = JSON.parse(Buffer.from(accessKeyId.slice(VENDED_KEY_PREFIX.length), 'base64url').toString('utf8'));
    if (!Array.isArray(arr) || arr.length !== 6) return undefined;
    const [warehouse, bucket, prefix, expiresAt, epoch, nonce] = arr;
    if (typeof warehouse !== 'string' || typeof bucket !== 'string' || typeof prefix !== 'string') return undefined;
    if (typeof expiresAt !== 'number' || typeof epoch !== 'number' || typeof nonce !== 'string') return undefined;
    return { warehouse, bucket, prefix, expiresAt, epoch, nonce };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The server

export interface ObjectStoreOptions {
  /** Directory holding the objects. */
  dir: string;
  /** 9000 by default; 0 picks a free port. */
  port?: number;
  host?: string;
  /** Bucket created at start when missing. */
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** Secret that vended keys are derived from; defaults to `secretKey`. */
  signingSecret?: string;
  /**
   * Asked for every request made with a vended key that is otherwise valid; true refuses it.
   * The catalog provides one backed by its metastore (revoked keys, warehouse epochs).
   */
  /** Rejects when it cannot tell (the metastore unreachable): the request is refused with 503, not as revoked. */
  isRevoked?: (claims: VendedClaims, accessKeyId: string) => Promise<boolean>;
  /**
   * Whether keys derived from the signing secret open the store (default true). false makes the store behave as a
   * foreign S3-compatible store (MinIO-like: root key and STS only), which is what tests of `sts` vending need.
   */
  derivedKeys?: boolean;
  /** Whether the STS AssumeRole API and its temporary credentials are served (default true). */
  sts?: boolean;
  /** AssumeRole without a RoleArn is refused, as AWS STS does (default false: MinIO's way, none needed). */
  stsRequireRoleArn?: boolean;
  /** Told of every AssumeRole answered with credentials (its RoleArn, session name, duration, policy; no secret). */
  onAssumeRole?: (r: AssumeRoleRequest) => void;
}

export interface ObjectStore {
  endpoint: string;
  port: number;
  close(): Promise<void>;
}

interface RequestKeys {
  resolve(accessKeyId: string): string | undefined;
  /** A revocable key's check, asked again once a put's body is written (see patchDirectoryRaces). */
  revokedSince?: () => Promise<boolean>;
}

const keyContext = new AsyncLocalStorage<RequestKeys>();
let patched = false;

// The parts of s3rver's internals this module patches (s3rver ships no types).
interface S3rverStore {
  getBucketPath(bucket: string): string;
  getResourcePath(bucket: string, key: string | undefined, file: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5?: string): Promise<void>;
  deleteObject(bucket: string, key: string): Promise<void>;
  listObjects(bucket: string, options: { delimiter?: string; prefix?: string; maxKeys: number; startAfter?: string }): Promise<ListResult>;
  __eiderAbsent?: Set<string>;
}
type StoreMethod<A extends unknown[]> = (this: S3rverStore, ...args: A) => Promise<unknown>;
interface S3rverStorePrototype {
  getSubresource: StoreMethod<[bucket: string, key: string | undefined, type: string]>;
  putSubresource: StoreMethod<[bucket: string, key: string | undefined, resource: { type: string }]>;
  deleteSubresource: StoreMethod<[bucket: string, key: string | undefined, type: string]>;
  deleteBucket: StoreMethod<[bucket: string]>;
  putMetadata: StoreMethod<[bucket: string, key: string, metadata: Record<string, unknown>, md5?: string]>;
  putObject: StoreMethod<[object: { bucket: string; key: string; content: Buffer | Readable; metadata: Record<string, unknown> }]>;
  deleteObject: StoreMethod<[bucket: string, key: string]>;
}
interface ListResult {
  objects: Array<{ key: string; lastModifiedDate: Date; metadata: { etag: string }; size: number }>;
  commonPrefixes: string[];
  isTruncated: boolean;
}
/** s3rver's (Koa) request context, as its bucket controller's getBucket receives it. */
interface BucketContext {
  query: Record<string, string | undefined>;
  params: { bucket: string };
  store: S3rverStore;
  body: unknown;
}

/** Installs the per-server key registry and the ListObjectsV2 handler into s3rver (once per process). */
function patchS3rver(): void {
  if (patched) return;
  patched = true;
  const AWSAccount = require('@20minutes/s3rver/lib/models/account.js');
  const account = (id: string) => {
    const secret = keyContext.getStore()?.resolve(id);
    if (secret === undefined) return undefined;
    return { id: 123456789000, displayName: 'eider', accessKeys: { get: () => secret } };
  };
  // The built-in dummy key S3RVER/S3RVER must not open the store.
  AWSAccount.registry = { get: account, set: () => undefined, delete: () => undefined };
  const bucketCtrl = require('@20minutes/s3rver/lib/controllers/bucket.js');
  const original = bucketCtrl.getBucket;
  bucketCtrl.getBucket = (ctx: BucketContext) => (ctx.query['list-type'] === '2' ? listObjectsV2(ctx) : original(ctx));
  const FilesystemStore = require('@20minutes/s3rver/lib/stores/filesystem.js');
  patchStoreIo(FilesystemStore);
  patchDirectoryRaces(FilesystemStore);
}

const errCode = (e: unknown) => (e as NodeJS.ErrnoException).code;

/**
 * s3rver removes a key's directory once a delete leaves it empty with a *recursive* rm, after reading it empty: a
 * put into that directory in between (its file created after the read) was acknowledged and then removed with the
 * directory (measured: 21 of 400 puts racing a delete of the directory's last object were lost). Here a directory
 * goes only while it is empty (rmdir refuses otherwise), and a put whose directory a delete removed between its
 * mkdir and its open makes the directory again; the object's file is complete before the put is answered.
 * A put with a revocable (vended) key is checked when it begins; a revocation and the removal of what the key could
 * reach (a SQL session's staging area at its end) could both happen while its body was still arriving, and its
 * object would then land after the removal. So the key is checked again once the body is written, and a put whose
 * key was revoked meanwhile is removed and refused (403).
 */
function patchDirectoryRaces(FilesystemStore: { prototype: S3rverStorePrototype }): void {
  const proto = FilesystemStore.prototype;
  proto.deleteObject = async function (this: S3rverStore, bucket: string, key: string) {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((file) =>
        unlink(this.getResourcePath(bucket, key, file)).catch((e: unknown) => {
          if (errCode(e) !== 'ENOENT') throw e;
        }),
      ),
    );
    const bucketPath = this.getBucketPath(bucket);
    for (let dir = dirname(this.getResourcePath(bucket, key, 'object')); dir.startsWith(`${bucketPath}/`); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch (e) {
        if (errCode(e) === 'ENOTEMPTY' || errCode(e) === 'EEXIST' || errCode(e) === 'ENOENT') return;
        throw e;
      }
    }
  };
  proto.putObject = async function (this: S3rverStore, object) {
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
    const file = await openCreatingDirectory(objectPath);
    const md5 = createHash('md5');
    let size = 0;
    await pipeline(
      Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content,
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          md5.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      }),
      file.createWriteStream(),
    );
    const revokedSince = keyContext.getStore()?.revokedSince;
    if (revokedSince && (await revokedSince())) {
      await this.deleteObject(object.bucket, object.key);
      const S3Error = require('@20minutes/s3rver/lib/models/error.js');
      throw new S3Error('InvalidAccessKeyId', 'The vended credential was revoked while this object was uploaded; it was not kept.');
    }
    const etag = md5.digest('hex');
    await this.putMetadata(object.bucket, object.key, object.metadata, etag);
    return { size, md5: etag };
  };
}

/** Opens `path` for writing, making its directory: again when a delete removed a part of it meanwhile (rmdir). */
async function openCreatingDirectory(path: string): Promise<FileHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o755 });
      return await open(path, 'w');
    } catch (e) {
      if (errCode(e) !== 'ENOENT' || attempt >= 10) throw e;
    }
  }
}

/**
 * s3rver's filesystem store reads a bucket's CORS and website configuration from disk on every request (two failed
 * opens, as Eider sets neither) and writes an object's md5 and metadata files one after the other: ~15 sequential
 * file operations made a metadata file's PUT cost 2-4 ms. The store process is the only writer of its directory,
 * so an absent configuration is remembered until that store puts or deletes one (or the bucket), and the two small
 * files of a PUT are written together.
 */
function patchStoreIo(FilesystemStore: { prototype: S3rverStorePrototype }): void {
  const proto = FilesystemStore.prototype;
  const absent = (store: S3rverStore): Set<string> => (store.__eiderAbsent ??= new Set<string>());
  const { getSubresource, putSubresource, deleteSubresource, deleteBucket } = proto;
  proto.getSubresource = async function (this: S3rverStore, bucket: string, key: string | undefined, type: string) {
    const path = this.getResourcePath(bucket, key, `${type}.xml`);
    if (absent(this).has(path)) return null;
    const found = await getSubresource.call(this, bucket, key, type);
    if (found === null) absent(this).add(path);
    return found;
  };
  proto.putSubresource = async function (this: S3rverStore, bucket: string, key: string | undefined, resource: { type: string }) {
    absent(this).delete(this.getResourcePath(bucket, key, `${resource.type}.xml`));
    return putSubresource.call(this, bucket, key, resource);
  };
  proto.deleteSubresource = async function (this: S3rverStore, bucket: string, key: string | undefined, type: string) {
    absent(this).delete(this.getResourcePath(bucket, key, `${type}.xml`));
    return deleteSubresource.call(this, bucket, key, type);
  };
  proto.deleteBucket = async function (this: S3rverStore, bucket: string) {
    absent(this).clear();
    return deleteBucket.call(this, bucket);
  };
  const { writeFile } = require('node:fs/promises');
  const S3Object = require('@20minutes/s3rver/lib/models/object.js');
  // As s3rver's putMetadata (the same files and content), both files at once.
  proto.putMetadata = async function (this: S3rverStore, bucket: string, key: string, metadata: Record<string, unknown>, md5?: string) {
    const json: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(metadata ?? {})) if (S3Object.ALLOWED_METADATA.includes(k) || k.startsWith('x-amz-meta-')) json[k] = v;
    await Promise.all([
      md5 ? writeFile(this.getResourcePath(bucket, key, 'object.md5'), md5) : undefined,
      writeFile(this.getResourcePath(bucket, key, 'metadata.json'), JSON.stringify(json, null, 2)),
    ]);
  };
}

const TOKEN_PREFIX = 'eid1:';

async function listObjectsV2(ctx: BucketContext): Promise<void> {
  const S3Error = require('@20minutes/s3rver/lib/models/error.js');
  const q = ctx.query;
  let maxKeys = 1000;
  if (q['max-keys'] !== undefined) {
    const n = Number(q['max-keys']);
    if (!/^\d+$/.test(String(q['max-keys'])) || n > 2147483647) {
      throw new S3Error('InvalidArgument', 'Provided max-keys not an integer or within integer range', {
        ArgumentName: 'max-keys',
        ArgumentValue: q['max-keys'],
      });
    }
    maxKeys = Math.min(1000, n);
  }
  let startAfter: string | undefined = q['start-after'] || undefined;
  if (q['continuation-token']) {
    const decoded = Buffer.from(String(q['continuation-token']), 'base64url').toString('utf8');
    if (!decoded.startsWith(TOKEN_PREFIX)) {
      throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect', {
        ArgumentName: 'continuation-token',
      });
    }
    startAfter = decoded.slice(TOKEN_PREFIX.length);
  }
  const options = { delimiter: q.delimiter || undefined, prefix: q.prefix || undefined, maxKeys, startAfter };
  const result: ListResult =
    maxKeys === 0
      ? { objects: [], commonPrefixes: [], isTruncated: false }
      : await ctx.store.listObjects(ctx.params.bucket, options);
  const lastKey = result.objects.length ? result.objects[result.objects.length - 1].key : '';
  const lastPrefix = result.commonPrefixes.length ? result.commonPrefixes[result.commonPrefixes.length - 1] : '';
  // After a common prefix, skip everything beneath it.
  const resumeAfter = lastPrefix > lastKey ? `${lastPrefix}\u{10FFFF}` : lastKey;
  ctx.body = {
    ListBucketResult: {
      '@': { xmlns: 'http://doc.s3.amazonaws.com/2006-03-01/' },
      Name: ctx.params.bucket,
      Prefix: options.prefix || '',
      StartAfter: q['continuation-token'] ? undefined : q['start-after'] || undefined,
      ContinuationToken: q['continuation-token'] || undefined,
      NextContinuationToken: result.isTruncated
        ? Buffer.from(`${TOKEN_PREFIX}${resumeAfter}`).toString('base64url')
        : undefined,
      KeyCount: result.objects.length + result.commonPrefixes.length,
      MaxKeys: q['max-keys'] || 1000,
      Delimiter: options.delimiter || undefined,
      IsTruncated: result.isTruncated || false,
      Contents: result.objects.map((o) => ({
        Key: o.key,
        LastModified: o.lastModifiedDate.toISOString(),
        ETag: o.metadata.etag,
        Size: o.size,
        StorageClass: 'STANDARD',
      })),
      CommonPrefixes: result.commonPrefixes.map((p: string) => ({ Prefix: p })),
    },
  };
}

function s3ErrorXml(code: string, message: string): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${esc(message)}</Message></Error>`;
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  const body = s3ErrorXml(code, message);
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The access key id a request is signed with (SigV4 header or query, SigV2 header or query). */
function requestAccessKeyId(req: IncomingMessage, url: URL): string | undefined {
  const auth = req.headers.authorization;
  if (auth) {
    const v4 = /Credential=([^/,\s]+)\//.exec(auth);
    if (v4) return v4[1];
    const v2 = /^AWS ([^:]+):/.exec(auth);
    if (v2) return v2[1];
    return undefined;
  }
  const cred = url.searchParams.get('X-Amz-Credential');
  if (cred) return cred.split('/')[0];
  return url.searchParams.get('AWSAccessKeyId') ?? undefined;
}

/**
 * The bucket and key a request names, decoded from its raw path as s3rver routes it (koa-router decodes each
 * parameter, so `%2F` is a slash there), or undefined when a segment cannot be decoded.
 */
function requestTarget(req: IncomingMessage): { bucket: string; key: string } | undefined {
  const path = (req.url ?? '/').split('?')[0];
  try {
    const segments = path.split('/').map(decodeURIComponent);
    return { bucket: segments[1] ?? '', key: segments.slice(2).join('/') };
  } catch {
    return undefined;
  }
}

/**
 * The store keeps objects as files named after their keys, so a key (or copy source) with a `.` or `..` segment
 * would name a file elsewhere than its key says (outside a credential's prefix, or outside the store): refused for
 * every caller, as are NUL and the names of s3rver's own files.
 */
const unsafeKey = (key: string) => key.split('/').some((s) => s === '.' || s === '..') || key.includes('\u0000') || key.includes('._S3rver_');

const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/**
 * The headers a SigV4 request signed (Authorization header or presigned query), lower-case; undefined for SigV2,
 * whose string to sign covers every x-amz-* header of the request anyway.
 */
function signedHeaderNames(req: IncomingMessage, url: URL): Set<string> | undefined {
  const auth = req.headers.authorization;
  let list: string;
  if (auth) {
    if (!auth.startsWith('AWS4-')) return undefined;
    list = /SignedHeaders=([^,\s]+)/.exec(auth)?.[1] ?? '';
  } else if (url.searchParams.has('X-Amz-Credential')) {
    list = url.searchParams.get('X-Amz-SignedHeaders') ?? '';
  } else {
    return undefined;
  }
  return new Set(list.toLowerCase().split(';'));
}

const S3RVER_UPLOAD_ID = /^[0-9a-f]{32}$/;

/**
 * Why the store refuses a request whoever signed it, or undefined. Every `x-amz-*` header must be signed (as AWS
 * requires): a presigned URL signs only what its maker chose, and an added `x-amz-copy-source` would turn a PUT URL
 * into a copy of anything its signer may read, `x-amz-metadata-directive` or `x-amz-meta-*` would change what is
 * stored. Keys with relative segments, malformed multipart ids (s3rver makes file paths of them) are refused too.
 */
function requestProblem(req: IncomingMessage, url: URL): { status: number; code: string; message: string } | undefined {
  const target = requestTarget(req);
  if (!target) return { status: 400, code: 'InvalidURI', message: 'Could not parse the specified URI.' };
  if (unsafeKey(target.bucket) || unsafeKey(target.key)) {
    return { status: 400, code: 'InvalidArgument', message: 'An object key may not have "." or ".." segments, NUL, or s3rver\'s file suffix.' };
  }
  const signed = signedHeaderNames(req, url);
  if (signed) {
    const unsigned = Object.keys(req.headers).filter((h) => h.startsWith('x-amz-') && !signed.has(h));
    if (unsigned.length) {
      return { status: 403, code: 'AccessDenied', message: `There were headers present in the request which were not signed: ${unsigned.sort().join(', ')}` };
    }
  }
  const source = header(req, 'x-amz-copy-source');
  if (source !== undefined && unsafeKey(copySourceOf(source).key)) {
    return { status: 400, code: 'InvalidArgument', message: 'A copy source key may not have "." or ".." segments.' };
  }
  const uploadId = url.searchParams.get('uploadId');
  if (uploadId !== null && !S3RVER_UPLOAD_ID.test(uploadId)) return { status: 404, code: 'NoSuchUpload', message: 'The specified upload does not exist.' };
  const part = url.searchParams.get('partNumber');
  if (part !== null && !(/^[1-9]\d{0,4}$/.test(part) && Number(part) <= 10_000)) {
    return { status: 400, code: 'InvalidArgument', message: 'Part number must be an integer between 1 and 10000, inclusive.' };
  }
  return undefined;
}

/** Why a vended key may not make this request (path-style URL), or undefined when it may. */
function outsideScope(claims: VendedClaims, req: IncomingMessage, url: URL): string | undefined {
  const method = req.method ?? 'GET';
  const { bucket, key } = requestTarget(req)!;
  if (bucket !== claims.bucket) return 'bucket';
  if (key === '') {
    // Bucket-level: listing under the prefix, or a HEAD of the bucket. DeleteObjects (keys in the body) and
    // ListMultipartUploads (every prefix's uploads) are refused.
    if (method === 'HEAD') return undefined;
    if (method === 'GET' && url.searchParams.get('list-type') === '2') {
      const prefix = url.searchParams.get('prefix') ?? '';
      return prefix.startsWith(claims.prefix) ? undefined : 'prefix';
    }
    return 'bucket operation';
  }
  if (!key.startsWith(claims.prefix)) return 'key';
  // CopyObject and UploadPartCopy read their source: it must lie in the scope as well.
  const source = header(req, 'x-amz-copy-source');
  if (source !== undefined) {
    const from = copySourceOf(source);
    if (from.bucket !== claims.bucket || !from.key.startsWith(claims.prefix)) return 'copy source';
  }
  return undefined;
}

/**
 * Binds a multipart upload to the key it was created for: s3rver keeps the key with the upload id and writes the
 * completed object there whatever key the completing request names, and takes parts for any id. A request naming an
 * upload of another key (whose scope the credential may not cover) is NoSuchUpload, as on AWS.
 */
async function uploadOfAnotherKey(dir: string, req: IncomingMessage, url: URL): Promise<boolean> {
  const uploadId = url.searchParams.get('uploadId');
  if (uploadId === null) return false;
  const { bucket, key } = requestTarget(req)!;
  try {
    return (await readFile(join(dir, bucket, '._S3rver_uploads', uploadId, 'key'), 'utf8')) !== key;
  } catch {
    return true;
  }
}

/**
 * What a browser may do with an object it is sent: nothing but save it. Objects are user data (staging files,
 * anything a vended key wrote); served `inline` from the store's origin, an HTML or SVG file would run as a page
 * of that site. Every answer gets nosniff and a sandboxing CSP, every object an attachment disposition (a signed
 * `response-content-disposition` may name the file, not make it inline).
 */
function neverRendered(req: IncomingMessage, res: ServerResponse): void {
  const object = (req.method === 'GET' || req.method === 'HEAD') && (requestTarget(req)?.key ?? '') !== '';
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    const extra = args.find((a, i) => i > 0 && a && typeof a === 'object' && !Array.isArray(a)) as Record<string, unknown> | undefined;
    if (extra) for (const k of Object.keys(extra)) if (k.toLowerCase() === 'content-disposition') delete extra[k];
    this.setHeader('x-content-type-options', 'nosniff');
    this.setHeader('content-security-policy', "default-src 'none'; sandbox");
    if (object) {
      const given = String(this.getHeader('content-disposition') ?? '');
      if (!/^attachment\b/i.test(given)) this.setHeader('content-disposition', 'attachment');
    }
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof res.writeHead;
}

export async function startObjectStore(opts: ObjectStoreOptions): Promise<ObjectStore> {
  patchS3rver();
  const S3rver = require('@20minutes/s3rver');
  mkdirSync(opts.dir, { recursive: true });
  const s3rver = new S3rver({
    directory: opts.dir,
    silent: true,
    vhostBuckets: false,
    configureBuckets: [{ name: opts.bucket, configs: [] }],
  });
  await s3rver.configureBuckets();
  const handler = s3rver.callback() as (req: IncomingMessage, res: ServerResponse) => void;
  const signingSecret = opts.signingSecret ?? opts.secretKey;
  const rootKey = Buffer.from(opts.accessKey);

  const server: Server = createServer((req, res) => {
    void serve(req, res).catch(() => {
      if (!res.headersSent) refuse(res, 500, 'InternalError', 'We encountered an internal error. Please try again.');
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://store.invalid');
    neverRendered(req, res);
    if (req.method === 'OPTIONS') return keyContext.run({ resolve: () => undefined }, () => handler(req, res));
    const sts = opts.sts !== false;
    if (sts && isStsRequest(req, url)) return serveSts(req, res, url, { rootAccessKey: opts.accessKey, rootSecret: opts.secretKey, signingSecret, requireRoleArn: opts.stsRequireRoleArn, onAssumeRole: opts.onAssumeRole });
    const accessKeyId = requestAccessKeyId(req, url);
    if (!accessKeyId) return refuse(res, 403, 'AccessDenied', 'Anonymous access is not allowed: sign the request.');
    const problem = requestProblem(req, url);
    if (problem) return refuse(res, problem.status, problem.code, problem.message);
    if (await uploadOfAnotherKey(opts.dir, req, url)) return refuse(res, 404, 'NoSuchUpload', 'The specified upload does not exist (or was created for another key).');
    const given = Buffer.from(accessKeyId);
    if (given.length === rootKey.length && timingSafeEqual(given, rootKey)) {
      return keyContext.run({ resolve: (id) => (id === opts.accessKey ? opts.secretKey : undefined) }, () =>
        handler(req, res),
      );
    }
    if (sts && isStsKeyId(accessKeyId)) {
      const check = checkStsRequest(signingSecret, accessKeyId, req, url);
      if (!check.ok) return refuse(res, check.status, check.code, check.message);
      return keyContext.run({ resolve: (id) => (id === accessKeyId ? check.secret : undefined) }, () => handler(req, res));
    }
    const claims = opts.derivedKeys === false ? undefined : parseVendedKeyId(accessKeyId);
    if (!claims) {
      return refuse(res, 403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
    }
    if (claims.expiresAt * 1000 <= Date.now()) {
      return refuse(res, 400, 'ExpiredToken', `The vended credential expired at ${new Date(claims.expiresAt * 1000).toISOString()}; load the table again for fresh credentials.`);
    }
    const scope = outsideScope(claims, req, url);
    if (scope) {
      return refuse(res, 403, 'AccessDenied', `The vended credential does not cover this ${scope}: it is limited to s3://${claims.bucket}/${claims.prefix}`);
    }
    if (claims.warehouse === PROBE_WAREHOUSE && claims.expiresAt * 1000 > Date.now() + 120_000) {
      return refuse(res, 403, 'AccessDenied', 'A probe credential lives at most two minutes.');
    }
    if (opts.isRevoked && claims.warehouse !== PROBE_WAREHOUSE) {
      let revoked: boolean;
      try {
        revoked = await opts.isRevoked(claims, accessKeyId);
      } catch {
        // Fails closed, but says why: a metastore that cannot answer (a database outage) is not a revocation, and a
        // 503 is retried by S3 clients where a revoked key is not.
        return refuse(res, 503, 'ServiceUnavailable', 'The vended credential could not be checked: the metastore is unreachable; try again shortly.');
      }
      if (revoked) return refuse(res, 403, 'InvalidAccessKeyId', 'The vended credential has been revoked; load the table again for fresh credentials.');
    }
    const secret = vendedSecret(signingSecret, accessKeyId);
    const isRevoked = opts.isRevoked;
    // Asked again after a put's body: a metastore that cannot answer then keeps the put (the key was valid when it began).
    const revokedSince = isRevoked && claims.warehouse !== PROBE_WAREHOUSE ? () => isRevoked(claims, accessKeyId).catch(() => false) : undefined;
    return keyContext.run({ resolve: (id) => (id === accessKeyId ? secret : undefined), ...(revokedSince ? { revokedSince } : {}) }, () => handler(req, res));
  }

  const port = opts.port ?? 9000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://${host}:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The client
