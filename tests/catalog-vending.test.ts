// Vended credentials: short-lived keys scoped to one table's location that the bundled store accepts for reads
// and writes there, and refuses elsewhere, after expiry and after revocation.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { CopyObjectCommand, PutObjectCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { catalogWithBridge } from './support/catalogWithBridge.ts';
import { makeS3Client } from '../iceberg/s3Client.ts';

// Credentials live 5 s (long enough for the revocation steps on a loaded machine) so that expiry is observable in the test.
const { stack } = await catalogWithBridge({ credentialTtlSeconds: 5 });
const VENDED = { 'x-iceberg-access-delegation': 'vended-credentials' };
const clients: S3Client[] = [];

beforeAll(async () => {
  await stack.request('POST', '/v1/wh/namespaces', { namespace: ['db'] });
  for (const name of ['t1', 't2']) {
    await stack.request('POST', '/v1/wh/namespaces/db/tables', {
      name,
      schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
    });
  }
});

afterAll(() => {
  for (const c of clients) c.destroy();
});

function clientFrom(config: Record<string, string>): S3Client {
  const c = makeS3Client({
    endpoint: config['s3.endpoint'],
    region: config['s3.region'],
    accessKeyId: config['s3.access-key-id'],
    secretAccessKey: config['s3.secret-access-key'],
    pathStyle: config['s3.path-style-access'] === 'true',
  });
  clients.push(c);
  return c;
}

async function vended(table: string) {
  const res = await stack.request('GET', `/v1/wh/namespaces/db/tables/${table}`, undefined, VENDED);
  expect(res.status).toBe(200);
  return res.body;
}

const keyOf = (uri: string) => uri.slice('s3://warehouse/'.length);

describe('vended credentials', () => {
  it('are returned only when asked for, scoped to the table location', async () => {
    const plain = await stack.request('GET', '/v1/wh/namespaces/db/tables/t1');
    expect(plain.body.config).toEqual({});
    expect(plain.body['storage-credentials']).toBeUndefined();

    const body = await vended('t1');
    const config = body.config;
    expect(config).toMatchObject({ 's3.endpoint': stack.store.endpoint, 's3.region': 'us-east-1', 's3.path-style-access': 'true' });
    expect(config['s3.access-key-id']).toMatch(/^EIDV/);
    expect(config['s3.access-key-id']).not.toBe('eider-root');
    const expiresAt = Number(config['s3.session-token-expires-at-ms']);
    expect(expiresAt).toBeGreaterThan(Date.now());
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 6000);
    expect(body['storage-credentials']).toEqual([{ prefix: `${body.metadata.location}/`, config }]);

    const creds = await stack.request('GET', '/v1/wh/namespaces/db/tables/t1/credentials');
    expect(creds.body['storage-credentials'][0].prefix).toBe(`${body.metadata.location}/`);
  });

  it('read and write under the table location and nowhere else', async () => {
    const body = await vended('t1');
    const s3 = clientFrom(body.config);
    const meta = await s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: keyOf(body['metadata-location']) }));
    expect(await meta.Body!.transformToString()).toContain(body.metadata['table-uuid']);
    const dataKey = `${keyOf(body.metadata.location)}/data/part-0.parquet`;
    await s3.send(new PutObjectCommand({ Bucket: 'warehouse', Key: dataKey, Body: 'rows' }));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'warehouse', Prefix: `${keyOf(body.metadata.location)}/data/` }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual([dataKey]);

    const other = await vended('t2');
    await expect(s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: keyOf(other['metadata-location']) }))).rejects.toMatchObject({ name: 'AccessDenied' });
    await expect(s3.send(new PutObjectCommand({ Bucket: 'warehouse', Key: 'wh/db/t1-evil/x', Body: 'x' }))).rejects.toMatchObject({ name: 'AccessDenied' });
    // Nor by a copy into its own prefix: the source is held to the scope too.
    const stolen = `${keyOf(body.metadata.location)}/data/stolen.json`;
    await expect(s3.send(new CopyObjectCommand({ Bucket: 'warehouse', Key: stolen, CopySource: `warehouse/${keyOf(other['metadata-location'])}` }))).rejects.toMatchObject({
      name: 'AccessDenied',
      message: expect.stringContaining('copy source'),
    });
  });

  it('are refused after revocation of the key, and of every key of the warehouse', async () => {
    const one = await vended('t1');
    const s3 = clientFrom(one.config);
    const key = keyOf(one['metadata-location']);
    await s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: key }));
    const revoke = await stack.request('POST', '/management/v1/warehouses/wh/credentials/revoke', { access_key_id: one.config['s3.access-key-id'] });
    expect(revoke.status).toBe(204);
    await expect(s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: key }))).rejects.toMatchObject({
      name: 'InvalidAccessKeyId',
      message: expect.stringContaining('revoked'),
    });

    const t1 = await vended('t1');
    const t2 = await vended('t2');
    const pairs = [
      { s3: clientFrom(t1.config), key: keyOf(t1['metadata-location']) },
      { s3: clientFrom(t2.config), key: keyOf(t2['metadata-location']) },
    ];
    for (const p of pairs) await p.s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: p.key }));
    expect((await stack.request('POST', '/management/v1/warehouses/wh/revoke-credentials')).status).toBe(200);
    for (const p of pairs) {
      await expect(p.s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: p.key }))).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    }
    // Fresh credentials work again.
    const fresh = clientFrom((await vended('t1')).config);
    await fresh.send(new GetObjectCommand({ Bucket: 'warehouse', Key: key }));
  });

  it('are refused after they expire', async () => {
    const body = await vended('t1');
    const s3 = clientFrom(body.config);
    const key = keyOf(body['metadata-location']);
    await s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: key }));
    const wait = Number(body.config['s3.session-token-expires-at-ms']) - Date.now() + 50;
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    await expect(s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: key }))).rejects.toMatchObject({
      name: 'ExpiredToken',
      message: expect.stringContaining('expired'),
    });
  });
});
