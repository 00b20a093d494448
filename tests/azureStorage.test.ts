// The azure storage backend for real, against Azurite (the Azure Storage emulator, its own process here):
// registering probes the container (422 storage_unreachable with the store's own code when it cannot be used), the
// account key is sealed at rest and never returned; a catalog on it serves a real agent's appends, partitioned
// writes, updates, deletes and merges, schema evolution and time travel, its files in the container, read and written
// by the agent with a short-lived SAS the catalog service vends (a container SAS: Azurite has no hierarchical
// namespace); maintenance procedures and a SQL session's staging files work there too; and a catalog moves bundled →
// azure → bundled by storage migrations with every count, sum, snapshot and time-travel read unchanged.
import { describe, expect, it } from 'vitest';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { startAzurite } from './support/azurite.ts';
import { fillCatalog, fingerprint, sqlOn, waitMigration } from './support/migrations.ts';
import { startBridgeAgent } from './support/bridgeAgent.ts';
import { icebirdRows } from './support/icebergInspect.ts';
import { freePort } from '../runtime/postgres.ts';
import { getWarehouse } from '../catalog/metastore.ts';
import { hierarchicalNamespaceOf } from '../catalog/vending.ts';

const CONTAINER = 'lake';
let azureId: string;

const az = await startAzurite();
await az.container(CONTAINER).create();
const { t, admin, agentId } = await stackWithAgent({
  env: { MIGRATION_RUNNER_TICK_S: '5', ACTOR_REAPER_TICK_S: '0.2', SQL_SESSIONS_ENABLED: 'true' },
  agent: { name: 'azure-agent' },
  closeAfter: [az],
});

const createBackend = (body: Record<string, unknown>) => t.req('POST', '/api/admin/storage-backends', { as: admin, body });
const onAzurite = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  kind: 'azure',
  root_uri: `az://${CONTAINER}/${name}/`,
  endpoint: az.endpoint,
  account_name: az.accountName,
  account_key: az.accountKey,
  ...extra,
});

async function newCatalog(slug: string, backendId: string): Promise<string> {
  const c = await t.req('POST', '/api/catalogs', { as: admin, body: { slug, storage_backend_id: backendId } });
  expect(c.status, c.text).toBe(201);
  expect((await t.req('PUT', `/api/workspaces/default/catalogs/${slug}`, { as: admin, body: { make_default: false } })).status).toBe(201);
  return c.body.id;
}

