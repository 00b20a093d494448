// The agent's configuration, read from environment variables (spec: Limits → Agent) and validated with effect
// Schema. A bad value stops the agent with one line that names the variable.
import { Result, Schema } from 'effect';
import { resolve } from 'node:path';

export const CONCURRENCY_PROFILES = ['auto', 'single', 'equal_2', 'decaying_2', 'decaying_3'] as const;
export type ConcurrencyProfile = (typeof CONCURRENCY_PROFILES)[number];
export const ESTIMATE_BUCKETS = ['S', 'M', 'L', 'XL'] as const;
export type EstimateBucket = (typeof ESTIMATE_BUCKETS)[number];

export interface AgentConfig {
  readonly controlPlaneUrl: string;
  readonly bootstrapToken: string;
  readonly name: string | undefined;
  readonly dataDir: string;
  readonly resultsDir: string;
  readonly resultsHttpHost: string;
  readonly resultsHttpPort: number;
  readonly memoryHeadroomFraction: number;
  readonly maxConcurrencyProfile: ConcurrencyProfile;
  readonly profilingEnabled: boolean;
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
  readonly logLevel: string;
}

export class AgentConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string, missing = false) {
    super(missing ? `${variable} is required: ${message}` : `invalid ${variable}: ${message}`);
    this.name = 'AgentConfigError';
    this.variable = variable;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

// Each reader takes the raw text (undefined or empty = unset) and returns the value or throws AgentConfigError.
function read<T>(env: Env, name: string, schema: Schema.Codec<T, string>, fallback: T | undefined, what: string): T {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') {
    if (fallback === undefined) throw new AgentConfigError(name, `expected ${what}`, true);
    return fallback;
  }
  const decoded = Schema.decodeUnknownResult(schema)(raw);
  if (Result.isFailure(decoded)) {
    throw new AgentConfigError(name, `expected ${what}, got ${JSON.stringify(raw.length > 80 ? raw.slice(0, 80) + '…' : raw)}`);
  }
  return decoded.success;
}

const NumberText = Schema.NumberFromString.check(Schema.isFinite());
const nonNegative = NumberText.check(Schema.isGreaterThanOrEqualTo(0));
const positive = NumberText.check(Schema.isGreaterThan(0));
const nonNegativeInt = NumberText.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0));
const fraction = NumberText.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(1));
const openFraction = NumberText.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThan(1));
const openUnitFraction = NumberText.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(1));
const port = NumberText.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 65535 }));
const multiplier = NumberText.check(Schema.isGreaterThanOrEqualTo(1));
const text = Schema.String.check(Schema.isNonEmpty()) as Schema.Codec<string, string>;
const BooleanText = Schema.Literals(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']);
function bool(env: Env, name: string, fallback: boolean): boolean {
  return ['true', '1', 'yes', 'on'].includes(read(env, name, BooleanText, fallback ? 'true' : 'false', 'true or false'));
}
const wsUrl = Schema.String.check(Schema.isPattern(/^wss?:\/\/[^\s/]+(\/\S*)?$/)) as Schema.Codec<string, string>;
const httpUrl = Schema.String.check(Schema.isPattern(/^https?:\/\/\S+$/)) as Schema.Codec<string, string>;
const literal = <const L extends string>(values: readonly L[]) => Schema.Literals(values);

// Sizes accept plain bytes or a unit suffix (64MiB, 1GB), since operators write both.
const UNIT: Record<string, number> = {
  '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40,
};
function bytes(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw);
  const unit = m ? UNIT[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new AgentConfigError(name, `expected a byte count such as 67108864 or 64MiB, got ${JSON.stringify(raw)}`);
  }
  return Math.floor(Number(m[1]) * unit);
}

