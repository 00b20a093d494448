// Storage backends, catalogs, attachments, scoped grants, schemas and tables through the api, against a real
// catalog service and bundled object store (tests/support/catalogStack.ts) and a real api on a fresh database.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { TestDatabase } from './support/database.ts';
import { newUser, setupAdmin, startTestStack, type Caller, type TestStack, type Res } from './support/api.ts';
import type { CatalogStack } from './support/catalogStack.ts';
import { CatalogClient, CatalogServiceError, catalogClientFromConfig } from '../runtime/catalogClient.ts';
import { startCatalogService } from '../catalog/server.ts';
import { ensureCatalogWarehouses } from '../domain/catalogs/warehouseSync.ts';
import { checkScopedAccess } from '../domain/catalogGrants.ts';
import { checkStatementPolicy } from '../domain/statementPolicy/policy.ts';
import { recordTableWrite } from '../domain/tableMetadata.ts';

let database: TestDatabase;
let stack: CatalogStack;
let t: TestStack;
let client: CatalogClient;
let base: string;
let rootKey: { accessKeyId: string; secretAccessKey: string };
const who = {} as Record<'admin' | 'owner' | 'writer' | 'reader' | 'outsider', Caller & { id: string }>;

// 64-bit snapshot id beyond 2^53: JSON.parse would round it to 8744736658442915000.
const BIG_SNAPSHOT = 8744736658442914487n;

async function req(method: string, path: string, as?: Caller, body?: unknown): Promise<Res> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (as?.token) headers.authorization = `Bearer ${as.token}`;
  const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: r.status, headers: r.headers, body: parsed, text };
}

function expectError(res: Res, status: number, code: string) {
  expect({ status: res.status, error: res.body?.error }, res.text).toEqual({ status, error: code });
}