describe('registering an azure backend probes its container', () => {
  it('201 with SAS vending; the account key sealed at rest (api and catalog service) and never returned', async () => {
    const r = await createBackend(onAzurite('az-main'));
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ kind: 'azure', root_uri: `az://${CONTAINER}/az-main/`, endpoint: az.endpoint, has_credentials: true, credential_vending: 'sas' });
    expect(r.text).not.toContain(az.accountKey);
    azureId = r.body.id;
    const [row] = await t.database.db.query<{ access_key_id: string; secret_access_key: string }>(`select access_key_id, secret_access_key from eider.storage_backends where id = $1`, [azureId]);
    expect(row.access_key_id).toBe(az.accountName);
    expect(row.secret_access_key).toMatch(/^eidsealed:v1:/);
    expect(row.secret_access_key).not.toContain(az.accountKey);
    for (const path of ['/api/admin/storage-backends', `/api/admin/storage-backends/${azureId}`]) {
      expect((await t.req('GET', path, { as: admin })).text).not.toContain(az.accountKey);
    }
    // the probe blob is gone again
    expect(await az.names(CONTAINER, 'az-main/.eider-probe/')).toEqual([]);
  });

  it('refuses with 422 and the store\'s own code: a wrong key, a missing container, nothing listening, no key', async () => {
    const wrongKey = Buffer.from('not-the-account-key-not-the-account-key').toString('base64');
    const wrong = await createBackend(onAzurite('az-wrong', { account_key: wrongKey }));
    expect(wrong.status, wrong.text).toBe(422);
    expect(wrong.body).toMatchObject({ error: 'storage_unreachable', details: { store_code: expect.stringMatching(/^Authentication|^Authorization/) } });
    expect(wrong.body.message).toContain('az-wrong');
    expect(wrong.text).not.toContain(wrongKey);

    const container = await createBackend(onAzurite('az-nocontainer', { root_uri: 'az://no-such-container/x/' }));
    expect(container.status).toBe(422);
    expect(container.body).toMatchObject({ error: 'storage_unreachable', details: { store_code: 'ContainerNotFound' } });

    const down = await createBackend(onAzurite('az-down', { endpoint: `http://127.0.0.1:${await freePort()}/${az.accountName}` }));
    expect(down.status).toBe(422);
    expect(down.body.error).toBe('storage_unreachable');
    expect(down.body.message).toMatch(/ECONNREFUSED|connect/i);

    const noKey = await createBackend(onAzurite('az-nokey', { account_key: undefined }));
    expect(noKey.status).toBe(422);
    expect(noKey.body.error).toBe('unprocessable_content');

    const names = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as { name: string }[]).map((b) => b.name);
    expect(names.filter((n) => n.startsWith('az-'))).toEqual(['az-main']);
  });

  it('a rotation (PATCH) takes only account_key, probed first: a wrong key is 422 storage_unreachable and changes nothing', async () => {
    const rotate = (body: Record<string, unknown>) => t.req('PATCH', `/api/admin/storage-backends/${azureId}`, { as: admin, body });
    const stored = async () => (await t.database.db.query(`select access_key_id, secret_access_key, credential_vending from eider.storage_backends where id = $1`, [azureId]))[0];
    const before = await stored();
    const wrongKey = Buffer.from('not-the-account-key-not-the-account-key').toString('base64');
    const wrong = await rotate({ account_key: wrongKey });
    expect(wrong.status, wrong.text).toBe(422);
    expect(wrong.body).toMatchObject({ error: 'storage_unreachable', details: { store_code: expect.stringMatching(/^Authentication|^Authorization/) } });
    expect(wrong.text).not.toContain(wrongKey);
    for (const f of ['access_key_id', 'secret_access_key', 'role_arn']) {
      const r = await rotate({ [f]: f === 'role_arn' ? 'arn:aws:iam::123456789012:role/x' : 'x' });
      expect(r.status, r.text).toBe(422);
      expect(r.body).toMatchObject({ error: 'unprocessable_content', details: { fields: [{ field: f }] } });
    }
    expect(await stored()).toEqual(before);
    // Azurite's key is fixed: the same key again is a valid rotation (probed, saved, vending still sas).
    const same = await rotate({ account_key: az.accountKey });
    expect(same.status, same.text).toBe(200);
    expect(same.body).toMatchObject({ kind: 'azure', has_credentials: true, credential_vending: 'sas' });
    expect(same.text).not.toContain(az.accountKey);
  });
});

