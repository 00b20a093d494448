// Result pages read the way the api reads them: real DuckDB writes the file through the agent's engine, the agent's
// result server serves it over HTTP with the session token, and runtime/resultReader.ts pages through it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { parquetMetadata } from 'hyparquet';
import { QueryEngine, type EngineOptions } from '../agent/engine.ts';
import { startResultServer, type ResultServer } from '../agent/resultServer.ts';
import { openResult, ResultUnavailableError, type ColumnType } from '../runtime/resultReader.ts';

const TOKEN = 'agent-session-token-7d1e';
let dataDir: string;
let options: EngineOptions;
let server: ResultServer;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'eider-result-reader-'));
  options = {
    dataDir,
    resultsDir: join(dataDir, 'results'),
    disabledFilesystems: [],
    lockConfiguration: true,
    profilingEnabled: false,
    explainMemoryBytes: 64 * 2 ** 20,
    extraReadableDirs: [],
  };
  server = await startResultServer({ resultsDir: options.resultsDir, host: '127.0.0.1', port: 0, sessionToken: () => TOKEN, logger: pino({ level: 'silent' }) });
});

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

interface Written {
  id: string;
  url: string;
  path: string;
  columns: string[];
  columnSchema: ColumnType[];
  rowCount: number;
}

/** Runs `sql` through the agent's engine exactly as the agent does, leaving results/{id}.parquet. */
async function agentQuery(sql: string): Promise<Written> {
  const id = randomUUID();
  const engine = await QueryEngine.open(id, options);
  try {
    await engine.configure(512 * 2 ** 20);
    const result = await engine.execute(sql);
    if (!result.columnSchema || !result.resultPath) throw new Error('no result grid');
    return {
      id,
      url: `http://127.0.0.1:${server.port}/results/${id}.parquet`,
      path: join(dataDir, result.resultPath),
      columns: result.columns,
      columnSchema: result.columnSchema,
      rowCount: result.rowCount,
    };
  } finally {
    await engine.close();
  }
}

async function expectUnavailable(promise: Promise<unknown>, status: number | undefined, reason: string): Promise<void> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ResultUnavailableError);
  expect((error as ResultUnavailableError).status).toBe(status);
  expect((error as ResultUnavailableError).reason).toBe(reason);
  // The token never appears in what the api could log or return.
  expect(String((error as Error).message)).not.toContain(TOKEN);
}

