// Catalog storage migrations on the real stack: a real agent writes a catalog of several tables and snapshots on the
// bundled store; it moves to a second S3-compatible endpoint (its own object-store process) and back, and after
// each hop count and sum per table, snapshot ids and time travel are unchanged and icebird, an independent
// Iceberg reader, reads the tables at their new location. While a migration runs, writes and REST DDL answer 409
// catalog_read_only and reads work; a cancel before the cutover leaves everything as it was; the old files are
// deleted once the retention is over.
import { beforeAll, describe, expect, it } from 'vitest';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { startExtraStore } from './support/catalogStack.ts';
import { icebirdRows } from './support/icebergInspect.ts';
import { fillCatalog, fingerprint, sqlOn, startSlowProxy, submitRaw, waitMigration, lakeBackend } from './support/migrations.ts';

let bundledId: string;

const lake = await startExtraStore({ bucket: 'lake2' });
// A new migration is begun by the replica that accepts it; the tick (slow here) only resumes interrupted ones.
const { t, admin, agentId } = await stackWithAgent({
  env: { MIGRATION_RUNNER_TICK_S: '5', ACTOR_REAPER_TICK_S: '0.2' },
  agent: { name: 'migration-agent' },
  closeAfter: [lake],
});
beforeAll(async () => {
  bundledId = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string }>).find((b) => b.name === 'bundled')!.id;
});

const backendOn = (name: string, endpoint: string) => lakeBackend(t, admin, lake, name, endpoint);

async function newCatalog(slug: string): Promise<string> {
  const c = await t.req('POST', '/api/catalogs', { as: admin, body: { slug, storage_backend_id: bundledId } });
  expect(c.status, c.text).toBe(201);
  expect((await t.req('PUT', `/api/workspaces/default/catalogs/${slug}`, { as: admin, body: { make_default: false } })).status).toBe(201);
  return c.body.id;
}

