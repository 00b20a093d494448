// The scheduled workflow across two api replicas over one database (a real agent process on the first, the real
// catalog service and object store), both running the leader-elected scheduler loop every 200 ms:
// - a schedule fires exactly once per due time: each due time is one run, the table the schedule writes holds one
//   row per run, whichever replica won each tick;
// - a due time that comes while the schedule's last run still runs is one `skipped` run, fired by neither;
// - its runs, their queries (`origin: scheduled`) and the schedule's last status read the same from both replicas;
// - run-now through one replica, cancel of its query through the other (the one without the agent's socket is
//   either, in turn): the run ends `failed` with its error, seen alike from both.
// The schedule's due time is brought forward in the database (`next_run_at`; its yearly cron's own time never comes
// during the test), so several due times pass in seconds: what fires them is the replicas' own scheduler loops.
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApi, type Caller, type TestApi } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { STACK_CLIENT } from './support/catalogStack.ts';

const SECRET = 'internal-secret-for-the-scheduled-replicas-test-0123';
const TICK = { SCHEDULER_TICK_S: '0.2' };
const world = await stackWithAgent({ env: { ...TICK, INTERNAL_API_SECRET: SECRET, REPLICA_ID: 'sched-first' }, agent: { name: 'sched-replicas' } });
const { t, admin, agentId } = world;
const second = await startTestApi(
  {
    ...TICK,
    REPLICA_ID: 'sched-second',
    INTERNAL_API_SECRET: SECRET,
    CATALOG_URL: t.stack.catalog.url,
    CATALOG_CLIENT_ID: STACK_CLIENT.id,
    CATALOG_CLIENT_SECRET: STACK_CLIENT.secret,
    STORE_ENDPOINT: t.stack.store.endpoint,
  },
  { database: t.database },
);
afterAll(() => second.close());

const W = '/api/workspaces/default';
const replicas: Array<[string, TestApi]> = [
  ['first', t],
  ['second', second],
];
const req = async (on: TestApi, method: string, path: string, body?: unknown, as: Caller = admin) => {
  const r = await on.req(method, path, { body, as });
  expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r.body;
};
const db = t.database.db;

/** The schedule's runs as each replica answers them (they must agree). */
async function runsOnBoth(scheduleId: string): Promise<any[]> {
  const [a, b] = await Promise.all(replicas.map(([, r]) => req(r, 'GET', `${W}/schedules/${scheduleId}/runs?limit=100`)));
  expect(b.items).toEqual(a.items);
  return a.items;
}

/** Makes the schedule due now, as its own time would, and returns that due time. */
async function dueNow(scheduleId: string): Promise<string> {
  const [{ at }] = await db.query<{ at: Date }>(
    `update eider.schedules set next_run_at = date_trunc('milliseconds', now()) - interval '1 second' where id = $1 returning next_run_at as at`,
    [scheduleId],
  );
  return at.toISOString();
}

