// A running query's progress end to end: a real agent samples DuckDB's query progress while a query over an Iceberg
// table runs, sends it to the api, which keeps it in the query's row; GET /api/queries/{id} shows it while the
// query runs and not once it is done. A short query reports none. A raw agent socket holds the api to its write
// rules: at most one write a second per query, none unchanged, none for another agent's query or after the end.
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../protocol/index.ts';
import { runDone } from './support/api.ts';
import { waitForHealthyAgent } from './support/agent.ts';
import { rawAgentSocket } from './support/frames.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const { t, admin, agentId } = await stackWithAgent({
  env: { AGENT_HEARTBEAT_INTERVAL_S: '0.5', ACTOR_REAPER_TICK_S: '0.2' },
  agent: { name: 'progress' },
});

const ROWS = 2_000_000;
// A few seconds over 2M rows of a Parquet-backed table (DuckDB measures a table scan's progress; a range() source
// it cannot): hashing every row keeps it busy well past the agent's first sample at one second.
// Tens of seconds of hashing over a table scan (DuckDB measures a scan's progress) on any machine: the test ends it
// with a cancel once it has seen progress, so a fast machine cannot finish it before the first report (it once did).
const SLOW = `SELECT count(DISTINCT md5(x::varchar || 'salt')) AS d, sum(length(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(x::varchar)))))))))))))))))) AS l FROM prog.big`;

const storedProgress = async (id: string) =>
  (await t.database.db.query<{ progress: unknown }>(`select progress from queries where id = $1`, [id]))[0].progress;

