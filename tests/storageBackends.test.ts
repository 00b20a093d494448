// Storage backends for real, through the api: registration probes the store (a clear 422 with the store's own
// message when it cannot be used), secrets are sealed at rest and never returned, and a catalog on a second
// S3-compatible endpoint (its own object-store process, bucket and keys) as object_store or s3 serves a real
// agent's reads and writes with vended, prefix-scoped keys, and a session's staging URLs signed for that store.
// A foreign-like store (one that verifies no derived key but offers STS AssumeRole, as MinIO does) is probed to
// `sts` and serves the agent with temporary credentials under a session policy; one without STS falls back to static.
// An AWS-like store (STS that refuses AssumeRole without a RoleArn) is probed to `sts` only with the backend's
// `role_arn`, which the probe and every table load send as RoleArn (observed at the store's AssumeRole).
// Rotating a backend's credentials (PATCH): the store is restarted on its port and data with a new root key pair (as
// rotating MinIO's root credentials does), the rotation probes it with the new pair and hands it to the catalog's
// warehouse in one transaction; a wrong new secret changes nothing.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startObjectStore } from '../runtime/objectStore.ts';
import type { AssumeRoleRequest } from '../runtime/objectStoreSts.ts';
import { makeS3Client } from '../iceberg/s3Client.ts';
import { openBackendSecret } from '../domain/backendStorage.ts';
import { openSecret } from '../settings/secretBox.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { startExtraStore, STACK_SECRET_KEY } from './support/catalogStack.ts';
import { freePort } from '../runtime/postgres.ts';

/** MinIO-like stores: root key and STS (`minio`), root key only (`plain`); neither verifies derived keys. */
const FOREIGN = { accessKey: 'foreign-root', secretKey: 'foreign-root-secret-for-tests' };
const assumed: AssumeRoleRequest[] = [];
const ROLE_ARN = 'arn:aws:iam::123456789012:role/eider/lake-access';

const lake = await startExtraStore({ bucket: 'lake2' });
const foreignDir = mkdtempSync(join(tmpdir(), 'eider-foreign-'));
const minio = await startObjectStore({ dir: join(foreignDir, 'minio'), port: 0, bucket: 'lake3', ...FOREIGN, derivedKeys: false });
const plain = await startObjectStore({ dir: join(foreignDir, 'plain'), port: 0, bucket: 'lake4', ...FOREIGN, derivedKeys: false, sts: false });
/** AWS-like: STS that wants a RoleArn; every AssumeRole it answers is recorded. */
const awsLike = await startObjectStore({
  dir: join(foreignDir, 'aws'),
  port: 0,
  bucket: 'lake5',
  ...FOREIGN,
  derivedKeys: false,
  stsRequireRoleArn: true,
  onAssumeRole: (r) => assumed.push(r),
});
/** The store whose keys are rotated: restarted on the same port and directory with ROT_NEW (one root key at a time). */
const ROT_OLD = { accessKey: 'rot-old-key', secretKey: 'rot-old-secret-for-tests' };
const ROT_NEW = { accessKey: 'rot-new-key', secretKey: 'rot-new-secret-for-tests' };
const rotDir = join(foreignDir, 'rot');
let rot = await startObjectStore({ dir: rotDir, port: 0, bucket: 'lake6', ...ROT_OLD });
/** The store's own key rotation: it restarts on its port and data with `keys`, and its old pair stops working. */
async function rotateStoreKeys(keys: { accessKey: string; secretKey: string }) {
  const port = rot.port;
  await rot.close();
  rot = await startObjectStore({ dir: rotDir, port, bucket: 'lake6', ...keys });
}
const minioS3 = makeS3Client({ endpoint: minio.endpoint, accessKeyId: FOREIGN.accessKey, secretAccessKey: FOREIGN.secretKey });
const { t, admin, agentId } = await stackWithAgent({
  env: { SQL_SESSIONS_ENABLED: 'true' },
  agent: { name: 'storage-agent' },
  closeAfter: [
    {
      async close() {
        await lake.close();
        minioS3.destroy();
        await minio.close();
        await plain.close();
        await awsLike.close();
        await rot.close();
        rmSync(foreignDir, { recursive: true, force: true });
      },
    },
  ],
});