/** The keys under a prefix of bucket extlake, where backends ext and lake have their roots. */
async function keysUnder(prefix: string): Promise<string[]> {
  const out = await stack.s3.send(new ListObjectsV2Command({ Bucket: 'extlake', Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

beforeAll(async () => {
  t = await startTestStack();
  database = t.database;
  stack = t.stack;
  // The bundled store's root keys, as `eider up` hands them to the api through configuration.
  rootKey = (await stack.s3.config.credentials()) as { accessKeyId: string; secretAccessKey: string };
  // Backends of their own beside the bundled one (whose root is the whole of bucket warehouse) need another bucket.
  await stack.s3.send(new CreateBucketCommand({ Bucket: 'extlake' }));
  client = catalogClientFromConfig(t.api.ctx.config);
  base = t.url;

  who.admin = await setupAdmin(t);
  for (const k of ['owner', 'writer', 'reader', 'outsider'] as const) who[k] = await newUser(t, who.admin);
  expect((await req('POST', '/api/workspaces', who.owner, { slug: 'team', name: 'Team' })).status).toBe(201);
  for (const role of ['writer', 'reader'] as const) {
    expect((await req('PUT', `/api/workspaces/team/members/${who[role].id}`, who.owner, { role })).status).toBe(201);
  }
});

afterAll(async () => {
  await t?.close();
});

describe('startup: the bundled catalog as a warehouse', () => {
  it('the api registers the bundled warehouse at startup; ensureCatalogWarehouses is idempotent', async () => {
    // startup registers it in the background: wait for it to exist
    await vi.waitFor(() => client.getWarehouse('warehouse'), { timeout: 10_000, interval: 50 });
    const second = await ensureCatalogWarehouses(database.db, client, t.api.ctx.config);
    expect(second).toMatchObject({ created: [], updated: [], unchanged: ['warehouse'], failed: [] });
    const wh = await client.getWarehouse('warehouse');
    expect(wh).toMatchObject({ root_uri: 's3://warehouse/warehouse/', kind: 'object_store', endpoint: stack.store.endpoint });
  });

  it('the default workspace has warehouse attached as its default', async () => {
    const res = await req('GET', '/api/workspaces/default/catalogs', who.admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([expect.objectContaining({ slug: 'warehouse', is_default: true, access_mode: 'full', storage_kind: 'object_store', root_uri: 's3://warehouse/warehouse/' })]);
  });
});

let backendId: string;
let lakeId: string;

describe('catalog client', () => {
  it('hands agents a token the catalog accepts, refreshes it before expiry, and reports refused credentials', async () => {
    const svc = await startCatalogService({ db: database.db, port: 0, clientSecret: 'short-lived-secret', tokenTtlSeconds: 1, migrate: false });
    try {
      const c = new CatalogClient({ baseUrl: svc.url, clientId: 'root', clientSecret: 'short-lived-secret' });
      const first = await c.catalogToken();
      expect(first.expiresAt.getTime()).toBeGreaterThan(Date.now());
      const cfg = await fetch(`${svc.url}/v1/config?warehouse=warehouse`, { headers: { authorization: `Bearer ${first.token}` } });
      expect(cfg.status).toBe(200);
      expect((await c.catalogToken()).token).toBe(first.token);
      // Time itself must pass: the 1 s token's lifetime (a fixed wait, nothing to observe first).
      await new Promise((r) => setTimeout(r, 1100));
      const second = await c.catalogToken();
      expect(second.token).not.toBe(first.token);
      expect(await c.getWarehouse('warehouse')).toMatchObject({ name: 'warehouse' });

      const wrong = new CatalogClient({ baseUrl: svc.url, clientId: 'root', clientSecret: 'not-the-secret' });
      const err = await wrong.listWarehouses().catch((e) => e);
      expect(err).toBeInstanceOf(CatalogServiceError);
      expect(err.status).toBe(401);
      expect(err.message).not.toContain('not-the-secret');
    } finally {
      await svc.close();
    }
  });
});

describe('storage backends', () => {
  it('admins register backends; secrets never come back', async () => {
    const res = await req('POST', '/api/admin/storage-backends', who.admin, {
      name: 'ext',
      kind: 'object_store',
      root_uri: 's3://extlake/ext',
      endpoint: stack.store.endpoint,
      access_key_id: rootKey.accessKeyId,
      secret_access_key: rootKey.secretAccessKey,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ name: 'ext', kind: 'object_store', root_uri: 's3://extlake/ext/', has_credentials: true, credential_vending: 'derived', catalog_count: 0 });
    expect(res.text).not.toContain(rootKey.secretAccessKey);
    expect(res.body).not.toHaveProperty('secret_access_key');
    backendId = res.body.id;

    // without keys of its own, an object_store backend on the bundled store uses the store's root keys
    const lake = await req('POST', '/api/admin/storage-backends', who.admin, { name: 'lake', kind: 'object_store', root_uri: 's3://extlake/lake' });
    expect(lake.status, lake.text).toBe(201);
    expect(lake.body).toMatchObject({ root_uri: 's3://extlake/lake/', has_credentials: false });
    lakeId = lake.body.id;

    const list = await req('GET', '/api/admin/storage-backends', who.admin);
    expect(list.status).toBe(200);
    expect(list.body.map((b: any) => b.name)).toEqual(['bundled', 'ext', 'lake']);
    expect(list.text).not.toContain(rootKey.secretAccessKey);
    expect((await req('GET', `/api/admin/storage-backends/${backendId}`, who.admin)).body).toMatchObject({ id: backendId, name: 'ext' });
  });

  it('refuses bad input, duplicates, unknown ids and non-admins', async () => {
    const valid = { name: 'x1', kind: 's3', root_uri: 's3://bucket-x/' };
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, { ...valid, name: 'ext' }), 409, 'conflict');
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, { ...valid, kind: 'gcs' }), 422, 'unprocessable_content');
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, { ...valid, root_uri: 'http://bucket/' }), 422, 'unprocessable_content');
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, { ...valid, access_key_id: 'only-the-key' }), 422, 'unprocessable_content');
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, { ...valid, kind: 'object_store', endpoint: 'ftp://store' }), 422, 'unprocessable_content');
    // an s3 backend with no keys of its own and no AWS_* keys in the deployment has nothing to probe with
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, valid), 422, 'storage_credentials_missing');
    // an azure backend needs its account key (tests/azureStorage.test.ts registers real ones against Azurite)
    const az = { name: 'az1', kind: 'azure', root_uri: 'abfss://data@acct.dfs.core.windows.net/eider' };
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, az), 422, 'storage_credentials_missing');
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, { ...az, root_uri: 's3://data/eider' }), 422, 'unprocessable_content');
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, { ...az, account_name: 'other', account_key: 'a2V5' }), 422, 'unprocessable_content');
    expectError(await req('POST', '/api/admin/storage-backends', who.admin, { ...valid, account_key: 'a2V5' }), 422, 'unprocessable_content');
    expectError(await req('GET', `/api/admin/storage-backends/${crypto.randomUUID()}`, who.admin), 404, 'not_found');
    expectError(await req('GET', '/api/admin/storage-backends', who.owner), 403, 'forbidden');
    expectError(await req('POST', '/api/admin/storage-backends', who.owner, valid), 403, 'forbidden');
    expectError(await req('GET', '/api/admin/storage-backends'), 401, 'unauthorized');
  });
});

let salesId: string;

