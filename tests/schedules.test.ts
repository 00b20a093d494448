// Saved queries, schedules and runs against the real stack (a real agent process), with two api replicas on one
// database both running the scheduler: a due schedule fires exactly once; a fire while the last run still runs is
// skipped; the creator's access is re-checked at every fire; runs follow their queries (origin scheduled).
import { describe, expect, it } from 'vitest';
import { newUser, startTestApi, type Caller } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const BOOT = 'test-bootstrap-token-for-schedules';
const W = '/api/workspaces/default';

const env = {
  AGENT_BOOTSTRAP_TOKEN: BOOT,
  SCHEDULER_TICK_S: '0.2',
  AGENT_HEARTBEAT_INTERVAL_S: '0.5',
  ACTOR_REAPER_TICK_S: '0.2',
  // the replicas forward to each other (a fire submitted on either reaches the agent held by one)
  INTERNAL_API_SECRET: 'internal-secret-for-the-schedules-test-0123456789',
};
const { t, admin, agentId } = await stackWithAgent({
  env,
  agent: { name: 'sched-agent' },
  // A second replica on the same database: both run the scheduler loop.
  beside: (first) => startTestApi({ ...env, REPLICA_ID: 'second', CATALOG_URL: first.stack.catalog.url, STORE_ENDPOINT: first.stack.store.endpoint }, { database: first.database }),
});

const req = (method: string, path: string, body?: unknown, as: Caller = admin) => t.req(method, path, { body, as });
/** Makes a schedule due now (instead of waiting for its cron minute). */
const makeDue = (id: string) => t.database.db.query(`update eider.schedules set next_run_at = now() - interval '1 second' where id = $1`, [id]);
const runsOf = async (id: string) => (await req('GET', `${W}/schedules/${id}/runs`)).body.items as any[];

describe('saved queries', () => {
  it('save (201), replace by name (200), refuse with on_conflict=error (409), page, patch, delete', async () => {
    const a = await req('POST', `${W}/saved-queries`, { name: 'daily', sql: 'SELECT 1 AS one', default_agent_id: agentId });
    expect(a.status, a.text).toBe(201);
    expect(a.body).toMatchObject({ name: 'daily', sql: 'SELECT 1 AS one', default_agent_id: agentId, created_by: admin.id, last_run_at: null });
    const b = await req('POST', `${W}/saved-queries`, { name: 'daily', sql: 'SELECT 2 AS two' });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ id: a.body.id, sql: 'SELECT 2 AS two' });
    const c = await req('POST', `${W}/saved-queries`, { name: 'daily', sql: 'SELECT 3', on_conflict: 'error' });
    expect(c.status).toBe(409);
    expect(c.body.error).toBe('saved_query_exists');
    expect((await req('POST', `${W}/saved-queries`, { name: 'x', sql: 'SELECT 1', catalog: 'nope' })).status).toBe(422);
    expect((await req('GET', `${W}/saved-queries?limit=1`)).body).toMatchObject({ items: [{ name: 'daily' }], has_more: false });
    const renamed = await req('PATCH', `${W}/saved-queries/${a.body.id}`, { name: 'nightly' });
    expect(renamed.body).toMatchObject({ name: 'nightly', sql: 'SELECT 2 AS two' });
    const reader = await newUser(t, admin);
    await req('PUT', `${W}/members/${reader.id}`, { role: 'reader' });
    expect((await req('GET', `${W}/saved-queries/${a.body.id}`, undefined, reader)).status).toBe(200);
    expect((await req('POST', `${W}/saved-queries`, { name: 'mine', sql: 'SELECT 1' }, reader)).status).toBe(403);
    expect((await req('DELETE', `${W}/saved-queries/${a.body.id}`)).status).toBe(204);
    expect((await req('GET', `${W}/saved-queries/${a.body.id}`)).status).toBe(404);
  });
});