describe('a catalog on azure', () => {
  it('a real agent appends, writes partitioned, updates, deletes, merges, evolves and time-travels; the files live in the container', async () => {
    await newCatalog('azcat', azureId);
    const cat = (await t.req('GET', '/api/catalogs', { as: admin })).body.find((c: { slug: string }) => c.slug === 'azcat');
    expect(cat).toMatchObject({ storage_kind: 'azure', root_uri: `az://${CONTAINER}/az-main/azcat/` });
    const [wh] = await t.database.db.query<{ kind: string; vending: string; secret_access_key: string }>(`select kind, vending, secret_access_key from catalog.warehouses where name = 'azcat'`);
    expect(wh).toMatchObject({ kind: 'azure', vending: 'sas', secret_access_key: expect.stringMatching(/^eidsealed:v1:/) });

    const sql = sqlOn(t, admin, agentId, 'azcat');
    await fillCatalog(sql);
    const fp = await fingerprint(t, admin, sql, 'azcat');
    expect(fp.tables.events).toMatchObject({ n: 3000, s: (2999 * 3000) / 2, first: 1000 });
    expect(fp.tables.events.snapshots.length).toBe(3);
    // parts: 300 over three regions plus 50 eu, then the even 'us' ids deleted
    const us = Array.from({ length: 300 }, (_, i) => i).filter((i) => i % 3 === 1);
    expect(fp.tables.parts.n).toBe(350 - us.filter((i) => i % 2 === 0).length);
    expect(await sql.rows('SELECT region, count(*)::INTEGER AS n FROM s.parts GROUP BY region ORDER BY region')).toEqual([
      { region: 'apac', n: 100 },
      { region: 'eu', n: 150 },
      { region: 'us', n: 50 },
    ]);
    // evolution and update: the added column reads null for old rows, the update landed
    expect(await sql.rows('SELECT id, name, score FROM s.evolved ORDER BY id')).toEqual([
      { id: 1, name: 'one', score: 1 },
      { id: 2, name: 'two', score: null },
      { id: 3, name: 'three', score: 3.5 },
    ]);
    // merge: one matched row updated, one new row inserted
    await sql.run(
      `MERGE INTO s.evolved AS t USING (SELECT 2 AS id, 'TWO' AS name UNION ALL SELECT 9, 'nine') AS m ON t.id = m.id ` +
        `WHEN MATCHED THEN UPDATE SET name = m.name WHEN NOT MATCHED THEN INSERT VALUES (m.id, m.name, NULL)`,
    );
    expect(await sql.rows('SELECT id, name FROM s.evolved ORDER BY id')).toEqual([
      { id: 1, name: 'one' },
      { id: 2, name: 'TWO' },
      { id: 3, name: 'three' },
      { id: 9, name: 'nine' },
    ]);
    // time travel: the first snapshot of evolved has the two first rows
    const evolvedFirst = fp.tables.evolved.snapshots[0];
    expect(await sql.rows(`SELECT count(*)::INTEGER AS n FROM s.evolved__snapshot_${evolvedFirst}`)).toEqual([{ n: 2 }]);

    const blobs = await az.names(CONTAINER, 'az-main/azcat/s/');
    expect(blobs.some((b) => b.startsWith('az-main/azcat/s/parts/data/') && b.endsWith('.parquet'))).toBe(true);
    expect(blobs.some((b) => b.startsWith('az-main/azcat/s/events/metadata/') && b.endsWith('.metadata.json'))).toBe(true);
    expect(blobs.some((b) => b.endsWith('.avro'))).toBe(true);
    const table = (await t.req('GET', '/api/workspaces/default/catalogs/azcat/schemas/s/tables/events', { as: admin })).body;
    expect(table.location).toMatch(new RegExp(`^az://${CONTAINER}/az-main/azcat/s/events`));
    // nothing of it on the bundled store
    const bundled = await t.stack.s3.send(new ListObjectsV2Command({ Bucket: t.stack.bucket, Prefix: 'azcat' }));
    expect(bundled.Contents ?? []).toEqual([]);
  }, 300_000);

  it('the catalog service vends a short-lived container SAS (Azurite has no hierarchical namespace), never the account key', async () => {
    const res = await t.stack.request('GET', '/v1/azcat/namespaces/s/tables/events', undefined, { 'x-iceberg-access-delegation': 'vended-credentials' });
    expect(res.status).toBe(200);
    const body = res.body;
    expect(JSON.stringify([body.config, body['storage-credentials']])).not.toContain(az.accountKey);
    const config = body['storage-credentials'][0].config as Record<string, string>;
    expect(body['storage-credentials'][0].prefix).toBe(`az://${CONTAINER}/az-main/azcat/s/events/`);
    const sas = new URLSearchParams(config[`adls.sas-token.${az.accountName}`]);
    // Azurite answers Get Account Information with no hierarchical namespace: a container SAS, not a directory SAS
    const wh = await getWarehouse(t.database.db, 'azcat');
    expect(await hierarchicalNamespaceOf(wh, az.accountKey)).toBe(false);
    // an account that cannot be asked: 503, never a guess
    const down = { ...wh, endpoint: `http://127.0.0.1:${await freePort()}/${az.accountName}` };
    await expect(hierarchicalNamespaceOf(down, az.accountKey)).rejects.toMatchObject({ status: 503, type: 'ServiceUnavailableException' });
    expect(sas.get('sr')).toBe('c');
    expect(sas.get('sdd')).toBeNull();
    // and it works: the table's metadata file reads with it
    const metadata = await fetch(`${az.endpoint}/${(body['metadata-location'] as string).replace(/^az:\/\//, '')}?${sas.toString()}`);
    expect(metadata.status).toBe(200);
    expect((await metadata.json())['table-uuid']).toBe(body.metadata['table-uuid']);
    // bound to the stored access policy of the warehouse's credential epoch, which carries the permissions (racwdl)
    expect(sas.get('si')).toMatch(/^eider-[0-9a-f]{16}-e\d+$/);
    expect(sas.get('sp')).toBeNull();
    const policies = (await az.container(CONTAINER).getAccessPolicy()).signedIdentifiers;
    expect(policies.find((p) => p.id === sas.get('si'))?.accessPolicy).toMatchObject({ permissions: 'racwdl' });
    const expires = Number(config[`adls.sas-token-expires-at-ms.${az.accountName}`]);
    expect(expires).toBeGreaterThan(Date.now());
    // the catalog's credential TTL (900 s here), not the account key's lifetime
    expect(expires).toBeLessThanOrEqual(Date.now() + 900_000 + 5_000);
    expect(config[`adls.connection-string.${az.accountName}`]).toBe(az.endpoint);
  });
});