describe('a schedule on two api replicas', () => {
  it('fires once per due time, its runs read alike on both, run-now on one and cancel on the other', { timeout: 240_000 }, async () => {
    await world.sql('CREATE SCHEMA IF NOT EXISTS sched');
    await world.sql('CREATE TABLE sched.ticks AS SELECT 0 AS n WHERE false');
    const saved = await req(t, 'POST', `${W}/saved-queries`, { name: 'tick', sql: 'INSERT INTO sched.ticks SELECT 1 AS n', default_agent_id: agentId });
    const schedule = await req(second, 'POST', `${W}/schedules`, { saved_query_id: saved.id, cron: '0 0 1 1 *', agent_id: agentId });

    // Three due times, each fired by whichever replica's loop holds the lock: one run each, done.
    const dueTimes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const due = await dueNow(schedule.id);
      dueTimes.push(due);
      await expect
        .poll(async () => (await runsOnBoth(schedule.id)).find((r) => r.scheduled_for === due)?.status, { timeout: 60_000, interval: 200 })
        .toBe('done');
    }
    const runs = await runsOnBoth(schedule.id);
    // Once per due time: each due time has one run, and there are no others.
    const perDue = new Map<string, number>();
    for (const r of runs) perDue.set(r.scheduled_for, (perDue.get(r.scheduled_for) ?? 0) + 1);
    expect([...perDue.values()].every((n) => n === 1), JSON.stringify(runs)).toBe(true);
    expect([...perDue.keys()].sort()).toEqual([...dueTimes].sort());
    // Every run wrote its row, once: the table holds as many rows as there were runs.
    const done = runs.filter((r) => r.status === 'done');
    expect(runs.every((r) => r.status === 'done'), JSON.stringify(runs)).toBe(true);
    expect(await rowsOf('SELECT count(*)::INTEGER AS n FROM sched.ticks')).toEqual([{ n: done.length }]);
    // Each run's query is the schedule's, read alike on both replicas.
    for (const r of done) {
      const [a, b] = await Promise.all(replicas.map(([, on]) => req(on, 'GET', `/api/queries/${r.query_id}`)));
      expect(a).toMatchObject({ origin: 'scheduled', schedule_id: schedule.id, status: 'done', statement_type: 'insert' });
      expect(b).toEqual(a);
    }
    for (const [, on] of replicas) expect((await req(on, 'GET', `${W}/schedules/${schedule.id}`)).last_status).toBe('done');

    // The schedule now runs a long read; run-now on one replica, cancel on the other, each way round.
    await req(t, 'PATCH', `${W}/saved-queries/${saved.id}`, { sql: 'SELECT count(*) AS n FROM range(100000000000)' });
    for (const [[fireName, fireOn], [cancelName, cancelOn]] of [
      [replicas[0], replicas[1]],
      [replicas[1], replicas[0]],
    ] as const) {
      const fired = await req(fireOn, 'POST', `${W}/schedules/${schedule.id}/run`);
      expect(fired.status, `run-now on ${fireName}`).toMatch(/^(queued|running)$/);
      await expect.poll(async () => (await runsOnBoth(schedule.id)).find((r) => r.id === fired.id)?.status, { timeout: 30_000, interval: 200 }).toBe('running');
      const running = (await runsOnBoth(schedule.id)).find((r) => r.id === fired.id);
      const query = await req(cancelOn, 'GET', `/api/queries/${running.query_id}`);
      expect(query).toMatchObject({ origin: 'scheduled', schedule_id: schedule.id, status: 'running' });

      // A due time while it runs: recorded once, as skipped, by whichever replica ticks.
      const due = await dueNow(schedule.id);
      await expect.poll(async () => (await runsOnBoth(schedule.id)).filter((r) => r.scheduled_for === due).map((r) => r.status), { timeout: 30_000, interval: 200 }).toEqual(['skipped']);
      expect((await runsOnBoth(schedule.id)).find((r) => r.scheduled_for === due).error).toMatch(/still running/);

      await req(cancelOn, 'POST', `/api/queries/${running.query_id}/cancel`);
      await expect
        .poll(async () => (await runsOnBoth(schedule.id)).find((r) => r.id === fired.id)?.status, { timeout: 30_000, interval: 200 })
        .toBe('failed');
      const ended = (await runsOnBoth(schedule.id)).find((r) => r.id === fired.id);
      expect(ended, `cancelled on ${cancelName}`).toMatchObject({ status: 'failed', error: expect.stringMatching(/cancel/), finished_at: expect.any(String) });
      // (the schedule's last status is its newest run's: the skipped due time, recorded after the run-now)
      expect((await runsOnBoth(schedule.id))[0].scheduled_for).toBe(due);
      for (const [, on] of replicas) {
        expect((await req(on, 'GET', `/api/queries/${running.query_id}`)).status).toBe('cancelled');
        expect((await req(on, 'GET', `${W}/schedules/${schedule.id}`)).last_status).toBe('skipped');
      }
    }
    // The cancelled reads wrote nothing; the table still holds one row per done run.
    expect(await rowsOf('SELECT count(*)::INTEGER AS n FROM sched.ticks')).toEqual([{ n: done.length }]);
    // And the workspace's run list (on both) holds every run of the schedule, once.
    const all = await Promise.all(replicas.map(([, on]) => req(on, 'GET', `${W}/schedule-runs?limit=100`)));
    expect(all[1].items).toEqual(all[0].items);
    const ids = all[0].items.filter((r: any) => r.schedule_id === schedule.id).map((r: any) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe((await runsOnBoth(schedule.id)).length);
  });
});

/** Runs a read as the admin and returns its rows. */
async function rowsOf(text: string): Promise<Record<string, unknown>[]> {
  const q = await world.sql(text);
  return (await req(t, 'GET', `/api/queries/${q.id}/rows?limit=1000`)).rows;
}
