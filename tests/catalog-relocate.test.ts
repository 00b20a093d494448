// The catalog service's side of a storage migration: the read-only mark refuses every change to a warehouse (and
// only changes), and a relocation moves every table and the warehouse in one transaction, or nothing when a table
// changed or the table set differs; done twice it is a no-op. Warehouse secrets are sealed at rest.
import { describe, it, expect, beforeAll } from 'vitest';
import { startExtraStore } from './support/catalogStack.ts';
import { catalogWithBridge, CATALOG_START_TIMEOUT } from './support/catalogWithBridge.ts';
import { within } from './support/stackWithAgent.ts';
import { stringifyJson, parseJson } from '../iceberg/json.ts';

const lake = await within(CATALOG_START_TIMEOUT.stack, 'the lake2 store', startExtraStore({ bucket: 'lake2' }), (late) => late.close());
const { stack, tdb } = await catalogWithBridge({ closeAfter: [lake] });

beforeAll(async () => {
  for (const ns of ['a', 'b']) expect((await stack.request('POST', '/v1/wh/namespaces', { namespace: [ns] })).status).toBe(200);
  for (const ns of ['a', 'b']) {
    const res = await stack.request('POST', `/v1/wh/namespaces/${ns}/tables`, { name: 't', schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] } });
    expect(res.status).toBe(200);
  }
});

const loc = async (ns: string) => (await stack.request('GET', `/v1/wh/namespaces/${ns}/tables/t`)).body['metadata-location'] as string;
const metadataOf = async (ns: string) => (await stack.request('GET', `/v1/wh/namespaces/${ns}/tables/t`)).body.metadata;

/** The relocation body: each table's metadata, moved under the lake root (written there first, as a migration does). */
async function relocation(tables: string[], from?: Record<string, string>) {
  const out = [];
  for (const ns of tables) {
    const m = await metadataOf(ns);
    const to = `s3://lake2/wh/${ns}/t/metadata/00000-moved.metadata.json`;
    const json = stringifyJson({ ...m, location: `s3://lake2/wh/${ns}/t` });
    out.push({ namespace: [ns], name: 't', from: from?.[ns] ?? (await loc(ns)), to, metadata_json: json });
  }
  return {
    root_uri: 's3://lake2/wh/',
    kind: 'object_store',
    endpoint: lake.endpoint,
    region: 'us-east-1',
    access_key_id: lake.accessKey,
    secret_access_key: lake.secretKey,
    path_style: true,
    vending: 'derived',
    tables: out,
  };
}

describe('the warehouse read-only mark', () => {
  it('refuses every change (commits, creates, drops, renames) and no read; clearing it lets changes through', async () => {
    expect((await stack.request('PUT', '/management/v1/warehouses/wh/read-only', { read_only: true })).body).toMatchObject({ read_only: true });
    const commit = await stack.request('POST', '/v1/wh/namespaces/a/tables/t', { requirements: [], updates: [{ action: 'set-properties', updates: { x: '1' } }] });
    expect(commit.status).toBe(403);
    expect(commit.body.error.message).toMatch(/read-only while a storage migration/);
    expect((await stack.request('POST', '/v1/wh/namespaces', { namespace: ['c'] })).status).toBe(403);
    expect((await stack.request('DELETE', '/v1/wh/namespaces/a/tables/t')).status).toBe(403);
    expect((await stack.request('POST', '/v1/wh/tables/rename', { source: { namespace: ['a'], name: 't' }, destination: { namespace: ['a'], name: 'u' } })).status).toBe(403);
    expect((await stack.request('GET', '/v1/wh/namespaces/a/tables/t')).status).toBe(200);
    expect((await stack.request('PUT', '/management/v1/warehouses/wh/read-only', { read_only: false })).body).toMatchObject({ read_only: false });
    expect((await stack.request('POST', '/v1/wh/namespaces/a/tables/t', { requirements: [], updates: [{ action: 'set-properties', updates: { x: '1' } }] })).status).toBe(200);
  });

  it('keeps warehouse secrets sealed at rest', async () => {
    const [row] = await tdb.db.query<{ secret_access_key: string }>(`select secret_access_key from catalog.warehouses where name = 'wh'`);
    expect(row.secret_access_key).toMatch(/^eidsealed:v1:/);
  });
});

describe('a relocation', () => {
  it('moves nothing when a table is not at the metadata file copied, or when the tables named differ', async () => {
    const before = { a: await loc('a'), b: await loc('b') };
    const stale = await stack.request('POST', '/management/v1/warehouses/wh/relocate', await relocation(['a', 'b'], { a: 's3://warehouse/wh/a/t/metadata/old.metadata.json' }));
    expect(stale.status).toBe(409);
    expect(stale.body.error.message).toMatch(/changed since the migration copied it/);
    const partial = await stack.request('POST', '/management/v1/warehouses/wh/relocate', await relocation(['a']));
    expect(partial.status).toBe(409);
    expect({ a: await loc('a'), b: await loc('b') }).toEqual(before);
    expect((await stack.request('GET', '/management/v1/warehouses/wh')).body.root_uri).toBe('s3://warehouse/wh/');
    const outside = await relocation(['a', 'b']);
    outside.tables[0].to = 's3://elsewhere/x.metadata.json';
    expect((await stack.request('POST', '/management/v1/warehouses/wh/relocate', outside)).status).toBe(400);
  });

  it('moves every table and the warehouse together, revokes vended keys, and is a no-op the second time', async () => {
    const body = await relocation(['a', 'b']);
    const epoch = (await stack.request('GET', '/management/v1/warehouses/wh')).body.credential_epoch;
    await stack.request('PUT', '/management/v1/warehouses/wh/read-only', { read_only: true });
    const res = await stack.request('POST', '/management/v1/warehouses/wh/relocate', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ root_uri: 's3://lake2/wh/', endpoint: lake.endpoint, read_only: false, tables_moved: 2 });
    expect(res.body.credential_epoch).toBeGreaterThan(epoch);
    expect(await loc('a')).toBe('s3://lake2/wh/a/t/metadata/00000-moved.metadata.json');
    expect((await metadataOf('b')).location).toBe('s3://lake2/wh/b/t');
    // vended credentials now address the new store
    const vended = await stack.request('GET', '/v1/wh/namespaces/a/tables/t', undefined, { 'x-iceberg-access-delegation': 'vended-credentials' });
    expect(vended.body.config['s3.endpoint']).toBe(lake.endpoint);
    expect(vended.body['storage-credentials'][0].prefix).toBe('s3://lake2/wh/a/t/');
    const again = await stack.request('POST', '/management/v1/warehouses/wh/relocate', body);
    expect(again.status).toBe(200);
    expect(again.body.tables_moved).toBe(0);
    expect(parseJson<any>(stringifyJson(again.body)).root_uri).toBe('s3://lake2/wh/');
  });
});
