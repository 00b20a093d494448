// Query history: every filter and sort of the spec, applied to the whole set before keyset paging.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { newUser, setupAdmin, startTestApi, type Caller, type TestApi } from './support/api.ts';

let t: TestApi;
let admin: Caller & { id: string };
let member: Caller & { id: string };
let wsId: string;
const ids: Record<string, string> = {};

async function insert(name: string, row: Record<string, unknown>) {
  const id = randomUUID();
  ids[name] = id;
  const r = { workspace_id: wsId, user_id: admin.id, sql: `select '${name}'`, status: 'done', statement_type: 'select', origin: 'api', ...row };
  const cols = Object.keys(r);
  await t.database.db.query(
    `insert into eider.queries (id, ${cols.join(', ')}) values ($1, ${cols.map((_, i) => `$${i + 2}`).join(', ')})`,
    [id, ...Object.values(r)],
  );
}

beforeAll(async () => {
  t = await startTestApi();
  admin = await setupAdmin(t);
  member = await newUser(t, admin);
  await t.req('PUT', `/api/workspaces/default/members/${member.id}`, { body: { role: 'reader' }, as: admin });
  wsId = (await t.req('GET', '/api/workspaces/default', { as: admin })).body.id;
  const base = Date.parse('2026-01-01T00:00:00Z');
  const at = (min: number) => new Date(base + min * 60_000).toISOString();
  await insert('fast', { started_at: at(0), finished_at: at(0.01), duration_ms: 5, sql: 'SELECT 100% off_a' });
  await insert('slow', { started_at: at(1), finished_at: at(2), duration_ms: 60_000, sql: 'SELECT slow_b' });
  await insert('mid', { started_at: at(2), finished_at: at(2.5), duration_ms: 700, statement_type: 'insert', sql: 'INSERT INTO t SELECT 1' });
  await insert('running', { started_at: at(3), status: 'running', finished_at: null, sql: 'SELECT long_c' });
  await insert('failed', { started_at: at(4), status: 'failed', finished_at: at(4.1), duration_ms: 50, error: 'boom', sql: 'SELECT broken_d' });
  await insert('untyped', { started_at: at(5), statement_type: null, finished_at: at(5.1), sql: 'SELEC typo_e' });
  await insert('sample', { started_at: at(6), origin: 'sample', finished_at: at(6.1), sql: 'SELECT * FROM hidden' });
  await insert('byMember', { started_at: at(7), user_id: member.id, finished_at: at(7.1), duration_ms: 10, sql: 'SELECT mine_f' });
  await insert('under_score', { started_at: at(8), finished_at: at(8.1), duration_ms: 11, sql: 'SELECT a_b FROM x' });
});
afterAll(async () => t?.close());

const list = async (qs: string, as: Caller = admin) => t.req('GET', `/api/workspaces/default/queries${qs ? `?${qs}` : ''}`, { as });
const names = (items: any[]) => items.map((q) => Object.entries(ids).find(([, id]) => id === q.id)?.[0]);