describe('revoking the credentials of an azure warehouse', () => {
  const VENDED = { 'x-iceberg-access-delegation': 'vended-credentials' };
  const vend = async (wh: string) => {
    const res = await t.stack.request('GET', `/v1/${wh}/namespaces/ns/tables/tbl`, undefined, VENDED);
    expect(res.status).toBe(200);
    const config = res.body['storage-credentials'][0].config as Record<string, string>;
    return { token: config[`adls.sas-token.${az.accountName}`], metadata: res.body['metadata-location'] as string };
  };
  const blobUrl = (location: string, token: string) => `${az.endpoint}/${location.replace(/^az:\/\//, '')}?${token}`;
  const newWarehouse = async (name: string, container: string) => {
    await az.container(container).createIfNotExists();
    const wh = await t.stack.request('POST', '/management/v1/warehouses', {
      name, root_uri: `az://${container}/${name}/`, kind: 'azure', endpoint: az.endpoint, access_key_id: az.accountName, secret_access_key: az.accountKey,
    });
    expect(wh.status).toBe(201);
    expect((await t.stack.request('POST', `/v1/${name}/namespaces`, { namespace: ['ns'] })).status).toBe(200);
    const tbl = await t.stack.request('POST', `/v1/${name}/namespaces/ns/tables`, { name: 'tbl', schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] } });
    expect(tbl.status).toBe(200);
  };

  it('a SAS of the old epoch gets 403 at once (its stored access policy is replaced); a fresh one works; other policies stay', async () => {
    const container = 'revoking';
    await az.container(container).createIfNotExists();
    const other = { id: 'someone-else', accessPolicy: { permissions: 'r', expiresOn: new Date(Date.now() + 86_400_000) } };
    await az.container(container).setAccessPolicy(undefined, [other]);
    await newWarehouse('azrevoke', container);

    const first = await vend('azrevoke');
    expect((await fetch(blobUrl(first.metadata, first.token))).status).toBe(200);
    const again = await vend('azrevoke');
    expect(new URLSearchParams(again.token).get('si')).toBe(new URLSearchParams(first.token).get('si'));
    const ids = async () => (await az.container(container).getAccessPolicy()).signedIdentifiers.map((p) => p.id).sort();
    expect(await ids()).toEqual([new URLSearchParams(first.token).get('si'), 'someone-else'].sort());

    const revoke = await t.stack.request('POST', '/management/v1/warehouses/azrevoke/revoke-credentials');
    expect(revoke.status).toBe(200);
    const old = await fetch(blobUrl(first.metadata, first.token));
    expect(old.status).toBe(403);
    expect(await old.text()).toContain('AuthorizationFailure');
    expect((await fetch(blobUrl(again.metadata, again.token))).status).toBe(403);

    const fresh = await vend('azrevoke');
    expect(new URLSearchParams(fresh.token).get('si')).not.toBe(new URLSearchParams(first.token).get('si'));
    expect((await fetch(blobUrl(fresh.metadata, fresh.token))).status).toBe(200);
    // the old epoch's policy is gone, the new one and the container's other policy are there
    expect(await ids()).toEqual([new URLSearchParams(fresh.token).get('si'), 'someone-else'].sort());
    expect(JSON.stringify(revoke.body)).not.toContain(az.accountKey);
  });

  it('a container whose five stored access policies are taken by others gets an unbound SAS (expires, not revocable)', async () => {
    const container = 'crowded';
    await az.container(container).createIfNotExists();
    const others = Array.from({ length: 5 }, (_, i) => ({ id: `other-${i}`, accessPolicy: { permissions: 'r', expiresOn: new Date(Date.now() + 86_400_000) } }));
    await az.container(container).setAccessPolicy(undefined, others);
    await newWarehouse('azcrowded', container);
    const v = await vend('azcrowded');
    const sas = new URLSearchParams(v.token);
    expect(sas.get('si')).toBeNull();
    expect(sas.get('sp')).toBe('racwdl');
    expect((await fetch(blobUrl(v.metadata, v.token))).status).toBe(200);
    expect((await az.container(container).getAccessPolicy()).signedIdentifiers.map((p) => p.id)).toEqual(others.map((o) => o.id));
  });
});