const createBackend = (body: Record<string, unknown>) => t.req('POST', '/api/admin/storage-backends', { as: admin, body });
/** A backend body (object_store unless `extra` says otherwise) rooted at `s3://{bucket}/{name}/` on a store. */
const backendOn = (name: string, at: { endpoint: string; bucket: string; accessKey: string; secretKey: string }, extra: Record<string, unknown> = {}) => ({
  name,
  kind: 'object_store',
  root_uri: `s3://${at.bucket}/${name}/`,
  endpoint: at.endpoint,
  access_key_id: at.accessKey,
  secret_access_key: at.secretKey,
  ...extra,
});
const onLake = (name: string, extra: Record<string, unknown> = {}) => backendOn(name, lake, extra);

async function keysOnLake(prefix: string): Promise<string[]> {
  const out = await lake.s3.send(new ListObjectsV2Command({ Bucket: 'lake2', Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

async function run(sql: string, catalog?: string) {
  const s = await t.req('POST', '/api/workspaces/default/queries', { as: admin, body: { sql, agent_id: agentId, ...(catalog ? { catalog } : {}) } });
  expect(s.status, s.text).toBe(202);
  const q = await t.req('GET', `/api/queries/${s.body.id}?wait_timeout_s=60`, { as: admin });
  expect(q.body.status, q.body.error).toBe('done');
  return q.body;
}

describe('registering a backend probes it', () => {
  it('an S3-compatible endpoint: 201, keys derived per table (its store verifies them), the secret sealed and never returned', async () => {
    const r = await createBackend(onLake('lake-os'));
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ kind: 'object_store', endpoint: lake.endpoint, has_credentials: true, credential_vending: 'derived' });
    expect(r.text).not.toContain(lake.secretKey);
    const [row] = await t.database.db.query<{ secret_access_key: string }>(`select secret_access_key from eider.storage_backends where id = $1`, [r.body.id]);
    expect(row.secret_access_key).toMatch(/^eidsealed:v1:/);
    expect(row.secret_access_key).not.toContain(lake.secretKey);
    // the probe object is gone again
    expect(await keysOnLake('lake-os/.eider-probe/')).toEqual([]);
  });

  it('refuses with 422 storage_unreachable and the store\'s own message: wrong secret, missing bucket, nothing listening', async () => {
    const wrong = await createBackend(onLake('lake-wrong', { secret_access_key: 'not-the-secret' }));
    expect(wrong.status, wrong.text).toBe(422);
    expect(wrong.body).toMatchObject({ error: 'storage_unreachable', details: { store_code: 'SignatureDoesNotMatch' } });
    expect(wrong.body.message).toContain('lake-wrong');
    expect(wrong.text).not.toContain('not-the-secret');

    const bucket = await createBackend(onLake('lake-nobucket', { root_uri: 's3://no-such-bucket/x/' }));
    expect(bucket.status).toBe(422);
    expect(bucket.body).toMatchObject({ error: 'storage_unreachable', details: { store_code: 'NoSuchBucket' } });

    const port = await freePort();
    const down = await createBackend(onLake('lake-down', { endpoint: `http://127.0.0.1:${port}` }));
    expect(down.status).toBe(422);
    expect(down.body.error).toBe('storage_unreachable');
    expect(down.body.message).toMatch(/ECONNREFUSED|connect/i);
    // nothing was registered by the refusals
    const names = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as { name: string }[]).map((b) => b.name);
    expect(names).not.toContain('lake-wrong');
  });

  it('object_store without an endpoint is the bundled store, and a missing bucket there is created', async () => {
    const r = await createBackend({ name: 'bundled-more', kind: 'object_store', root_uri: 's3://more-bucket/lake/' });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ endpoint: t.stack.store.endpoint, has_credentials: false, credential_vending: 'derived' });
  });
});

