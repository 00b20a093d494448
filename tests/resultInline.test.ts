// Small results travel in the query_done frame and are served from the api's own copy (no read back from the
// agent); large ones stay on the agent. The copy expires with RESULT_RETENTION_HOURS, like the agent's files.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pruneInlineResults } from '../domain/queries.ts';
import { runDone } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';


const { t, admin, agent, agentId } = await stackWithAgent({
  api: 'alone',
  // 4 KiB: a few hundred rows stay inline, the large result below does not.
  agent: { name: 'inline', env: { RESULT_INLINE_MAX_BYTES: '4096' } },
});

const held = async (id: string) =>
  (await t.database.db.query<{ n: number | null }>(`select octet_length(result_inline) as n from queries where id = $1`, [id]))[0].n;
const resultFile = (id: string) => join(agent.dataDir, 'results', `${id}.parquet`);

describe('inline results', () => {
  it('keeps a small result in the api and serves its rows (exact values) with the agent file gone', async () => {
    const q = await runDone(t, admin, agentId, `SELECT i AS n, 9007199254740993::BIGINT + i AS big, (i / 4)::DECIMAL(10,2) AS dec FROM range(3) t(i)`);
    expect(await held(q.id)).toBeGreaterThan(0);
    rmSync(resultFile(q.id));
    const r = await t.req('GET', `/api/queries/${q.id}/rows?limit=2`, { as: admin });
    expect(r.status, r.text).toBe(200);
    expect(r.body.rows).toEqual([
      { n: 0, big: '9007199254740993', dec: '0.00' },
      { n: 1, big: '9007199254740994', dec: '0.25' },
    ]);
    expect(r.body.total).toBe(3);
    const next = await t.req('GET', `/api/queries/${q.id}/rows?limit=2&cursor=${r.body.cursor}`, { as: admin });
    expect(next.body.rows).toEqual([{ n: 2, big: '9007199254740995', dec: '0.50' }]);
    expect(next.body.cursor).toBeNull();
  });

  it('leaves the file and the profile out of the history: the done transition writes them to the row', async () => {
    const q = await runDone(t, admin, agentId, `SELECT 'inline-history' AS word`);
    const [h] = await t.database.db.query<{ payload: Record<string, unknown> }>(
      `select event_payload as payload from actor_transitions where kind = 'query' and id = $1 and event = 'done'`,
      [q.id],
    );
    expect(h.payload.rowCount).toBe(1);
    expect(JSON.stringify(h.payload)).not.toContain('resultInline');
    // The profile is an attachment too: on the row, not in the history or the outbox.
    expect(JSON.stringify(h.payload)).not.toContain('profile');
    const [row] = await t.database.db.query<{ rows: number }>(`select (profile->'summary'->>'rows')::int as rows from queries where id = $1`, [q.id]);
    expect(row.rows).toBe(1);
    const [snap] = await t.database.db.query<{ s: string }>(`select snapshot::text as s from actors where kind = 'query' and id = $1`, [q.id]);
    expect(snap.s).not.toContain('resultInline');
  });

  it('answers EXPLAIN of a read with the plan as rows', async () => {
    const q = await runDone(t, admin, agentId, `EXPLAIN SELECT count(*) FROM range(5)`);
    expect(q.columns).toEqual(['explain_key', 'explain_value']);
    const r = await t.req('GET', `/api/queries/${q.id}/rows`, { as: admin });
    expect(r.body.rows[0].explain_key).toBe('physical_plan');
    expect(r.body.rows[0].explain_value).toMatch(/RANGE|range/);
  });

  it('keeps a result above RESULT_INLINE_MAX_BYTES on the agent only', async () => {
    const q = await runDone(t, admin, agentId, `SELECT md5(i::VARCHAR) AS h FROM range(2000) t(i)`);
    expect(await held(q.id)).toBeNull();
    // Only the agent holds it: with its file gone, the rows are gone.
    rmSync(resultFile(q.id));
    const gone = await t.req('GET', `/api/queries/${q.id}/rows?offset=0&limit=5`, { as: admin });
    expect(gone.status).toBe(410);
    expect(gone.body.error).toBe('result_expired');
  });

  it('expires the copy after RESULT_RETENTION_HOURS (410), and the pruner drops it', async () => {
    const q = await runDone(t, admin, agentId, `SELECT 1 AS one`);
    await t.database.db.query(`update queries set finished_at = now() - interval '25 hours' where id = $1`, [q.id]);
    const r = await t.req('GET', `/api/queries/${q.id}/rows`, { as: admin });
    expect(r.status).toBe(410);
    expect(r.body.error).toBe('result_expired');
    expect(await pruneInlineResults(t.database.db, 24)).toBeGreaterThanOrEqual(1);
    expect(await held(q.id)).toBeNull();
  });
});
