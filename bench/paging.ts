// Result paging throughput, run by hand: `node bench/paging.ts [rows]` (default 1,000,000 rows, 10 columns).
// Writes the result the way the agent does (agent/engine.ts), serves it with the agent's result server, then prints
// rows per second for: readPage over HTTP in pages of 1000 (the api's path), and DuckDB reading the same Parquet file
// into JavaScript objects in-process (getRowObjects), and their ratio. The same data is also written by a plain
// DuckDB COPY with a smaller ROW_GROUP_SIZE, to show what the agent's row-group size costs or saves per page.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DuckDBInstance } from '@duckdb/node-api';
import { pino } from 'pino';
import { QueryEngine } from '../agent/engine.ts';
import { startResultServer } from '../agent/resultServer.ts';
import { openResult, type ColumnType } from '../runtime/resultReader.ts';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const PAGE = 1000;
const TOKEN = 'bench-session-token';
const SQL = `SELECT i AS id, i * 7 AS big, 'name-' || i AS name, i / 3.0 AS ratio, (i % 7)::INTEGER AS bucket,
  TIMESTAMP '2024-01-01' + to_microseconds(i * 1000003) AS ts, DATE '2020-01-01' + (i % 1000)::INTEGER AS day,
  i % 2 = 0 AS flag, (i * 1.25)::DECIMAL(18,2) AS amount, md5(i::VARCHAR) AS hash
  FROM range(${ROWS}) t(i)`;
const SMALL_GROUPS = 16384;

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

async function pageThrough(url: string, schema: ColumnType[] | null): Promise<{ seconds: number; rows: number; bytes: number }> {
  let bytes = 0;
  const counting: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const length = Number(res.headers.get('content-length') ?? 0);
    if (init?.method !== 'HEAD') bytes += length;
    return res;
  };
  const t0 = performance.now();
  const file = await openResult({ url, bearerToken: TOKEN, fetchImpl: counting });
  let rows = 0;
  for (let offset: number | null = 0; offset !== null; ) {
    const page = await file.readPage(offset, PAGE, schema);
    rows += page.rows.length;
    offset = page.nextOffset;
  }
  return { seconds: (performance.now() - t0) / 1000, rows, bytes };
}

async function duckdbObjects(path: string): Promise<{ seconds: number; rows: number }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const t0 = performance.now();
    const reader = await connection.runAndReadAll(`SELECT * FROM read_parquet('${path}')`);
    const rows = reader.getRowObjects().length;
    return { seconds: (performance.now() - t0) / 1000, rows };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'eider-bench-paging-'));
  const resultsDir = join(dataDir, 'results');
  const server = await startResultServer({ resultsDir, host: '127.0.0.1', port: 0, sessionToken: () => TOKEN, logger: pino({ level: 'silent' }) });
  try {
    const id = randomUUID();
    const engine = await QueryEngine.open(id, {
      dataDir, resultsDir, disabledFilesystems: [], lockConfiguration: true, profilingEnabled: false,
      explainMemoryBytes: 256 * 2 ** 20, extraReadableDirs: [],
    });
    let schema: ColumnType[] | null;
    try {
      await engine.configure(1024 * 2 ** 20);
      schema = (await engine.execute(SQL)).columnSchema;
    } finally {
      await engine.close();
    }
    const agentFile = join(resultsDir, `${id}.parquet`);

    // The same rows in smaller row groups (what ROW_GROUP_SIZE on the agent's COPY would give).
    const smallId = randomUUID();
    const smallFile = join(resultsDir, `${smallId}.parquet`);
    {
      const instance = await DuckDBInstance.create(':memory:');
      const connection = await instance.connect();
      await connection.run(`COPY (${SQL}) TO '${smallFile}' (FORMAT parquet, ROW_GROUP_SIZE ${SMALL_GROUPS})`);
      connection.closeSync();
      instance.closeSync();
    }

    console.log(`${fmt(ROWS)} rows x 10 columns, pages of ${PAGE}`);
    const base = `http://127.0.0.1:${server.port}/results`;
    for (const [label, fileId, path] of [['agent COPY (default row groups)', id, agentFile], [`ROW_GROUP_SIZE ${SMALL_GROUPS}`, smallId, smallFile]] as const) {
      const size = (await stat(path)).size;
      const paged = await pageThrough(`${base}/${fileId}.parquet`, schema);
      if (paged.rows !== ROWS) throw new Error(`paged ${paged.rows} rows, expected ${ROWS}`);
      const duck = await duckdbObjects(path);
      const pagedRate = paged.rows / paged.seconds;
      const duckRate = duck.rows / duck.seconds;
      console.log(`\n${label}: file ${fmt(size / 1024)} KiB`);
      console.log(`  readPage over HTTP     ${fmt(pagedRate).padStart(12)} rows/s  (${paged.seconds.toFixed(2)} s, ${fmt(paged.bytes / 1024)} KiB fetched = ${(paged.bytes / size).toFixed(2)}x the file)`);
      console.log(`  DuckDB getRowObjects   ${fmt(duckRate).padStart(12)} rows/s  (${duck.seconds.toFixed(2)} s)`);
      console.log(`  ratio readPage/DuckDB  ${(pagedRate / duckRate).toFixed(2)}`);
    }
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