describe('result values (every type family, through the agent engine and result server)', () => {
  const SQL = `
    SELECT * FROM (VALUES
      ((-128)::TINYINT, 32767::SMALLINT, (-2147483648)::INTEGER, 9007199254740991::BIGINT, (-9223372036854775808)::BIGINT,
       170141183460469231731687303715884105727::HUGEINT, (-170141183460469231731687303715884105728)::HUGEINT,
       340282366920938463463374607431768211455::UHUGEINT, 255::UTINYINT, 4294967295::UINTEGER,
       18446744073709551615::UBIGINT,
       9999999999999999999999999999.9999999999::DECIMAL(38,10), (-0.0000000001)::DECIMAL(38,10), 12.3::DECIMAL(4,2),
       (-123456789012.345)::DECIMAL(18,3), 1.25::DOUBLE, 'NaN'::DOUBLE, '-Infinity'::DOUBLE, 0.1::FLOAT,
       true, 'héllo "world"', '', DATE '2024-02-29', DATE '0044-03-15 (BC)',
       TIME '23:59:59.999999', TIME '12:00:00',
       TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMP '1969-12-31 23:59:59.999999',
       TIMESTAMPTZ '2024-06-01 12:00:00.000001+02', '2024-01-02 03:04:05'::TIMESTAMP_S,
       '2024-01-02 03:04:05.123'::TIMESTAMP_MS, '2024-01-02 03:04:05.123456789'::TIMESTAMP_NS,
       '12:34:56+02'::TIMETZ, INTERVAL '1 year 2 months 3 days 04:05:06',
       'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::UUID, '\\xAA\\xBB\\x00'::BLOB, 'b'::ENUM('a', 'b'), '{"n": 12345678901234567890}'::JSON,
       '1011'::BIT, [1, NULL, 3], [[1, 2], [], NULL], [1, 2, 3]::INTEGER[3],
       [{'a': 1, 'b': 'x', 'd': 1.50::DECIMAL(5,2), 't': TIMESTAMP '2020-01-01 00:00:00.000001'}, NULL],
       {'k': 1, 's': {'deep': [DATE '2000-01-01']}, 'h': 18446744073709551616::HUGEINT},
       MAP {'b': 1, 'a': NULL}, MAP {2: 'two', 1: 'one'}, MAP {'k': [{'x': 1}]},
       union_value(num := 7)::UNION(num INTEGER, str VARCHAR)),
      (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
    ) AS t(ti, si, i, bi_safe, bi_min, hi_max, hi_min, uh_max, ut, ui, ub, d38, d38_tiny, d4, d18, dbl, dbl_nan,
           dbl_ninf, flt, b, v, v_empty, d, d_bc, t, t_whole, ts, ts_pre_epoch, tstz, ts_s, ts_ms, ts_ns, ttz, iv, u, bl,
           en, j, bt, li, li_nested, arr, li_struct, st, m_text, m_int, m_nested, un)`;

  const EXPECTED = {
    ti: -128, si: 32767, i: -2147483648, bi_safe: 9007199254740991, bi_min: '-9223372036854775808',
    hi_max: '170141183460469231731687303715884105727', hi_min: '-170141183460469231731687303715884105728',
    uh_max: '340282366920938463463374607431768211455', ut: 255, ui: 4294967295, ub: '18446744073709551615',
    d38: '9999999999999999999999999999.9999999999', d38_tiny: '-0.0000000001', d4: '12.30',
    d18: '-123456789012.345', dbl: 1.25, dbl_nan: 'NaN', dbl_ninf: '-Infinity', flt: 0.1,
    b: true, v: 'héllo "world"', v_empty: '', d: '2024-02-29', d_bc: '-000043-03-15',
    t: '23:59:59.999999', t_whole: '12:00:00',
    ts: '2024-01-02T03:04:05.123456', ts_pre_epoch: '1969-12-31T23:59:59.999999',
    tstz: '2024-06-01T10:00:00.000001+00:00', ts_s: '2024-01-02T03:04:05', ts_ms: '2024-01-02T03:04:05.123',
    ts_ns: '2024-01-02T03:04:05.123456789', ttz: '10:34:56+00:00', iv: 'P1Y2M3DT4H5M6S',
    u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', bl: Buffer.from([0xaa, 0xbb, 0x00]).toString('base64'), en: 'b',
    j: '{"n": 12345678901234567890}', bt: '1011', li: [1, null, 3], li_nested: [[1, 2], [], null], arr: [1, 2, 3],
    li_struct: [{ a: 1, b: 'x', d: '1.50', t: '2020-01-01T00:00:00.000001' }, null],
    st: { k: 1, s: { deep: ['2000-01-01'] }, h: '18446744073709551616' },
    m_text: { b: 1, a: null }, m_int: [{ key: 2, value: 'two' }, { key: 1, value: 'one' }], m_nested: { k: [{ x: 1 }] },
    un: 7,
  };

  let written: Written;
  beforeAll(async () => {
    written = await agentQuery(SQL);
  });

  it('maps each type as docs/api-decisions.md says, in column order, with the DuckDB types of column_schema', async () => {
    const file = await openResult({ url: written.url, bearerToken: TOKEN });
    expect(file.numRows).toBe(2);
    const page = await file.readPage(0, 10, written.columnSchema);
    expect(page.columns).toEqual(written.columns);
    expect(page.nextOffset).toBeNull();
    expect(page.rows[0]).toEqual(EXPECTED);
    expect(Object.keys(page.rows[0])).toEqual(written.columns);
    // JSON as sent: nothing lost in serialization (no bigint, Date, typed array or undefined left).
    expect(JSON.parse(JSON.stringify(page.rows[0]))).toEqual(EXPECTED);
  });

  it('maps NULL to null in every type', async () => {
    const file = await openResult({ url: written.url, bearerToken: TOKEN });
    const page = await file.readPage(1, 1, written.columnSchema);
    expect(page.rows).toEqual([Object.fromEntries(written.columns.map((c) => [c, null]))]);
  });

  it('decodes by the Parquet annotations alone when column_schema is missing (older agents)', async () => {
    const file = await openResult({ url: written.url, bearerToken: TOKEN });
    const [row] = (await file.readPage(0, 1, null)).rows;
    // Same as with the schema, except where only DuckDB's type tells: TIMESTAMP_S is written as micros, a UNION is
    // a struct of its tag and members in the file, and the agent stores INTERVAL as DuckDB's text.
    expect({ ...row, ts_s: EXPECTED.ts_s, un: EXPECTED.un, iv: EXPECTED.iv }).toEqual(EXPECTED);
    expect(row.ts_s).toBe('2024-01-02T03:04:05.000000');
    expect(row.iv).toBe('1 year 2 months 3 days 04:05:06');
    expect(row.un).toEqual({ '': 0, num: 7, str: null });
  });

  it('keeps the unique names the agent gives duplicate columns', async () => {
    const dup = await agentQuery(`SELECT 1 AS a, 2 AS a, 3 AS "A", 4 AS "__proto__"`);
    const page = await (await openResult({ url: dup.url, bearerToken: TOKEN })).readPage(0, 1, dup.columnSchema);
    expect(page.columns).toEqual(['a', 'a_1', 'A_2', '__proto__']);
    expect(page.rows).toEqual([{ a: 1, a_1: 2, A_2: 3, ['__proto__']: 4 }]);
    expect(Object.getPrototypeOf(page.rows[0])).toBe(Object.prototype);
    expect(JSON.stringify(page.rows[0])).toBe('{"a":1,"a_1":2,"A_2":3,"__proto__":4}');
  });

  it('reads INTERVAL written as DuckDB text with negative parts and microseconds', async () => {
    // What the agent writes once it stores INTERVAL as text (Parquet's INTERVAL is unsigned milliseconds): the file
    // holds VARCHAR, column_schema says INTERVAL.
    const text = await agentQuery(`SELECT CAST(iv AS VARCHAR) AS iv, CAST([iv] AS VARCHAR[]) AS ivs FROM (VALUES
      (-INTERVAL '1 year 2 months 3 days 04:05:06.000007'), (INTERVAL '1 month -1 microsecond'),
      (INTERVAL '100 hours'), (INTERVAL '0 seconds'), (INTERVAL '-13 months 1 day')) t(iv)`);
    const schema = [{ name: 'iv', type: 'INTERVAL' }, { name: 'ivs', type: 'INTERVAL[]' }];
    const page = await (await openResult({ url: text.url, bearerToken: TOKEN })).readPage(0, 10, schema);
    const expected = ['P-1Y-2M-3DT-4H-5M-6.000007S', 'P1MT-0.000001S', 'PT100H', 'PT0S', 'P-1Y-1M1D'];
    expect(page.rows).toEqual(expected.map((iv) => ({ iv, ivs: [iv] })));
  });

  it('carries negative intervals and interval microseconds through the agent', async () => {
    // Fails until agent/engine.ts writes INTERVAL as text like HUGEINT: DuckDB's Parquet writer refuses negative
    // intervals ("Parquet files do not support negative intervals") and truncates microseconds to milliseconds.
    const neg = await agentQuery(`SELECT -INTERVAL '1 year 2 months 3 days 04:05:06.000007' AS iv, [INTERVAL '1 microsecond'] AS ivs`);
    const page = await (await openResult({ url: neg.url, bearerToken: TOKEN })).readPage(0, 1, neg.columnSchema);
    expect(page.rows).toEqual([{ iv: 'P-1Y-2M-3DT-4H-5M-6.000007S', ivs: ['PT0.000001S'] }]);
  });

  // Valid DuckDB the agent failed on for reasons of its own: VARIANT below the top of a column (DuckDB's Parquet
  // writer cannot write it there), TYPE values (node-api cannot read the type), a PIVOT without an IN list (DuckDB
  // runs a CREATE TYPE of the pivoted values ahead of it: two statements for one).
  it('carries VARIANT in lists, maps and structs, TYPE values, and a PIVOT without an IN list', async () => {
    const variant = await agentQuery(`SELECT 1::VARIANT AS top, [1::VARIANT, 'a'::VARIANT, NULL, [2, 3]::VARIANT, 12345678901234567890::VARIANT] AS l,
      MAP {'k': {'x': 1.5}::VARIANT} AS m, {'v': true::VARIANT, 'TYPE': 2} AS s`);
    expect(variant.columnSchema).toEqual([
      { name: 'top', type: 'VARIANT' },
      { name: 'l', type: 'VARIANT[]' },
      { name: 'm', type: 'MAP(VARCHAR, VARIANT)' },
      { name: 's', type: 'STRUCT(v VARIANT, "TYPE" INTEGER)' },
    ]);
    const rows = (await (await openResult({ url: variant.url, bearerToken: TOKEN })).readPage(0, 1, variant.columnSchema)).rows;
    expect(rows).toEqual([{ top: 1, l: [1, 'a', null, [2, 3], '12345678901234567890'], m: { k: { x: 1.5 } }, s: { v: true, TYPE: 2 } }]);

    const types = await agentQuery(`SELECT get_type(1) AS t, make_type('DECIMAL', 10, 2) AS d, [get_type('a')] AS ts`);
    expect(types.columnSchema).toEqual([
      { name: 't', type: 'TYPE' },
      { name: 'd', type: 'TYPE' },
      { name: 'ts', type: 'TYPE[]' },
    ]);
    expect((await (await openResult({ url: types.url, bearerToken: TOKEN })).readPage(0, 1, types.columnSchema)).rows).toEqual([{ t: 'INTEGER', d: 'DECIMAL(10,2)', ts: ['VARCHAR'] }]);

    const pivot = await agentQuery(`PIVOT (SELECT range % 3 AS k, range AS v FROM range(10)) ON k USING sum(v)::INTEGER ORDER BY ALL`);
    expect(pivot.columns).toEqual(['0', '1', '2']);
    expect(pivot.rowCount).toBe(1);
    expect((await (await openResult({ url: pivot.url, bearerToken: TOKEN })).readPage(0, 1, pivot.columnSchema)).rows).toEqual([{ 0: 18, 1: 12, 2: 15 }]);
  });

  it('answers an empty result with no rows and its columns', async () => {
    const empty = await agentQuery(`SELECT 1 AS a, 'x' AS b WHERE false`);
    const file = await openResult({ url: empty.url, bearerToken: TOKEN });
    expect(file.numRows).toBe(0);
    expect(await file.readPage(0, 100, empty.columnSchema)).toEqual({ rows: [], columns: ['a', 'b'], nextOffset: null });
  });
});

