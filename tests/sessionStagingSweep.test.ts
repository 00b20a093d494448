// Staging URLs a store cannot revoke (static keys, STS, azure SAS), against real stores: two S3-compatible stores
// that verify no derived keys (one with STS, one without) and Azurite. A session's end removes its files at once, but
// a put URL it handed out keeps working until it expires: what a client puts through it after the end lands, and
// the session reaper's sweep removes it once every URL of the session has expired (here a TTL of seconds and
// no grace), after which the URL is refused as expired. On the bundled store (derived keys) the session's end revokes
// the URLs instead: nothing is recorded for a sweep there.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startObjectStore } from '../runtime/objectStore.ts';
import { makeS3Client } from '../iceberg/s3Client.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { startAzurite } from './support/azurite.ts';

// Long enough for a loaded machine to stage, put, close and put again well within it (a put in the last seconds of a
// URL, after its recorded expiry, is swept at once); short enough to wait out.
const TTL_S = 20;
const FOREIGN = { accessKey: 'sweep-root', secretKey: 'sweep-root-secret-for-tests' };
const dir = mkdtempSync(join(tmpdir(), 'eider-sweep-'));
const withSts = await startObjectStore({ dir: join(dir, 'sts'), port: 0, bucket: 'sweep-sts', ...FOREIGN, derivedKeys: false });
const plain = await startObjectStore({ dir: join(dir, 'plain'), port: 0, bucket: 'sweep-plain', ...FOREIGN, derivedKeys: false, sts: false });
const az = await startAzurite();
await az.container('sweep').create();
const { t, admin, agentId } = await stackWithAgent({
  env: {
    SQL_SESSIONS_ENABLED: 'true',
    SQL_SESSION_STAGING_URL_TTL_S: String(TTL_S),
    SQL_SESSION_STAGING_SWEEP_GRACE_S: '0',
    SQL_SESSION_REAPER_TICK_S: '0.2',
  },
  agent: { name: 'sweep-agent' },
  closeAfter: [
    az,
    {
      async close() {
        await withSts.close();
        await plain.close();
        rmSync(dir, { recursive: true, force: true });
      },
    },
  ],
});
const clients = [makeS3Client({ endpoint: withSts.endpoint, accessKeyId: FOREIGN.accessKey, secretAccessKey: FOREIGN.secretKey })];
clients.push(makeS3Client({ endpoint: plain.endpoint, accessKeyId: FOREIGN.accessKey, secretAccessKey: FOREIGN.secretKey }));
afterAll(() => clients.forEach((c) => c.destroy()));

interface Store {
  name: string;
  vending: string;
  body: Record<string, unknown>;
  /** the object names under a staging URI */
  list(uri: string): Promise<string[]>;
  headers: Record<string, string>;
}
const s3List = (i: number) => async (uri: string) => {
  const u = new URL(uri);
  const out = await clients[i].send(new ListObjectsV2Command({ Bucket: u.host, Prefix: u.pathname.slice(1) }));
  return (out.Contents ?? []).map((o) => o.Key!);
};
const stores: Store[] = [
  {
    name: 'sweep-sts',
    vending: 'sts',
    body: { kind: 'object_store', root_uri: 's3://sweep-sts/lake/', endpoint: withSts.endpoint, access_key_id: FOREIGN.accessKey, secret_access_key: FOREIGN.secretKey },
    list: s3List(0),
    headers: {},
  },
  {
    name: 'sweep-plain',
    vending: 'static',
    body: { kind: 'object_store', root_uri: 's3://sweep-plain/lake/', endpoint: plain.endpoint, access_key_id: FOREIGN.accessKey, secret_access_key: FOREIGN.secretKey },
    list: s3List(1),
    headers: {},
  },
  {
    name: 'sweep-azure',
    vending: 'sas',
    body: { kind: 'azure', root_uri: 'az://sweep/lake/', endpoint: az.endpoint, account_name: az.accountName, account_key: az.accountKey },
    list: async (uri: string) => {
      const u = /^az:\/\/([^/]+)\/(.*)$/.exec(uri)!;
      return az.names(u[1], u[2]);
    },
    headers: { 'x-ms-blob-type': 'BlockBlob' },
  },
];

const sessionRow = async (id: string) =>
  (await t.database.db.query<{ staging_urls_expire_at: Date | null; staging_swept_at: Date | null }>(`select staging_urls_expire_at, staging_swept_at from eider.sql_sessions where id = $1`, [id]))[0];

async function openOn(catalog: string) {
  const open = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, catalog, wait_timeout_s: 30 } });
  expect(open.status, open.text).toBe(201);
  return open.body as { id: string; staging_uri: string };
}

