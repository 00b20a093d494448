// A running catalog service with a bundled object store behind it, wired as `eider up` wires them (the store asks
// the metastore about revoked credentials). Used by the catalog tests and bench/catalog.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../runtime/db.ts';
import { startObjectStore, type ObjectStore } from '../runtime/objectStore.ts';
import { makeS3Client } from '../iceberg/s3Client.ts';
import type { S3Client } from '@aws-sdk/client-s3';
import { parseJson, stringifyJson } from '../iceberg/json.ts';
import { startCatalogService, type CatalogService } from './server.ts';
import { revocationCheck } from './vending.ts';
import type { Tracing } from '../telemetry/tracing.ts';

export interface CatalogStack {
  catalog: CatalogService;
  store: ObjectStore;
  /** Root-key client of the bundled store. */
  s3: S3Client;
  bucket: string;
  token: string;
  /** Authenticated request to the catalog; the body is sent and parsed 64-bit-safe. */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<CatalogResponse>;
  /** Creates a warehouse `name` rooted at s3://{bucket}/{name}/ on the bundled store. */
  createWarehouse(name: string): Promise<void>;
  close(): Promise<void>;
}

export interface CatalogResponse {
  status: number;
  headers: Headers;
  body: any;
}

export const STACK_CLIENT = { id: 'root', secret: 'catalog-test-secret' };
const ROOT_KEY = { accessKey: 'eider-root', secretKey: 'eider-root-secret-for-tests' };

export async function startCatalogStack(opts: { db: Db; credentialTtlSeconds?: number; tracing?: Tracing }): Promise<CatalogStack> {
  const dir = mkdtempSync(join(tmpdir(), 'eider-catalog-'));
  const bucket = 'warehouse';
  const store = await startObjectStore({ dir, port: 0, bucket, ...ROOT_KEY, isRevoked: revocationCheck(opts.db) });
  const catalog = await startCatalogService({
    db: opts.db,
    port: 0,
    clientId: STACK_CLIENT.id,
    clientSecret: STACK_CLIENT.secret,
    credentialTtlSeconds: opts.credentialTtlSeconds,
    tracing: opts.tracing,
  });
  const tokenRes = await fetch(`${catalog.url}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: STACK_CLIENT.id, client_secret: STACK_CLIENT.secret, scope: 'catalog' }),
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const s3 = makeS3Client({ endpoint: store.endpoint, accessKeyId: ROOT_KEY.accessKey, secretAccessKey: ROOT_KEY.secretKey });

  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${catalog.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : stringifyJson(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? parseJson(text) : undefined };
  };

  return {
    catalog,
    store,
    s3,
    bucket,
    token,
    request,
    async createWarehouse(name) {
      const res = await request('POST', '/management/v1/warehouses', {
        name,
        root_uri: `s3://${bucket}/${name}/`,
        endpoint: store.endpoint,
        region: 'us-east-1',
        access_key_id: ROOT_KEY.accessKey,
        secret_access_key: ROOT_KEY.secretKey,
        path_style: true,
      });
      if (res.status !== 201) throw new Error(`warehouse ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    },
    async close() {
      s3.destroy();
      await catalog.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