describe('query progress', () => {
  it('shows percent and rows processed while a long query runs, and none once it has ended', async () => {
    await runDone(t, admin, agentId, 'CREATE SCHEMA IF NOT EXISTS prog', 60);
    await runDone(t, admin, agentId, `CREATE TABLE prog.big AS SELECT range AS x FROM range(${ROWS})`, 60);

    const submit = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: SLOW, agent_id: agentId }, as: admin });
    expect(submit.status, submit.text).toBe(202);
    const id = submit.body.id as string;
    const seen: Array<{ percent: number; rows_processed: number; rows_total: number | null }> = [];
    let last: any;
    const deadline = Date.now() + 180_000;
    for (;;) {
      const r = await t.req('GET', `/api/queries/${id}`, { as: admin });
      expect(r.status, r.text).toBe(200);
      last = r.body;
      if (last.status !== 'running' && last.status !== 'queued') break;
      if (last.progress) seen.push(last.progress);
      // Two readings are enough; then the query is ended (it would run for tens of seconds).
      if (seen.length === 2) expect((await t.req('POST', `/api/queries/${id}/cancel`, { as: admin })).status).toBeLessThan(300);
      expect(Date.now(), 'the query did not end in time').toBeLessThan(deadline);
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(last.status, last.error).toBe('cancelled');
    expect(seen.length, 'no progress was reported while the query ran').toBeGreaterThan(0);
    for (const p of seen) {
      expect(p.percent).toBeGreaterThanOrEqual(0);
      expect(p.percent).toBeLessThanOrEqual(100);
      expect(Number.isInteger(p.rows_processed)).toBe(true);
      // The engine's total counts the table's rows (and a couple of its own).
      expect(p.rows_total).toBeGreaterThanOrEqual(ROWS);
      expect(p.rows_total).toBeLessThan(ROWS + 1000);
    }
    expect(seen.some((p) => p.rows_processed > 0 && p.percent > 0), JSON.stringify(seen)).toBe(true);
    // Ended: the field is gone from the answer and the row keeps nothing of it.
    expect(last).not.toHaveProperty('progress');
    expect(await storedProgress(id)).toBeNull();
    const listed = await t.req('GET', `/api/workspaces/default/queries?query_id=${id}`, { as: admin });
    expect(listed.body.items[0].id).toBe(id);
    expect(listed.body.items[0]).not.toHaveProperty('progress');
  });

  it('a query shorter than a second reports none (no write at all)', async () => {
    const q = await runDone(t, admin, agentId, 'SELECT count(*) AS n FROM prog.big');
    expect(q).not.toHaveProperty('progress');
    expect(await storedProgress(q.id)).toBeNull();
  });

  it('the api writes at most one report a second per query, none unchanged, none from another agent, none after the end', async () => {
    const boot = await t.req('POST', '/api/admin/agents/bootstrap', { body: { name: 'raw-progress' }, as: admin });
    expect(boot.status, boot.text).toBe(201);
    const raw = await rawAgentSocket(t.url, { timeoutMs: 15_000 });
    try {
      raw.send({ type: 'auth', payload: { protocol_version: PROTOCOL_VERSION, results_port: 8001, agent_version: 'test', bootstrap_token: boot.body.token, name: 'raw-progress' } });
      expect((await raw.next('auth_ok')).payload.features).toContain('query_progress');
      raw.send({ type: 'agent_status', payload: { capabilities: { engine_version: 'v1.5.6', extensions: [], memory_limit_bytes: 2 ** 30, max_concurrency_profile: 'auto' } } });
      const beat = setInterval(() => raw.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString(), in_flight: 1 } }), 500);
      try {
        const rawId = await waitForHealthyAgent(t, admin, 'raw-progress');
        const submit = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: 'SELECT 1 AS one', agent_id: rawId }, as: admin });
        expect(submit.status, submit.text).toBe(202);
        const id = submit.body.id as string;
        await raw.next('dispatch_query', (f: any) => f.payload.query_id === id);
        raw.send({ type: 'query_started', payload: { query_id: id } });
        const report = (percent: number) =>
          raw.send({ type: 'query_progress', payload: { query_id: id, percent, rows_processed: percent * 1000, rows_total: 100_000 } });
        // The row's version (xmin) changes with every write of it.
        const version = async () => (await t.database.db.query<{ v: string }>(`select xmin::text as v from queries where id = $1`, [id]))[0].v;
        const shown = async () => (await t.req('GET', `/api/queries/${id}`, { as: admin })).body.progress;
        // Frames of one socket are handled in order: once a later agent_status shows, every frame sent before it has
        // been handled, so a report that changed nothing had its chance to.
        let marks = 0;
        const handled = async () => {
          const engine = `v1.5.6-mark${++marks}`;
          raw.send({ type: 'agent_status', payload: { capabilities: { engine_version: engine, extensions: [], memory_limit_bytes: 2 ** 30, max_concurrency_profile: 'auto' } } });
          await expect.poll(async () => (await t.req('GET', `/api/admin/agents/${rawId}`, { as: admin })).body.capabilities?.engine_version).toBe(engine);
        };

        // A burst of 30 different reports over 3 s (ten a second): the row takes at most one a second. Each value
        // written stays at least 0.9 s, so reading the row every 50 ms sees every one.
        const written = new Set<string>();
        let reading = true;
        const watcher = (async () => {
          while (reading) {
            const p = await storedProgress(id);
            if (p) written.add(JSON.stringify(p));
            await new Promise((r) => setTimeout(r, 50));
          }
        })();
        // Time itself must pass in this test: the rule is one write a second.
        for (let i = 1; i <= 30; i++) {
          report(i);
          await new Promise((r) => setTimeout(r, 100));
        }
        await new Promise((r) => setTimeout(r, 1_000)); // the last value written stays a second: the watcher sees it
        reading = false;
        await watcher;
        expect(written.size, [...written].join(' ')).toBeGreaterThanOrEqual(1);
        expect(written.size, [...written].join(' ')).toBeLessThanOrEqual(5);

        // More than a second after it was written, the same report again is no write; a new one a second later is.
        report(40);
        await expect.poll(shown).toEqual({ percent: 40, rows_processed: 40_000, rows_total: 100_000 });
        const at40 = await version();
        await new Promise((r) => setTimeout(r, 1_200)); // past the second, so only the sameness keeps it unwritten
        report(40);
        await handled();
        expect(await version()).toBe(at40);
        // (The api counts the unchanged report's statement against the second as well.)
        await new Promise((r) => setTimeout(r, 1_000)); // time itself: past that second
        report(41);
        await expect.poll(shown).toMatchObject({ percent: 41 });
        expect(await version()).not.toBe(at40);

        // Another agent's query: the report changes nothing.
        const other = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: SLOW, agent_id: agentId }, as: admin });
        expect(other.status, other.text).toBe(202);
        raw.send({ type: 'query_progress', payload: { query_id: other.body.id, percent: 99, rows_processed: 1, rows_total: 1 } });
        await handled();
        expect(await storedProgress(other.body.id)).not.toMatchObject({ percent: 99 });
        await t.req('POST', `/api/queries/${other.body.id}/cancel`, { as: admin });

        // Ended: the field goes, the row is cleared, and a late report is not written.
        raw.send({ type: 'query_done', payload: { query_id: id, row_count: 0, duration_ms: 3_000, result_path: null, column_schema: null, columns: [] } });
        await expect.poll(async () => (await t.req('GET', `/api/queries/${id}`, { as: admin })).body.status).toBe('done');
        expect(await storedProgress(id)).toBeNull();
        await new Promise((r) => setTimeout(r, 1_000)); // time itself: past the second, so no throttle hides a late write
        report(50);
        await handled();
        expect(await storedProgress(id)).toBeNull();
        expect((await t.req('GET', `/api/queries/${id}`, { as: admin })).body).not.toHaveProperty('progress');
      } finally {
        clearInterval(beat);
      }
    } finally {
      raw.ws.close();
    }
  });
});