async function closeSession(id: string) {
  expect((await t.req('DELETE', `/api/sql/sessions/${id}`, { as: admin })).status).toBe(204);
  await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${id}`, { as: admin })).body.status, { timeout: 15_000 }).toBe('closed');
}

describe('staging URLs a store cannot revoke', () => {
  for (const store of stores) {
    // The three stores side by side: each case mostly waits out its URLs' TTL.
    it.concurrent(`${store.vending}: a file put after the session ended is swept once its URLs expired, then the URL is refused`, { timeout: 120_000 }, async ({ expect }) => {
      const backend = await t.req('POST', '/api/admin/storage-backends', { as: admin, body: { name: store.name, ...store.body } });
      expect(backend.status, backend.text).toBe(201);
      expect(backend.body.credential_vending).toBe(store.vending);
      const slug = store.name.replace('sweep-', 'sw');
      expect((await t.req('POST', '/api/catalogs', { as: admin, body: { slug, storage_backend_id: backend.body.id } })).status).toBe(201);
      expect((await t.req('PUT', `/api/workspaces/default/catalogs/${slug}`, { as: admin, body: { make_default: false } })).status).toBe(201);

      const session = await openOn(slug);
      const staged = await t.req('POST', `/api/sql/sessions/${session.id}/staging-files`, { as: admin, body: { files: ['in.csv'] } });
      expect(staged.status, staged.text).toBe(201);
      const [file] = staged.body.files;
      // the URLs' expiry is recorded before they are handed out
      const recorded = await sessionRow(session.id);
      expect(recorded.staging_urls_expire_at!.getTime()).toBeGreaterThanOrEqual(Date.parse(staged.body.expires_at) - 2_000);
      expect(recorded.staging_swept_at).toBeNull();
      expect((await fetch(file.put_url, { method: 'PUT', headers: store.headers, body: 'id\n1\n' })).ok).toBe(true);
      expect(await store.list(session.staging_uri)).toHaveLength(1);

      await closeSession(session.id);
      // The end's removal has run (its outbox rows go once it finished): a listing can read empty while its
      // deletes are still under way, and a put among them would race them.
      await expect.poll(() => store.list(session.staging_uri), { timeout: 10_000 }).toEqual([]);
      await expect.poll(async () => (await t.database.db.query(`select 1 from eider.actor_effects where actor_id::text = $1`, [session.id])).length, { timeout: 10_000 }).toBe(0);
      // The store cannot be told the URL is over: a put through it still lands…
      const late = await fetch(file.put_url, { method: 'PUT', headers: store.headers, body: 'id\n666\n' });
      expect(late.ok, `a late put answered ${late.status}: the test's TTL (${TTL_S} s) ran out before it`).toBe(true);
      expect(await store.list(session.staging_uri)).toHaveLength(1);
      // …and no statement can read it (the session is closed)…
      const read = await t.req('POST', `/api/sql/sessions/${session.id}/statements`, { as: admin, body: { sql: `SELECT * FROM read_csv('${file.key}')` } });
      expect(read.status).toBe(409);
      // …and once the URLs expired, the sweep removes it and marks the session swept.
      await expect.poll(() => store.list(session.staging_uri), { timeout: (TTL_S + 20) * 1000, interval: 250 }).toEqual([]);
      await expect.poll(async () => (await sessionRow(session.id)).staging_swept_at, { timeout: 5_000 }).not.toBeNull();
      expect((await sessionRow(session.id)).staging_swept_at!.getTime()).toBeGreaterThanOrEqual(recorded.staging_urls_expire_at!.getTime());
      // The URL is expired now: nothing more lands.
      const after = await fetch(file.put_url, { method: 'PUT', headers: store.headers, body: 'id\n667\n' });
      expect(after.status).toBe(403);
      expect(await store.list(session.staging_uri)).toEqual([]);
    });
  }

  it('on the bundled store (derived keys) the end revokes the URLs: no sweep is recorded, a late put is refused', { timeout: 60_000 }, async () => {
    const session = await openOn('warehouse');
    const staged = await t.req('POST', `/api/sql/sessions/${session.id}/staging-files`, { as: admin, body: { files: ['in.csv'] } });
    expect(staged.status, staged.text).toBe(201);
    expect(await sessionRow(session.id)).toEqual({ staging_urls_expire_at: null, staging_swept_at: null });
    await closeSession(session.id);
    // (the revocation is the close's effect, run just after the session reads closed)
    await expect.poll(async () => (await fetch(staged.body.files[0].put_url, { method: 'PUT', body: 'id\n1\n' })).status, { timeout: 10_000 }).toBe(403);
    expect(await sessionRow(session.id)).toEqual({ staging_urls_expire_at: null, staging_swept_at: null });
    // and what a put landed before the revocation went with the files the close removed after it
    const u = new URL(session.staging_uri);
    await expect.poll(async () => (await t.stack.s3.send(new ListObjectsV2Command({ Bucket: u.host, Prefix: u.pathname.slice(1) }))).Contents ?? [], { timeout: 10_000 }).toEqual([]);
  });
});