describe('catalogs', () => {
  it('creating a catalog registers its warehouse under the backend root (I4)', async () => {
    expectError(await req('POST', '/api/catalogs', who.owner, { slug: 'sales', storage_backend_id: backendId }), 403, 'forbidden');
    const res = await req('POST', '/api/catalogs', who.admin, { slug: 'sales', storage_backend_id: backendId });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ slug: 'sales', storage_backend_id: backendId, storage_kind: 'object_store', root_uri: 's3://extlake/ext/sales/', created_by: who.admin.id });
    salesId = res.body.id;
    expect(await client.getWarehouse('sales')).toMatchObject({ root_uri: 's3://extlake/ext/sales/' });
    expect((await req('GET', `/api/admin/storage-backends/${backendId}`, who.admin)).body.catalog_count).toBe(1);
  });

  it('refuses a taken slug or an unknown backend', async () => {
    expectError(await req('POST', '/api/catalogs', who.admin, { slug: 'sales', storage_backend_id: backendId }), 409, 'conflict');
    expectError(await req('POST', '/api/catalogs', who.admin, { slug: 'nope', storage_backend_id: crypto.randomUUID() }), 422, 'unprocessable_content');
    expectError(await req('POST', '/api/catalogs', who.admin, { slug: 'Bad Slug', storage_backend_id: backendId }), 422, 'unprocessable_content');
    // nothing was left behind by the refusals
    expect((await client.listWarehouses()).map((w) => w.name).sort()).toEqual(['sales', 'warehouse']);
  });

  it('a bound backend cannot be deleted; an unbound one can', async () => {
    expectError(await req('DELETE', `/api/admin/storage-backends/${backendId}`, who.admin), 409, 'storage_backend_in_use');
    expect((await req('DELETE', `/api/admin/storage-backends/${lakeId}`, who.admin)).status).toBe(204);
    expectError(await req('GET', `/api/admin/storage-backends/${lakeId}`, who.admin), 404, 'not_found');
  });

  it('lists all catalogs for managers, only reachable ones for others', async () => {
    const all = await req('GET', '/api/catalogs', who.admin);
    expect(all.body.map((c: any) => c.slug)).toEqual(['sales', 'warehouse']);
    const mine = await req('GET', '/api/catalogs', who.owner);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual([]);
    expectError(await req('GET', `/api/catalogs/${salesId}`, who.owner), 404, 'not_found');
  });
});

describe('roots of their own', () => {
  it('refuses a backend root inside, around or equal to another backend\'s or catalog\'s, with 409 naming it', async () => {
    const overlap = async (body: Record<string, unknown>, names: string[]) => {
      const r = await req('POST', '/api/admin/storage-backends', who.admin, body);
      expectError(r, 409, 'storage_root_overlap');
      expect(r.body.details.conflicts.map((c: { name: string }) => c.name).sort()).toEqual(names);
      for (const n of names) expect(r.body.message).toContain(n);
    };
    // Inside the bundled backend's root (and so around its catalog warehouse's or equal to it).
    await overlap({ name: 'second', kind: 'object_store', root_uri: 's3://warehouse/second/' }, ['bundled']);
    await overlap({ name: 'second', kind: 'object_store', root_uri: 's3://warehouse/warehouse/' }, ['bundled', 'warehouse']);
    await overlap({ name: 'second', kind: 'object_store', root_uri: 's3://warehouse/' }, ['bundled', 'warehouse']);
    // Inside ext's root, and around ext's and its catalog sales's.
    await overlap({ name: 'second', kind: 'object_store', root_uri: 's3://extlake/ext/inner/', endpoint: stack.store.endpoint, access_key_id: rootKey.accessKeyId, secret_access_key: rootKey.secretAccessKey }, ['ext']);
    await overlap({ name: 'second', kind: 'object_store', root_uri: 's3://extlake/' }, ['ext', 'sales']);
    expect((await req('GET', '/api/admin/storage-backends', who.admin)).body.map((b: { name: string }) => b.name)).not.toContain('second');
    // A root beside them is fine (the same bucket, another prefix).
    const beside = await req('POST', '/api/admin/storage-backends', who.admin, { name: 'beside', kind: 'object_store', root_uri: 's3://extlake/extra/' });
    expect(beside.status, beside.text).toBe(201);
    expect((await req('DELETE', `/api/admin/storage-backends/${beside.body.id}`, who.admin)).status).toBe(204);
  });

  it('refuses a catalog, a credential rotation and a migration whose root overlaps another\'s (a backend registered before roots were checked)', async () => {
    // As an older version let it be registered: inside the bundled root, where a catalog `legacy` of bundled would live.
    const [legacy] = await database.db.query<{ id: string }>(
      `insert into eider.storage_backends (name, kind, root_uri, endpoint, access_key_id, secret_access_key, credential_vending)
       values ('legacy', 'object_store', 's3://warehouse/legacy/', $1, $2, $3, 'derived') returning id`,
      [stack.store.endpoint, rootKey.accessKeyId, rootKey.secretAccessKey],
    );
    try {
      const bundledId = (await req('GET', '/api/admin/storage-backends', who.admin)).body.find((b: { name: string }) => b.name === 'bundled').id;
      const cat = await req('POST', '/api/catalogs', who.admin, { slug: 'legacy', storage_backend_id: bundledId });
      expectError(cat, 409, 'storage_root_overlap');
      expect(cat.body.message).toContain('storage backend legacy (s3://warehouse/legacy/)');
      expect((await req('GET', '/api/catalogs', who.admin)).body.map((c: { slug: string }) => c.slug)).not.toContain('legacy');
      expect(await client.getWarehouse('legacy')).toBeUndefined();
      const rotated = await req('PATCH', `/api/admin/storage-backends/${legacy.id}`, who.admin, { access_key_id: rootKey.accessKeyId, secret_access_key: rootKey.secretAccessKey });
      expectError(rotated, 409, 'storage_root_overlap');
      expect(rotated.body.message).toContain('bundled');
      const moved = await req('POST', `/api/catalogs/${salesId}/migrations`, who.admin, { target_storage_backend_id: legacy.id });
      expectError(moved, 409, 'storage_root_overlap');
      expect(moved.body.message).toContain('storage backend bundled (s3://warehouse/)');
    } finally {
      await database.db.query(`delete from eider.storage_backends where id = $1`, [legacy.id]);
    }
  });
});

