// The agent's configuration, read from environment variables (spec: Limits → Agent) by the loader all Eider
// processes share (settings/variables.ts). A bad value stops the agent with one line that names the variable.
import { resolve } from 'node:path';
import {
  bool, bytes, ConfigError, int, list, num, oneOf, range, readVariables, str, unbuiltSettings, url, urls, type VariableTable,
} from '../settings/variables.ts';
import { DEFAULT_RESULTS_PORT } from '../protocol/index.ts';

/** A bad or missing variable: the agent stops with this one line. */
export { ConfigError as AgentConfigError };

const CONCURRENCY_PROFILES = ['auto', 'single', 'equal_2', 'decaying_2', 'decaying_3'] as const;
export type ConcurrencyProfile = (typeof CONCURRENCY_PROFILES)[number];
const ESTIMATE_BUCKETS = ['S', 'M', 'L', 'XL'] as const;
export type EstimateBucket = (typeof ESTIMATE_BUCKETS)[number];

export interface AgentConfig {
  /** One or more control-plane replicas; the agent moves to the next when its socket drops. */
  readonly controlPlaneUrls: readonly string[];
  readonly bootstrapToken: string;
  readonly name: string | undefined;
  readonly dataDir: string;
  readonly resultsDir: string;
  readonly resultsHttpHost: string;
  readonly resultsHttpPort: number;
  readonly memoryHeadroomFraction: number;
  readonly maxConcurrencyProfile: ConcurrencyProfile;
  readonly profilingEnabled: boolean;
  /** A result file this size or smaller travels in its query_done frame (0: never). */
  readonly resultInlineMaxBytes: number;
  readonly sessionBaselineBytes: number;
  readonly sessionMaxBucketFraction: number;
  readonly sandboxDisabledFilesystems: readonly string[];
  readonly sandboxLockConfiguration: boolean;
  readonly otelExporterOtlpEndpoint: string | undefined;
  readonly otelServiceName: string;
  readonly estimateSafetyMultiplier: number;
  readonly estimateFloorBytes: number;
  readonly estimateCeilingFraction: number;
  readonly explainTimeoutS: number;
  readonly estimateFallbackBucket: EstimateBucket;
  readonly estimateCacheTtlS: number;
  readonly estimateCacheMaxEntries: number;
  readonly grantFeedbackEnabled: boolean;
  readonly grantFeedbackSafetyMultiplier: number;
  readonly elasticCeilingFraction: number;
  readonly statementAdmissionWaitS: number;
  readonly statementAdmissionFloorFraction: number;
  readonly maxQueueDepth: number;
  readonly queuedTimeoutS: number;
  readonly sessionQueuedTimeoutS: number;
  readonly maxTimeoutS: number;
  readonly resultRetentionHours: number;
  readonly icebergCacheMaxBytes: number;
  readonly logLevel: string;
}

