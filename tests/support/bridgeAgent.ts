// A real catalog service + bundled object store (tests/support/catalogStack.ts) and the agent's real query path (QueryRunner,
// DuckDB, the Iceberg bridge, the data-file cache) wired in-process, for the bridge tests and bench/scan.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DuckDBInstance } from '@duckdb/node-api';
import { pino } from 'pino';
import type { AgentFrame } from '../../protocol/index.ts';
import { AdmissionController } from '../../agent/admission.ts';
import { agentConfigFromEnv } from '../../agent/config.ts';
import { DataFileCache } from '../../agent/dataCache.ts';
import { MemoryAsk } from '../../agent/memoryAsk.ts';
import { QueryRunner } from '../../agent/queryRunner.ts';
import { slotsForEngine } from '../../agent/sandboxSlots.ts';
import type { CatalogStack } from './catalogStack.ts';

export type Outcome = Extract<AgentFrame, { type: 'query_done' | 'query_failed' }>;

export interface BridgeAgent {
  dataDir: string;
  cache: DataFileCache;
  /** Runs SQL through the agent's query path; resolves with the outcome frame. */
  run(sql: string, opts?: { catalogs?: unknown[]; token?: string }): Promise<Outcome>;
  /** Runs SQL that must succeed; SELECT results come back as JSON-ish rows read from the result file. */
  query(sql: string): Promise<Record<string, unknown>[]>;
  exec(sql: string): Promise<number>;
  setBeforeCommit(fn: (() => Promise<void>) | undefined): void;
  close(): Promise<void>;
}

/** `slots`: warm sandboxed instances as agent/main.ts gives its runner (bench/scan.ts); without, one instance per query. */
export async function startBridgeAgent(stack: CatalogStack, warehouse: string, options: { cacheMaxBytes?: number; slots?: boolean } = {}): Promise<BridgeAgent> {
  const dataDir = await mkdtemp(join(tmpdir(), 'eider-bridge-'));
  const config = agentConfigFromEnv({
    CONTROL_PLANE_URL: 'ws://127.0.0.1:1/agents/connect',
    BOOTSTRAP_TOKEN: 'unused',
    AGENT_DATA_DIR: dataDir,
    PROFILING_ENABLED: 'false',
  });
  const budgetBytes = 4 * 2 ** 30;
  const admission = new AdmissionController({
    budgetBytes,
    profile: config.maxConcurrencyProfile,
    maxQueueDepth: config.maxQueueDepth,
    queuedTimeoutMs: 0,
    admissionWaitMs: 0,
    admissionFloorFraction: config.statementAdmissionFloorFraction,
    floorBytes: 64 * 2 ** 20,
    elasticCeilingFraction: config.elasticCeilingFraction,
  });
  const cacheDir = join(dataDir, 'cache');
  const cache = new DataFileCache(cacheDir, options.cacheMaxBytes);
  const waiters = new Map<string, (f: Outcome) => void>();
  let beforeCommit: (() => Promise<void>) | undefined;
  const engine = {
    dataDir,
    resultsDir: config.resultsDir,
    disabledFilesystems: [],
    lockConfiguration: true,
    profilingEnabled: false,
    explainMemoryBytes: 256 * 2 ** 20,
    extraReadableDirs: [], // as agent/main.ts: the cache is not readable by queries
  };
  const runner = new QueryRunner({
    config,
    admission,
    memoryAsk: new MemoryAsk(config, budgetBytes),
    logger: pino({ level: process.env.BRIDGE_LOG_LEVEL ?? 'silent' }),
    engine,
    ...(options.slots ? { slots: slotsForEngine(engine) } : {}),
    dataCache: cache,
    beforeIcebergCommit: () => (beforeCommit ? beforeCommit() : Promise.resolve()),
    send: (frame) => {
      if (frame.type === 'query_done' || frame.type === 'query_failed') waiters.get(frame.payload.query_id)?.(frame);
    },
  });
  const reader = await DuckDBInstance.create(':memory:');
  const readConn = await reader.connect();

  const run = (sql: string, opts: { catalogs?: unknown[]; token?: string } = {}) => {
    const query_id = randomUUID();
    const catalogs = opts.catalogs ?? [{ name: warehouse, default: true, catalog_url: stack.catalog.url, warehouse, token: opts.token ?? stack.token, access_mode: 'full' }];
    const done = new Promise<Outcome>((resolve) => waiters.set(query_id, resolve));
    runner.dispatch({ query_id, sql, workspace: 'default', backend: 'object_store', timeout_s: 120, catalogs: catalogs as never });
    return done.finally(() => waiters.delete(query_id));
  };
  const must = async (sql: string) => {
    const o = await run(sql);
    if (o.type !== 'query_done') throw new Error(`${sql}\n→ ${o.payload.error.code}: ${o.payload.error.message}`);
    return o;
  };
  return {
    dataDir,
    cache,
    run,
    async query(sql) {
      const o = await must(sql);
      if (o.type !== 'query_done' || !o.payload.result_path) throw new Error(`${sql} produced no result`);
      const file = join(config.resultsDir, o.payload.result_path.replace(/^results\//, ''));
      const res = await readConn.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
      return res.getRowObjectsJS() as Record<string, unknown>[];
    },
    async exec(sql) {
      const o = await must(sql);
      return o.type === 'query_done' ? o.payload.row_count : -1;
    },
    setBeforeCommit(fn) {
      beforeCommit = fn;
    },
    async close() {
      await runner.close();
      readConn.closeSync();
      reader.closeSync();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
