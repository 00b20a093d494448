// The Iceberg REST catalog driven request by request as a standard client drives it (OpenAPI document:
// open-api/rest-catalog-open-api.yaml), against a real PostgreSQL and the bundled object store.
import { describe, it, expect } from 'vitest';
import { ListObjectsV2Command, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { writeManifest, writeManifestList } from '../iceberg/avro.ts';
import { appendUpdates, STACK_CLIENT } from './support/catalogStack.ts';
import { catalogWithBridge } from './support/catalogWithBridge.ts';
import { parseJson } from '../iceberg/json.ts';

const { stack } = await catalogWithBridge();

const SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
  ],
};
const BIG_A = 8744736658442914487n;
const BIG_B = 9223372036854775001n;

const ns = (...levels: string[]) => encodeURIComponent(levels.join('\u001f'));

async function keysUnder(prefix: string): Promise<string[]> {
  const out = await stack.s3.send(new ListObjectsV2Command({ Bucket: stack.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

function expectError(res: { status: number; body: any }, status: number, type: string) {
  expect(res.status).toBe(status);
  expect(res.body.error).toMatchObject({ type, code: status });
  expect(typeof res.body.error.message).toBe('string');
}

async function createTable(name: string, namespace = 'sales', extra: Record<string, unknown> = {}) {
  const res = await stack.request('POST', `/v1/wh/namespaces/${ns(namespace)}/tables`, { name, schema: SCHEMA, ...extra });
  expect(res.status).toBe(200);
  return res.body;
}

const appendSnapshot = (id: bigint, parent: bigint | null, seq: number, manifestList = 's3://warehouse/wh/x.avro') => appendUpdates(id, parent, seq, manifestList);

describe('authentication', () => {
  it('issues tokens for the right client credentials only', async () => {
    const form = (secret: string) =>
      fetch(`${stack.catalog.url}/v1/oauth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: STACK_CLIENT.id, client_secret: secret }),
      });
    const bad = await form('wrong');
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: 'invalid_client' });
    const good = await form(STACK_CLIENT.secret);
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const basic = await fetch(`${stack.catalog.url}/v1/oauth/tokens`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${STACK_CLIENT.id}:${STACK_CLIENT.secret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    expect(basic.status).toBe(200);
  });

  it('refuses every other route without a valid bearer token', async () => {
    for (const token of [undefined, 'eidc1.forged.sig', `${stack.token}x`]) {
      const res = await fetch(`${stack.catalog.url}/v1/config?warehouse=wh`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      expect(res.status).toBe(401);
      expect((await res.json()).error).toMatchObject({ type: 'NotAuthorizedException', code: 401 });
    }
  });
});

describe('warehouses and config', () => {
  it('manages warehouses without ever returning secrets', async () => {
    const dup = await stack.request('POST', '/management/v1/warehouses', {
      name: 'wh', root_uri: 's3://warehouse/other/', access_key_id: 'a', secret_access_key: 'b',
    });
    expectError(dup, 409, 'AlreadyExistsException');
    const list = await stack.request('GET', '/management/v1/warehouses');
    expect(list.body.warehouses.map((w: any) => w.name)).toContain('wh');
    const text = JSON.stringify(list.body);
    expect(text).not.toContain('secret');
    expect(text).not.toContain('eider-root');
    const one = await stack.request('GET', '/management/v1/warehouses/wh');
    expect(one.body).toMatchObject({ name: 'wh', root_uri: 's3://warehouse/wh/', kind: 'object_store' });
    expectError(await stack.request('GET', '/management/v1/warehouses/nope'), 404, 'NoSuchWarehouseException');
    expectError(await stack.request('POST', '/management/v1/warehouses', { name: 'x', root_uri: 'http://no' , access_key_id: 'a', secret_access_key: 'b' }), 400, 'BadRequestException');
  });

  it('answers GET /v1/config with the warehouse as prefix', async () => {
    const res = await stack.request('GET', '/v1/config?warehouse=wh');
    expect(res.status).toBe(200);
    expect(res.body.overrides).toEqual({ prefix: 'wh' });
    expect(res.body.endpoints).toContain('POST /v1/{prefix}/transactions/commit');
    expectError(await stack.request('GET', '/v1/config?warehouse=missing'), 404, 'NoSuchWarehouseException');
    expectError(await stack.request('GET', '/v1/missing/namespaces'), 404, 'NoSuchWarehouseException');
    // The warehouse is read beside what is asked of it: its absence is still the answer, whatever else is missing.
    expectError(await stack.request('GET', '/v1/missing/namespaces?parent=nope'), 404, 'NoSuchWarehouseException');
    expectError(await stack.request('GET', '/v1/missing/namespaces/nope/tables/nope'), 404, 'NoSuchWarehouseException');
    expectError(await stack.request('GET', '/v1/missing/namespaces/nope/tables/nope?snapshots=bad'), 404, 'NoSuchWarehouseException');
    expectError(await stack.request('GET', '/v1/missing/namespaces/nope/tables/nope/credentials'), 404, 'NoSuchWarehouseException');
    expectError(await stack.request('GET', '/v1/wh/namespaces/nope/tables/nope?snapshots=bad'), 400, 'BadRequestException');
  });
});

describe('namespaces', () => {
  it('creates, lists (with parent and pages), loads, checks and updates properties', async () => {
    const created = await stack.request('POST', '/v1/wh/namespaces', { namespace: ['sales'], properties: { owner: 'ana' } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ namespace: ['sales'], properties: { owner: 'ana' } });
    expectError(await stack.request('POST', '/v1/wh/namespaces', { namespace: ['sales'] }), 409, 'AlreadyExistsException');
    expectError(await stack.request('POST', '/v1/wh/namespaces', { namespace: [] }), 400, 'BadRequestException');
    // Every body is decoded by its schema: each bad field is named, and nothing is created.
    const bad = await stack.request('POST', '/v1/wh/namespaces', { namespace: ['ok', ''], properties: { n: 1 } });
    expectError(bad, 400, 'BadRequestException');
    expect(bad.body.error.message).toMatch(/namespace\.1: .*properties\.n: /);
    expect((await stack.request('GET', '/v1/wh/namespaces/ok')).status).toBe(404);
    const commit = await stack.request('POST', '/v1/wh/transactions/commit', { 'table-changes': [{ identifier: { namespace: ['x'] }, updates: [] }] });
    expectError(commit, 400, 'BadRequestException');
    expect(commit.body.error.message).toMatch(/table-changes\.0\.identifier\.name: .*table-changes\.0\.requirements: /);
    expectError(await stack.request('POST', '/v1/wh/namespaces', { namespace: ['nope', 'child'] }), 404, 'NoSuchNamespaceException');
    for (const n of ['eu', 'us', 'apac']) {
      expect((await stack.request('POST', '/v1/wh/namespaces', { namespace: ['sales', n] })).status).toBe(200);
    }
    await stack.request('POST', '/v1/wh/namespaces', { namespace: ['ops'] });

    const top = await stack.request('GET', '/v1/wh/namespaces');
    expect(top.body.namespaces).toEqual([['ops'], ['sales']]);
    const children = await stack.request('GET', `/v1/wh/namespaces?parent=${ns('sales')}`);
    expect(children.body.namespaces).toEqual([['sales', 'apac'], ['sales', 'eu'], ['sales', 'us']]);
    const page1 = await stack.request('GET', `/v1/wh/namespaces?parent=${ns('sales')}&pageSize=2`);
    expect(page1.body.namespaces).toEqual([['sales', 'apac'], ['sales', 'eu']]);
    const page2 = await stack.request('GET', `/v1/wh/namespaces?parent=${ns('sales')}&pageSize=2&pageToken=${page1.body['next-page-token']}`);
    expect(page2.body.namespaces).toEqual([['sales', 'us']]);
    expect(page2.body['next-page-token']).toBeUndefined();

    const loaded = await stack.request('GET', `/v1/wh/namespaces/${ns('sales', 'eu')}`);
    expect(loaded.body).toEqual({ namespace: ['sales', 'eu'], properties: {} });
    expect((await stack.request('HEAD', `/v1/wh/namespaces/${ns('sales')}`)).status).toBe(204);
    expect((await stack.request('HEAD', `/v1/wh/namespaces/${ns('nope')}`)).status).toBe(404);
    expectError(await stack.request('GET', `/v1/wh/namespaces/${ns('nope')}`), 404, 'NoSuchNamespaceException');

    const props = await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/properties`, {
      removals: ['owner', 'absent'],
      updates: { tier: 'gold' },
    });
    expect(props.body).toEqual({ updated: ['tier'], removed: ['owner'], missing: ['absent'] });
    expect((await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}`)).body.properties).toEqual({ tier: 'gold' });
    expectError(
      await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/properties`, { removals: ['a'], updates: { a: '1' } }),
      422,
      'UnprocessableEntityException',
    );
  });

  it('drops only empty namespaces', async () => {
    expectError(await stack.request('DELETE', `/v1/wh/namespaces/${ns('sales')}`), 409, 'NamespaceNotEmptyException');
    expect((await stack.request('DELETE', `/v1/wh/namespaces/${ns('ops')}`)).status).toBe(204);
    expectError(await stack.request('DELETE', `/v1/wh/namespaces/${ns('ops')}`), 404, 'NoSuchNamespaceException');
  });
});

describe('tables', () => {
  it('creates a table under the warehouse root and writes its metadata file', async () => {
    const res = await createTable('orders', 'sales', {
      'partition-spec': { fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'bucket[4]' }] },
      properties: { 'write.format.default': 'parquet' },
    });
    expect(res['metadata-location']).toMatch(/^s3:\/\/warehouse\/wh\/sales\/orders\/metadata\/00000-.*\.metadata\.json$/);
    expect(res.metadata).toMatchObject({ 'format-version': 2, location: 's3://warehouse/wh/sales/orders', 'last-column-id': 2, 'current-snapshot-id': null });
    expect(res.metadata['partition-specs'][0].fields[0]['field-id']).toBe(1000);
    expect(res.config).toEqual({});
    const file = await stack.s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: res['metadata-location'].slice('s3://warehouse/'.length) }));
    expect(parseJson<any>(await file.Body!.transformToString())['table-uuid']).toBe(res.metadata['table-uuid']);

    expectError(await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/tables`, { name: 'orders', schema: SCHEMA }), 409, 'AlreadyExistsException');
    expectError(await stack.request('POST', `/v1/wh/namespaces/${ns('nope')}/tables`, { name: 't', schema: SCHEMA }), 404, 'NoSuchNamespaceException');
    expectError(
      await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/tables`, { name: 'elsewhere', schema: SCHEMA, location: 's3://other-bucket/x' }),
      400,
      'BadRequestException',
    );
    const list = await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}/tables`);
    expect(list.body.identifiers).toEqual([{ namespace: ['sales'], name: 'orders' }]);
  });

  it('loads with an ETag and answers 304 to If-None-Match', async () => {
    const first = await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}/tables/orders`);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    const again = await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}/tables/orders`, undefined, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect((await stack.request('HEAD', `/v1/wh/namespaces/${ns('sales')}/tables/orders`)).status).toBe(204);
    expect((await stack.request('HEAD', `/v1/wh/namespaces/${ns('sales')}/tables/nope`)).status).toBe(404);
    expectError(await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}/tables/nope`), 404, 'NoSuchTableException');

    // A commit moves the table to a new metadata file: the old ETag no longer matches.
    const uuid = first.body.metadata['table-uuid'];
    const commit = await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/tables/orders`, {
      requirements: [{ type: 'assert-table-uuid', uuid }],
      updates: [{ action: 'set-properties', updates: { k: 'v' } }],
    });
    expect(commit.status).toBe(200);
    const after = await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}/tables/orders`, undefined, { 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.body.metadata.properties.k).toBe('v');
    expect(after.body.metadata['metadata-log']).toEqual([
      { 'metadata-file': first.body['metadata-location'], 'timestamp-ms': first.body.metadata['last-updated-ms'] },
    ]);
    expect(after.headers.get('etag')).not.toBe(etag);
  });

  it('commits snapshots with 64-bit ids exactly and refuses failed requirements with 409', async () => {
    const path = `/v1/wh/namespaces/${ns('sales')}/tables/orders`;
    const one = await stack.request('POST', path, {
      identifier: { namespace: ['sales'], name: 'orders' },
      requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
      updates: appendSnapshot(BIG_A, null, 1),
    });
    expect(one.status).toBe(200);
    expect(one.body.metadata['current-snapshot-id']).toBe(BIG_A);
    // The raw text carries the exact digits.
    const raw = await fetch(`${stack.catalog.url}${path}`, { headers: { authorization: `Bearer ${stack.token}` } });
    expect(await raw.text()).toContain('"current-snapshot-id":8744736658442914487');

    const stale = await stack.request('POST', path, {
      requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
      updates: appendSnapshot(BIG_B, null, 2),
    });
    expectError(stale, 409, 'CommitFailedException');

    const two = await stack.request('POST', path, {
      requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': BIG_A }],
      updates: appendSnapshot(BIG_B, BIG_A, 2),
    });
    expect(two.status).toBe(200);
    expect(two.body.metadata['current-snapshot-id']).toBe(BIG_B);
    expect(two.body.metadata.snapshots.map((s: any) => s['snapshot-id'])).toEqual([BIG_A, BIG_B]);
    expect(two.body.metadata.snapshots[1]['parent-snapshot-id']).toBe(BIG_A);

    const refsOnly = await stack.request('GET', `${path}?snapshots=refs`);
    expect(refsOnly.body.metadata.snapshots.map((s: any) => s['snapshot-id'])).toEqual([BIG_B]);

    expectError(await stack.request('POST', path, { requirements: [], updates: [{ action: 'nonsense' }] }), 400, 'BadRequestException');
    expectError(await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/tables/nope`, { requirements: [], updates: [] }), 404, 'NoSuchTableException');
  });

  it('creates through stage-create and an assert-create commit', async () => {
    const staged = await createTable('staged', 'sales', { 'stage-create': true });
    expect(staged['metadata-location']).toBeNull();
    expect((await stack.request('HEAD', `/v1/wh/namespaces/${ns('sales')}/tables/staged`)).status).toBe(404);
    const m = staged.metadata;
    const res = await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/tables/staged`, {
      requirements: [{ type: 'assert-create' }],
      updates: [
        { action: 'assign-uuid', uuid: m['table-uuid'] },
        { action: 'upgrade-format-version', 'format-version': 2 },
        { action: 'add-schema', schema: m.schemas[0], 'last-column-id': m['last-column-id'] },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'add-spec', spec: m['partition-specs'][0] },
        { action: 'set-default-spec', 'spec-id': -1 },
        { action: 'add-sort-order', 'sort-order': m['sort-orders'][0] },
        { action: 'set-default-sort-order', 'sort-order-id': -1 },
        { action: 'set-location', location: m.location },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.metadata['table-uuid']).toBe(m['table-uuid']);
    expect((await stack.request('HEAD', `/v1/wh/namespaces/${ns('sales')}/tables/staged`)).status).toBe(204);
    const again = await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/tables/staged`, { requirements: [{ type: 'assert-create' }], updates: [] });
    expectError(again, 409, 'CommitFailedException');
  });

  it('commits multi-table transactions atomically', async () => {
    const a = await createTable('tx_a');
    const b = await createTable('tx_b');
    const failing = await stack.request('POST', '/v1/wh/transactions/commit', {
      'table-changes': [
        { identifier: { namespace: ['sales'], name: 'tx_a' }, requirements: [{ type: 'assert-table-uuid', uuid: a.metadata['table-uuid'] }], updates: [{ action: 'set-properties', updates: { tx: '1' } }] },
        { identifier: { namespace: ['sales'], name: 'tx_b' }, requirements: [{ type: 'assert-table-uuid', uuid: a.metadata['table-uuid'] }], updates: [{ action: 'set-properties', updates: { tx: '1' } }] },
      ],
    });
    expectError(failing, 409, 'CommitFailedException');
    const aAfter = await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}/tables/tx_a`);
    expect(aAfter.body.metadata.properties.tx).toBeUndefined();
    expect(aAfter.body['metadata-location']).toBe(a['metadata-location']);

    const ok = await stack.request('POST', '/v1/wh/transactions/commit', {
      'table-changes': [
        { identifier: { namespace: ['sales'], name: 'tx_b' }, requirements: [{ type: 'assert-table-uuid', uuid: b.metadata['table-uuid'] }], updates: [{ action: 'set-properties', updates: { tx: '2' } }] },
        { identifier: { namespace: ['sales'], name: 'tx_a' }, requirements: [{ type: 'assert-table-uuid', uuid: a.metadata['table-uuid'] }], updates: [{ action: 'set-properties', updates: { tx: '2' } }] },
      ],
    });
    expect(ok.status).toBe(204);
    for (const t of ['tx_a', 'tx_b']) {
      expect((await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}/tables/${t}`)).body.metadata.properties.tx).toBe('2');
    }
  });

  it('renames tables, keeping their location, and refuses taken names', async () => {
    await createTable('old_name');
    const res = await stack.request('POST', '/v1/wh/tables/rename', {
      source: { namespace: ['sales'], name: 'old_name' },
      destination: { namespace: ['sales', 'eu'], name: 'new_name' },
    });
    expect(res.status).toBe(204);
    const moved = await stack.request('GET', `/v1/wh/namespaces/${ns('sales', 'eu')}/tables/new_name`);
    expect(moved.body.metadata.location).toBe('s3://warehouse/wh/sales/old_name');
    expect((await stack.request('HEAD', `/v1/wh/namespaces/${ns('sales')}/tables/old_name`)).status).toBe(404);
    expectError(
      await stack.request('POST', '/v1/wh/tables/rename', { source: { namespace: ['sales'], name: 'old_name' }, destination: { namespace: ['sales'], name: 'x' } }),
      404,
      'NoSuchTableException',
    );
    expectError(
      await stack.request('POST', '/v1/wh/tables/rename', { source: { namespace: ['sales', 'eu'], name: 'new_name' }, destination: { namespace: ['sales'], name: 'orders' } }),
      409,
      'AlreadyExistsException',
    );
    // A new table under the old name gets its own location: the renamed table's files stay its own.
    const again = await createTable('old_name');
    expect(again.metadata.location).toMatch(/^s3:\/\/warehouse\/wh\/sales\/old_name-[0-9a-f]{32}$/);
  });

  it('drops tables, purging data and metadata files when asked', async () => {
    const kept = await createTable('kept');
    const purged = await createTable('purged');
    const prefixOf = (t: any) => `${t.metadata.location.slice('s3://warehouse/'.length)}/`;
    expect(await keysUnder(prefixOf(purged))).toHaveLength(1);

    expect((await stack.request('DELETE', `/v1/wh/namespaces/${ns('sales')}/tables/kept`)).status).toBe(204);
    expect(await keysUnder(prefixOf(kept))).toHaveLength(1);
    expect((await stack.request('DELETE', `/v1/wh/namespaces/${ns('sales')}/tables/purged?purgeRequested=true`)).status).toBe(204);
    expect(await keysUnder(prefixOf(purged))).toEqual([]);
    expectError(await stack.request('DELETE', `/v1/wh/namespaces/${ns('sales')}/tables/purged`), 404, 'NoSuchTableException');
  });
  it('a purge deletes the files its metadata references, never a prefix: a table inside its location, and files it names elsewhere, stay', async () => {
    const key = (uri: string) => uri.slice(`s3://${stack.bucket}/`.length);
    const put = (uri: string, body: Uint8Array | string) => stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key(uri), Body: body }));
    /** Writes its data files (those under its location), a manifest and a manifest list, and commits them as the table's snapshot `id`. */
    async function snapshot(table: any, name: string, id: bigint, dataFiles: string[]) {
      const m = table.metadata;
      for (const f of dataFiles) if (f.startsWith(`${m.location}/`)) await put(f, `rows of ${name}`);
      const manifest = writeManifest({
        schema: m.schemas[0],
        spec: m['partition-specs'][0],
        content: 'data',
        entries: dataFiles.map((f) => ({
          status: 1,
          snapshot_id: id,
          sequence_number: null,
          file_sequence_number: null,
          data_file: { content: 0, file_path: f, file_format: 'PARQUET', partition: {}, record_count: 1n, file_size_in_bytes: 10n },
        })),
      });
      const manifestUri = `${m.location}/metadata/${name}-${id}-m0.avro`;
      await put(manifestUri, manifest);
      const list = writeManifestList({
        snapshotId: id,
        parentSnapshotId: null,
        sequenceNumber: 1n,
        manifests: [{
          manifest_path: manifestUri, manifest_length: BigInt(manifest.length), partition_spec_id: 0, content: 0, sequence_number: 1n, min_sequence_number: 1n,
          added_snapshot_id: id, added_files_count: dataFiles.length, existing_files_count: 0, deleted_files_count: 0, added_rows_count: 1n, existing_rows_count: 0n, deleted_rows_count: 0n,
        }],
      });
      const listUri = `${m.location}/metadata/snap-${id}.avro`;
      await put(listUri, list);
      const res = await stack.request('POST', `/v1/wh/namespaces/${ns('sales')}/tables/${name}`, { requirements: [], updates: appendSnapshot(id, null, 1, listUri) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const outer = await createTable('outer');
    // Two tables whose locations share a prefix: inner's lies inside outer's.
    const inner = await createTable('inner', 'sales', { location: `${outer.metadata.location}/inner` });
    const victim = await createTable('victim');
    const victimData = `${victim.metadata.location}/data/v.parquet`;
    await snapshot(victim, 'victim', 11n, [victimData]);
    // outer's writer names victim's data file in its manifest (any writer can put any path in one).
    await snapshot(outer, 'outer', 12n, [`${outer.metadata.location}/data/o.parquet`]);
    await snapshot(outer, 'outer', 13n, [`${outer.metadata.location}/data/o2.parquet`, victimData]);
    await snapshot(inner, 'inner', 14n, [`${inner.metadata.location}/data/i.parquet`]);
    const innerKeys = (await keysUnder(`${key(inner.metadata.location)}/`)).sort();
    expect(innerKeys).toHaveLength(5); // two metadata files, a manifest list, a manifest, a data file
    expect((await keysUnder(`${key(outer.metadata.location)}/`)).length).toBeGreaterThan(innerKeys.length + 6);

    expect((await stack.request('DELETE', `/v1/wh/namespaces/${ns('sales')}/tables/outer?purgeRequested=true`)).status).toBe(204);
    // Every file of outer went; under its prefix only inner's remain, and inner and victim still read.
    expect((await keysUnder(`${key(outer.metadata.location)}/`)).sort()).toEqual(innerKeys);
    for (const [name, t] of [['inner', inner], ['victim', victim]] as const) {
      const loaded = await stack.request('GET', `/v1/wh/namespaces/${ns('sales')}/tables/${name}`);
      expect(loaded.status).toBe(200);
      const list = loaded.body.metadata.snapshots[0]['manifest-list'];
      expect(list.startsWith(t.metadata.location)).toBe(true);
      await stack.s3.send(new GetObjectCommand({ Bucket: stack.bucket, Key: key(list) }));
    }
    expect(await (await stack.s3.send(new GetObjectCommand({ Bucket: stack.bucket, Key: key(victimData) }))).Body!.transformToString()).toBe('rows of victim');
  });
});