describe('paging a large result', () => {
  const ROWS = 1_000_000;
  let big: Written;
  beforeAll(async () => {
    big = await agentQuery(`SELECT i AS id, 'row-' || i AS label FROM range(${ROWS}) t(i)`);
  });

  it('pages 1,000,000 rows to the end with no row lost or repeated', async () => {
    const file = await openResult({ url: big.url, bearerToken: TOKEN });
    expect(file.numRows).toBe(ROWS);
    // 7,919 rows a page: pages straddle row-group boundaries.
    const LIMIT = 7919;
    let expectedId = 0;
    let pages = 0;
    for (let offset: number | null = 0; offset !== null; pages++) {
      const page = await file.readPage(offset, LIMIT, big.columnSchema);
      expect(page.rows.length).toBe(Math.min(LIMIT, ROWS - offset));
      for (const row of page.rows) {
        if (row.id !== expectedId || row.label !== `row-${expectedId}`) expect(row).toEqual({ id: expectedId, label: `row-${expectedId}` });
        expectedId++;
      }
      expect(page.nextOffset).toBe(offset + page.rows.length < ROWS ? offset + page.rows.length : null);
      offset = page.nextOffset;
    }
    expect(expectedId).toBe(ROWS);
    expect(pages).toBe(Math.ceil(ROWS / LIMIT));
    expect(await file.readPage(ROWS, 10, big.columnSchema)).toEqual({ rows: [], columns: ['id', 'label'], nextOffset: null });
  });

  it('gives each caller its own row objects', async () => {
    const file = await openResult({ url: big.url, bearerToken: TOKEN });
    const first = await file.readPage(10, 2, big.columnSchema);
    first.rows[0].id = -1;
    const again = await file.readPage(10, 2, big.columnSchema);
    expect(again.rows).toEqual([{ id: 10, label: 'row-10' }, { id: 11, label: 'row-11' }]);
  });

  it('fetches only the footer and the row group a page needs: a small fraction of the file', async () => {
    // A file of its own, so no cache of this process has seen it.
    const wide = await agentQuery(`SELECT i AS id, md5(i::VARCHAR) AS h, i * 1.5 AS x, 'label-' || i AS s FROM range(${ROWS}) t(i)`);
    const size = (await stat(wide.path)).size;
    const requests: { method: string; range: string | null; bytes: number }[] = [];
    const counting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const body = await response.arrayBuffer();
      const headers = new Headers(init?.headers);
      requests.push({ method: init?.method ?? 'GET', range: headers.get('range'), bytes: body.byteLength });
      return new Response(body.byteLength === 0 && init?.method === 'HEAD' ? null : body, { status: response.status, headers: response.headers });
    };
    const file = await openResult({ url: wide.url, bearerToken: TOKEN, fetchImpl: counting });
    const offset = 500_000;
    const page = await file.readPage(offset, 1000, wide.columnSchema);
    expect(page.rows[0]).toMatchObject({ id: offset, s: `label-${offset}` });
    expect(page.rows.at(-1)).toMatchObject({ id: offset + 999 });

    const fetched = requests.reduce((sum, r) => sum + r.bytes, 0);
    expect(requests[0]).toMatchObject({ method: 'HEAD', bytes: 0 });
    expect(requests.slice(1).every((r) => r.method === 'GET' && r.range !== null)).toBe(true);
    // The bound the design promises: footer (one suffix read, plus the rest of a long footer) and the column chunks
    // of the one row group holding rows 500,000..500,999.
    const buffer = await readFile(wide.path);
    const metadata = parquetMetadata(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength));
    let start = 0;
    let groupBytes = 0;
    for (const group of metadata.row_groups) {
      const rows = Number(group.num_rows);
      if (start <= offset && offset + 1000 <= start + rows) groupBytes = group.columns.reduce((s, c) => s + Number(c.meta_data?.total_compressed_size ?? 0), 0);
      start += rows;
    }
    expect(groupBytes).toBeGreaterThan(0);
    expect(fetched).toBeLessThanOrEqual(Math.max(64 * 1024, metadata.metadata_length + 8) + groupBytes);
    expect(fetched / size).toBeLessThan(0.15);

    // The next page of the same row group is served from the decoded group: no request at all.
    const before = requests.length;
    await file.readPage(offset + 1000, 1000, wide.columnSchema);
    expect(requests.length).toBe(before);
  });
});

