import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DuckDBInstance } from '@duckdb/node-api';
import { QueryEngine, type EngineOptions } from './engine.ts';
import { SandboxSlots } from './sandboxSlots.ts';

let dataDir: string;
let options: EngineOptions;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'eider-engine-'));
  options = {
    dataDir,
    resultsDir: join(dataDir, 'results'),
    disabledFilesystems: [],
    lockConfiguration: true,
    profilingEnabled: true,
    explainMemoryBytes: 64 * 2 ** 20,
    extraReadableDirs: [],
  };
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function run(sql: string, configure = true) {
  const id = randomUUID();
  const engine = await QueryEngine.open(id, options);
  try {
    if (configure) await engine.configure(256 * 2 ** 20);
    return { id, result: await engine.execute(sql) };
  } finally {
    await engine.close();
  }
}

// Reads a result file back with a separate, unsandboxed DuckDB: the file must stand on its own.
async function readBack(id: string, select = '*'): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT ${select} FROM read_parquet('${join(options.resultsDir, `${id}.parquet`)}')`);
    return reader.getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('QueryEngine (real DuckDB)', () => {
  it('a stop between two DuckDB calls still stops the query; an interrupt (a session statement) does not stick', async () => {
    const engine = await QueryEngine.open(randomUUID(), options);
    try {
      await engine.configure(128 * 2 ** 20);
      engine.interrupt(); // nothing runs: lost, as DuckDB loses it
      expect((await engine.execute('SELECT 42')).rowCount).toBe(1);
      engine.stop(); // nothing runs either, but the query is stopped for good
      await expect(engine.execute('SELECT count(*) FROM range(100000000000)')).rejects.toThrow(/Interrupted/);
    } finally {
      await engine.close();
    }
  });

  it('an interrupt sent as DuckDB receives the call (before its thread begins it) still stops the statement', async () => {
    // DuckDB drops an interrupt that lands before its worker begins the call: the CI saw a cancel lost this way and
    // the query ran to its end. Here the interrupt is sent right as the COPY is handed to DuckDB, every time.
    for (const stopWith of ['interrupt', 'stop'] as const) {
      const engine = await QueryEngine.open(randomUUID(), options);
      try {
        await engine.configure(128 * 2 ** 20);
        const connection = engine.connection;
        const run = connection.run.bind(connection);
        connection.run = (sql: string, ...rest: unknown[]) => {
          const pending = run(sql, ...(rest as []));
          if (sql.startsWith('COPY')) engine[stopWith]();
          return pending;
        };
        const started = Date.now();
        await expect(engine.execute('SELECT count(*) FROM range(100000000000)')).rejects.toThrow(/Interrupted/);
        expect(Date.now() - started).toBeLessThan(5_000);
      } finally {
        await engine.close();
      }
    }
  });

  it("spells column_schema as DESCRIBE does, whether or not it needed DESCRIBE", async () => {
    const plain = `SELECT 1::TINYINT a, 2::BIGINT b, 3::HUGEINT c, 1.5::DECIMAL(10,2) d, 1.5::DOUBLE e, 'x' f, DATE '2024-01-01' g,
      TIMESTAMP '2024-01-01 00:00:00' h, TIMESTAMPTZ '2024-01-01 00:00:00+00' i, INTERVAL 1 DAY j, uuid() k, 'a'::BLOB l, true m,
      [1, 2] n, MAP {'k': 1} o, 'x'::ENUM('x', 'y') p, TIME '01:02:03' q, [1, 2]::INTEGER[2] r, 1::UBIGINT s, '101'::BIT t`;
    const named = `SELECT {'a': 1, 'b b': 'x'} st, '{}'::JSON js, 1::UNION(n INTEGER, s VARCHAR) un`;
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      for (const sql of [plain, named]) {
        const described = (await connection.runAndReadAll(`DESCRIBE ${sql}`)).getRows().map((r) => ({ name: String(r[0]), type: String(r[1]) }));
        expect((await run(sql)).result.columnSchema).toEqual(described);
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('hands a slot back after a read only: after DDL or a write the slot is closed', async () => {
    const slots = new SandboxSlots({ scratchRoot: join(dataDir, 'tmp'), extensionDir: join(dataDir, 'extensions'), disabledFilesystems: [], extraReadableDirs: [], profilingEnabled: true, lockConfiguration: true });
    try {
      const runIn = async (sql: string) => {
        const engine = await QueryEngine.openInSlot(randomUUID(), options, slots, 128 * 2 ** 20);
        try {
          return await engine.execute(sql);
        } finally {
          await engine.close();
        }
      };
      await runIn('SELECT 42');
      expect(slots.idleCount).toBe(1);
      await runIn(`CREATE MACRO lower(x) AS 'shadowed'`);
      expect(slots.idleCount).toBe(0);
      const after = await runIn(`SELECT lower('ABC') AS v`);
      expect(after.rowCount).toBe(1);
      expect(slots.idleCount).toBe(1);
      await runIn(`SELECT 1; SELECT 2`).catch(() => undefined);
      expect(slots.idleCount).toBe(0);
      // What a kept connection would carry to the next query: a variable, a prepared statement (the slot is closed).
      for (const carried of [`SET VARIABLE secret = 'a'`, `PREPARE p AS SELECT 'a'`]) {
        await runIn('SELECT 42');
        expect(slots.idleCount).toBe(1);
        await runIn(carried).catch(() => undefined);
        expect(slots.idleCount, carried).toBe(0);
      }
    } finally {
      await slots.close();
    }
  });

  it("profiles each operator's rows and the planner's estimate of them", async () => {
    const { result } = await run('SELECT k, count(*) AS n FROM (SELECT range % 7 AS k FROM range(1000)) GROUP BY k');
    const ops: Array<{ name: string; cardinality: number; estimated_cardinality?: number }> = [];
    const walk = (o: NonNullable<NonNullable<typeof result.profile>['operators']>): void => {
      ops.push(o);
      o.children.forEach(walk);
    };
    walk(result.profile!.operators!);
    const range = ops.find((o) => o.name === 'RANGE');
    expect(range).toMatchObject({ cardinality: 1000, estimated_cardinality: 1000 });
    expect(ops.find((o) => o.name.includes('GROUP_BY'))?.estimated_cardinality).toBeGreaterThan(0);
  });

  it('materializes EXPLAIN and EXPLAIN ANALYZE of a read as the plan text', async () => {
    for (const sql of ['EXPLAIN SELECT sum(range) FROM range(10)', 'EXPLAIN ANALYZE SELECT sum(range) FROM range(10)']) {
      const { id, result } = await run(sql);
      expect(result).toMatchObject({ statementType: 'describe', wrote: false, columns: ['explain_key', 'explain_value'], resultPath: `results/${id}.parquet` });
      expect(result.columnSchema).toEqual([{ name: 'explain_key', type: 'VARCHAR' }, { name: 'explain_value', type: 'VARCHAR' }]);
      const rows = await readBack(id);
      expect(rows.length).toBe(result.rowCount);
      expect(String(rows[0].explain_value)).toMatch(/RANGE|range/);
    }
  });

  it('writes every type family to the result file with DuckDB type spelling in column_schema', async () => {
    const sql = `SELECT
      1::TINYINT AS ti, 2::SMALLINT AS si, 3::INTEGER AS i, 4::BIGINT AS bi,
      170141183460469231731687303715884105727::HUGEINT AS hi, 255::UTINYINT AS ut, [9007199254740993::HUGEINT] AS hl,
      12345.67::DECIMAL(10,2) AS dec, 1.25::DOUBLE AS dbl, 1.5::FLOAT AS flt, true AS b, 'héllo' AS v,
      DATE '2024-02-29' AS d, TIMESTAMP '2024-01-02 03:04:05.123456' AS ts,
      TIMESTAMPTZ '2024-01-02 03:04:05.123456+00' AS tstz, INTERVAL '1 year 2 months 3 days 04:05:06' AS iv,
      '6f1c1c36-7cf0-4d6c-8a55-6f1f1f2b3c4d'::UUID AS u, '\\xDE\\xAD'::BLOB AS bl,
      [1, 2, NULL]::INTEGER[] AS li, {'a': 1, 'b': 'x'} AS st, MAP {'k': 1} AS mp,
      NULL::VARCHAR AS nv, NULL::INTEGER AS ni
      FROM range(3)`;
    const { id, result } = await run(sql);
    expect(result.statementType).toBe('select');
    expect(result.rowCount).toBe(3);
    expect(result.resultPath).toBe(`results/${id}.parquet`);
    expect(result.columnSchema).toEqual([
      { name: 'ti', type: 'TINYINT' }, { name: 'si', type: 'SMALLINT' }, { name: 'i', type: 'INTEGER' },
      { name: 'bi', type: 'BIGINT' }, { name: 'hi', type: 'HUGEINT' }, { name: 'ut', type: 'UTINYINT' }, { name: 'hl', type: 'HUGEINT[]' },
      { name: 'dec', type: 'DECIMAL(10,2)' }, { name: 'dbl', type: 'DOUBLE' }, { name: 'flt', type: 'FLOAT' },
      { name: 'b', type: 'BOOLEAN' }, { name: 'v', type: 'VARCHAR' }, { name: 'd', type: 'DATE' },
      { name: 'ts', type: 'TIMESTAMP' }, { name: 'tstz', type: 'TIMESTAMP WITH TIME ZONE' },
      { name: 'iv', type: 'INTERVAL' }, { name: 'u', type: 'UUID' }, { name: 'bl', type: 'BLOB' },
      { name: 'li', type: 'INTEGER[]' }, { name: 'st', type: 'STRUCT(a INTEGER, b VARCHAR)' },
      { name: 'mp', type: 'MAP(VARCHAR, INTEGER)' }, { name: 'nv', type: 'VARCHAR' }, { name: 'ni', type: 'INTEGER' },
    ]);
    expect(result.columns).toEqual(result.columnSchema!.map((c) => c.name));
    const rows = await readBack(
      id,
      `ti, si, i, bi, hi, ut, hl, dec::VARCHAR AS dec, dbl, flt, b, v, d::VARCHAR AS d, ts::VARCHAR AS ts,
       epoch_us(tstz) AS tstz_us, iv::VARCHAR AS iv, u::VARCHAR AS u, hex(bl) AS bl, li, st, mp::VARCHAR AS mp, nv, ni`,
    );
    expect(rows).toHaveLength(3);
    expect(rows[0]).toEqual({
      ti: 1, si: 2, i: 3, bi: 4n, hi: '170141183460469231731687303715884105727', ut: 255, hl: ['9007199254740993'], dec: '12345.67', dbl: 1.25,
      flt: 1.5, b: true, v: 'héllo', d: '2024-02-29', ts: '2024-01-02 03:04:05.123456', tstz_us: 1704164645123456n,
      iv: '1 year 2 months 3 days 04:05:06', u: '6f1c1c36-7cf0-4d6c-8a55-6f1f1f2b3c4d', bl: 'DEAD', li: [1, 2, null],
      st: { a: 1, b: 'x' }, mp: '{k=1}', nv: null, ni: null,
    });
    expect(result.profile?.summary.rows).toBe(3);
    expect(result.profile?.operators?.name).toBeTypeOf('string');
  });

  it('makes duplicate column names unique in columns, schema and file', async () => {
    const { id, result } = await run('SELECT 1 AS a, 2 AS a, 3 AS a_1, 4 AS "A"');
    // DuckDB identifiers are case-insensitive: "A" clashes with a.
    expect(result.columns).toEqual(['a', 'a_1', 'a_1_1', 'A_2']);
    expect(result.columnSchema!.map((c) => c.name)).toEqual(['a', 'a_1', 'a_1_1', 'A_2']);
    expect(await readBack(id)).toEqual([{ a: 1, a_1: 2, a_1_1: 3, A_2: 4 }]);
  });

  it('materializes DESCRIBE, SHOW, SUMMARIZE and FROM-first; keeps ORDER BY; tolerates a trailing ; and comment', async () => {
    const describe = await run(`DESCRIBE SELECT 1::DECIMAL(18,3) AS x`);
    expect(describe.result.statementType).toBe('describe');
    expect((await readBack(describe.id, 'column_name, column_type'))).toEqual([{ column_name: 'x', column_type: 'DECIMAL(18,3)' }]);
    const summarize = await run('SUMMARIZE SELECT range AS r FROM range(10)');
    expect(summarize.result.statementType).toBe('describe');
    expect(summarize.result.rowCount).toBe(1);
    const show = await run('SHOW TABLES');
    expect(show.result.statementType).toBe('describe');
    expect(show.result.resultPath).not.toBeNull();
    const fromFirst = await run(`FROM range(5) SELECT range AS r ORDER BY r DESC; -- newest first`);
    expect(fromFirst.result.statementType).toBe('select');
    expect((await readBack(fromFirst.id)).map((r) => r.r)).toEqual([4n, 3n, 2n, 1n, 0n]);
    const quoted = await run(`SELECT ';--' AS "semi;colon" /* trailing */ ;`);
    expect(await readBack(quoted.id)).toEqual([{ 'semi;colon': ';--' }]);
  });

  it('runs DDL, DML and scripts without a result grid', async () => {
    const script = await run(`CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (3); UPDATE t SET a = a + 1 WHERE a > 1;`);
    expect(script.result).toMatchObject({ rowCount: 5, resultPath: null, columnSchema: null, columns: [], wrote: true });
    const ddl = await run('CREATE TABLE u (a INTEGER)');
    expect(ddl.result).toMatchObject({ rowCount: 0, resultPath: null, columnSchema: null, statementType: 'create' });
    await expect(stat(join(options.resultsDir, `${ddl.id}.parquet`))).rejects.toThrow();
  });

  // DuckDB runs a PIVOT without an IN list as two or four statements (a CREATE TYPE of the pivoted values first; in
  // a transaction unless it is a read): still one statement to the caller, with its own type and count.
  it('runs a PIVOT without an IN list as a read, in CREATE TABLE … AS and INSERT, alone and in a script, and EXPLAIN of one', async () => {
    const engine = await QueryEngine.open(randomUUID(), options);
    try {
      await engine.configure(256 * 2 ** 20);
      const src = `(SELECT range % 3 AS k, range::INTEGER AS v FROM range(10))`;
      const read = await engine.execute(`PIVOT ${src} ON k USING sum(v)::INTEGER`, undefined, 'pivot-read');
      expect(read).toMatchObject({ statementType: 'select', rowCount: 1, columns: ['0', '1', '2'] });
      const ctas = await engine.execute(`CREATE TABLE p AS PIVOT ${src} ON k USING sum(v)::INTEGER`);
      expect(ctas).toMatchObject({ statementType: 'create', resultPath: null });
      const insert = await engine.execute(`INSERT INTO p PIVOT ${src} ON k USING sum(v)::INTEGER`);
      expect(insert).toMatchObject({ statementType: 'insert', rowCount: 1 });
      const script = await engine.execute(`INSERT INTO p PIVOT ${src} ON k USING sum(v)::INTEGER; CREATE TABLE q AS PIVOT ${src} ON k USING count(*); INSERT INTO p VALUES (0, 0, 0)`);
      expect(script).toMatchObject({ statementType: 'other', rowCount: 2 });
      const explained = await engine.execute(`EXPLAIN PIVOT ${src} ON k USING sum(v)`, undefined, 'pivot-explain');
      expect(explained).toMatchObject({ statementType: 'describe' });
      const check = await engine.execute(`SELECT count(*)::INTEGER AS n, sum("0")::INTEGER AS s FROM p`, undefined, 'pivot-check');
      expect(check.rowCount).toBe(1);
      expect(await readBack('pivot-check')).toEqual([{ n: 4, s: 54 }]);
      expect(await readBack('pivot-read')).toEqual([{ 0: 18, 1: 12, 2: 15 }]);
      // No transaction is left open.
      expect((await engine.execute('CREATE TABLE after_all (a INTEGER)')).statementType).toBe('create');
    } finally {
      await engine.close();
    }
  });

  it('sandbox: refuses files outside the query’s own area, other results, and configuration changes', async () => {
    await expect(run(`SELECT * FROM read_csv('/etc/passwd')`)).rejects.toThrow(/Permission Error/);
    const other = await run('SELECT 42 AS x');
    await expect(run(`SELECT * FROM read_parquet('${join(options.resultsDir, `${other.id}.parquet`)}')`)).rejects.toThrow(/Permission Error/);
    await writeFile(join(dataDir, 'secret.csv'), 'a\n1\n');
    await expect(run(`SELECT * FROM read_csv('${join(dataDir, 'secret.csv')}')`)).rejects.toThrow(/Permission Error/);
    await expect(run(`SET memory_limit='10GB'`)).rejects.toThrow(/locked/);
    await expect(run(`COPY (SELECT 1) TO '/tmp/eider-escape.parquet'`)).rejects.toThrow(/Permission Error/);
    // The sandbox is on before EXPLAIN, since binding read_csv already opens the file.
    const engine = await QueryEngine.open(randomUUID(), options);
    try {
      expect(await engine.explainEstimate(`SELECT * FROM read_csv('/etc/passwd')`, 2000)).toBeNull();
    } finally {
      await engine.close();
    }
  });

  it('estimates with EXPLAIN for a SELECT and reports unestimable statements as null', async () => {
    const engine = await QueryEngine.open(randomUUID(), options);
    try {
      const small = await engine.explainEstimate('SELECT range % 10 AS k, count(*) FROM range(1000) GROUP BY k', 2000);
      const large = await engine.explainEstimate('SELECT range % 1000000 AS k, count(*) FROM range(100000000) GROUP BY k ORDER BY k', 2000);
      expect(small).toBeGreaterThan(0);
      expect(large).toBeGreaterThan(small!);
      expect(await engine.explainEstimate('CREATE TABLE x (a INT)', 2000)).toBeNull();
      expect(await engine.explainEstimate('SELECT 1; SELECT 2', 2000)).toBeNull();
      expect(await engine.explainEstimate('SELECT * FROM missing_table', 2000)).toBeNull();
    } finally {
      await engine.close();
    }
  });

  it('interrupt stops a long-running statement and removes the partial file', async () => {
    const id = randomUUID();
    const engine = await QueryEngine.open(id, options);
    await engine.configure(256 * 2 ** 20);
    const started = Date.now();
    const timer = setTimeout(() => engine.interrupt(), 300);
    await expect(engine.execute('SELECT count(*) FROM range(100000000000) a')).rejects.toThrow(/Interrupt/i);
    clearTimeout(timer);
    expect(Date.now() - started).toBeLessThan(10_000);
    await engine.close();
    await expect(stat(join(options.resultsDir, `${id}.parquet.partial`))).rejects.toThrow();
    await expect(stat(join(dataDir, 'tmp', id))).rejects.toThrow();
  });
});