async function keys(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    out.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

const clientFor = (bucket: string) => (bucket === 'lake2' ? lake.s3 : t.stack.s3);

async function migrate(catalogId: string, target: string) {
  const start = await t.req('POST', `/api/catalogs/${catalogId}/migrations`, { as: admin, body: { target_storage_backend_id: target } });
  expect(start.status, start.text).toBe(202);
  expect(start.body).toMatchObject({ status: 'pending', phase: 'pending', catalog_id: catalogId, target_storage_backend_id: target });
  // Every answer seen while it runs: the progress a user watches never goes backwards.
  const seen: Array<{ phase: string; tables_done: number; tables_verified: number; bytes_copied: number }> = [];
  const done = await waitMigration(t, admin, catalogId, start.body.id, (m) => {
    seen.push({ phase: m.phase, tables_done: m.tables_done, tables_verified: m.tables_verified, bytes_copied: m.bytes_copied });
    return ['completed', 'failed', 'cancelled'].includes(m.status);
  });
  expect(done, JSON.stringify(done)).toMatchObject({ status: 'completed', phase: 'completed', error: null });
  for (const field of ['tables_done', 'tables_verified', 'bytes_copied'] as const) {
    const values = seen.map((x) => x[field]);
    expect(values, `${field}: ${JSON.stringify(seen)}`).toEqual([...values].sort((a, b) => a - b));
  }
  return done;
}

async function icebirdAgrees(warehouse: string, fp: Awaited<ReturnType<typeof fingerprint>>) {
  for (const table of ['events', 'parts', 'evolved']) {
    const rows = await icebirdRows(t.stack, warehouse, 's', table, clientFor);
    expect(rows.length, table).toBe(fp.tables[table].n);
    expect(rows.reduce((a, r) => a + Number(r.id), 0), table).toBe(fp.tables[table].s);
  }
}

describe('a catalog moved bundled → second S3 endpoint → bundled', () => {
  it('keeps rows, snapshots and time travel on every hop; icebird reads it at its new location; the old files are kept, then go', async () => {
    const catalogId = await newCatalog('hopcat');
    const sql = sqlOn(t, admin, agentId, 'hopcat');
    await fillCatalog(sql);
    const before = await fingerprint(t, admin, sql, 'hopcat');
    expect(before.tables.events).toMatchObject({ n: 3000 });
    expect(before.tables.events.snapshots.length).toBeGreaterThanOrEqual(3);
    const lakeId = await backendOn('lake-b', lake.endpoint);

    // hop 1: to the second endpoint
    const m1 = await migrate(catalogId, lakeId);
    expect(m1).toMatchObject({ tables_total: 3, tables_done: 3, tables_verified: 3, source_storage_backend_id: bundledId });
    expect(m1.bytes_total).toBeGreaterThan(0);
    expect(m1.bytes_copied).toBe(m1.bytes_total);
    expect(m1.tables.map((x: any) => [x.schema, x.table, x.state])).toEqual([['s', 'events', 'verified'], ['s', 'evolved', 'verified'], ['s', 'parts', 'verified']]);
    expect(Date.parse(m1.retain_until) - Date.parse(m1.finished_at)).toBeGreaterThan(6 * 86_400_000);
    const cat = (await t.req('GET', `/api/catalogs/${catalogId}`, { as: admin })).body;
    expect(cat).toMatchObject({ id: catalogId, slug: 'hopcat', storage_backend_id: lakeId, root_uri: 's3://lake2/lake-b/hopcat/' });
    const table = (await t.req('GET', '/api/workspaces/default/catalogs/hopcat/schemas/s/tables/events', { as: admin })).body;
    expect(table.location).toMatch(/^s3:\/\/lake2\/lake-b\/hopcat\/s\/events/);
    expect(await fingerprint(t, admin, sql, 'hopcat')).toEqual(before);
    await icebirdAgrees('hopcat', before);
    expect((await keys(lake.s3, 'lake2', 'lake-b/hopcat/')).length).toBeGreaterThan(10);
    // the old files stay for the retention (days, here)
    const oldFiles = await keys(t.stack.s3, t.stack.bucket, 'hopcat/');
    expect(oldFiles.length).toBeGreaterThan(10);
    // writes work again, on the new storage
    await sql.run('INSERT INTO s.evolved VALUES (4, \'four\', 4.0)');
    await sql.run('DELETE FROM s.evolved WHERE id = 4');
    const afterWrite = await fingerprint(t, admin, sql, 'hopcat');

    const logs = (await t.req('GET', `/api/catalogs/${catalogId}/migrations/${m1.id}/logs`, { as: admin })).body as Array<{ seq: number; message: string; level: string; table: string | null }>;
    expect(logs.length).toBeGreaterThan(5);
    expect(logs.map((l) => l.seq)).toEqual([...logs.map((l) => l.seq)].sort((a, b) => a - b));
    expect(logs.some((l) => /cut over/.test(l.message))).toBe(true);
    expect(logs.some((l) => l.table === 's.events' && /verified/.test(l.message))).toBe(true);
    expect((await t.req('GET', `/api/catalogs/${catalogId}/migrations/${m1.id}/logs?after=${logs.at(-1)!.seq}`, { as: admin })).body).toEqual([]);

    // hop 2: back onto the bundled root, where hop 1's old files are still retained: that retention ends first
    const m2 = await migrate(catalogId, bundledId);
    expect(m2).toMatchObject({ tables_total: 3, tables_done: 3, source_storage_backend_id: lakeId });
    expect((await t.req('GET', `/api/catalogs/${catalogId}`, { as: admin })).body).toMatchObject({ id: catalogId, slug: 'hopcat', storage_backend_id: bundledId, root_uri: 's3://warehouse/hopcat/' });
    expect(await fingerprint(t, admin, sql, 'hopcat')).toEqual(afterWrite);
    await icebirdAgrees('hopcat', afterWrite);
    const [first] = await t.database.db.query<{ status: string; purged_at: Date | null }>(`select status, purged_at from storage_migrations where id = $1`, [m1.id]);
    expect(first.purged_at).not.toBeNull();
    const m2logs = (await t.req('GET', `/api/catalogs/${catalogId}/migrations/${m2.id}/logs`, { as: admin })).body as Array<{ message: string }>;
    expect(m2logs.some((l) => /ending the retention/.test(l.message))).toBe(true);

    const page = (await t.req('GET', `/api/catalogs/${catalogId}/migrations?limit=1`, { as: admin })).body;
    expect(page.items.map((m: any) => m.id)).toEqual([m2.id]);
    expect(page.has_more).toBe(true);
    const next = (await t.req('GET', `/api/catalogs/${catalogId}/migrations?limit=1&cursor=${page.cursor}`, { as: admin })).body;
    expect(next.items.map((m: any) => m.id)).toEqual([m1.id]);


    // The moment verifying begins (every table copied and rewritten, none verified yet), as the record stands in
    // the database: tables_done stays 3 and verification counts in its own field.
    const db = t.database.db;
    const states = await db.query<{ namespace: string; table_name: string; state: string }>(`select namespace, table_name, state from storage_migration_tables where migration_id = $1`, [m1.id]);
    await db.query(`update storage_migrations set phase = 'verifying' where id = $1`, [m1.id]);
    await db.query(`update storage_migration_tables set state = 'rewritten' where migration_id = $1`, [m1.id]);
    try {
      const verifying = (await t.req('GET', `/api/catalogs/${catalogId}/migrations/${m1.id}`, { as: admin })).body;
      expect(verifying).toMatchObject({ phase: 'verifying', tables_total: 3, tables_done: 3, tables_verified: 0 });
    } finally {
      await db.query(`update storage_migrations set phase = 'completed' where id = $1`, [m1.id]);
      for (const r of states) await db.query(`update storage_migration_tables set state = $4 where migration_id = $1 and namespace = $2 and table_name = $3`, [m1.id, r.namespace, r.table_name, r.state]);
    }
  }, 240_000);

  it('refuses a target it is already on, an unknown backend, a second active migration, and non-managers', async () => {
    const catalogId = await newCatalog('rulecat');
    const same = await t.req('POST', `/api/catalogs/${catalogId}/migrations`, { as: admin, body: { target_storage_backend_id: bundledId } });
    expect(same.status).toBe(422);
    const unknown = await t.req('POST', `/api/catalogs/${catalogId}/migrations`, { as: admin, body: { target_storage_backend_id: crypto.randomUUID() } });
    expect(unknown.status).toBe(422);
    expect((await t.req('GET', `/api/catalogs/${crypto.randomUUID()}/migrations`, { as: admin })).status).toBe(404);
  });
});

describe('while a migration runs', () => {
  it('writes and REST DDL answer 409 catalog_read_only, reads work; a cancel before the cutover leaves everything as it was', async () => {
    const catalogId = await newCatalog('busycat');
    const sql = sqlOn(t, admin, agentId, 'busycat');
    await fillCatalog(sql);
    const before = await fingerprint(t, admin, sql, 'busycat');
    const proxy = await startSlowProxy(lake.endpoint, 150);
    try {
      const slowId = await backendOn('slow-lake', proxy.endpoint);
      const start = await t.req('POST', `/api/catalogs/${catalogId}/migrations`, { as: admin, body: { target_storage_backend_id: slowId } });
      expect(start.status, start.text).toBe(202);
      const id = start.body.id;
      const again = await t.req('POST', `/api/catalogs/${catalogId}/migrations`, { as: admin, body: { target_storage_backend_id: slowId } });
      expect(again.status).toBe(409);
      expect(again.body.error).toBe('migration_active');
      const copying = await waitMigration(t, admin, catalogId, id, (m) => m.bytes_copied > 0 || m.status !== 'pending' && m.phase !== 'copying' && m.status !== 'running');
      expect(copying).toMatchObject({ status: 'running', phase: 'copying' });

      const write = await submitRaw(t, admin, agentId, 'busycat', 'INSERT INTO s.events VALUES (-1, 0, \'x\')');
      expect(write.status, write.text).toBe(409);
      expect(write.body).toMatchObject({ error: 'catalog_read_only', details: { catalog: 'busycat', migration_id: id } });
      const ddl = await t.req('POST', '/api/workspaces/default/catalogs/busycat/schemas', { as: admin, body: { name: 'more' } });
      expect(ddl.status).toBe(409);
      expect(ddl.body.error).toBe('catalog_read_only');
      const drop = await t.req('DELETE', '/api/workspaces/default/catalogs/busycat/schemas/s/tables/events', { as: admin });
      expect(drop.body.error).toBe('catalog_read_only');
      // another catalog of the same workspace is not affected, and reads of this one work
      await sqlOn(t, admin, agentId, 'warehouse').run('CREATE SCHEMA IF NOT EXISTS other');
      expect(await sql.rows('SELECT count(*)::BIGINT AS n FROM s.events')).toEqual([{ n: 3000 }]);
      // the catalog service refuses a commit too (a client around the api)
      const wh = await t.stack.request('POST', '/v1/busycat/namespaces', { namespace: ['sneaky'] });
      expect(wh.status).toBe(403);

      const cancel = await t.req('POST', `/api/catalogs/${catalogId}/migrations/${id}/cancel`, { as: admin });
      expect(cancel.status, cancel.text).toBe(202);
      expect(cancel.body).toMatchObject({ status: 'cancelled', phase: 'cancelled' });
      // the copy at the target goes; the catalog takes writes again; nothing changed
      await expect.poll(() => keys(lake.s3, 'lake2', 'slow-lake/busycat/'), { timeout: 30_000, interval: 200 }).toEqual([]);
      await expect.poll(async () => (await t.stack.request('GET', '/management/v1/warehouses/busycat')).body.read_only, { timeout: 30_000 }).toBe(false);
      expect((await t.req('GET', `/api/catalogs/${catalogId}`, { as: admin })).body).toMatchObject({ storage_backend_id: bundledId, root_uri: 's3://warehouse/busycat/' });
      expect(await fingerprint(t, admin, sql, 'busycat')).toEqual(before);
      await sql.run('INSERT INTO s.events VALUES (-1, 0, \'x\')');
      const logs = (await t.req('GET', `/api/catalogs/${catalogId}/migrations/${id}/logs`, { as: admin })).body as Array<{ message: string }>;
      expect(logs.some((l) => /copy at the target was removed/.test(l.message))).toBe(true);
      const late = await t.req('POST', `/api/catalogs/${catalogId}/migrations/${id}/cancel`, { as: admin });
      expect(late.status).toBe(202);
    } finally {
      await proxy.close();
    }
  }, 240_000);

  it('cancel after the cutover is 409 migration_past_cutover', async () => {
    const catalogId = await newCatalog('latecat');
    const sql = sqlOn(t, admin, agentId, 'latecat');
    await sql.run('CREATE SCHEMA s');
    await sql.run('CREATE TABLE s.t (id INTEGER)');
    await sql.run('INSERT INTO s.t VALUES (1)');
    const lakeId = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string }>).find((b) => b.name === 'lake-b')!.id;
    const done = await migrate(catalogId, lakeId);
    const late = await t.req('POST', `/api/catalogs/${catalogId}/migrations/${done.id}/cancel`, { as: admin });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe('migration_past_cutover');
    expect(await sql.rows('SELECT id FROM s.t')).toEqual([{ id: 1 }]);
  }, 120_000);

  it('dropping a catalog whose migration still retains its old files deletes those files too', async () => {
    const catalogId = await newCatalog('dropcat');
    const sql = sqlOn(t, admin, agentId, 'dropcat');
    await sql.run('CREATE SCHEMA s');
    await sql.run('CREATE TABLE s.t AS SELECT range AS id FROM range(100)');
    const backends = (await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string; root_uri: string }>;
    const old = new URL(`${backends.find((b) => b.name === 'bundled')!.root_uri}dropcat/`);
    const oldKeys = () => keys(t.stack.s3, old.host, old.pathname.slice(1));
    expect((await oldKeys()).length).toBeGreaterThan(0);
    const done = await migrate(catalogId, backends.find((b) => b.name === 'lake-b')!.id);
    expect(done.retain_until).not.toBeNull();
    // Retained (MIGRATION_RETENTION_DAYS, 7 by default): the old files are still there.
    expect((await oldKeys()).length).toBeGreaterThan(0);
    expect((await t.req('DELETE', '/api/workspaces/default/catalogs/dropcat', { as: admin })).status).toBe(204);
    const dropped = await t.req('DELETE', `/api/catalogs/${catalogId}`, { as: admin });
    expect(dropped.status, dropped.text).toBe(204);
    expect(await oldKeys()).toEqual([]);
    expect(await keys(lake.s3, 'lake2', 'lake-b/dropcat/')).toEqual([]);
  }, 120_000);
});