describe('attachments', () => {
  it('attaching needs the owner role and a catalog manager; 201 first, 200 after', async () => {
    expectError(await req('PUT', '/api/workspaces/team/catalogs/sales', who.writer, { make_default: true }), 403, 'forbidden');
    expectError(await req('PUT', '/api/workspaces/team/catalogs/sales', who.outsider, { make_default: true }), 404, 'not_found');
    // the workspace owner alone cannot grant their workspace someone's data
    expectError(await req('PUT', '/api/workspaces/team/catalogs/sales', who.owner, { make_default: true }), 403, 'forbidden');
    expectError(await req('PUT', '/api/workspaces/team/catalogs/nosuch', who.admin, { make_default: true }), 404, 'not_found');
    expectError(await req('PUT', '/api/workspaces/team/catalogs/sales', who.admin, {}), 422, 'unprocessable_content');
    const first = await req('PUT', '/api/workspaces/team/catalogs/sales', who.admin, { make_default: false });
    expect(first.status, first.text).toBe(201);
    // the first catalog of a workspace without a default becomes its default
    expect(first.body).toMatchObject({ slug: 'sales', is_default: true, access_mode: 'full' });
    const again = await req('PUT', '/api/workspaces/team/catalogs/sales', who.owner, { make_default: true });
    expect(again.status, again.text).toBe(200);
    const warehouse = await req('PUT', `/api/workspaces/team/catalogs/${(await req('GET', '/api/catalogs', who.admin)).body[1].id}`, who.admin, { make_default: false });
    expect(warehouse.status).toBe(201);
    expect(warehouse.body).toMatchObject({ slug: 'warehouse', is_default: false });
    const list = await req('GET', '/api/workspaces/team/catalogs', who.reader);
    expect(list.body.map((c: any) => [c.slug, c.is_default, c.access_mode])).toEqual([
      ['sales', true, 'full'],
      ['warehouse', false, 'full'],
    ]);
    expect((await req('GET', '/api/workspaces/team', who.reader)).body.default_catalog).toBe('sales');
    expect((await req('GET', '/api/catalogs', who.owner)).body.map((c: any) => c.slug)).toEqual(['sales', 'warehouse']);
  });

  it('non-members get 404 and anonymous callers 401 on everything under the workspace', async () => {
    for (const path of ['/catalogs', '/catalogs/sales/schemas', '/catalogs/sales/grants', '/catalogs/sales/schemas/crm/tables']) {
      expectError(await req('GET', `/api/workspaces/team${path}`, who.outsider), 404, 'not_found');
      expectError(await req('GET', `/api/workspaces/team${path}`), 401, 'unauthorized');
    }
  });
});

