// The `eider agent` process: wires the result server, retention sweep, admission control, query runner and the
// control channel. `runAgent` is what `eider agent` (bin/) and tests call.
import { mkdir } from 'node:fs/promises';
import { createTracing } from '../telemetry/tracing.ts';
import { SessionHost } from './sessionHost.ts';
import { join } from 'node:path';
import { AdmissionController, admissionOptions } from './admission.ts';
import { agentConfigFromEnv, AgentConfigError, type AgentConfig } from './config.ts';
import { ControlChannel } from './controlChannel.ts';
import { DataFileCache } from './dataCache.ts';
import { engineOptions, engineVersion } from './engine.ts';
import { slotsForEngine } from './sandboxSlots.ts';
import { statementLanes, THREAD_POOL_SIZE } from './threadPool.ts';
import { createAgentLogger, type Logger } from './logger.ts';
import { memoryBudget } from './memoryBudget.ts';
import { MemoryAsk } from './memoryAsk.ts';
import { OutcomeLedger } from './outcomeLedger.ts';
import { QueryRunner } from './queryRunner.ts';
import { startResultServer } from './resultServer.ts';
import { ResultViews } from './resultViews.ts';
import { startRetentionSweep } from './retention.ts';
import { SessionTokenStore } from './sessionTokenStore.ts';
import { AGENT_VERSION } from './version.ts';

export { agentConfigFromEnv, AgentConfigError, type AgentConfig };

export interface RunAgentOptions {
  readonly logger?: Logger;
  /** Bound of the Iceberg data-file cache; default from the configuration (ICEBERG_CACHE_MAX_BYTES, 10 GiB). */
  readonly icebergCacheMaxBytes?: number;
  /** variables set whose feature is not built: one warning each at start */
  readonly unbuilt?: readonly { name: string; feature: string }[];
}

export interface AgentHandle {
  /** The bound result-server port (useful with RESULTS_HTTP_PORT=0). */
  readonly resultsPort: number;
  readonly budgetBytes: number;
  agentId(): string | null;
  connected(): boolean;
  stop(): Promise<void>;
}

// DuckDB's built-in extensions in this build (iceberg/httpfs are not available: the agent reads Iceberg itself).
const BUILT_IN_EXTENSIONS = ['parquet', 'json', 'icu', 'core_functions'];