describe('a catalog on a second S3-compatible endpoint', () => {
  it('as kind s3: a real agent creates, writes and reads tables whose files live on that store', async () => {
    const b = await createBackend(onLake('lake-s3', { kind: 's3', region: 'us-east-1' }));
    expect(b.status, b.text).toBe(201);
    expect(b.body).toMatchObject({ kind: 's3', credential_vending: 'derived' });
    const c = await t.req('POST', '/api/catalogs', { as: admin, body: { slug: 'lakecat', storage_backend_id: b.body.id } });
    expect(c.status, c.text).toBe(201);
    expect(c.body).toMatchObject({ storage_kind: 's3', root_uri: 's3://lake2/lake-s3/lakecat/' });
    expect((await t.req('PUT', '/api/workspaces/default/catalogs/lakecat', { as: admin, body: { make_default: false } })).status).toBe(201);
    // the catalog service keeps the backend secret sealed too
    const [wh] = await t.database.db.query<{ secret_access_key: string; vending: string }>(`select secret_access_key, vending from catalog.warehouses where name = 'lakecat'`);
    expect(wh).toMatchObject({ vending: 'derived', secret_access_key: expect.stringMatching(/^eidsealed:v1:/) });

    await run('CREATE SCHEMA app', 'lakecat');
    await run('CREATE TABLE app.events (id BIGINT, v VARCHAR)', 'lakecat');
    await run(`INSERT INTO app.events SELECT range, 'v' || range FROM range(100)`, 'lakecat');
    await run(`DELETE FROM app.events WHERE id >= 90`, 'lakecat');
    const q = await run('SELECT count(*)::INTEGER AS n, sum(id)::BIGINT AS s FROM lakecat.app.events');
    const rows = (await t.req('GET', `/api/queries/${q.id}/rows`, { as: admin })).body.rows;
    expect(rows).toEqual([{ n: 90, s: 4005 }]);
    const keys = await keysOnLake('lake-s3/lakecat/app/events/');
    expect(keys.some((k) => k.includes('/data/') && k.endsWith('.parquet'))).toBe(true);
    expect(keys.some((k) => k.includes('/metadata/') && k.endsWith('.metadata.json'))).toBe(true);
    // and nothing of it on the bundled store
    const bundled = await t.stack.s3.send(new ListObjectsV2Command({ Bucket: t.stack.bucket, Prefix: 'lakecat' }));
    expect(bundled.Contents ?? []).toEqual([]);
  }, 120_000);

  it('a session on that catalog gets staging URLs signed for that store', async () => {
    const open = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, catalog: 'lakecat', wait_timeout_s: 30 } });
    expect(open.status, open.text).toBe(201);
    expect(open.body.staging_uri).toMatch(/^s3:\/\/lake2\/lake-s3\/lakecat\//);
    const staged = await t.req('POST', `/api/sql/sessions/${open.body.id}/staging-files`, { as: admin, body: { files: ['in.csv'] } });
    expect(staged.status, staged.text).toBe(201);
    const [f] = staged.body.files;
    expect(f.put_url.startsWith(lake.endpoint)).toBe(true);
    expect((await fetch(f.put_url, { method: 'PUT', body: 'id\n1\n2\n' })).status).toBe(200);
    expect(await (await fetch(f.get_url)).text()).toBe('id\n1\n2\n');
    expect((await keysOnLake(`lake-s3/lakecat/`)).some((k) => k.endsWith('/in.csv'))).toBe(true);
    await t.req('DELETE', `/api/sql/sessions/${open.body.id}`, { as: admin });
  }, 60_000);
});