describe('schemas and tables', () => {
  const cols = [
    { name: 'id', type: 'BIGINT', nullable: false },
    { name: 'amount', type: 'DECIMAL(10,2)', nullable: true },
    { name: 'tags', type: 'VARCHAR[]', nullable: true },
    { name: 'addr', type: 'STRUCT(city VARCHAR, zip INTEGER)', nullable: true },
  ];
  const S = '/api/workspaces/team/catalogs/sales/schemas';

  it('schemas: writers create, readers list, duplicates conflict', async () => {
    expectError(await req('POST', S, who.reader, { name: 'crm' }), 403, 'forbidden');
    expect((await req('POST', S, who.writer, { name: 'crm' })).status).toBe(201);
    expect((await req('POST', S, who.writer, { name: 'ops' })).status).toBe(201);
    expectError(await req('POST', S, who.writer, { name: 'crm' }), 409, 'conflict');
    expectError(await req('POST', S, who.writer, { name: 'bad-name!' }), 422, 'unprocessable_content');
    const list = await req('GET', S, who.reader);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([{ name: 'crm' }, { name: 'ops' }]);
  });

  it('tables: create maps DuckDB types to Iceberg and back; location under the catalog root', async () => {
    const res = await req('POST', `${S}/crm/tables`, who.writer, { name: 'accounts', columns: cols });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      name: 'accounts',
      schema: 'crm',
      catalog: 'sales',
      columns: [
        { name: 'id', type: 'BIGINT', nullable: false },
        { name: 'amount', type: 'DECIMAL(10,2)', nullable: true },
        { name: 'tags', type: 'VARCHAR[]', nullable: true },
        { name: 'addr', type: 'STRUCT(city VARCHAR, zip INTEGER)', nullable: true },
      ],
      current_snapshot_id: null,
      row_count: 0,
      size_bytes: 0,
      owner_id: who.writer.id,
      last_write: { user_id: who.writer.id, operation: 'create', query_id: null },
    });
    expect(res.body.location).toBe('s3://extlake/ext/sales/crm/accounts');
    expect((await keysUnder('ext/sales/crm/accounts/metadata/')).length).toBe(1);
    expect((await req('POST', `${S}/crm/tables`, who.writer, { name: 'leads', columns: [{ name: 'id', type: 'INTEGER', nullable: true }] })).status).toBe(201);

    expectError(await req('POST', `${S}/crm/tables`, who.writer, { name: 'accounts', columns: cols }), 409, 'conflict');
    expectError(await req('POST', `${S}/crm/tables`, who.writer, { name: 'x', columns: [{ name: 'a', type: 'NOT_A_TYPE' }] }), 422, 'unprocessable_content');
    expectError(await req('POST', `${S}/crm/tables`, who.writer, { name: 'x', columns: [{ name: 'a', type: 'INTEGER' }, { name: 'A', type: 'INTEGER' }] }), 422, 'unprocessable_content');
    expectError(await req('POST', `${S}/crm/tables`, who.writer, { name: 'x', columns: [] }), 422, 'unprocessable_content');
    expectError(await req('POST', `${S}/nosuch/tables`, who.writer, { name: 'x', columns: cols }), 404, 'not_found');
    expectError(await req('POST', `${S}/crm/tables`, who.reader, { name: 'x', columns: cols }), 403, 'forbidden');

    const list = await req('GET', `${S}/crm/tables`, who.reader);
    expect(list.body).toEqual([
      { name: 'accounts', table_type: 'table' },
      { name: 'leads', table_type: 'table' },
    ]);
    expectError(await req('GET', `${S}/nosuch/tables`, who.reader), 404, 'not_found');
    expectError(await req('GET', `${S}/crm/tables/nosuch`, who.reader), 404, 'not_found');
    expectError(await req('GET', '/api/workspaces/team/catalogs/nosuch/schemas', who.reader), 404, 'not_found');
  });

  it('64-bit snapshot ids travel as strings; stats come from the snapshot summary', async () => {
    const commit = await stack.request('POST', `/v1/sales/namespaces/crm/tables/accounts`, {
      requirements: [],
      updates: [
        {
          action: 'add-snapshot',
          snapshot: {
            'snapshot-id': BIG_SNAPSHOT,
            'sequence-number': 1,
            'timestamp-ms': Date.now() + 1000,
            'manifest-list': 's3://extlake/ext/sales/crm/accounts/metadata/snap.avro',
            summary: { operation: 'append', 'total-records': '42', 'total-files-size': '1234', 'total-data-files': '1' },
            'schema-id': 0,
          },
        },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': BIG_SNAPSHOT },
      ],
    });
    expect(commit.status, String(commit.body?.error?.message)).toBe(200);

    const table = await req('GET', `${S}/crm/tables/accounts`, who.reader);
    expect(table.status).toBe(200);
    expect(table.text).toContain('"current_snapshot_id":"8744736658442914487"');
    expect(table.body).toMatchObject({ row_count: 42, size_bytes: 1234, last_write: { operation: 'append', user_id: null } });

    const snaps = await req('GET', `${S}/crm/tables/accounts/snapshots`, who.reader);
    expect(snaps.status).toBe(200);
    expect(snaps.text).toContain('"snapshot_id":"8744736658442914487"');
    expect(snaps.body).toEqual([
      expect.objectContaining({ snapshot_id: '8744736658442914487', parent_snapshot_id: null, sequence_number: 1, operation: 'append', is_current: true }),
    ]);

    // a write through the query path (recorded by it) is newer than the snapshot, and names who and which query
    const queryId = crypto.randomUUID();
    await recordTableWrite(database.db, { catalogId: salesId, schema: 'crm', table: 'accounts', userId: who.writer.id, queryId, operation: 'insert', at: new Date(Date.now() + 5000) });
    expect((await req('GET', `${S}/crm/tables/accounts`, who.reader)).body.last_write).toMatchObject({ user_id: who.writer.id, query_id: queryId, operation: 'insert' });
  });

  it('refresh-stats recounts into the sidecar and prunes tables gone elsewhere', async () => {
    expectError(await req('POST', '/api/workspaces/team/catalogs/sales/refresh-stats', who.reader), 403, 'forbidden');
    const res = await req('POST', '/api/workspaces/team/catalogs/sales/refresh-stats', who.writer);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ catalog: 'sales', tables_scanned: 2, tables_updated: 2, removed: 0, failed: [] });
    const [row] = await database.db.query(`select row_count, size_bytes, stats_snapshot_id from table_metadata where catalog_id = $1 and table_name = 'accounts'`, [salesId]);
    expect(row).toMatchObject({ stats_snapshot_id: '8744736658442914487' });
    expect(Number(row.row_count)).toBe(42);
    expect(Number(row.size_bytes)).toBe(1234);

    // dropped by another Iceberg client: the sidecar row goes at the next refresh
    await client.dropTable('sales', ['crm'], 'leads', { purge: true });
    const again = await req('POST', '/api/workspaces/team/catalogs/sales/refresh-stats', who.writer);
    expect(again.body).toMatchObject({ tables_scanned: 1, removed: 1 });
    expect(await database.db.query(`select 1 from table_metadata where catalog_id = $1 and table_name = 'leads'`, [salesId])).toEqual([]);
  });

  it('sample rows go through the query path and need an agent', async () => {
    expectError(await req('GET', `${S}/crm/tables/accounts/sample`, who.reader), 422, 'agent_required');
    expectError(await req('GET', `${S}/crm/tables/accounts/sample?agent_id=${crypto.randomUUID()}`, who.reader), 404, 'not_found');
  });
});