describe('table maintenance on an azure warehouse (the agent\'s bridge in-process)', () => {
  it('compacts data files, expires snapshots and removes an orphan blob; rows unchanged', async () => {
    const wh = await t.stack.request('POST', '/management/v1/warehouses', {
      name: 'azmaint',
      root_uri: `az://${CONTAINER}/maint/`,
      kind: 'azure',
      endpoint: az.endpoint,
      access_key_id: az.accountName,
      secret_access_key: az.accountKey,
    });
    expect(wh.status).toBe(201);
    expect(wh.body).toMatchObject({ kind: 'azure', vending: 'sas' });
    expect(JSON.stringify(wh.body)).not.toContain(az.accountKey);
    const bridge = await startBridgeAgent(t.stack, 'azmaint');
    try {
      const norm = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
      const totals = async () => norm(await bridge.query('SELECT count(*)::INTEGER AS n, sum(id)::INTEGER AS s FROM app.small'));
      await bridge.exec('CREATE SCHEMA app');
      await bridge.exec('CREATE TABLE app.small (id BIGINT, v VARCHAR)');
      for (let i = 0; i < 6; i++) await bridge.exec(`INSERT INTO app.small SELECT range + ${i * 10}, 'v' FROM range(10)`);
      expect(await totals()).toEqual([{ n: 60, s: 1770 }]);
      expect(norm(await bridge.query(`CALL system.rewrite_data_files(table => 'azmaint.app.small')`))[0]).toMatchObject({ rewritten_data_files_count: 6, added_data_files_count: 1 });
      expect(await totals()).toEqual([{ n: 60, s: 1770 }]);
      const future = new Date(Date.now() + 86_400_000).toISOString().replace('T', ' ').slice(0, 19);
      const expired = norm(await bridge.query(`CALL system.expire_snapshots(table => 'azmaint.app.small', older_than => TIMESTAMP '${future}', retain_last => 1)`));
      expect(expired[0].deleted_data_files_count).toBe(6);
      const orphan = 'maint/app/small/data/00000-orphan.parquet';
      await az.container(CONTAINER).getBlockBlobClient(orphan).upload('not referenced', 14);
      expect(norm(await bridge.query(`CALL system.remove_orphan_files(table => 'azmaint.app.small', older_than => TIMESTAMP '${future}')`))).toEqual([{ orphan_file_location_count: 1 }]);
      expect(await az.names(CONTAINER, orphan)).toEqual([]);
      expect(await totals()).toEqual([{ n: 60, s: 1770 }]);
      expect((await az.names(CONTAINER, 'maint/app/small/data/')).length).toBe(1);
    } finally {
      await bridge.close();
    }
  }, 120_000);
});

describe('a SQL session on an azure catalog', () => {
  it('gets blob SAS staging URLs; the agent uploads what COPY … TO writes and reads a file the client staged', async () => {
    const open = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, catalog: 'azcat', wait_timeout_s: 30 } });
    expect(open.status, open.text).toBe(201);
    expect(open.body.staging_uri).toMatch(new RegExp(`^az://${CONTAINER}/az-main/azcat/`));
    const staged = await t.req('POST', `/api/sql/sessions/${open.body.id}/staging-files`, { as: admin, body: { files: ['out.csv', 'in.csv'] } });
    expect(staged.status, staged.text).toBe(201);
    const [out, inp] = staged.body.files;
    expect(out.put_url.startsWith(`${az.endpoint}/${CONTAINER}/az-main/azcat/`)).toBe(true);
    expect(staged.text).not.toContain(az.accountKey);
    const stmt = async (sql: string) => {
      const sub = await t.req('POST', `/api/sql/sessions/${open.body.id}/statements`, { as: admin, body: { sql } });
      expect(sub.status, sub.text).toBe(202);
      const q = (await t.req('GET', `/api/queries/${sub.body.id}?wait_timeout_s=60`, { as: admin })).body;
      expect(q.status, q.error).toBe('done');
      return q;
    };
    await stmt(`COPY (SELECT range AS id FROM range(5)) TO '${out.key}' (FORMAT csv, HEADER)`);
    const written = await fetch(out.get_url);
    expect(written.status).toBe(200);
    // The SAS fixes what a browser is told: a file to save, of no renderable type.
    expect(written.headers.get('content-disposition')).toBe('attachment; filename="out.csv"');
    expect(written.headers.get('content-type')).toBe('application/octet-stream');
    expect((await written.text()).trim().split('\n')).toEqual(['id', '0', '1', '2', '3', '4']);
    const put = await fetch(inp.put_url, { method: 'PUT', headers: { 'x-ms-blob-type': 'BlockBlob' }, body: 'id\n7\n8\n' });
    expect(put.status).toBe(201);
    const q = await stmt(`SELECT sum(id)::INTEGER AS s FROM read_csv('${inp.key}')`);
    expect((await t.req('GET', `/api/queries/${q.id}/rows`, { as: admin })).body.rows).toEqual([{ s: 15 }]);
    await t.req('DELETE', `/api/sql/sessions/${open.body.id}`, { as: admin });
    // the ended session's staged files are removed
    await expect.poll(async () => (await fetch(out.get_url)).status, { timeout: 10_000 }).toBe(404);
  }, 120_000);
});