describe('a catalog on a foreign-like S3 store with STS (MinIO-like: no derived keys)', () => {
  const onForeign = (name: string, endpoint: string, bucket: string) => backendOn(name, { ...FOREIGN, endpoint, bucket });

  it('is probed to sts (and a store without STS to static); the secret never returned', async () => {
    const noSts = await createBackend(onForeign('plain-os', plain.endpoint, 'lake4'));
    expect(noSts.status, noSts.text).toBe(201);
    expect(noSts.body).toMatchObject({ credential_vending: 'static' });
    const r = await createBackend(onForeign('minio-os', minio.endpoint, 'lake3'));
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ kind: 'object_store', endpoint: minio.endpoint, credential_vending: 'sts' });
    expect(r.text).not.toContain(FOREIGN.secretKey);
  });

  it('a real agent appends and reads with temporary credentials limited to each table\'s prefix', async () => {
    const id = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string }>).find((b) => b.name === 'minio-os')!.id;
    const c = await t.req('POST', '/api/catalogs', { as: admin, body: { slug: 'stscat', storage_backend_id: id } });
    expect(c.status, c.text).toBe(201);
    expect((await t.req('PUT', '/api/workspaces/default/catalogs/stscat', { as: admin, body: { make_default: false } })).status).toBe(201);
    const [wh] = await t.database.db.query<{ vending: string }>(`select vending from catalog.warehouses where name = 'stscat'`);
    expect(wh.vending).toBe('sts');

    await run('CREATE SCHEMA app', 'stscat');
    await run('CREATE TABLE app.events (id BIGINT, v VARCHAR)', 'stscat');
    await run(`INSERT INTO app.events SELECT range, 'v' || range FROM range(50)`, 'stscat');
    await run(`INSERT INTO app.events SELECT range + 50, 'w' FROM range(50)`, 'stscat');
    const q = await run('SELECT count(*)::INTEGER AS n, sum(id)::BIGINT AS s FROM stscat.app.events');
    expect((await t.req('GET', `/api/queries/${q.id}/rows`, { as: admin })).body.rows).toEqual([{ n: 100, s: 4950 }]);
    const out = await minioS3.send(new ListObjectsV2Command({ Bucket: 'lake3', Prefix: 'minio-os/stscat/app/events/' }));
    expect((out.Contents ?? []).some((o) => o.Key!.includes('/data/') && o.Key!.endsWith('.parquet'))).toBe(true);

    // what the agent was handed: a temporary key with its session token, for this table's prefix only
    const res = await t.stack.request('GET', '/v1/stscat/namespaces/app/tables/events', undefined, { 'x-iceberg-access-delegation': 'vended-credentials' });
    expect(res.status).toBe(200);
    const config = res.body.config as Record<string, string>;
    expect(config['s3.access-key-id']).toMatch(/^EIDS/);
    expect(config['s3.session-token']).toBeTruthy();
    expect(JSON.stringify(res.body, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(FOREIGN.secretKey);
    const temp = makeS3Client({ endpoint: minio.endpoint, accessKeyId: config['s3.access-key-id'], secretAccessKey: config['s3.secret-access-key'], sessionToken: config['s3.session-token'], maxAttempts: 1 });
    try {
      const mine = await temp.send(new ListObjectsV2Command({ Bucket: 'lake3', Prefix: 'minio-os/stscat/app/events/' }));
      expect(mine.KeyCount).toBeGreaterThan(0);
      await expect(temp.send(new ListObjectsV2Command({ Bucket: 'lake3', Prefix: 'minio-os/stscat/app/' }))).rejects.toMatchObject({ name: 'AccessDenied' });
    } finally {
      temp.destroy();
    }
  }, 120_000);
});