describe('scoped attachments (I10)', () => {
  const S = '/api/workspaces/team/catalogs/sales/schemas';
  let ws: string;

  it('only catalog managers grant; PUT creates then replaces', async () => {
    ws = (await req('GET', '/api/workspaces/team', who.reader)).body.id;
    expectError(await req('PUT', '/api/workspaces/team/catalogs/sales/grants', who.writer, { schema: 'crm', privilege: 'read' }), 403, 'forbidden');
    expectError(await req('PUT', '/api/workspaces/team/catalogs/sales/grants', who.owner, { schema: 'crm', privilege: 'read' }), 403, 'forbidden');
    expectError(await req('PUT', '/api/workspaces/team/catalogs/sales/grants', who.admin, { table: 'accounts', privilege: 'read' }), 422, 'unprocessable_content');
    const created = await req('PUT', '/api/workspaces/team/catalogs/sales/grants', who.admin, { schema: 'crm', table: 'accounts', privilege: 'read' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ catalog: 'sales', level: 'table', schema: 'crm', table: 'accounts', privilege: 'read' });
    const replaced = await req('PUT', '/api/workspaces/team/catalogs/sales/grants', who.admin, { schema: 'crm', table: 'accounts', privilege: 'write' });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: created.body.id, privilege: 'write' });
    await req('PUT', '/api/workspaces/team/catalogs/sales/grants', who.admin, { schema: 'crm', table: 'accounts', privilege: 'read' });
    const list = await req('GET', '/api/workspaces/team/catalogs/sales/grants', who.reader);
    expect(list.body).toEqual([expect.objectContaining({ id: created.body.id, privilege: 'read' })]);
  });

  it('narrowing to scoped needs only the owner; widening back needs a manager', async () => {
    const scoped = await req('PUT', '/api/workspaces/team/catalogs/sales', who.owner, { make_default: true, access_mode: 'scoped' });
    expect(scoped.status, scoped.text).toBe(200);
    expect(scoped.body).toMatchObject({ access_mode: 'scoped', is_default: true });
    expectError(await req('PUT', '/api/workspaces/team/catalogs/sales', who.owner, { make_default: true, access_mode: 'full' }), 403, 'forbidden');
    // without access_mode the mode stays as it is
    expect((await req('PUT', '/api/workspaces/team/catalogs/sales', who.owner, { make_default: true })).body.access_mode).toBe('scoped');
  });

  it('checkScopedAccess enforces grants on every table the parser extracted', async () => {
    const ok = (tables: any[], def: string | null = 'sales', need: 'read' | 'write' = 'read') => checkScopedAccess(database.db, ws, tables, def, need);
    const code = async (p: Promise<void>) => p.then(() => 'allowed', (e) => `${e.status} ${e.code}`);
    expect(await code(ok([{ catalog: 'sales', schema: 'crm', name: 'accounts' }]))).toBe('allowed');
    expect(await code(ok([{ catalog: null, schema: 'crm', name: 'ACCOUNTS' }]))).toBe('allowed');
    expect(await code(ok([{ catalog: 'sales', schema: 'crm', name: 'accounts' }], 'sales', 'write'))).toBe('403 not_granted');
    expect(await code(ok([{ catalog: 'sales', schema: 'crm', name: 'leads' }]))).toBe('403 not_granted');
    // time travel reads the same table: the same grant applies
    expect(await code(ok([{ catalog: 'sales', schema: 'crm', name: 'accounts__snapshot_8744736658442914487' }]))).toBe('allowed');
    expect(await code(ok([{ catalog: 'sales', schema: 'crm', name: 'leads__at_1767225600000' }]))).toBe('403 not_granted');
    expect(await code(ok([{ catalog: null, schema: null, name: 'accounts' }]))).toBe('403 not_granted'); // sales.main.accounts
    expect(await code(ok([{ catalog: 'sales', schema: 'crm', name: 'accounts' }, { catalog: 'sales', schema: 'ops', name: 't' }]))).toBe('403 not_granted');
    // full attachments reach everything; engine-local databases hold no catalog data
    expect(await code(ok([{ catalog: 'warehouse', schema: 'any', name: 'thing' }], 'sales', 'write'))).toBe('allowed');
    expect(await code(ok([{ catalog: 'memory', schema: 'main', name: 'scratch' }]))).toBe('allowed');
    // a catalog not attached to the workspace: 403 whether or not it exists
    expect(await code(ok([{ catalog: 'elsewhere', schema: 's', name: 't' }]))).toBe('403 catalog_not_attached');
    // `warehouse.t` reads as schema warehouse of sales (not granted) or warehouse.main.t: both are checked
    expect(await code(ok([{ catalog: null, schema: 'warehouse', name: 't' }]))).toBe('403 not_granted');
    // a schema grant covers every table in it, a catalog grant everything
    await req('PUT', '/api/workspaces/team/catalogs/sales/grants', who.admin, { schema: 'ops', privilege: 'write' });
    expect(await code(ok([{ catalog: 'sales', schema: 'ops', name: 'anything' }], 'sales', 'write'))).toBe('allowed');
    const cat = await req('PUT', '/api/workspaces/team/catalogs/sales/grants', who.admin, { privilege: 'read' });
    expect(cat.body.level).toBe('catalog');
    expect(await code(ok([{ catalog: null, schema: null, name: 'anything' }]))).toBe('allowed');
    expect((await req('DELETE', `/api/workspaces/team/catalogs/sales/grants/${cat.body.id}`, who.admin)).status).toBe(204);
    expectError(await req('DELETE', `/api/workspaces/team/catalogs/sales/grants/${cat.body.id}`, who.admin), 404, 'not_found');
    expect(await code(ok([{ catalog: null, schema: null, name: 'anything' }]))).toBe('403 not_granted');
  });

  // SQL must meet the same grants as REST, whatever hides the target: a CTE named like the written table, or a
  // schema statement that names no table at all.
  it('SQL writes are grant-checked on their real targets, schema DDL like the REST schema routes', async () => {
    const check = async (sql: string) => {
      const policy = await checkStatementPolicy(sql, { mode: 'query' });
      if (!policy.ok) return `policy ${policy.message}`;
      return checkScopedAccess(database.db, ws, policy.tables, 'sales', policy.isWrite ? 'write' : 'read', policy.schemas).then(
        () => 'allowed',
        (e) => `${e.status} ${e.code}`,
      );
    };
    // crm.accounts is readable only; ops is writable as a schema (grants from the test above)
    expect(await check('WITH accounts AS (SELECT 1 AS x) INSERT INTO accounts VALUES (666)')).toBe('403 not_granted');
    expect(await check('WITH victim AS (SELECT 1 AS x) INSERT INTO crm.victim VALUES (666)')).toBe('403 not_granted');
    expect(await check('WITH accounts AS (SELECT 1 AS x) UPDATE crm.accounts SET a = 1')).toBe('403 not_granted');
    expect(await check('WITH t AS (SELECT 1 AS x) INSERT INTO ops.t SELECT * FROM t')).toBe('allowed');
    expect(await check('CREATE SCHEMA sales.fresh')).toBe('403 not_granted');
    expect(await check('CREATE SCHEMA fresh')).toBe('403 not_granted');
    expect(await check('DROP SCHEMA crm CASCADE')).toBe('403 not_granted');
    expect(await check('DROP SCHEMA ops')).toBe('allowed');
    expect(await check('CREATE SCHEMA elsewhere.s')).toBe('403 catalog_not_attached');
    expect(await check('DROP SCHEMA elsewhere.s')).toBe('403 catalog_not_attached');
    expect(await check('DROP SCHEMA sales.crm')).toBe('403 not_granted');
    expect(await check('DROP SCHEMA IF EXISTS sales.ops CASCADE')).toBe('allowed');
    // the REST route answers the same for the same schema
    expectError(await req('POST', '/api/workspaces/team/catalogs/sales/schemas', who.writer, { name: 'fresh' }), 403, 'not_granted');
  });

  it('REST browsing shows and reaches only what is granted', async () => {
    await client.createNamespace('sales', ['hidden']);
    expect((await req('GET', S, who.reader)).body).toEqual([{ name: 'crm' }, { name: 'ops' }]);
    expect((await req('GET', `${S}/crm/tables`, who.reader)).body).toEqual([{ name: 'accounts', table_type: 'table' }]);
    expectError(await req('GET', `${S}/hidden/tables`, who.reader), 403, 'not_granted');
    expect((await req('GET', `${S}/crm/tables/accounts`, who.reader)).status).toBe(200);
    expectError(await req('DELETE', `${S}/crm/tables/accounts`, who.writer), 403, 'not_granted');
    expectError(await req('POST', S, who.writer, { name: 'newone' }), 403, 'not_granted');
    const ops = await req('POST', `${S}/ops/tables`, who.writer, { name: 'jobs', columns: [{ name: 'id', type: 'INTEGER' }] });
    expect(ops.status, ops.text).toBe(201);
    expect((await req('POST', '/api/workspaces/team/catalogs/sales/refresh-stats', who.writer)).body.tables_scanned).toBe(2);
  });
});