describe('schedules', () => {
  it('refuses a bad cron (422 naming it) and computes the next run in UTC', async () => {
    const q = await req('POST', `${W}/saved-queries`, { name: 'cron-check', sql: 'SELECT 1' });
    const bad = await req('POST', `${W}/schedules`, { saved_query_id: q.body.id, cron: '61 * * * *', agent_id: agentId });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/cron: minute: 61/);
    // February has no 30th: a schedule that could never run is refused, on creation and on change
    const never = await req('POST', `${W}/schedules`, { saved_query_id: q.body.id, cron: '0 0 30 2 *', agent_id: agentId });
    expect(never.status, never.text).toBe(422);
    expect(never.body.message).toMatch(/cron: 0 0 30 2 \* never fires/);
    expect(never.body.details.fields).toEqual([{ field: 'cron', in: 'body', message: expect.stringMatching(/never fires/) }]);
    expect((await req('POST', `${W}/schedules`, { saved_query_id: q.body.id, cron: '0 0 * * * *', agent_id: agentId })).status).toBe(422);
    const s = await req('POST', `${W}/schedules`, { saved_query_id: q.body.id, cron: '0 3 * * *', agent_id: agentId, enabled: false });
    expect(s.status, s.text).toBe(201);
    expect(s.body).toMatchObject({ timezone: 'UTC', enabled: false, next_run_at: null, last_status: null });
    const neverPatch = await req('PATCH', `${W}/schedules/${s.body.id}`, { cron: '0 0 31 4 *' });
    expect(neverPatch.status, neverPatch.text).toBe(422);
    const on = await req('PATCH', `${W}/schedules/${s.body.id}`, { enabled: true });
    expect(on.body.next_run_at).toMatch(/T03:00:00\.000Z$/);
    expect(Date.parse(on.body.next_run_at)).toBeGreaterThan(Date.now());
    expect((await req('GET', `${W}/schedules`)).body.map((x: any) => x.id)).toContain(s.body.id);
    expect((await req('DELETE', `${W}/schedules/${s.body.id}`)).status).toBe(204);
  });

  it('a due schedule fires exactly once across two replicas; its run follows a scheduled query', async () => {
    const q = await req('POST', `${W}/saved-queries`, { name: 'yearly', sql: 'SELECT 42 AS answer' });
    // Yearly, so the clock never makes it due during the test: each round makes it due by hand.
    const s = (await req('POST', `${W}/schedules`, { saved_query_id: q.body.id, cron: '0 0 1 1 *', agent_id: agentId })).body;
    // A second schedule made due after each run: once it has fired, the schedulers have ticked since the first fired.
    const witness = (await req('POST', `${W}/schedules`, { saved_query_id: q.body.id, cron: '0 0 1 1 *', agent_id: agentId })).body;
    for (let round = 1; round <= 4; round++) {
      await makeDue(s.id);
      await expect.poll(async () => (await runsOf(s.id)).length, { timeout: 10_000, interval: 100 }).toBe(round);
      // Both schedulers keep ticking: still exactly `round` runs once a later tick has fired the witness.
      await makeDue(witness.id);
      await expect.poll(async () => (await runsOf(witness.id)).length, { timeout: 10_000, interval: 100 }).toBe(round);
      expect((await runsOf(s.id)).length).toBe(round);
      await expect.poll(async () => JSON.stringify((await runsOf(s.id))[0]), { timeout: 15_000, interval: 100 }).toContain('"status":"done"');
      await expect.poll(async () => JSON.stringify((await runsOf(witness.id))[0]), { timeout: 15_000, interval: 100 }).toContain('"status":"done"');
    }
    await req('DELETE', `${W}/schedules/${witness.id}`);
    const [run] = await runsOf(s.id);
    const query = (await req('GET', `/api/queries/${run.query_id}`)).body;
    expect(query).toMatchObject({ origin: 'scheduled', schedule_id: s.id, user_id: admin.id, status: 'done', sql: 'SELECT 42 AS answer' });
    const after = (await req('GET', `${W}/schedules/${s.id}`)).body;
    expect(after.last_status).toBe('done');
    expect(Date.parse(after.next_run_at)).toBeGreaterThan(Date.now());
    expect((await req('GET', `${W}/saved-queries/${q.body.id}`)).body.last_run_at).not.toBeNull();
    expect((await req('GET', `${W}/schedule-runs`)).body.items.map((r: any) => r.schedule_id)).toContain(s.id);
    await req('DELETE', `${W}/schedules/${s.id}`);
  });

  it('never overlaps: a fire while the last run still runs is skipped; run now fires at once', async () => {
    const q = await req('POST', `${W}/saved-queries`, { name: 'slow', sql: 'SELECT count(*) FROM range(20000000000) a' });
    const s = (await req('POST', `${W}/schedules`, { saved_query_id: q.body.id, cron: '0 0 1 1 *', agent_id: agentId })).body;
    const fired = await req('POST', `${W}/schedules/${s.id}/run`);
    expect(fired.status, fired.text).toBe(202);
    expect(['queued', 'running']).toContain(fired.body.status);
    await makeDue(s.id);
    await expect.poll(async () => (await runsOf(s.id)).map((r) => r.status), { timeout: 10_000, interval: 100 }).toContain('skipped');
    const runs = await runsOf(s.id);
    expect(runs.find((r) => r.status === 'skipped').error).toContain('still running');
    // A run has no `cancelled` state: the run whose query was cancelled failed, and says why.
    expect((await req('POST', `/api/queries/${fired.body.query_id}/cancel`)).status).toBeLessThan(300);
    await expect.poll(async () => (await runsOf(s.id)).find((r) => r.id === fired.body.id)?.status, { timeout: 10_000, interval: 100 }).toBe('failed');
    expect((await runsOf(s.id)).find((r) => r.id === fired.body.id).error).toMatch(/cancel/);
    // status filters runs as the spec's filter vocabulary says: repeatable, no default, an unknown value 422
    const ids = async (path: string) => ((await req('GET', path)).body.items as any[]).map((r) => r.id).sort();
    const skipped = runs.filter((r) => r.status === 'skipped').map((r) => r.id).sort();
    expect(await ids(`${W}/schedules/${s.id}/runs?status=skipped`)).toEqual(skipped);
    expect(await ids(`${W}/schedules/${s.id}/runs?status=skipped&status=failed`)).toEqual([...skipped, fired.body.id].sort());
    const wide = (await req('GET', `${W}/schedule-runs?status=skipped`)).body.items as any[];
    expect(wide.every((r) => r.status === 'skipped')).toBe(true);
    expect(wide.map((r) => r.id)).toEqual(expect.arrayContaining(skipped));
    for (const path of [`${W}/schedules/${s.id}/runs?status=cancelled`, `${W}/schedule-runs?status=nope`]) {
      const bad = await req('GET', path);
      expect([bad.status, bad.body.error]).toEqual([422, 'unprocessable_content']);
    }
    await req('DELETE', `${W}/schedules/${s.id}`);
  });

  it('re-checks the creator’s access at every fire: a creator who left the workspace gets a failed run', async () => {
    const writer = await newUser(t, admin);
    await req('PUT', `${W}/members/${writer.id}`, { role: 'writer' });
    await req('PUT', `/api/admin/agents/${agentId}/grants`, { user_id: writer.id, tier: 'use' });
    const q = await req('POST', `${W}/saved-queries`, { name: 'writers', sql: 'SELECT 7 AS seven' }, writer);
    const s = await req('POST', `${W}/schedules`, { saved_query_id: q.body.id, cron: '0 0 1 1 *', agent_id: agentId }, writer);
    expect(s.status, s.text).toBe(201);
    await req('DELETE', `${W}/members/${writer.id}`);
    await makeDue(s.body.id);
    await expect.poll(async () => (await runsOf(s.body.id))[0]?.status, { timeout: 10_000, interval: 100 }).toBe('failed');
    expect((await runsOf(s.body.id))[0].error).toMatch(/not_found|workspace/);
    expect((await runsOf(s.body.id))[0].query_id).toBeNull();
    await req('DELETE', `${W}/schedules/${s.body.id}`);
  });
});