describe('role_arn: STS that requires a role (AWS-like)', () => {
  const onAws = (name: string, extra: Record<string, unknown> = {}) => backendOn(name, { ...FOREIGN, endpoint: awsLike.endpoint, bucket: 'lake5' }, { kind: 's3', ...extra });

  it('refuses a role_arn that is no IAM role ARN, one on azure, and one the store cannot assume, each 422 naming the field', async () => {
    for (const bad of ['arn:aws:iam::12345:role/x', 'arn:aws:s3:::bucket', 'arn:aws:iam::123456789012:user/x', 'role/x']) {
      const r = await createBackend(onAws('aws-bad', { role_arn: bad }));
      expect(r.status, r.text).toBe(422);
      expect(r.body).toMatchObject({ error: 'unprocessable_content', details: { fields: [{ field: 'role_arn' }] } });
    }
    const az = await createBackend({ name: 'az-role', kind: 'azure', root_uri: 'az://lake/x/', account_name: 'devstoreaccount1', account_key: 'a2V5', role_arn: ROLE_ARN });
    expect(az.status, az.text).toBe(422);
    expect(az.body).toMatchObject({ error: 'unprocessable_content', details: { fields: [{ field: 'role_arn' }] } });
    // a role given asks for sts: a store without STS is refused rather than vended its keys as they are
    const noSts = await createBackend({ ...onAws('plain-role'), root_uri: 's3://lake4/plain-role/', endpoint: plain.endpoint, role_arn: ROLE_ARN });
    expect(noSts.status, noSts.text).toBe(422);
    expect(noSts.body).toMatchObject({ error: 'storage_unreachable', details: { store_code: 'AssumeRoleFailed' } });
    expect(noSts.text).not.toContain(FOREIGN.secretKey);
    const names = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as { name: string }[]).map((b) => b.name);
    expect(names).not.toContain('aws-bad');
    expect(names).not.toContain('plain-role');
  });

  it('without role_arn the store refuses AssumeRole (static); with it the probe assumes the role (sts) and the backend shows it', async () => {
    const without = await createBackend(onAws('aws-norole'));
    expect(without.status, without.text).toBe(201);
    expect(without.body).toMatchObject({ credential_vending: 'static', role_arn: null });

    assumed.length = 0;
    const r = await createBackend(onAws('aws-s3', { role_arn: ROLE_ARN }));
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ kind: 's3', role_arn: ROLE_ARN, credential_vending: 'sts', has_credentials: true });
    expect(r.text).not.toContain(FOREIGN.secretKey);
    expect(assumed).toEqual([expect.objectContaining({ roleArn: ROLE_ARN, sessionName: 'eider-probe' })]);
    expect((await t.req('GET', `/api/admin/storage-backends/${r.body.id}`, { as: admin })).body).toMatchObject({ role_arn: ROLE_ARN });
  });

  it('a catalog on it vends STS credentials for the role: the warehouse holds it, every table load sends it as RoleArn', async () => {
    const id = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string }>).find((b) => b.name === 'aws-s3')!.id;
    const c = await t.req('POST', '/api/catalogs', { as: admin, body: { slug: 'awscat', storage_backend_id: id } });
    expect(c.status, c.text).toBe(201);
    expect((await t.req('PUT', '/api/workspaces/default/catalogs/awscat', { as: admin, body: { make_default: false } })).status).toBe(201);
    const [wh] = await t.database.db.query<{ vending: string; role_arn: string }>(`select vending, role_arn from catalog.warehouses where name = 'awscat'`);
    expect(wh).toEqual({ vending: 'sts', role_arn: ROLE_ARN });

    assumed.length = 0;
    await run('CREATE SCHEMA app', 'awscat');
    await run('CREATE TABLE app.events (id BIGINT)', 'awscat');
    await run('INSERT INTO app.events SELECT range FROM range(10)', 'awscat');
    const q = await run('SELECT count(*)::INTEGER AS n, sum(id)::BIGINT AS s FROM awscat.app.events');
    expect((await t.req('GET', `/api/queries/${q.id}/rows`, { as: admin })).body.rows).toEqual([{ n: 10, s: 45 }]);
    expect(assumed.length).toBeGreaterThan(0);
    expect(assumed.every((a) => a.roleArn === ROLE_ARN && a.sessionName === 'eider-awscat')).toBe(true);
    expect(assumed.every((a) => a.policy?.includes('awscat/app/events/'))).toBe(true);

    const res = await t.stack.request('GET', '/v1/awscat/namespaces/app/tables/events', undefined, { 'x-iceberg-access-delegation': 'vended-credentials' });
    expect(res.status).toBe(200);
    expect(res.body.config['s3.session-token']).toBeTruthy();
    expect(assumed.at(-1)).toMatchObject({ roleArn: ROLE_ARN, sessionName: 'eider-awscat' });
  }, 120_000);
});