/**
 * icebird (an independent Iceberg reader) reads every table at its location, with the fingerprint's row count and id
 * sum: on azure its az:// URLs are served from Azurite's container (tests/support/icebergInspect.ts).
 */
async function icebirdAgrees(warehouse: string, fp: Awaited<ReturnType<typeof fingerprint>>) {
  for (const table of ['events', 'parts', 'evolved']) {
    const rows = await icebirdRows(t.stack, warehouse, 's', table, undefined, (container, account) => {
      expect(account ?? az.accountName).toBe(az.accountName);
      return az.container(container);
    });
    expect(rows.length, table).toBe(fp.tables[table].n);
    expect(rows.reduce((a, r) => a + Number(r.id), 0), table).toBe(fp.tables[table].s);
  }
}

describe('a catalog moved bundled → azure → bundled', () => {
  it('keeps counts, sums, snapshots and time travel on both hops; icebird reads each table at its azure location', async () => {
    const bundledId = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string }>).find((b) => b.name === 'bundled')!.id;
    const catalogId = await newCatalog('movecat', bundledId);
    const sql = sqlOn(t, admin, agentId, 'movecat');
    await fillCatalog(sql);
    const before = await fingerprint(t, admin, sql, 'movecat');

    const migrate = async (target: string) => {
      const start = await t.req('POST', `/api/catalogs/${catalogId}/migrations`, { as: admin, body: { target_storage_backend_id: target } });
      expect(start.status, start.text).toBe(202);
      const done = await waitMigration(t, admin, catalogId, start.body.id, (m) => ['completed', 'failed', 'cancelled'].includes(m.status), 180_000);
      expect(done, JSON.stringify(done)).toMatchObject({ status: 'completed', phase: 'completed', error: null, tables_total: 3, tables_done: 3 });
      expect(done.bytes_copied).toBe(done.bytes_total);
      return done;
    };

    await migrate(azureId);
    expect((await t.req('GET', `/api/catalogs/${catalogId}`, { as: admin })).body).toMatchObject({ id: catalogId, slug: 'movecat', storage_backend_id: azureId, root_uri: `az://${CONTAINER}/az-main/movecat/` });
    const table = (await t.req('GET', '/api/workspaces/default/catalogs/movecat/schemas/s/tables/parts', { as: admin })).body;
    expect(table.location).toMatch(new RegExp(`^az://${CONTAINER}/az-main/movecat/s/parts`));
    expect(await fingerprint(t, admin, sql, 'movecat')).toEqual(before);
    await icebirdAgrees('movecat', before);
    expect((await az.names(CONTAINER, 'az-main/movecat/')).length).toBeGreaterThan(10);
    // writes work on azure after the cutover
    await sql.run(`INSERT INTO s.evolved VALUES (4, 'four', 4.0)`);
    await sql.run('DELETE FROM s.evolved WHERE id = 4');
    const onAzure = await fingerprint(t, admin, sql, 'movecat');
    expect(onAzure.tables.evolved).toMatchObject({ n: before.tables.evolved.n, s: before.tables.evolved.s });
    // and after a write on azure (a data file and a delete file written there, not copied)
    await icebirdAgrees('movecat', onAzure);

    await migrate(bundledId);
    expect((await t.req('GET', `/api/catalogs/${catalogId}`, { as: admin })).body).toMatchObject({ storage_backend_id: bundledId, root_uri: 's3://warehouse/movecat/' });
    expect(await fingerprint(t, admin, sql, 'movecat')).toEqual(onAzure);
    await icebirdAgrees('movecat', onAzure);
  }, 420_000);
});