export function agentConfigFromEnv(env: Env = process.env): AgentConfig {
  const dataDir = resolve(read(env, 'AGENT_DATA_DIR', text, resolve(env.DATA_DIR?.trim() || '.eider', 'agent'), 'a directory path'));
  const controlPlaneUrl = read(env, 'CONTROL_PLANE_URL', wsUrl, undefined, 'a ws:// or wss:// URL such as ws://localhost:8000/agents/connect');
  const queuedTimeoutS = read(env, 'QUEUED_TIMEOUT_S', nonNegative, 0, 'a number of seconds (0 = off)');
  const config: AgentConfig = {
    controlPlaneUrl,
    bootstrapToken: read(env, 'BOOTSTRAP_TOKEN', text, undefined, 'the one-time bootstrap token'),
    name: env.AGENT_NAME?.trim() || undefined,
    dataDir,
    resultsDir: resolve(read(env, 'RESULTS_DIR', text, resolve(dataDir, 'results'), 'a directory path')),
    resultsHttpHost: read(env, 'RESULTS_HTTP_HOST', text, '0.0.0.0', 'a bind address'),
    resultsHttpPort: read(env, 'RESULTS_HTTP_PORT', port, 8001, 'a port 0-65535'),
    memoryHeadroomFraction: read(env, 'MEMORY_HEADROOM_FRACTION', openFraction, 0.1, 'a fraction in [0, 1)'),
    maxConcurrencyProfile: read(env, 'MAX_CONCURRENCY_PROFILE', literal(CONCURRENCY_PROFILES), 'auto', CONCURRENCY_PROFILES.join(', ')),
    profilingEnabled: bool(env, 'PROFILING_ENABLED', true),
    sessionBaselineBytes: bytes(env, 'SESSION_BASELINE_BYTES', 67108864),
    sessionMaxBucketFraction: read(env, 'SESSION_MAX_BUCKET_FRACTION', openUnitFraction, 0.333, 'a fraction in (0, 1]'),
    sandboxDisabledFilesystems: (env.SANDBOX_DISABLED_FILESYSTEMS ?? '').split(/[\s,]+/).filter((s) => s !== ''),
    sandboxLockConfiguration: bool(env, 'SANDBOX_LOCK_CONFIGURATION', true),
    otelExporterOtlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
      ? read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', httpUrl, undefined, 'an http(s) URL')
      : undefined,
    otelServiceName: env.OTEL_SERVICE_NAME?.trim() || 'eider-agent',
    estimateSafetyMultiplier: read(env, 'ESTIMATE_SAFETY_MULTIPLIER', multiplier, 1.5, 'a number >= 1'),
    estimateFloorBytes: bytes(env, 'ESTIMATE_FLOOR_BYTES', 64 * 2 ** 20),
    estimateCeilingFraction: read(env, 'ESTIMATE_CEILING_FRACTION', openUnitFraction, 1.0, 'a fraction in (0, 1]'),
    explainTimeoutS: read(env, 'EXPLAIN_TIMEOUT_S', positive, 2.0, 'a number of seconds > 0'),
    estimateFallbackBucket: read(env, 'ESTIMATE_FALLBACK_BUCKET', literal(ESTIMATE_BUCKETS), 'M', ESTIMATE_BUCKETS.join(', ')),
    estimateCacheTtlS: read(env, 'ESTIMATE_CACHE_TTL_S', nonNegative, 300, 'a number of seconds (0 = no cache)'),
    estimateCacheMaxEntries: read(env, 'ESTIMATE_CACHE_MAX_ENTRIES', nonNegativeInt, 1000, 'a whole number'),
    grantFeedbackEnabled: bool(env, 'GRANT_FEEDBACK_ENABLED', true),
    grantFeedbackSafetyMultiplier: read(env, 'GRANT_FEEDBACK_SAFETY_MULTIPLIER', multiplier, 1.5, 'a number >= 1'),
    elasticCeilingFraction: read(env, 'ELASTIC_CEILING_FRACTION', fraction, 0.85, 'a fraction in [0, 1]'),
    statementAdmissionWaitS: read(env, 'STATEMENT_ADMISSION_WAIT_S', nonNegative, 300, 'a number of seconds (0 = never wait)'),
    statementAdmissionFloorFraction: read(env, 'STATEMENT_ADMISSION_FLOOR_FRACTION', openUnitFraction, 0.5, 'a fraction in (0, 1]'),
    maxQueueDepth: read(env, 'MAX_QUEUE_DEPTH', nonNegativeInt, 100, 'a whole number'),
    queuedTimeoutS,
    sessionQueuedTimeoutS: read(env, 'SESSION_QUEUED_TIMEOUT_S', nonNegative, 30, 'a number of seconds'),
    maxTimeoutS: read(env, 'MAX_TIMEOUT_S', positive, 600, 'a number of seconds > 0'),
    resultRetentionHours: read(env, 'RESULT_RETENTION_HOURS', positive, 24, 'a number of hours > 0'),
    logLevel: read(env, 'LOG_LEVEL', literal(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info', 'a pino level'),
  };
  return config;
}