describe('rotating a backend\'s credentials (PATCH)', () => {
  const rotate = (id: string, body: Record<string, unknown>) => t.req('PATCH', `/api/admin/storage-backends/${id}`, { as: admin, body });
  let rotId: string;
  const backendRow = async () =>
    (await t.database.db.query<{ access_key_id: string; secret_access_key: string; credential_vending: string }>(
      `select access_key_id, secret_access_key, credential_vending from eider.storage_backends where id = $1`,
      [rotId],
    ))[0];
  const warehouseRow = async () =>
    (await t.database.db.query<{ access_key_id: string; secret_access_key: string }>(`select access_key_id, secret_access_key from catalog.warehouses where name = 'rotcat'`))[0];
  /** The catalog service's own answer about the warehouse (no keys: its credential epoch moves with each change). */
  const warehouse = async () => (await t.stack.request('GET', '/management/v1/warehouses/rotcat')).body as { credential_epoch: number; vending: string };
  const count = async () => {
    const q = await run('SELECT count(*)::INTEGER AS n FROM rotcat.app.events');
    return (await t.req('GET', `/api/queries/${q.id}/rows`, { as: admin })).body.rows[0].n as number;
  };

  it('an s3 backend a catalog is bound to: 200, the row and the warehouse hold the new keys (sealed), tables still written and read', async () => {
    const b = await createBackend(backendOn('rot-s3', { ...ROT_OLD, endpoint: rot.endpoint, bucket: 'lake6' }, { kind: 's3', region: 'us-east-1' }));
    expect(b.status, b.text).toBe(201);
    rotId = b.body.id;
    const c = await t.req('POST', '/api/catalogs', { as: admin, body: { slug: 'rotcat', storage_backend_id: rotId } });
    expect(c.status, c.text).toBe(201);
    expect((await t.req('PUT', '/api/workspaces/default/catalogs/rotcat', { as: admin, body: { make_default: false } })).status).toBe(201);
    await run('CREATE SCHEMA app', 'rotcat');
    await run('CREATE TABLE app.events (id BIGINT)', 'rotcat');
    await run('INSERT INTO app.events SELECT range FROM range(10)', 'rotcat');
    const before = await warehouse();

    // The store's keys are rotated (its old pair stops working); then the backend's.
    await rotateStoreKeys(ROT_NEW);
    const r = await rotate(rotId, { access_key_id: ROT_NEW.accessKey, secret_access_key: ROT_NEW.secretKey });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ id: rotId, kind: 's3', endpoint: rot.endpoint, root_uri: 's3://lake6/rot-s3/', has_credentials: true, credential_vending: 'derived', catalog_count: 1 });
    expect(r.body).not.toHaveProperty('secret_access_key');
    expect(r.text).not.toContain(ROT_NEW.secretKey);

    const row = await backendRow();
    expect(row.access_key_id).toBe(ROT_NEW.accessKey);
    expect(row.secret_access_key).toMatch(/^eidsealed:v1:/);
    expect(row.secret_access_key).not.toContain(ROT_NEW.secretKey);
    expect(openBackendSecret(t.api.ctx.config, row.secret_access_key)).toBe(ROT_NEW.secretKey);
    const wh = await warehouseRow();
    expect(wh.access_key_id).toBe(ROT_NEW.accessKey);
    expect(openSecret(STACK_SECRET_KEY, 'catalog.warehouses.secret_access_key', wh.secret_access_key)).toBe(ROT_NEW.secretKey);
    const after = await warehouse();
    expect(after.vending).toBe('derived');
    expect(after.credential_epoch).toBeGreaterThan(before.credential_epoch);

    await run('INSERT INTO app.events SELECT range + 10 FROM range(5)', 'rotcat');
    expect(await count()).toBe(15);
  }, 120_000);

  it('a wrong new secret: 422 storage_unreachable with the store\'s message, and nothing changed', async () => {
    const row = await backendRow();
    const wh = await warehouseRow();
    const epoch = (await warehouse()).credential_epoch;
    const r = await rotate(rotId, { access_key_id: ROT_NEW.accessKey, secret_access_key: 'not-the-new-secret' });
    expect(r.status, r.text).toBe(422);
    expect(r.body).toMatchObject({ error: 'storage_unreachable', details: { store_code: 'SignatureDoesNotMatch' } });
    expect(r.body.message).toContain('rot-s3');
    expect(r.text).not.toContain('not-the-new-secret');
    expect(await backendRow()).toEqual(row);
    expect(await warehouseRow()).toEqual(wh);
    expect((await warehouse()).credential_epoch).toBe(epoch);
    expect(await count()).toBe(15);
  }, 60_000);

  it('validation: an empty body, an unknown id, the bundled store, a field of another kind, a key without its secret', async () => {
    const empty = await rotate(rotId, {});
    expect(empty.status, empty.text).toBe(422);
    expect(empty.body).toMatchObject({ error: 'unprocessable_content', details: { fields: [{ field: 'body' }] } });
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const missing = await rotate(id, { access_key_id: 'k', secret_access_key: 's' });
      expect(missing.status, missing.text).toBe(404);
      expect(missing.body.error).toBe('not_found');
    }
    const list = (await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string }>;
    for (const name of ['bundled', 'bundled-more']) {
      const bundled = await rotate(list.find((b) => b.name === name)!.id, { access_key_id: 'k', secret_access_key: 's' });
      expect(bundled.status, bundled.text).toBe(422);
      expect(bundled.body.message).toMatch(/bundled object store/);
    }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ account_key: 'a2V5' }, 'account_key'],
      [{ access_key_id: ROT_NEW.accessKey }, 'secret_access_key'],
      [{ secret_access_key: ROT_NEW.secretKey }, 'access_key_id'],
      [{ role_arn: 'arn:aws:iam::12345:role/x' }, 'role_arn'],
      [{ access_key_id: null, secret_access_key: null }, 'access_key_id'],
    ];
    for (const [body, fieldName] of cases) {
      const r = await rotate(rotId, body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).toBe(422);
      expect(r.body).toMatchObject({ error: 'unprocessable_content' });
      expect((r.body.details.fields as Array<{ field: string }>).map((f) => f.field)).toContain(fieldName);
    }
    expect(openBackendSecret(t.api.ctx.config, (await backendRow()).secret_access_key)).toBe(ROT_NEW.secretKey);
  });

  it('the audit row names the fields rotated, never a secret', async () => {
    const rows = await t.database.db.query<{ details: { change: string; fields?: string[] }; outcome: string; r: string }>(
      `select a.details, a.outcome, row_to_json(a)::text as r from eider.audit_events a where a.action = 'backend.change' and a.target_id = $1 order by a.at`,
      [rotId],
    );
    const done = rows.filter((x) => x.outcome === 'success');
    expect(done.map((x) => x.details.change)).toEqual(['created', 'credentials_rotated']);
    expect(done[1].details).toEqual({ change: 'credentials_rotated', fields: ['access_key_id', 'secret_access_key'] });
    // the rotations refused before (bad keys, fields of another kind) are failure rows, without the keys either
    expect(rows.filter((x) => x.outcome === 'failure').length).toBeGreaterThan(0);
    for (const x of rows) {
      for (const secret of [ROT_OLD.secretKey, ROT_NEW.secretKey, 'not-the-new-secret']) expect(x.r).not.toContain(secret);
    }
    const viaRoute = await t.req('GET', '/api/admin/audit?action=backend.change', { as: admin });
    expect(viaRoute.status, viaRoute.text).toBe(200);
    expect(viaRoute.text).toContain('credentials_rotated');
    expect(viaRoute.text).not.toContain(ROT_NEW.secretKey);
  });

  it('a warehouse the catalog service refuses to update: the rotation fails whole (the row and every warehouse keep the old keys), and sent again it converges', async () => {
    // A second catalog on the backend, and a catalog service whose database refuses the third key for its warehouse
    // only: the first warehouse (rotcat, updated first) takes the new keys before the second one fails.
    const c2 = await t.req('POST', '/api/catalogs', { as: admin, body: { slug: 'rotcat2', storage_backend_id: rotId } });
    expect(c2.status, c2.text).toBe(201);
    const THIRD = { accessKey: 'rot-third-key', secretKey: 'rot-third-secret-for-tests' };
    await rotateStoreKeys(THIRD);
    const keyOf = async (name: string) => (await t.database.db.query<{ access_key_id: string }>(`select access_key_id from catalog.warehouses where name = $1`, [name]))[0].access_key_id;
    const epochs = async () => [(await warehouse()).credential_epoch, ((await t.stack.request('GET', '/management/v1/warehouses/rotcat2')).body as { credential_epoch: number }).credential_epoch];
    await t.database.db.query(`alter table catalog.warehouses add constraint rotation_refused check (name <> 'rotcat2' or access_key_id <> '${THIRD.accessKey}')`);
    try {
      const before = await backendRow();
      const [e1] = await epochs();
      const r = await rotate(rotId, { access_key_id: THIRD.accessKey, secret_access_key: THIRD.secretKey });
      expect(r.status, r.text).toBeGreaterThanOrEqual(500);
      expect(['catalog_error', 'catalog_unavailable']).toContain(r.body.error);
      expect(r.text).not.toContain(THIRD.secretKey);
      expect(await backendRow()).toEqual(before);
      expect(await keyOf('rotcat')).toBe(ROT_NEW.accessKey); // given the new key, then the old one back
      expect(await keyOf('rotcat2')).toBe(ROT_NEW.accessKey);
      expect((await epochs())[0]).toBe(e1 + 2);
    } finally {
      await t.database.db.query(`alter table catalog.warehouses drop constraint rotation_refused`);
    }
    const again = await rotate(rotId, { access_key_id: THIRD.accessKey, secret_access_key: THIRD.secretKey });
    expect(again.status, again.text).toBe(200);
    expect(again.body.catalog_count).toBe(2);
    expect(await keyOf('rotcat')).toBe(THIRD.accessKey);
    expect(await keyOf('rotcat2')).toBe(THIRD.accessKey);
    expect(openBackendSecret(t.api.ctx.config, (await backendRow()).secret_access_key)).toBe(THIRD.secretKey);
    await run('INSERT INTO app.events VALUES (100)', 'rotcat');
    expect(await count()).toBe(16);
  }, 120_000);
});
