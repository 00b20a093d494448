// What the storage migration tests share: a catalog with several tables and snapshots written by a real agent
// through the api, its fingerprint (count and sum per table, snapshot ids, a time-travel read), and waiting on a
// migration record.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { Caller, TestApi } from './api.ts';
import { pollUntil } from './processes.ts';

export interface Sql {
  run(sql: string): Promise<{ id: string; status: string; error?: string }>;
  rows(sql: string): Promise<Record<string, unknown>[]>;
}

/** Runs statements through the api's query route (the real path: policy, dispatch, agent, catalog, storage). */
export function sqlOn(t: Pick<TestApi, 'req'>, as: Caller, agentId: string, catalog: string): Sql {
  const submit = async (sql: string) => {
    const s = await t.req('POST', '/api/workspaces/default/queries', { as, body: { sql, agent_id: agentId, catalog } });
    if (s.status !== 202) return { id: '', status: `http ${s.status}`, error: s.text, http: s.status, body: s.body };
    const q = await t.req('GET', `/api/queries/${s.body.id}?wait_timeout_s=60`, { as });
    return q.body;
  };
  return {
    async run(sql) {
      const q = await submit(sql);
      expect(q.status, `${sql}: ${q.error ?? ''}`).toBe('done');
      return q;
    },
    async rows(sql) {
      const q = await this.run(sql);
      return (await t.req('GET', `/api/queries/${q.id}/rows?limit=1000`, { as })).body.rows;
    },
  };
}

/** Submits without asserting: for writes that must be refused. */
export async function submitRaw(t: Pick<TestApi, 'req'>, as: Caller, agentId: string, catalog: string, sql: string) {
  return t.req('POST', '/api/workspaces/default/queries', { as, body: { sql, agent_id: agentId, catalog } });
}

/** Three tables, several snapshots each: appends, a partitioned table with a copy-on-write delete, an evolved one. */
export async function fillCatalog(sql: Sql, schema = 's', scale = 1): Promise<void> {
  await sql.run(`CREATE SCHEMA ${schema}`);
  await sql.run(`CREATE TABLE ${schema}.events (id BIGINT, amount DOUBLE, note VARCHAR)`);
  for (let i = 0; i < 3; i++) await sql.run(`INSERT INTO ${schema}.events SELECT range + ${i * 1000 * scale}, range * 0.5, 'n' || range FROM range(${1000 * scale})`);
  await sql.run(`CREATE TABLE ${schema}.parts (id BIGINT, region VARCHAR) PARTITIONED BY (region)`);
  await sql.run(`INSERT INTO ${schema}.parts SELECT range, CASE range % 3 WHEN 0 THEN 'eu' WHEN 1 THEN 'us' ELSE 'apac' END FROM range(${300 * scale})`);
  await sql.run(`INSERT INTO ${schema}.parts SELECT range + 10000, 'eu' FROM range(${50 * scale})`);
  await sql.run(`DELETE FROM ${schema}.parts WHERE region = 'us' AND id % 2 = 0`);
  await sql.run(`CREATE TABLE ${schema}.evolved (id INTEGER, name VARCHAR)`);
  await sql.run(`INSERT INTO ${schema}.evolved VALUES (1, 'one'), (2, 'two')`);
  await sql.run(`ALTER TABLE ${schema}.evolved ADD COLUMN score DOUBLE`);
  await sql.run(`INSERT INTO ${schema}.evolved VALUES (3, 'three', 3.5)`);
  await sql.run(`UPDATE ${schema}.evolved SET score = 1 WHERE id = 1`);
}

export interface Fingerprint {
  tables: Record<string, { n: number; s: number; snapshots: string[]; first: number }>;
}

const num = (v: unknown) => Number(v);

/** Count and sum per table, snapshot ids (from the api), and the row count at each table's first snapshot. */
export async function fingerprint(t: Pick<TestApi, 'req'>, as: Caller, sql: Sql, catalog: string, schema = 's'): Promise<Fingerprint> {
  const out: Fingerprint = { tables: {} };
  for (const table of ['events', 'parts', 'evolved']) {
    const [agg] = await sql.rows(`SELECT count(*)::BIGINT AS n, coalesce(sum(id), 0)::BIGINT AS s FROM ${schema}.${table}`);
    const snaps = (await t.req('GET', `/api/workspaces/default/catalogs/${catalog}/schemas/${schema}/tables/${table}/snapshots`, { as })).body as Array<{ snapshot_id: string }>;
    const ids = snaps.map((x) => x.snapshot_id).reverse();
    const [first] = await sql.rows(`SELECT count(*)::BIGINT AS n FROM ${schema}.${table}__snapshot_${ids[0]}`);
    out.tables[table] = { n: num(agg.n), s: num(agg.s), snapshots: ids, first: num(first.n) };
  }
  return out;
}

/** Polls the migration until `until` holds for it (or the time is up: then the last record is returned). */
export async function waitMigration(t: Pick<TestApi, 'req'>, as: Caller, catalogId: string, id: string, until: (m: any) => boolean, timeoutMs = 90_000): Promise<any> {
  return pollUntil(async () => (await t.req('GET', `/api/catalogs/${catalogId}/migrations/${id}`, { as })).body, until, timeoutMs);
}

/**
 * An HTTP proxy in front of an object store that holds each request `delayMs` before passing it on unchanged
 * (the Host header too, so signatures still verify): a slow network to the target, so a copy lasts long enough to
 * cancel or kill it midway.
 */
export async function startSlowProxy(targetEndpoint: string, delayMs: number): Promise<{ endpoint: string; close(): Promise<void> }> {
  const target = new URL(targetEndpoint);
  const server: Server = createServer((req, res) => {
    setTimeout(() => {
      const up = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(up);
    }, delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/**
 * Registers an `object_store` backend rooted at `s3://<bucket>/<name>/` on a second store, reached at `endpoint`
 * (the store itself, or a slow proxy in front of it); returns its id.
 */
export async function lakeBackend(
  t: Pick<TestApi, 'req'>,
  as: Caller,
  lake: { accessKey: string; secretKey: string },
  name: string,
  endpoint: string,
  bucket = 'lake2',
): Promise<string> {
  const r = await t.req('POST', '/api/admin/storage-backends', {
    as,
    body: { name, kind: 'object_store', root_uri: `s3://${bucket}/${name}/`, endpoint, access_key_id: lake.accessKey, secret_access_key: lake.secretKey },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}
