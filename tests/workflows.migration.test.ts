// A catalog moved to other storage while it is in use, on the real stack (a real agent process, the real catalog
// service, the bundled store and a second S3-compatible store behind a slow link so the move lasts): a SQL session
// reads from the catalog and a schedule writes to it, before, during and after the storage migration. What the
// contract says for each, checked at each step:
// - reads (the session's, of this catalog, the same tables again and again, and queries beside it) succeed
//   throughout, the cutover included, with exact values;
// - writes to the catalog while the migration is active are refused with 409 catalog_read_only before anything is
//   dispatched: the session's statement answers it, the schedule's due run and a run-now end `failed` with that
//   code; a write to another catalog of the same session goes on;
// - nothing is lost: after the cutover the tables live under the target root with the same rows (exact values),
//   snapshots and time travel; the same session (never closed) reads them there, writes again, and the next due
//   run of the schedule writes there.
import { describe, expect, it } from 'vitest';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { fillCatalog, fingerprint, lakeBackend, sqlOn, startSlowProxy, waitMigration } from './support/migrations.ts';
import { startExtraStore } from './support/catalogStack.ts';

const lake = await startExtraStore({ bucket: 'lake2' });
// Each request to the target held 300 ms: the migration's copy, rewrite and verify last many seconds.
const proxy = await startSlowProxy(lake.endpoint, 300);
const world = await stackWithAgent({
  env: { SQL_SESSIONS_ENABLED: 'true', SCHEDULER_TICK_S: '0.2', MIGRATION_RUNNER_TICK_S: '5', ACTOR_REAPER_TICK_S: '0.2' },
  agent: { name: 'moving' },
  closeAfter: [lake, proxy],
});
const { t, admin, agentId } = world;
const W = '/api/workspaces/default';
const CAT = 'movecat';

const req = async (method: string, path: string, body?: unknown) => {
  const r = await t.req(method, path, { body, as: admin });
  expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r.body;
};

/** A statement on the session, waited for; its rows when it is done. */
async function inSession(session: string, sql: string) {
  const sub = await t.req('POST', `/api/sql/sessions/${session}/statements`, { as: admin, body: { sql, wait_timeout_s: 60 } });
  if (sub.status !== 200) return { status: sub.status, body: sub.body, rows: undefined };
  const rows = sub.body.status === 'done' ? (await req('GET', `/api/queries/${sub.body.id}/rows?limit=1000`)).rows : undefined;
  return { status: sub.status, body: sub.body, rows: rows as Record<string, unknown>[] | undefined };
}
async function read(session: string, sql: string) {
  const r = await inSession(session, sql);
  expect(r.status, `${sql}: ${JSON.stringify(r.body)}`).toBe(200);
  expect(r.body.status, `${sql}: ${r.body.error}`).toBe('done');
  return r.rows!;
}

const ORDERS = `SELECT id, customer, amount, placed_on, placed_at, weight, note FROM s.orders ORDER BY id`;
const LOG = 'SELECT source, n FROM s.log ORDER BY source, n';

/** Makes the schedule due now (its due time brought forward) and waits for that due time's run to end. */
async function fireDue(scheduleId: string) {
  const [{ at }] = await t.database.db.query<{ at: Date }>(
    `update eider.schedules set next_run_at = date_trunc('milliseconds', now()) - interval '1 second' where id = $1 returning next_run_at as at`,
    [scheduleId],
  );
  const due = at.toISOString();
  const runOf = async () => ((await req('GET', `${W}/schedules/${scheduleId}/runs?limit=100`)).items as any[]).find((r) => r.scheduled_for === due);
  await expect.poll(async () => (await runOf())?.status, { timeout: 60_000, interval: 200 }).toMatch(/^(done|failed|skipped)$/);
  return runOf();
}

