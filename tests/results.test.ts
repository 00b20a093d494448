// Result rows through the api: every DuckDB type family as documented, and a 1,000,000-row result paged to the end.
import { describe, expect, it } from 'vitest';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { runDone } from './support/api.ts';

const { t, admin, agentId } = await stackWithAgent({ api: 'alone', agent: { name: 'rows' } });

const done = (sql: string) => runDone(t, admin, agentId, sql, 60);

describe('result values', () => {
  it('maps every type family as documented', async () => {
    const q = await done(`SELECT
      42::TINYINT AS ti, 170141183460469231731687303715884105727::HUGEINT AS hi, 9007199254740993::BIGINT AS big, 12::BIGINT AS small_big,
      1.5::DOUBLE AS dbl, 12.30::DECIMAL(10,2) AS dec, DATE '2024-02-29' AS d,
      TIMESTAMP '2024-01-02 03:04:05.123456' AS ts, TIMESTAMPTZ '2024-01-02 03:04:05.123456+00' AS tstz,
      INTERVAL 1 DAY + INTERVAL 2 HOUR AS iv, '4b1a1c5e-8e8b-4c35-9f53-8b0a2e1a1b2c'::UUID AS u, '\\xDE\\xAD'::BLOB AS b,
      [1, 2, NULL] AS l, {'a': 1, 'b': 'x'} AS st, MAP {'k': 1} AS m, NULL::INTEGER AS n, true AS bo, 'héllo' AS s,
      1 AS dup, 2 AS dup`);
    expect(q.columns).toEqual(['ti', 'hi', 'big', 'small_big', 'dbl', 'dec', 'd', 'ts', 'tstz', 'iv', 'u', 'b', 'l', 'st', 'm', 'n', 'bo', 's', 'dup', 'dup_1']);
    const types = Object.fromEntries(q.column_schema.map((c: any) => [c.name, c.type]));
    expect(types).toMatchObject({ ti: 'TINYINT', hi: 'HUGEINT', dec: 'DECIMAL(10,2)', ts: 'TIMESTAMP', tstz: 'TIMESTAMP WITH TIME ZONE', l: 'INTEGER[]', st: 'STRUCT(a INTEGER, b VARCHAR)', m: 'MAP(VARCHAR, INTEGER)', u: 'UUID', b: 'BLOB', iv: 'INTERVAL' });
    const r = await t.req('GET', `/api/queries/${q.id}/rows`, { as: admin });
    const row = r.body.rows[0];
    expect(Object.keys(row)).toEqual(q.columns);
    expect(row.ti).toBe(42);
    expect(row.hi).toBe('170141183460469231731687303715884105727');
    expect(row.big).toBe('9007199254740993');
    expect(row.small_big).toBe(12);
    expect(row.dbl).toBe(1.5);
    expect(row.dec).toBe('12.30');
    expect(row.d).toBe('2024-02-29');
    expect(row.ts).toBe('2024-01-02T03:04:05.123456');
    expect(row.tstz).toMatch(/^2024-01-02T03:04:05\.123456(Z|\+00:00)$/);
    expect(row.u).toBe('4b1a1c5e-8e8b-4c35-9f53-8b0a2e1a1b2c');
    expect(row.b).toBe(Buffer.from([0xde, 0xad]).toString('base64'));
    expect(row.l).toEqual([1, 2, null]);
    expect(row.st).toEqual({ a: 1, b: 'x' });
    expect(row.m).toEqual({ k: 1 });
    expect(row.n).toBeNull();
    expect(row.bo).toBe(true);
    expect(row.s).toBe('héllo');
    expect([row.dup, row.dup_1]).toEqual([1, 2]);
    expect(row.iv).toBe('P1DT2H'); // ISO 8601 duration, months, days and time kept apart
  });
});

describe('paging', () => {
  it('a 1,000,000-row result pages to the end with a stable total, no row lost or repeated', async () => {
    const q = await done('SELECT range AS i, range % 7 AS m FROM range(1000000)');
    expect(q.row_count).toBe(1_000_000);
    let cursor: string | null = null;
    let expected = 0;
    let pages = 0;
    do {
      const r = await t.req('GET', `/api/queries/${q.id}/rows?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { as: admin });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(1_000_000);
      for (const row of r.body.rows) {
        if (row.i !== expected) throw new Error(`row ${expected} missing or repeated: got ${row.i}`);
        expected++;
      }
      cursor = r.body.cursor;
      pages++;
    } while (cursor);
    expect(expected).toBe(1_000_000);
    expect(pages).toBe(1000);
    expect((await t.req('GET', `/api/queries/${q.id}/rows?cursor=not-a-cursor`, { as: admin })).body.error).toBe('invalid_cursor');
  }, 300_000);

  it('an offset reads the page that starts at any row in one request, and its cursor continues from there', async () => {
    const q = await done('SELECT range AS i FROM range(200000)');
    const page = async (qs: string) => {
      const r = await t.req('GET', `/api/queries/${q.id}/rows?${qs}`, { as: admin });
      expect(r.status, r.text).toBe(200);
      return r.body as { rows: Array<{ i: number }>; cursor: string | null; total: number };
    };
    const last = await page('offset=199990&limit=500');
    expect({ first: last.rows[0].i, n: last.rows.length, cursor: last.cursor, total: last.total }).toEqual({ first: 199990, n: 10, cursor: null, total: 200000 });
    const middle = await page('offset=150000&limit=5');
    expect(middle.rows.map((r) => r.i)).toEqual([150000, 150001, 150002, 150003, 150004]);
    expect((await page(`cursor=${middle.cursor}&limit=2`)).rows.map((r) => r.i)).toEqual([150005, 150006]);
    expect(await page('offset=200000&limit=10')).toMatchObject({ rows: [], cursor: null, total: 200000 });
    const both = await t.req('GET', `/api/queries/${q.id}/rows?offset=5&cursor=${middle.cursor}`, { as: admin });
    expect({ status: both.status, error: both.body.error }).toEqual({ status: 400, error: 'invalid_cursor' });
    expect((await t.req('GET', `/api/queries/${q.id}/rows?offset=-1`, { as: admin })).status).toBe(422);
  }, 120_000);
});