describe('query history', () => {
  it('lists newest first by default, hides internal origins, page envelope', async () => {
    const r = await list('');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['cursor', 'has_more', 'items']);
    expect(names(r.body.items)).toEqual(['under_score', 'byMember', 'untyped', 'failed', 'running', 'mid', 'slow', 'fast']);
  });

  it('q matches case-insensitively with % and _ literal', async () => {
    expect(names((await list('q=SLOW')).body.items)).toEqual(['slow']);
    expect(names((await list('q=' + encodeURIComponent('100%'))).body.items)).toEqual(['fast']);
    expect(names((await list('q=a_b')).body.items)).toEqual(['under_score']);
    expect(names((await list('q=' + encodeURIComponent('%'))).body.items)).toEqual(['fast']);
  });

  it('status and statement_type are repeatable; null statement_type is excluded only when filtered', async () => {
    expect(names((await list('status=failed&status=running')).body.items)).toEqual(['failed', 'running']);
    expect(names((await list('statement_type=insert')).body.items)).toEqual(['mid']);
    const sel = names((await list('statement_type=select&statement_type=insert')).body.items);
    expect(sel).not.toContain('untyped');
    expect(names((await list('')).body.items)).toContain('untyped');
  });

  it('422 on unknown enumerated values', async () => {
    for (const qs of ['status=finished', 'statement_type=grant', 'sort=name', 'dir=up']) {
      const r = await list(qs);
      expect(r.status, qs).toBe(422);
    }
  });

  it('query_id prefix, since/until, slower_than_ms, user_id and origin filters', async () => {
    expect(names((await list(`query_id=${ids.mid.slice(0, 8)}`)).body.items)).toEqual(['mid']);
    expect(names((await list('since=2026-01-01T00:02:00Z&until=2026-01-01T00:04:00Z')).body.items)).toEqual(['running', 'mid']);
    // untyped has no agent-reported duration: finished_at minus started_at (6 s) counts
    expect(names((await list('slower_than_ms=600')).body.items)).toEqual(['untyped', 'mid', 'slow']);
    expect(names((await list(`user_id=${member.id}`)).body.items)).toEqual(['byMember']);
    expect(names((await list('origin=sample')).body.items)).toEqual([]);
  });

  it('query_id: a whole id in either case, its leading characters across a hyphen; what no id begins with matches none', async () => {
    expect(names((await list(`query_id=${ids.slow}`)).body.items)).toEqual(['slow']);
    expect(names((await list(`query_id=${ids.slow.toUpperCase()}`)).body.items)).toEqual(['slow']);
    expect(names((await list(`query_id=${ids.failed.slice(0, 10)}`)).body.items)).toEqual(['failed']);
    for (const qs of ['zz', '%', '_', ids.slow.replaceAll('-', ''), `${ids.slow}0`, `${ids.slow.slice(0, 8)}x`]) {
      const r = await list(`query_id=${encodeURIComponent(qs)}`);
      expect(r.status, qs).toBe(200);
      expect(r.body.items, qs).toEqual([]);
    }
  });

  it('user_id of someone else and all_workspaces need query-admin', async () => {
    expect((await list(`user_id=${admin.id}`, member)).status).toBe(403);
    expect((await list(`user_id=${member.id}`, member)).status).toBe(200);
    expect((await list('all_workspaces=true', member)).status).toBe(403);
    expect((await list('all_workspaces=true')).status).toBe(200);
  });

  it('sort by duration: unfinished last in both directions', async () => {
    const desc = names((await list('sort=duration&dir=desc')).body.items);
    const asc = names((await list('sort=duration&dir=asc')).body.items);
    expect(desc.at(-1)).toBe('running');
    expect(asc.at(-1)).toBe('running');
    expect(desc).toEqual(['slow', 'untyped', 'mid', 'failed', 'under_score', 'byMember', 'fast', 'running']);
    expect(asc).toEqual(['fast', 'byMember', 'under_score', 'failed', 'mid', 'untyped', 'slow', 'running']);
  });

  it('pages by cursor under each sort without loss or repetition; the cursor is tied to the sort', async () => {
    for (const sort of ['started_at', 'duration']) {
      for (const dir of ['asc', 'desc']) {
        const all = names((await list(`sort=${sort}&dir=${dir}&limit=100`)).body.items);
        const paged: string[] = [];
        let cursor: string | null = null;
        do {
          const r = await list(`sort=${sort}&dir=${dir}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
          expect(r.status).toBe(200);
          paged.push(...names(r.body.items) as string[]);
          cursor = r.body.cursor;
        } while (cursor);
        expect(paged, `${sort} ${dir}`).toEqual(all);
      }
    }
    // ties in duration, several unfinished runs, a finished run without an agent-reported duration: every page size
    // in both directions gives the whole history in the order of (duration, id), unfinished last
    expect((await t.req('POST', '/api/workspaces', { body: { slug: 'ties', name: 'Ties' }, as: admin })).status).toBe(201);
    const ties = (await t.req('GET', '/api/workspaces/ties', { as: admin })).body.id;
    const rows: Array<{ id: string; key: number | null }> = [];
    const base = Date.parse('2026-02-01T00:00:00Z');
    // 'timed': finished 75 ms after it started, with no duration_ms
    const durations: Array<number | null | 'timed'> = [100, 100, 100, 50, 200, null, null, 'timed', 100, null];
    for (const [i, d] of durations.entries()) {
      const id = randomUUID();
      const started = new Date(base + i * 60_000);
      const finished = d === null ? null : new Date(started.getTime() + (d === 'timed' ? 75 : 1));
      rows.push({ id, key: d === 'timed' ? 75 : d });
      await t.database.db.query(
        `insert into eider.queries (id, workspace_id, user_id, sql, status, statement_type, origin, started_at, finished_at, duration_ms)
         values ($1, $2, $3, 'select 1', $4, 'select', 'api', $5, $6, $7)`,
        [id, ties, admin.id, d === null ? 'running' : 'done', started, finished, typeof d === 'number' ? d : null],
      );
    }
    for (const dir of ['asc', 'desc'] as const) {
      const sign = dir === 'asc' ? 1 : -1;
      const expected = [...rows]
        .sort((a, b) => (a.key === null) !== (b.key === null) ? (a.key === null ? 1 : -1) : (a.key !== b.key ? sign * (a.key! - b.key!) : sign * (a.id < b.id ? -1 : 1)))
        .map((r) => r.id);
      for (const limit of [1, 2, 3, 4]) {
        const paged: string[] = [];
        let cursor: string | null = null;
        do {
          const r = await t.req('GET', `/api/workspaces/ties/queries?sort=duration&dir=${dir}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { as: admin });
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          paged.push(...r.body.items.map((q: { id: string }) => q.id));
          cursor = r.body.cursor;
        } while (cursor);
        expect(paged, `${dir} by ${limit}`).toEqual(expected);
      }
    }
    const first = await list('sort=started_at&limit=2');
    const reused = await list(`sort=duration&limit=2&cursor=${first.body.cursor}`);
    expect(reused.status).toBe(422);
    expect((await list('cursor=garbage!!')).status).toBe(400);
    await t.database.db.query(`delete from eider.queries where id = $1`, [first.body.items[1].id]);
    const stale = await list(`sort=started_at&limit=2&cursor=${first.body.cursor}`);
    expect(stale.status).toBe(422);
    expect(stale.body.error).toBe('stale_cursor');
  });
});
