import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  DeleteObjectCommand,
  PutBucketCorsCommand,
  DeleteBucketCorsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { startObjectStore, deriveVendedKey, parseVendedKeyId, type ObjectStore } from '../runtime/objectStore.ts';
import { makeS3Client } from '../iceberg/s3Client.ts';

const ROOT = { accessKey: 'root-key', secretKey: 'root-secret-0123456789' };
let dir: string;
let store: ObjectStore;
let root: S3Client;
const revoked = new Set<string>();
/** Keys whose revocation check cannot be answered (the metastore down). */
const unanswerable = new Set<string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eider-store-'));
  store = await startObjectStore({
    dir,
    port: 0,
    bucket: 'warehouse',
    ...ROOT,
    isRevoked: async (_claims, id) => {
      if (unanswerable.has(id)) throw new Error('connect ECONNREFUSED');
      return revoked.has(id);
    },
  });
  root = makeS3Client({ endpoint: store.endpoint, accessKeyId: ROOT.accessKey, secretAccessKey: ROOT.secretKey });
});

afterAll(async () => {
  root?.destroy();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const body = async (c: S3Client, key: string) =>
  (await c.send(new GetObjectCommand({ Bucket: 'warehouse', Key: key }))).Body!.transformToString();

describe('bundled object store', () => {
  it('stores and returns objects for the root key', async () => {
    await root.send(new PutObjectCommand({ Bucket: 'warehouse', Key: 'a/b.txt', Body: 'hello' }));
    expect(await body(root, 'a/b.txt')).toBe('hello');
    await root.send(new HeadBucketCommand({ Bucket: 'warehouse' }));
  });

  it('keeps content type, user metadata and ETag through a PUT (its md5 and metadata files are written together)', async () => {
    const put = await root.send(
      new PutObjectCommand({ Bucket: 'warehouse', Key: 'meta/x.json', Body: '{"a":1}', ContentType: 'application/json', Metadata: { origin: 'eider' } }),
    );
    const head = await root.send(new HeadObjectCommand({ Bucket: 'warehouse', Key: 'meta/x.json' }));
    expect(head.ContentType).toBe('application/json');
    expect(head.Metadata).toEqual({ origin: 'eider' });
    expect(head.ETag).toBe(put.ETag);
    expect(head.ETag).toBe('"' + createHash('md5').update('{"a":1}').digest('hex') + '"');
  });

  it('applies a bucket CORS configuration put after requests that found none, and stops after it is deleted', async () => {
    const preflight = () =>
      fetch(`${store.endpoint}/warehouse/a/b.txt`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
    // Requests that find no configuration (the store then remembers it is absent).
    await root.send(new PutObjectCommand({ Bucket: 'warehouse', Key: 'a/b.txt', Body: 'hello' }));
    expect((await preflight()).status).toBe(403);
    await root.send(
      new PutBucketCorsCommand({ Bucket: 'warehouse', CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://app.example'], AllowedMethods: ['GET'] }] } }),
    );
    const allowed = await preflight();
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).not.toBeNull();
    await root.send(new DeleteBucketCorsCommand({ Bucket: 'warehouse' }));
    expect((await preflight()).status).toBe(403);
  });

  it('refuses a wrong secret, an unknown key, the s3rver dummy key and anonymous requests', async () => {
    const wrong = makeS3Client({ endpoint: store.endpoint, accessKeyId: ROOT.accessKey, secretAccessKey: 'nope' });
    await expect(body(wrong, 'a/b.txt')).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
    const dummy = makeS3Client({ endpoint: store.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
    await expect(body(dummy, 'a/b.txt')).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    const anon = await fetch(`${store.endpoint}/warehouse/a/b.txt`);
    expect(anon.status).toBe(403);
    expect(await anon.text()).toContain('AccessDenied');
  });

  it('pages ListObjectsV2 with continuation tokens (no legacy OpenSSL)', async () => {
    for (let i = 0; i < 5; i++) {
      await root.send(new PutObjectCommand({ Bucket: 'warehouse', Key: `list/k${i}`, Body: String(i) }));
    }
    const keys: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await root.send(
        new ListObjectsV2Command({ Bucket: 'warehouse', Prefix: 'list/', MaxKeys: 2, ContinuationToken: token }),
      );
      keys.push(...(page.Contents ?? []).map((o) => o.Key!));
      token = page.NextContinuationToken;
      pages++;
    } while (token);
    expect(keys).toEqual(['list/k0', 'list/k1', 'list/k2', 'list/k3', 'list/k4']);
    expect(pages).toBe(3);
  });

  it('serves presigned PUT and GET URLs', async () => {
    const put = await getSignedUrl(root, new PutObjectCommand({ Bucket: 'warehouse', Key: 'pre/x.bin' }), { expiresIn: 60 });
    const r1 = await fetch(put, { method: 'PUT', body: 'presigned-body' });
    expect(r1.status).toBe(200);
    const get = await getSignedUrl(root, new GetObjectCommand({ Bucket: 'warehouse', Key: 'pre/x.bin' }), { expiresIn: 60 });
    const r2 = await fetch(get);
    expect(r2.status).toBe(200);
    expect(await r2.text()).toBe('presigned-body');
    const ranged = await fetch(get, { headers: { range: 'bytes=0-8' } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe('presigned');
    const tampered = get.replace('pre%2Fx.bin', 'pre/x.bin').replace('pre/x.bin', 'pre/y.bin');
    expect((await fetch(tampered)).status).toBe(403);
  });

  it('accepts vended keys inside their prefix only, until expiry or revocation', async () => {
    const now = Math.floor(Date.now() / 1000);
    const key = deriveVendedKey(ROOT.secretKey, { warehouse: 'w', bucket: 'warehouse', prefix: 'ns/t1/', expiresAt: now + 60, epoch: 0 });
    expect(parseVendedKeyId(key.accessKeyId)).toEqual(key.claims);
    const vended = makeS3Client({ endpoint: store.endpoint, accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey });
    await vended.send(new PutObjectCommand({ Bucket: 'warehouse', Key: 'ns/t1/data/f.parquet', Body: 'x' }));
    expect(await body(vended, 'ns/t1/data/f.parquet')).toBe('x');
    const listed = await vended.send(new ListObjectsV2Command({ Bucket: 'warehouse', Prefix: 'ns/t1/' }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual(['ns/t1/data/f.parquet']);
    await vended.send(new DeleteObjectCommand({ Bucket: 'warehouse', Key: 'ns/t1/data/f.parquet' }));

    await expect(body(vended, 'a/b.txt')).rejects.toMatchObject({ name: 'AccessDenied' });
    await expect(vended.send(new ListObjectsV2Command({ Bucket: 'warehouse' }))).rejects.toMatchObject({ name: 'AccessDenied' });

    // A forged secret for a valid-looking id is refused by the signature check.
    const forged = makeS3Client({ endpoint: store.endpoint, accessKeyId: key.accessKeyId, secretAccessKey: 'guess' });
    await expect(body(forged, 'ns/t1/x')).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });

    const expired = deriveVendedKey(ROOT.secretKey, { warehouse: 'w', bucket: 'warehouse', prefix: 'ns/t1/', expiresAt: now - 1, epoch: 0 });
    const old = makeS3Client({ endpoint: store.endpoint, accessKeyId: expired.accessKeyId, secretAccessKey: expired.secretAccessKey });
    await expect(body(old, 'ns/t1/x')).rejects.toMatchObject({ name: 'ExpiredToken' });

    // A revocation check that cannot be answered refuses the key as unavailable (retryable), never as revoked.
    unanswerable.add(key.accessKeyId);
    await expect(body(vended, 'ns/t1/x')).rejects.toMatchObject({ name: 'ServiceUnavailable', message: expect.stringContaining('could not be checked') });
    unanswerable.delete(key.accessKeyId);

    revoked.add(key.accessKeyId);
    await expect(body(vended, 'ns/t1/x')).rejects.toMatchObject({ name: 'InvalidAccessKeyId', message: expect.stringContaining('revoked') });
    vended.destroy();
    forged.destroy();
    old.destroy();
  });
});
