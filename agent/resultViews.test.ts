// Views and exports of a result file with real DuckDB, through the real result server: names quoted from the file,
// values bound (never statement text), the file's order kept for ties, and a refusal as 400 in body and headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { DuckDBInstance } from '@duckdb/node-api';
import { encodeView, type ResultView } from '../protocol/index.ts';
import { startResultServer, type ResultServer } from './resultServer.ts';
import { ResultViews, viewSelect } from './resultViews.ts';

const TOKEN = 'agent-session-token-views';
let dir: string;
let server: ResultServer;
let views: ResultViews;
const id = randomUUID();
const auth = { authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'eider-views-'));
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  // A column name with a quote and a space, a nested column, NULLs, and ties on g.
  await c.run(`COPY (SELECT range AS i, range % 3 AS g, CASE WHEN range % 4 = 0 THEN NULL ELSE 'v' || range END AS "we""ird name",
    {'a': range} AS st FROM range(20)) TO '${join(dir, `${id}.parquet`)}' (FORMAT parquet)`);
  c.closeSync();
  db.closeSync();
  views = new ResultViews({ resultsDir: dir, tempDir: join(dir, 'tmp'), memoryLimitBytes: 256 * 2 ** 20, threads: 1, logger: pino({ level: 'silent' }) });
  server = await startResultServer({ resultsDir: dir, host: '127.0.0.1', port: 0, sessionToken: () => TOKEN, logger: pino({ level: 'silent' }), views });
});
afterAll(async () => {
  await server.close();
  await views.close();
  await rm(dir, { recursive: true, force: true });
});

const url = (path: string, view?: ResultView) => `http://127.0.0.1:${server.port}/results/${id}/${path}${view ? `?view=${encodeView(view)}` : ''}`;

async function json(view: ResultView): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(url('export.json', view), { headers: auth });
  expect(res.status).toBe(200);
  return (await res.json()) as Array<Record<string, unknown>>;
}

describe('result views on the agent', () => {
  it('puts no value and no caller text in the statement: names quoted, values as parameters', () => {
    const { sql, params } = viewSelect(
      [
        { name: 'we"ird name', type: 'VARCHAR' },
        { name: 'i', type: 'BIGINT' },
      ],
      { order_by: [{ column: 'we"ird name', dir: 'desc' }], filter: [{ column: 'i', op: '>', value: "1'); DROP TABLE x; --" }], search: 'z' },
    );
    expect(params).toEqual(["1'); DROP TABLE x; --", 'z']);
    expect(sql).not.toContain('DROP');
    expect(sql).toContain('"we""ird name" DESC NULLS LAST, file_row_number');
    expect(sql).toContain('"i" > CAST($2 AS BIGINT)');
    expect(() => viewSelect([{ name: 'i', type: 'BIGINT' }], { order_by: [{ column: 'j' }], filter: [] })).toThrow(/column the result does not have/);
  });

  it('sorts with NULLs last and ties in the file order, filters by every kind, searches every column', async () => {
    const byName = await json({ order_by: [{ column: 'we"ird name', dir: 'desc' }], filter: [] });
    expect(byName.slice(-5).map((r) => r.i)).toEqual([0, 4, 8, 12, 16]); // the NULLs, last, in the file's order
    const byGroup = await json({ order_by: [{ column: 'g' }], filter: [] });
    expect(byGroup.slice(0, 7).map((r) => r.i)).toEqual([0, 3, 6, 9, 12, 15, 18]);
    expect((await json({ order_by: [], filter: [{ column: 'i', op: '>=', value: 18 }] })).map((r) => r.i)).toEqual([18, 19]);
    expect((await json({ order_by: [], filter: [{ column: 'we"ird name', op: 'is_null' }] })).length).toBe(5);
    expect((await json({ order_by: [], filter: [{ column: 'we"ird name', op: 'contains', value: 'V1' }] })).map((r) => r.i)).toEqual([1, 10, 11, 13, 14, 15, 17, 18, 19]);
    expect((await json({ order_by: [], filter: [{ column: 'st', op: 'contains', value: "'a': 7" }] })).map((r) => r.i)).toEqual([7]);
    expect((await json({ order_by: [], filter: [], search: 'v13' })).map((r) => r.i)).toEqual([13]);
  });

  it('serves a view with ranges like the result, made once; a value not of the column type is 400 with its code in headers', async () => {
    const view: ResultView = { order_by: [{ column: 'i', dir: 'desc' }], filter: [] };
    const head = await fetch(url('view.parquet', view), { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    const size = Number(head.headers.get('content-length'));
    const tail = await fetch(url('view.parquet', view), { headers: { ...auth, range: 'bytes=-4' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).toString()).toBe('PAR1');
    expect(tail.headers.get('content-range')).toBe(`bytes ${size - 4}-${size - 1}/${size}`);
    expect((await readdir(dir)).filter((n) => n.includes('.view-')).length).toBe(1);
    const bad = await fetch(url('view.parquet', { order_by: [], filter: [{ column: 'i', op: '<', value: 'abc' }] }), { method: 'HEAD', headers: auth });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-eider-error')).toBe('invalid_filter');
    expect(decodeURIComponent(bad.headers.get('x-eider-message') ?? '')).toMatch(/abc/);
    expect((await fetch(url('view.parquet', view))).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${server.port}/results/${id}/view.parquet?view=not-a-view`, { headers: auth })).status).toBe(400);
    expect((await fetch(`http://127.0.0.1:${server.port}/results/${randomUUID()}/export.csv`, { headers: auth })).status).toBe(404);
  });

  it('exports CSV with a header row and deletes the temporary file once sent', async () => {
    const res = await fetch(url('export.csv', { order_by: [{ column: 'i', dir: 'desc' }], filter: [{ column: 'i', op: '>', value: '17' }] }), { headers: auth });
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect((await res.text()).trim().split('\n')).toEqual(['i,g,"we""ird name",st', "19,1,v19,{'a': 19}", "18,0,v18,{'a': 18}"]);
    await expect.poll(async () => (await readdir(dir)).filter((n) => n.includes('.export-')).length).toBe(0);
  });
});