/** The agent's variables (spec: Limits → Agent), read by the loader every Eider process shares. */
export const AGENT_VARIABLES = {
  CONTROL_PLANE_URL: urls('agent', undefined, ['ws:', 'wss:']),
  BOOTSTRAP_TOKEN: str('agent', undefined, true),
  AGENT_NAME: str('agent', null),
  DATA_DIR: str('agent', '.eider'),
  AGENT_DATA_DIR: str('agent', null),
  RESULTS_DIR: str('agent', null),
  RESULTS_HTTP_HOST: str('agent', '0.0.0.0'),
  RESULTS_HTTP_PORT: int('agent', String(DEFAULT_RESULTS_PORT), 0, 65535),
  MEMORY_HEADROOM_FRACTION: range('agent', '0.10', { min: 0, below: 1 }),
  MAX_CONCURRENCY_PROFILE: oneOf('agent', 'auto', CONCURRENCY_PROFILES),
  PROFILING_ENABLED: bool('agent', 'true'),
  RESULT_INLINE_MAX_BYTES: bytes('agent', '65536'),
  SESSION_BASELINE_BYTES: bytes('agent', '67108864'),
  SESSION_MAX_BUCKET_FRACTION: range('agent', '0.333', { above: 0, max: 1 }),
  SANDBOX_DISABLED_FILESYSTEMS: list('agent', ''),
  SANDBOX_LOCK_CONFIGURATION: bool('agent', 'true'),
  OTEL_EXPORTER_OTLP_ENDPOINT: url('agent', null, ['http:', 'https:']),
  OTEL_SERVICE_NAME: str('agent', 'eider-agent'),
  ESTIMATE_SAFETY_MULTIPLIER: num('agent', '1.5', 1),
  ESTIMATE_FLOOR_BYTES: bytes('agent', String(64 * 2 ** 20)),
  ESTIMATE_CEILING_FRACTION: range('agent', '1.0', { above: 0, max: 1 }),
  EXPLAIN_TIMEOUT_S: range('agent', '2.0', { above: 0 }),
  ESTIMATE_FALLBACK_BUCKET: oneOf('agent', 'M', ESTIMATE_BUCKETS),
  ESTIMATE_CACHE_TTL_S: num('agent', '300', 0),
  ESTIMATE_CACHE_MAX_ENTRIES: int('agent', '1000', 0),
  GRANT_FEEDBACK_ENABLED: bool('agent', 'true'),
  GRANT_FEEDBACK_SAFETY_MULTIPLIER: num('agent', '1.5', 1),
  ELASTIC_CEILING_FRACTION: range('agent', '0.85', { min: 0, max: 1 }),
  STATEMENT_ADMISSION_WAIT_S: num('agent', '300', 0),
  STATEMENT_ADMISSION_FLOOR_FRACTION: range('agent', '0.5', { above: 0, max: 1 }),
  MAX_QUEUE_DEPTH: int('agent', '100', 0),
  QUEUED_TIMEOUT_S: num('agent', '0', 0),
  SESSION_QUEUED_TIMEOUT_S: num('agent', '30', 0),
  MAX_TIMEOUT_S: range('agent', '600', { above: 0 }),
  RESULT_RETENTION_HOURS: range('agent', '24', { above: 0 }),
  ICEBERG_CACHE_MAX_BYTES: bytes('agent', String(10 * 2 ** 30)),
  LOG_LEVEL: oneOf('agent', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
} as const satisfies VariableTable;

/** Variables set in `env` whose feature is not built yet (the agent logs one warning for each). */
export const unbuiltAgentSettings = (env: Record<string, string | undefined>) => unbuiltSettings(AGENT_VARIABLES, env);

export function agentConfigFromEnv(env: Record<string, string | undefined> = process.env): AgentConfig {
  const v = readVariables(AGENT_VARIABLES, env);
  const dataDir = resolve(v.AGENT_DATA_DIR ?? resolve(v.DATA_DIR, 'agent'));
  return {
    controlPlaneUrls: v.CONTROL_PLANE_URL,
    bootstrapToken: v.BOOTSTRAP_TOKEN,
    name: v.AGENT_NAME?.trim() || undefined,
    dataDir,
    resultsDir: resolve(v.RESULTS_DIR ?? resolve(dataDir, 'results')),
    resultsHttpHost: v.RESULTS_HTTP_HOST,
    resultsHttpPort: v.RESULTS_HTTP_PORT,
    memoryHeadroomFraction: v.MEMORY_HEADROOM_FRACTION,
    maxConcurrencyProfile: v.MAX_CONCURRENCY_PROFILE as ConcurrencyProfile,
    profilingEnabled: v.PROFILING_ENABLED,
    resultInlineMaxBytes: v.RESULT_INLINE_MAX_BYTES,
    sessionBaselineBytes: v.SESSION_BASELINE_BYTES,
    sessionMaxBucketFraction: v.SESSION_MAX_BUCKET_FRACTION,
    sandboxDisabledFilesystems: v.SANDBOX_DISABLED_FILESYSTEMS,
    sandboxLockConfiguration: v.SANDBOX_LOCK_CONFIGURATION,
    otelExporterOtlpEndpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT ?? undefined,
    otelServiceName: v.OTEL_SERVICE_NAME,
    estimateSafetyMultiplier: v.ESTIMATE_SAFETY_MULTIPLIER,
    estimateFloorBytes: v.ESTIMATE_FLOOR_BYTES,
    estimateCeilingFraction: v.ESTIMATE_CEILING_FRACTION,
    explainTimeoutS: v.EXPLAIN_TIMEOUT_S,
    estimateFallbackBucket: v.ESTIMATE_FALLBACK_BUCKET as EstimateBucket,
    estimateCacheTtlS: v.ESTIMATE_CACHE_TTL_S,
    estimateCacheMaxEntries: v.ESTIMATE_CACHE_MAX_ENTRIES,
    grantFeedbackEnabled: v.GRANT_FEEDBACK_ENABLED,
    grantFeedbackSafetyMultiplier: v.GRANT_FEEDBACK_SAFETY_MULTIPLIER,
    elasticCeilingFraction: v.ELASTIC_CEILING_FRACTION,
    statementAdmissionWaitS: v.STATEMENT_ADMISSION_WAIT_S,
    statementAdmissionFloorFraction: v.STATEMENT_ADMISSION_FLOOR_FRACTION,
    maxQueueDepth: v.MAX_QUEUE_DEPTH,
    queuedTimeoutS: v.QUEUED_TIMEOUT_S,
    sessionQueuedTimeoutS: v.SESSION_QUEUED_TIMEOUT_S,
    maxTimeoutS: v.MAX_TIMEOUT_S,
    resultRetentionHours: v.RESULT_RETENTION_HOURS,
    icebergCacheMaxBytes: v.ICEBERG_CACHE_MAX_BYTES,
    logLevel: v.LOG_LEVEL,
  };
}
