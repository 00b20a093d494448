// A running catalog service with a bundled object store behind it, wired as `eider up` wires them (the store asks
// the metastore about revoked credentials). Used by the catalog tests and bench/catalog.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../../runtime/db.ts';
import { startObjectStore, type ObjectStore } from '../../runtime/objectStore.ts';
import { makeS3Client } from '../../iceberg/s3Client.ts';
import type { S3Client } from '@aws-sdk/client-s3';
import { parseJson, stringifyJson, type Long } from '../../iceberg/json.ts';
import { startCatalogService, type CatalogService } from '../../catalog/server.ts';
import { revocationCheck } from '../../catalog/vending.ts';
import type { Tracing } from '../../telemetry/tracing.ts';

export interface CatalogStack {
  catalog: CatalogService;
  store: ObjectStore;
  /** Root-key client of the bundled store. */
  s3: S3Client;
  bucket: string;
  token: string;
  /** Authenticated request to the catalog; the body is sent and parsed 64-bit-safe. */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<CatalogResponse>;
  /** Creates a warehouse `name` rooted at s3://{bucket}/{name}/ on the bundled store, or on `opts.store`. */
  createWarehouse(name: string, opts?: { store?: ExtraStore }): Promise<void>;
  /** A root-key client for the store holding `bucket` (the bundled store's, or an extra store's). */
  clientFor(bucket: string): S3Client;
  /** Stops the catalog service (its port refuses, as after a crash) until the outage's `end` starts it again there. */
  stopCatalog(): Promise<Outage>;
  /** Stops the bundled object store the same way (its objects stay on disk for its return). */
  stopStore(): Promise<Outage>;
  close(): Promise<void>;
}

/** A part of the stack that is down: `end` starts it again on the same port, with the same data. */
export interface Outage {
  end(): Promise<void>;
}

/**
 * Another S3-compatible endpoint: a second object-store process of Eider's own on its own port, bucket and keys
 * (it verifies keys derived from its own secret, as the bundled one does, and knows no revocation list).
 */
export interface ExtraStore {
  store: ObjectStore;
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  s3: S3Client;
  close(): Promise<void>;
}

export async function startExtraStore(opts: { bucket: string; accessKey?: string; secretKey?: string }): Promise<ExtraStore> {
  const dir = mkdtempSync(join(tmpdir(), 'eider-store-'));
  const accessKey = opts.accessKey ?? `${opts.bucket}-root`;
  const secretKey = opts.secretKey ?? `${opts.bucket}-root-secret-for-tests`;
  const store = await startObjectStore({ dir, port: 0, bucket: opts.bucket, accessKey, secretKey });
  const s3 = makeS3Client({ endpoint: store.endpoint, accessKeyId: accessKey, secretAccessKey: secretKey });
  return {
    store,
    endpoint: store.endpoint,
    bucket: opts.bucket,
    accessKey,
    secretKey,
    s3,
    async close() {
      s3.destroy();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface CatalogResponse {
  status: number;
  headers: Headers;
  /** the parsed JSON answer, which the tests read by shape */
  body: any;
}

export const STACK_CLIENT = { id: 'root', secret: 'catalog-test-secret' };
const ROOT_KEY = { accessKey: 'eider-root', secretKey: 'eider-root-secret-for-tests' };

export const STACK_SECRET_KEY = 'catalog-stack-secret-key-for-tests';

/** `host`: where both listen (loopback unless a test's containers must reach them on a bridge of its own). */
export async function startCatalogStack(opts: { db: Db; credentialTtlSeconds?: number; tracing?: Tracing; host?: string }): Promise<CatalogStack> {
  const dir = mkdtempSync(join(tmpdir(), 'eider-catalog-'));
  const bucket = 'warehouse';
  const startStore = (port: number) => startObjectStore({ dir, port, host: opts.host, bucket, ...ROOT_KEY, isRevoked: revocationCheck(opts.db) });
  const startCatalog = (port: number, migrate = true) =>
    startCatalogService({
      db: opts.db,
      port,
      host: opts.host,
      clientId: STACK_CLIENT.id,
      clientSecret: STACK_CLIENT.secret,
      credentialTtlSeconds: opts.credentialTtlSeconds,
      tracing: opts.tracing,
      secretKey: STACK_SECRET_KEY,
      migrate,
    });
  // The parts running now (null while stopped): an outage's end replaces them.
  let store: ObjectStore | null = await startStore(0);
  let catalog: CatalogService | null = await startCatalog(0);
  const storePort = store.port;
  const catalogPort = catalog.port;
  const running = <T>(part: T | null, what: string): T => {
    if (!part) throw new Error(`the ${what} is stopped`);
    return part;
  };
  const tokenRes = await fetch(`${catalog.url}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: STACK_CLIENT.id, client_secret: STACK_CLIENT.secret, scope: 'catalog' }),
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const s3 = makeS3Client({ endpoint: store.endpoint, accessKeyId: ROOT_KEY.accessKey, secretAccessKey: ROOT_KEY.secretKey });
  const extra = new Map<string, S3Client>();

  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${running(catalog, 'catalog service').url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : stringifyJson(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? parseJson(text) : undefined };
  };

  return {
    get catalog() {
      return running(catalog, 'catalog service');
    },
    get store() {
      return running(store, 'object store');
    },
    s3,
    bucket,
    token,
    request,
    async createWarehouse(name, o = {}) {
      const on = o.store;
      if (on) extra.set(on.bucket, on.s3);
      const res = await request('POST', '/management/v1/warehouses', {
        name,
        root_uri: `s3://${on?.bucket ?? bucket}/${name}/`,
        endpoint: on?.endpoint ?? running(store, 'object store').endpoint,
        region: 'us-east-1',
        access_key_id: on?.accessKey ?? ROOT_KEY.accessKey,
        secret_access_key: on?.secretKey ?? ROOT_KEY.secretKey,
        path_style: true,
      });
      if (res.status !== 201) throw new Error(`warehouse ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    },
    clientFor(b) {
      return b === bucket ? s3 : (extra.get(b) ?? s3);
    },
    async stopCatalog() {
      await running(catalog, 'catalog service').close();
      catalog = null;
      return {
        end: async () => {
          catalog = await startCatalog(catalogPort, false);
        },
      };
    },
    async stopStore() {
      await running(store, 'object store').close();
      store = null;
      return {
        end: async () => {
          store = await startStore(storePort);
        },
      };
    },
    async close() {
      s3.destroy();
      await catalog?.close();
      await store?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The updates of a commit that appends snapshot `id` (child of `parent`, sequence number `seq`, schema 0, its
 * manifest list at `manifestList`) and points the table's main branch at it.
 */
export function appendUpdates(id: Long, parent: Long | null, seq: Long, manifestList: string) {
  return [
    {
      action: 'add-snapshot',
      snapshot: {
        'snapshot-id': id,
        ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
        'sequence-number': seq,
        'timestamp-ms': Date.now(),
        'manifest-list': manifestList,
        summary: { operation: 'append' },
        'schema-id': 0,
      },
    },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
  ];
}

/** That append as a commit that holds only while main is still at `parent`: of writers racing from one parent, one lands and the rest get 409. */
export function appendCommit(id: Long, parent: Long | null, seq: Long, manifestList: string) {
  return { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent }], updates: appendUpdates(id, parent, seq, manifestList) };
}