export async function runAgent(config: AgentConfig, options: RunAgentOptions = {}): Promise<AgentHandle> {
  const logger = options.logger ?? createAgentLogger({ level: config.logLevel, name: config.otelServiceName });
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await mkdir(config.resultsDir, { recursive: true });
  for (const { name, feature } of options.unbuilt ?? [])
    logger.warn({ variable: name, feature }, `${name} is set, but ${feature} is not built yet: it has no effect`);

  // Process-wide: the catalog client and storage reads deep in the Iceberg bridge make their spans through it.
  const tracing = createTracing({ serviceName: config.otelServiceName, endpoint: config.otelExporterOtlpEndpoint, processWide: true });
  const budget = memoryBudget(config.memoryHeadroomFraction);
  logger.info({ budgetBytes: budget.budgetBytes, source: budget.source, profile: config.maxConcurrencyProfile }, 'memory budget');
  const admission = new AdmissionController(
    // libuv's pool as this process has it (threadPool.ts sizes it on import).
    admissionOptions(config, budget.budgetBytes, statementLanes(THREAD_POOL_SIZE)),
  );
  const memoryAsk = new MemoryAsk(config, budget.budgetBytes);

  let sessionToken: string | null = null;
  // Views and exports of results run beside the queries, outside their admission: a quarter of the budget at most
  // (DuckDB spills a larger sort to disk), on two threads.
  const resultViews = new ResultViews({
    resultsDir: config.resultsDir,
    tempDir: join(config.dataDir, 'result-views-tmp'),
    memoryLimitBytes: Math.min(2 ** 30, budget.budgetBytes / 4),
    threads: 2,
    logger: logger.child({ component: 'result-views' }),
  });
  const resultServer = await startResultServer({
    views: resultViews,
    resultsDir: config.resultsDir,
    host: config.resultsHttpHost,
    port: config.resultsHttpPort,
    sessionToken: () => sessionToken,
    logger: logger.child({ component: 'results' }),
  });
  const stopSweep = startRetentionSweep(config.resultsDir, config.resultRetentionHours, logger.child({ component: 'retention' }));

  const cacheDir = join(config.dataDir, 'cache');
  const dataCache = new DataFileCache(cacheDir, options.icebergCacheMaxBytes ?? config.icebergCacheMaxBytes);

  let channel: ControlChannel | null = null;
  const outcomes = new OutcomeLedger({ maxEntries: 10_000, resendWindowMs: 15 * 60_000 });
  // The sandbox every query and SQL session runs in.
  const engine = engineOptions(config);
  const runner = new QueryRunner({
    config,
    admission,
    memoryAsk,
    logger: logger.child({ component: 'query' }),
    engine,
    slots: slotsForEngine(engine),
    dataCache,
    send: (frame) => {
      if (frame.type === 'query_done' || frame.type === 'query_failed') outcomes.record(frame);
      channel?.send(frame);
    },
  });

  const sessions = new SessionHost({
    config,
    admission,
    dataCache,
    logger: logger.child({ component: 'session' }),
    engine,
    send: (frame) => channel?.send(frame),
  });

  channel = new ControlChannel({
    urls: config.controlPlaneUrls,
    bootstrapToken: config.bootstrapToken,
    tokenStore: new SessionTokenStore(config.dataDir),
    name: config.name,
    resultsPort: resultServer.port,
    agentVersion: AGENT_VERSION,
    logger: logger.child({ component: 'control' }),
    backoff: { initialMs: 500, maxMs: 30_000 },
    authTimeoutMs: 15_000,
    inFlight: () => runner.inFlightCount,
    status: () => {
      const stats = admission.stats;
      return {
        capabilities: {
          engine_version: engineVersion(),
          extensions: BUILT_IN_EXTENSIONS,
          memory_limit_bytes: budget.budgetBytes,
          max_concurrency_profile: config.maxConcurrencyProfile,
          max_queue_depth: config.maxQueueDepth,
          max_timeout_s: config.maxTimeoutS,
          profiling_enabled: config.profilingEnabled,
          features: ['cancel_ack', 'column_schema', 'statement_type', 'sql_sessions', ...(config.profilingEnabled ? ['profile'] : [])],
        },
        load: { running: stats.running, queued: stats.queued, reserved_bytes: stats.reservedBytes, budget_bytes: stats.budgetBytes },
      };
    },
    onSessionToken: (token) => {
      sessionToken = token;
    },
    onAuthenticated: () => {
      for (const frame of outcomes.recent()) channel?.send(frame);
    },
    onFrame: (frame) => {
      if (frame.type === 'dispatch_query') {
        // A repeated dispatch (the control plane runs effects at least once) of a finished query is answered with
        // its outcome; one still running is ignored. Neither runs the statement twice.
        const finished = outcomes.outcomeOf(frame.payload.query_id);
        if (finished) {
          channel?.send(finished);
          return;
        }
        if (!runner.dispatch(frame.payload)) logger.info({ queryId: frame.payload.query_id }, 'repeated dispatch of a running query ignored');
      } else if (frame.type === 'cancel_query') {
        const found = runner.cancel(frame.payload.query_id) || sessions.cancel(frame.payload.query_id);
        channel?.send({ type: 'cancel_ack', payload: { query_id: frame.payload.query_id, found } });
      } else if (frame.type === 'open_session') {
        void sessions.open(frame.payload);
      } else if (frame.type === 'close_session') {
        void sessions.close(frame.payload.session_id, frame.payload.reason);
      } else {
        sessions.execute(frame.payload);
      }
    },
    onDisconnected: () => void sessions.dropAll('control channel lost'),
  });
  await channel.start();

  let stopping: Promise<void> | null = null;
  return {
    resultsPort: resultServer.port,
    budgetBytes: budget.budgetBytes,
    agentId: () => channel.agentId,
    connected: () => channel.connected,
    stop: () => {
      stopping ??= (async () => {
        logger.info('agent stopping');
        admission.close();
        await sessions.dropAll('agent stopping');
        await runner.close();
        await channel.stop();
        stopSweep();
        await resultServer.close();
        await resultViews.close();
        await tracing.shutdown();
        logger.info('agent stopped');
      })();
      return stopping;
    },
  };
}
