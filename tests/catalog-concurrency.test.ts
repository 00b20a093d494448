// Concurrent commits to one table meet at its metastore pointer (a compare-and-set, or the row lock): each lands or
// fails cleanly with 409, and the table's history (snapshot log, metadata log, files on storage) stays one
// consistent chain, also across two catalog replicas on one database.
import { describe, it, expect, beforeAll } from 'vitest';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { catalogWithBridge } from './support/catalogWithBridge.ts';
import { startCatalogService } from '../catalog/server.ts';
import { appendCommit, STACK_CLIENT, STACK_SECRET_KEY } from './support/catalogStack.ts';
import { parseJson, stringifyJson } from '../iceberg/json.ts';

const world = await catalogWithBridge();
const { stack } = world;
const TABLE = '/v1/wh/namespaces/db/tables/events';

beforeAll(async () => {
  await stack.request('POST', '/v1/wh/namespaces', { namespace: ['db'] });
  const res = await stack.request('POST', '/v1/wh/namespaces/db/tables', {
    name: 'events',
    schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
  });
  expect(res.status).toBe(200);
});

// Ids above 2^53, distinct per writer and attempt.
const snapshotId = (writer: number, attempt: number) => 7_000_000_000_000_000_000n + BigInt(writer) * 1000n + BigInt(attempt);

const append = (id: bigint, parent: bigint | null, seq: bigint) => appendCommit(id, parent, seq, `s3://warehouse/wh/db/events/metadata/snap-${id}.avro`);

describe('eight concurrent commits to one table', () => {
  it('lets exactly one of eight commits from the same base land; the others get 409', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, w) => stack.request('POST', TABLE, append(snapshotId(w, 0), null, 1n))),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) {
      expect(r.body.error).toMatchObject({ type: 'CommitFailedException', code: 409 });
    }
    const table = await stack.request('GET', TABLE);
    expect(table.body.metadata.snapshots).toHaveLength(1);
  });

  it('lands all eight when writers retry on 409, leaving one consistent chain', async () => {
    let conflicts = 0;
    const writer = async (w: number) => {
      for (let attempt = 1; attempt < 100; attempt++) {
        const current = (await stack.request('GET', TABLE)).body.metadata;
        const parent = current['current-snapshot-id'] as bigint;
        const seq = BigInt(current['last-sequence-number']) + 1n;
        const res = await stack.request('POST', TABLE, append(snapshotId(w + 10, attempt), parent, seq));
        if (res.status === 200) return;
        expect(res.status).toBe(409);
        conflicts++;
      }
      throw new Error(`writer ${w} never landed`);
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    expect(conflicts).toBeGreaterThan(0);

    const { body } = await stack.request('GET', TABLE);
    const m = body.metadata;
    // 1 from the first test + 8 here, each the child of the one before.
    expect(m.snapshots).toHaveLength(9);
    expect(m['snapshot-log']).toHaveLength(9);
    const byId = new Map(m.snapshots.map((s: any) => [s['snapshot-id'], s]));
    for (let i = 1; i < m['snapshot-log'].length; i++) {
      const s: any = byId.get(m['snapshot-log'][i]['snapshot-id']);
      expect(s['parent-snapshot-id']).toBe(m['snapshot-log'][i - 1]['snapshot-id']);
      expect(BigInt(s['sequence-number'])).toBe(BigInt(i + 1));
    }
    expect(m['current-snapshot-id']).toBe(m['snapshot-log'][8]['snapshot-id']);
    expect(BigInt(m['last-sequence-number'])).toBe(9n);

    // Metadata log: create + 9 commits = versions 00000..00008 behind the current 00009, every file on storage.
    const log = m['metadata-log'].map((e: any) => e['metadata-file']);
    expect(log).toHaveLength(9);
    expect(log.map((f: string) => /\/(\d{5})-/.exec(f)![1])).toEqual(['00000', '00001', '00002', '00003', '00004', '00005', '00006', '00007', '00008']);
    expect(body['metadata-location']).toMatch(/\/00009-/);
    for (const f of [...log, body['metadata-location']]) {
      await stack.s3.send(new HeadObjectCommand({ Bucket: 'warehouse', Key: f.slice('s3://warehouse/'.length) }));
    }
  });
});

describe('two catalog replicas on one database', () => {
  const TWIN = '/v1/wh/namespaces/db/tables/twin';

  it('judges a commit by the database, not by the pointer a replica last saw, and leaves no orphan file', async () => {
    const other = await startCatalogService({ db: world.tdb.db, port: 0, clientId: STACK_CLIENT.id, clientSecret: STACK_CLIENT.secret, secretKey: STACK_SECRET_KEY });
    world.defer(() => other.close());
    // The same client secret signs the same tokens on both replicas.
    const viaOther = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${other.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${stack.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : stringifyJson(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? parseJson<any>(text) : undefined };
    };
    const created = await stack.request('POST', '/v1/wh/namespaces/db/tables', {
      name: 'twin',
      schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
    });
    expect(created.status).toBe(200);
    const [s1, s2, s3] = [8_000_000_000_000_000_001n, 8_000_000_000_000_000_002n, 8_000_000_000_000_000_003n];
    expect((await stack.request('POST', TWIN, append(s1, null, 1n))).status).toBe(200);
    // The other replica moves the pointer on: this one's last seen pointer is now stale.
    expect((await viaOther('POST', TWIN, append(s2, s1, 2n))).status).toBe(200);
    // Valid against what this replica saw last (s1 current), not against the database (s2 current): 409.
    const stale = await stack.request('POST', TWIN, append(8_000_000_000_000_000_099n, s1, 2n));
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ type: 'CommitFailedException' });
    // Valid against the database though not against this replica's stale view: it lands.
    expect((await stack.request('POST', TWIN, append(s3, s2, 3n))).status).toBe(200);

    const { body } = await viaOther('GET', TWIN);
    const m = body.metadata;
    expect(m['snapshot-log'].map((e: any) => e['snapshot-id'])).toEqual([s1, s2, s3]);
    expect(m['current-snapshot-id']).toBe(s3);
    const referenced = [...m['metadata-log'].map((e: any) => e['metadata-file']), body['metadata-location']];
    expect(referenced.map((f: string) => /\/(\d{5})-/.exec(f)![1])).toEqual(['00000', '00001', '00002', '00003']);
    // The refused commit's file was written before its compare-and-set lost, and removed after.
    const listed = await stack.s3.send(new ListObjectsV2Command({ Bucket: 'warehouse', Prefix: 'wh/db/twin/metadata/' }));
    const onStorage = (listed.Contents ?? []).map((o) => `s3://warehouse/${o.Key}`).filter((k) => k.endsWith('.metadata.json'));
    expect(onStorage.sort()).toEqual([...referenced].sort());
  });
});
