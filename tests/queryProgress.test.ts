// A running query's progress end to end: a real agent samples DuckDB's query progress while a query over an Iceberg
// table runs, sends it to the api, which keeps it in the query's row; GET /api/queries/{id} shows it while the
// query runs and not once it is done. A short query reports none.
import { describe, expect, it } from 'vitest';
import { runDone } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const { t, admin, agentId } = await stackWithAgent({
  env: { AGENT_HEARTBEAT_INTERVAL_S: '0.5', ACTOR_REAPER_TICK_S: '0.2' },
  agent: { name: 'progress' },
});

const ROWS = 2_000_000;
// A few seconds over 2M rows of a Parquet-backed table (DuckDB measures a table scan's progress; a range() source
// it cannot): hashing every row keeps it busy well past the agent's first sample at one second.
const SLOW = `SELECT count(DISTINCT md5(x::varchar || 'salt')) AS d, sum(length(md5(md5(x::varchar)))) AS l FROM prog.big`;

const storedProgress = async (id: string) =>
  (await t.database.db.query<{ progress: unknown }>(`select progress from queries where id = $1`, [id]))[0].progress;

describe('query progress', () => {
  it('shows percent and rows processed while a long query runs, and none once it is done', async () => {
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
      expect(Date.now(), 'the query did not end in time').toBeLessThan(deadline);
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(last.status, last.error).toBe('done');
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
    // Done: the field is gone from the answer and the row keeps nothing of it.
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
});