describe('column counts (management)', () => {
  it('counts the current schema of many tables in one request, leaves out missing ones, refuses a bad body', async () => {
    expect((await stack.request('POST', '/v1/wh/namespaces', { namespace: ['counted'] })).status).toBe(200);
    await createTable('two', 'counted');
    const evolved = await createTable('evolved', 'counted');
    const wider = { ...SCHEMA, 'schema-id': 1, fields: [...SCHEMA.fields, { id: 3, name: 'at', required: false, type: 'timestamptz' }] };
    const commit = await stack.request('POST', `/v1/wh/namespaces/counted/tables/evolved`, {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': evolved.metadata['current-schema-id'] }],
      updates: [
        { action: 'add-schema', schema: wider, 'last-column-id': 3 },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
    });
    expect(commit.status).toBe(200);
    const res = await stack.request('POST', '/management/v1/warehouses/wh/column-counts', {
      tables: [
        { namespace: ['counted'], name: 'two' },
        { namespace: ['counted'], name: 'evolved' },
        { namespace: ['counted'], name: 'absent' },
      ],
    });
    expect(res.status).toBe(200);
    expect([...res.body.tables].sort((a: any, b: any) => a.name.localeCompare(b.name))).toEqual([
      { namespace: ['counted'], name: 'evolved', column_count: 3 },
      { namespace: ['counted'], name: 'two', column_count: 2 },
    ]);
    expectError(await stack.request('POST', '/management/v1/warehouses/wh/column-counts', { tables: [{ namespace: 'counted', name: 'two' }] }), 400, 'BadRequestException');
    expect((await stack.request('POST', '/management/v1/warehouses/nope/column-counts', { tables: [] })).status).toBe(404);
  });
});
