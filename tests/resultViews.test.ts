// Sorting, filtering and exporting a result on the agent that holds it (docs/api-decisions.md "Result views"): a
// real agent re-reads the result file with DuckDB; the api pages the view and streams exports through.
import { describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { runDone } from './support/api.ts';

const { t, admin, agentId } = await stackWithAgent({ api: 'alone', agent: { name: 'views' } });

const done = (sql: string) => runDone(t, admin, agentId, sql, 60);

const qs = (o: Record<string, unknown>) =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join('&');

async function page(id: string, params: Record<string, unknown>) {
  const r = await t.req('GET', `/api/queries/${id}/rows?${qs(params)}`, { as: admin });
  return r;
}

// 300,000 rows: past the 50,000 the browser used to sort, and many row groups in the result file.
const BIG = `SELECT range AS i, (range * 7919) % 1000 AS k, CASE WHEN range % 10 = 0 THEN NULL ELSE 'name ' || range END AS s FROM range(300000)`;

describe('result views (sort and filter on the agent)', () => {
  it('sorts the whole result, NULLs last, ties in the query order, and pages the view by offset and cursor', async () => {
    const q = await done(BIG);
    const desc = await page(q.id, { order_by: [{ column: 'k', dir: 'desc' }], limit: 5 });
    expect(desc.status, desc.text).toBe(200);
    expect(desc.body.total).toBe(300_000);
    expect(desc.body.rows.map((r: any) => r.k)).toEqual([999, 999, 999, 999, 999]);
    // ties keep the query's order: the rows with k = 999, smallest i first
    const is = desc.body.rows.map((r: any) => r.i);
    expect([...is].sort((a, b) => a - b)).toEqual(is);
    const next = await page(q.id, { order_by: [{ column: 'k', dir: 'desc' }], limit: 3, cursor: desc.body.cursor });
    expect(next.body.rows[0].i).toBeGreaterThan(is[4]);
    const last = await page(q.id, { order_by: [{ column: 's' }], offset: 299_998, limit: 10 });
    expect(last.body.rows.map((r: any) => r.s)).toEqual([null, null]);
    // a cursor of one view does not continue another (or the plain result)
    const mixed = await t.req('GET', `/api/queries/${q.id}/rows?cursor=${desc.body.cursor}`, { as: admin });
    expect({ status: mixed.status, error: mixed.body.error }).toEqual({ status: 400, error: 'invalid_cursor' });
  }, 180_000);

  it('filters with every operator, values bound (never spliced), total counting the matches', async () => {
    const q = await done(BIG);
    const count = async (filter: unknown[]) => {
      const r = await page(q.id, { filter, limit: 2 });
      expect(r.status, r.text).toBe(200);
      return r.body.total as number;
    };
    expect(await count([{ column: 's', op: 'is_null' }])).toBe(30_000);
    expect(await count([{ column: 's', op: 'is_not_null' }])).toBe(270_000);
    expect(await count([{ column: 'i', op: '<', value: '100' }])).toBe(100);
    expect(await count([{ column: 'i', op: '>=', value: 299_990 }])).toBe(10);
    expect(await count([{ column: 'i', op: '=', value: '42' }])).toBe(1);
    expect(await count([{ column: 'k', op: '!=', value: '0' }])).toBe(299_700);
    expect(await count([{ column: 's', op: 'contains', value: 'NAME 12345' }])).toBe(10); // 12345 and 123451..123459 (123450 is NULL)
    expect(await count([{ column: 'i', op: '<=', value: '9' }, { column: 's', op: 'is_null' }])).toBe(1);
    // a value is data: quotes and SQL in it match nothing and break nothing
    expect(await count([{ column: 's', op: 'contains', value: "x') OR 1=1 --" }])).toBe(0);
    // search: the text in any column (s holds "name 29999" and "name 299991".."name 299999"; 299990 is NULL)
    const found = await page(q.id, { search: 'AME 29999', limit: 1 });
    expect(found.body.total).toBe(10);
    const sorted = await page(q.id, { filter: [{ column: 'k', op: '=', value: '7' }], order_by: [{ column: 'i', dir: 'desc' }], limit: 2 });
    expect(sorted.body.rows.every((r: any) => r.k === 7)).toBe(true);
    expect(sorted.body.rows[0].i).toBeGreaterThan(sorted.body.rows[1].i);
  }, 180_000);

  it('a bad column, operator, value or parameter is 400 in the error envelope; no parameters answer as before', async () => {
    const q = await done('SELECT range AS i FROM range(10)');
    const bad = async (params: Record<string, unknown>) => {
      const r = await page(q.id, params);
      expect(r.status, r.text).toBe(400);
      expect(typeof r.body.message).toBe('string');
      return r.body;
    };
    expect(await bad({ order_by: [{ column: 'nope' }] })).toMatchObject({ error: 'unknown_column', details: { column: 'nope', columns: ['i'] } });
    expect((await bad({ filter: [{ column: 'I', op: '=', value: '1' }] })).error).toBe('unknown_column');
    expect((await bad({ filter: [{ column: 'i', op: 'LIKE', value: '1' }] })).error).toBe('invalid_filter');
    expect((await bad({ filter: [{ column: 'i', op: '=' }] })).error).toBe('invalid_filter');
    expect((await bad({ filter: [{ column: 'i', op: '<', value: 'abc' }] })).error).toBe('invalid_filter'); // not a number: the agent says so
    expect((await bad({ filter: '{not json' })).error).toBe('invalid_filter');
    expect((await bad({ order_by: [{ column: 'i', dir: 'sideways' }] })).error).toBe('invalid_order_by');
    // The agent keeps 8 views of a result: the first of nine, deleted meanwhile, is made again under its reader.
    const first = await page(q.id, { filter: [{ column: 'i', op: '>', value: '0' }], limit: 2 });
    expect(first.body.rows).toEqual([{ i: 1 }, { i: 2 }]);
    for (let n = 1; n <= 8; n++) expect((await page(q.id, { filter: [{ column: 'i', op: '>', value: String(n) }], limit: 1 })).status).toBe(200);
    const again = await page(q.id, { filter: [{ column: 'i', op: '>', value: '0' }], cursor: first.body.cursor, limit: 2 });
    expect({ status: again.status, rows: again.body.rows, total: again.body.total }).toEqual({ status: 200, rows: [{ i: 3 }, { i: 4 }], total: 9 });
    const plain = await t.req('GET', `/api/queries/${q.id}/rows?limit=3`, { as: admin });
    expect(plain.body).toEqual({ rows: [{ i: 0 }, { i: 1 }, { i: 2 }], columns: ['i'], column_schema: [{ name: 'i', type: 'BIGINT' }], cursor: plain.body.cursor, total: 10 });
  }, 60_000);
});

describe('exports made on the agent', () => {
  it('CSV, Parquet and JSON of the view shown, streamed as a download', async () => {
    const q = await done(BIG);
    const view = { order_by: [{ column: 'i', dir: 'desc' }], filter: [{ column: 'i', op: '<', value: '1000' }] };
    const get = (format: string, extra: Record<string, unknown> = view) => fetch(`${t.url}/api/queries/${q.id}/export?${qs({ format, ...extra })}`, { headers: { cookie: admin.cookie! } });

    const csv = await get('csv');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="query-${q.id.slice(0, 8)}.csv"`);
    const lines = (await csv.text()).trim().split('\n');
    expect(lines[0]).toBe('i,k,s');
    expect(lines.length).toBe(1001);
    expect(lines[1].startsWith('999,')).toBe(true);
    expect(lines[1000]).toBe('0,0,');

    const json = await get('json');
    expect(json.headers.get('content-type')).toBe('application/json');
    const rows = (await json.json()) as Array<{ i: number }>;
    expect(rows.length).toBe(1000);
    expect(rows[0].i).toBe(999);

    const parquet = await get('parquet', {});
    expect(parquet.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    const dir = await mkdtemp(join(tmpdir(), 'eider-export-'));
    try {
      const file = join(dir, 'all.parquet');
      await writeFile(file, Buffer.from(await parquet.arrayBuffer()));
      const db = await DuckDBInstance.create(':memory:');
      const c = await db.connect();
      const r = (await c.runAndReadAll(`SELECT count(*)::INTEGER, max(i)::INTEGER FROM read_parquet('${file}')`)).getRows();
      expect(r[0]).toEqual([300_000, 299_999]);
      c.closeSync();
      db.closeSync();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    const refused = await t.req('GET', `/api/queries/${q.id}/export?format=csv&filter=${encodeURIComponent('[{"column":"zz","op":"is_null"}]')}`, { as: admin });
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 400, error: 'unknown_column' });
    expect((await t.req('GET', `/api/queries/${q.id}/export?format=xlsx`, { as: admin })).status).toBe(422);
  }, 180_000);
});