describe('a catalog migrated while a session reads it and a schedule writes it', () => {
  it('reads go on with exact values, writes are refused with catalog_read_only, nothing is lost', { timeout: 300_000 }, async () => {
    const bundledId = ((await req('GET', '/api/admin/storage-backends')) as Array<{ id: string; name: string }>).find((b) => b.name === 'bundled')!.id;
    const catalog = await req('POST', '/api/catalogs', { slug: CAT, storage_backend_id: bundledId });
    await req('PUT', `${W}/catalogs/${CAT}`, { make_default: false });
    const sql = sqlOn(t, admin, agentId, CAT);
    // Ballast (three tables, several snapshots each) so the move lasts, and the two tables the workflow uses.
    await fillCatalog(sql);
    await sql.run(`CREATE TABLE s.orders (id BIGINT, customer VARCHAR, amount DECIMAL(12,2), placed_on DATE, placed_at TIMESTAMP, weight DOUBLE, note VARCHAR)`);
    await sql.run(`INSERT INTO s.orders VALUES
      (1, 'ada', 1234.56, DATE '2026-01-31', TIMESTAMP '2026-01-31 23:59:58.123456', 0.1, NULL),
      (2, 'bob', -0.01, DATE '1999-12-31', TIMESTAMP '1999-12-31 00:00:00', 1e300, 'ünïcode ✓'),
      (3, 'cy', 9999999999.99, DATE '2026-11-29', TIMESTAMP '2026-11-29 12:00:00.5', -2.5, '')`);
    await sql.run(`CREATE TABLE s.log (source VARCHAR, n INTEGER)`);
    const saved = await req('POST', `${W}/saved-queries`, { name: 'log a tick', sql: `INSERT INTO s.log SELECT 'schedule', (SELECT count(*) FROM s.log)::INTEGER + 1`, catalog: CAT, default_agent_id: agentId });
    // A yearly cron: its own time never comes during the test, only the due times the test brings forward.
    const schedule = await req('POST', `${W}/schedules`, { saved_query_id: saved.id, cron: '0 0 1 1 *', agent_id: agentId });

    // Before: the session reads, the schedule writes.
    const opened = await req('POST', `${W}/sql/sessions`, { agent_id: agentId, catalog: CAT, wait_timeout_s: 60 });
    const session = opened.id as string;
    const orders = await read(session, ORDERS);
    expect(orders.map((r) => [r.id, r.customer, r.note])).toEqual([
      [1, 'ada', null],
      [2, 'bob', 'ünïcode ✓'],
      [3, 'cy', ''],
    ]);
    expect((await fireDue(schedule.id)).status).toBe('done');
    expect(await read(session, LOG)).toEqual([{ source: 'schedule', n: 1 }]);
    const before = await fingerprint(t, admin, sql, CAT);
    const ordersSnapshots = (await req('GET', `${W}/catalogs/${CAT}/schemas/s/tables/orders/snapshots`)).map((x: any) => x.snapshot_id);

    // The move starts.
    const targetId = await lakeBackend(t, admin, lake, 'moved-lake', proxy.endpoint);
    const started = await req('POST', `/api/catalogs/${catalog.id}/migrations`, { target_storage_backend_id: targetId });
    const migration = started.id as string;
    const copying = await waitMigration(t, admin, catalog.id, migration, (m) => m.phase !== 'pending' || m.status !== 'pending');
    expect(copying).toMatchObject({ status: 'running' });

    // During: the session reads (the same table again, and the other), exact values each time.
    expect(await read(session, ORDERS)).toEqual(orders);
    expect(await read(session, LOG)).toEqual([{ source: 'schedule', n: 1 }]);
    expect(await read(session, ORDERS)).toEqual(orders);
    // Its write to the moving catalog is refused before anything runs; to another catalog it goes on.
    const refused = await inSession(session, `INSERT INTO s.log VALUES ('session', 99)`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body).toMatchObject({ error: 'catalog_read_only', details: { catalog: CAT, migration_id: migration } });
    expect(await read(session, 'CREATE SCHEMA IF NOT EXISTS warehouse.elsewhere')).toEqual([]);
    expect(await read(session, 'CREATE OR REPLACE TABLE warehouse.elsewhere.t AS SELECT 42 AS answer')).toEqual([]);
    // The schedule's due run is refused the same way: failed, saying why, nothing written.
    const duringRun = await fireDue(schedule.id);
    expect(duringRun).toMatchObject({ status: 'failed', query_id: null, error: expect.stringMatching(/^catalog_read_only: /) });
    // and so is a run-now: accepted (202, the run recorded), failed at once with the same reason
    const byHand = await t.req('POST', `${W}/schedules/${schedule.id}/run`, { as: admin });
    expect(byHand.status, byHand.text).toBe(202);
    expect(byHand.body).toMatchObject({ status: 'failed', query_id: null, error: expect.stringMatching(/^catalog_read_only: /) });
    // (all of that while the migration was still active: otherwise this test would prove nothing)
    const stillActive = (await req('GET', `/api/catalogs/${catalog.id}/migrations/${migration}`)) as any;
    expect(stillActive.status, 'the migration ended before the workflow could use the catalog during it').toBe('running');
    expect(await read(session, LOG)).toEqual([{ source: 'schedule', n: 1 }]);

    // Reads go on until the migration ends, the cutover included: the session's, and queries beside it.
    const ended = (m: any) => ['completed', 'failed', 'cancelled'].includes(m.status);
    let reads = 0;
    const queries = sqlOn(t, admin, agentId, CAT);
    for (let m = stillActive; !ended(m); m = await req('GET', `/api/catalogs/${catalog.id}/migrations/${migration}`)) {
      const [inSessionRows, viaQuery] = await Promise.all([read(session, ORDERS), queries.rows(ORDERS)]);
      expect(inSessionRows).toEqual(orders);
      expect(viaQuery).toEqual(orders);
      reads++;
    }
    expect(reads).toBeGreaterThan(0);
    // After the cutover: the tables are at the target, with every row, snapshot and time-travel read unchanged.
    const done = await waitMigration(t, admin, catalog.id, migration, ended, 240_000);
    expect(done, JSON.stringify(done)).toMatchObject({ status: 'completed', phase: 'completed', error: null });
    expect((await req('GET', `/api/catalogs/${catalog.id}`)).storage_backend_id).toBe(targetId);
    for (const table of ['orders', 'log', 'events']) {
      expect((await req('GET', `${W}/catalogs/${CAT}/schemas/s/tables/${table}`)).location).toMatch(new RegExp(`^s3://lake2/moved-lake/${CAT}/`));
    }
    const atTarget = await lake.s3.send(new ListObjectsV2Command({ Bucket: 'lake2', Prefix: `moved-lake/${CAT}/s/orders/data/` }));
    expect((atTarget.Contents ?? []).length).toBeGreaterThan(0);
    // The same session, open all along, reads the moved tables with the same values.
    expect(await read(session, ORDERS)).toEqual(orders);
    expect(await read(session, LOG)).toEqual([{ source: 'schedule', n: 1 }]);
    expect((await req('GET', `${W}/catalogs/${CAT}/schemas/s/tables/orders/snapshots`)).map((x: any) => x.snapshot_id)).toEqual(ordersSnapshots);
    expect(await fingerprint(t, admin, sql, CAT)).toEqual(before);
    // Writes are taken again: the session's, and the schedule's next due run.
    expect((await inSession(session, `INSERT INTO s.log VALUES ('session', 2)`)).body.status).toBe('done');
    expect((await fireDue(schedule.id)).status).toBe('done');
    expect(await read(session, LOG)).toEqual([
      { source: 'schedule', n: 1 },
      { source: 'schedule', n: 3 },
      { source: 'session', n: 2 },
    ]);
    expect(await read(session, 'SELECT answer FROM warehouse.elsewhere.t')).toEqual([{ answer: 42 }]);
    expect((await t.req('DELETE', `/api/sql/sessions/${session}`, { as: admin })).status).toBe(204);
  });
});