describe('unavailable results', () => {
  it('answers 404 for a result that does not exist', async () => {
    const url = `http://127.0.0.1:${server.port}/results/${randomUUID()}.parquet`;
    await expectUnavailable(openResult({ url, bearerToken: TOKEN }), 404, 'not_found');
  });

  it('answers 404 when retention deleted the file after its footer was read', async () => {
    const gone = await agentQuery(`SELECT i AS id FROM range(10) t(i)`);
    const file = await openResult({ url: gone.url, bearerToken: TOKEN });
    await unlink(gone.path);
    await expectUnavailable(file.readPage(0, 5, gone.columnSchema), 404, 'not_found');
    // And the cached footer is forgotten: opening again asks the agent, which says 404.
    await expectUnavailable(openResult({ url: gone.url, bearerToken: TOKEN }), 404, 'not_found');
  });

  it('answers 401 for a wrong token, even for a file another caller has open', async () => {
    const one = await agentQuery(`SELECT 1 AS a`);
    await expectUnavailable(openResult({ url: one.url, bearerToken: 'not-the-session-token' }), 401, 'unauthorized');
    await (await openResult({ url: one.url, bearerToken: TOKEN })).readPage(0, 1, one.columnSchema);
    await expectUnavailable(openResult({ url: one.url, bearerToken: `${TOKEN}x` }), 401, 'unauthorized');
  });

  it('reports an unreachable agent without a status', async () => {
    const closed = await startResultServer({ resultsDir: options.resultsDir, host: '127.0.0.1', port: 0, sessionToken: () => TOKEN, logger: pino({ level: 'silent' }) });
    const port = closed.port;
    await closed.close();
    await expectUnavailable(openResult({ url: `http://127.0.0.1:${port}/results/${randomUUID()}.parquet`, bearerToken: TOKEN }), undefined, 'unreachable');
  });
});