describe('detach and drop', () => {
  it('dropping an attached catalog is 409; a non-empty schema is 409', async () => {
    expectError(await req('DELETE', `/api/catalogs/${salesId}`, who.owner), 403, 'forbidden');
    const res = await req('DELETE', `/api/catalogs/${salesId}`, who.admin);
    expectError(res, 409, 'catalog_attached');
    expect(res.body.details).toEqual({ workspaces: ['team'] });
    await req('PUT', '/api/workspaces/team/catalogs/sales', who.admin, { make_default: true, access_mode: 'full' });
    expectError(await req('DELETE', '/api/workspaces/team/catalogs/sales/schemas/crm', who.writer), 409, 'schema_not_empty');
    expect((await req('DELETE', '/api/workspaces/team/catalogs/sales/schemas/crm/tables/accounts', who.writer)).status).toBe(204);
    expectError(await req('GET', '/api/workspaces/team/catalogs/sales/schemas/crm/tables/accounts', who.writer), 404, 'not_found');
    expect(await keysUnder('ext/sales/crm/accounts/')).toEqual([]);
    expect((await req('DELETE', '/api/workspaces/team/catalogs/sales/schemas/crm', who.writer)).status).toBe(204);
    expectError(await req('DELETE', '/api/workspaces/team/catalogs/sales/schemas/crm', who.writer), 404, 'not_found');
  });

  it('detaching the default leaves the workspace without one, and the grants go too', async () => {
    expectError(await req('DELETE', '/api/workspaces/team/catalogs/sales', who.writer), 403, 'forbidden');
    expect((await req('DELETE', '/api/workspaces/team/catalogs/sales', who.owner)).status).toBe(204);
    expectError(await req('DELETE', '/api/workspaces/team/catalogs/sales', who.owner), 404, 'not_found');
    expect((await req('GET', '/api/workspaces/team', who.reader)).body.default_catalog).toBeNull();
    expect((await req('GET', '/api/workspaces/team/catalogs', who.reader)).body.map((c: any) => [c.slug, c.is_default])).toEqual([['warehouse', false]]);
    expectError(await req('GET', '/api/workspaces/team/catalogs/sales/schemas', who.reader), 404, 'not_found');
    expect(await database.db.query(`select 1 from catalog_grants where catalog_id = $1`, [salesId])).toEqual([]);
  });

  it('an unattached catalog drops with everything in it, warehouse and files included', async () => {
    const res = await req('DELETE', `/api/catalogs/${salesId}`, who.admin);
    expect(res.status, res.text).toBe(204);
    expect(await client.getWarehouse('sales')).toBeUndefined();
    expect(await keysUnder('ext/sales/')).toEqual([]);
    expect(await database.db.query(`select 1 from table_metadata where catalog_id = $1`, [salesId])).toEqual([]);
    expectError(await req('DELETE', `/api/catalogs/${salesId}`, who.admin), 404, 'not_found');
    expect((await req('DELETE', `/api/admin/storage-backends/${backendId}`, who.admin)).status).toBe(204);
  });
});
