// The environment of the bundled agent. The agent runs user SQL, so it starts from nothing and gets only what an
// agent reads (spec: "an agent needs only CONTROL_PLANE_URL and BOOTSTRAP_TOKEN", plus its own tuning variables),
// never the api's CATALOG_CLIENT_SECRET, the object store's root key, SETUP_TOKEN, SECRET_KEY or DATABASE_URL.

// Process basics a Node process and DuckDB need to start.
const BASICS = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LC_ALL', 'NODE_ENV', 'LOG_LEVEL', 'DATA_DIR'];
// The agent's own variables (agent/config.ts, agent/dataCache.ts, docs/agent.md).
const AGENT_VARIABLES = [
  'AGENT_NAME', 'AGENT_DATA_DIR', 'CONTROL_PLANE_URL', 'BOOTSTRAP_TOKEN', 'RESULTS_DIR', 'RESULTS_HTTP_HOST', 'RESULTS_HTTP_PORT',
  'MAX_CONCURRENCY_PROFILE', 'MEMORY_HEADROOM_FRACTION', 'QUEUED_TIMEOUT_S', 'EXPLAIN_TIMEOUT_S', 'PROFILING_ENABLED',
  'ELASTIC_CEILING_FRACTION', 'ESTIMATE_CACHE_MAX_ENTRIES', 'ESTIMATE_CACHE_TTL_S', 'ESTIMATE_CEILING_FRACTION',
  'ESTIMATE_FALLBACK_BUCKET', 'ESTIMATE_FLOOR_BYTES', 'ESTIMATE_SAFETY_MULTIPLIER', 'GRANT_FEEDBACK_ENABLED',
  'GRANT_FEEDBACK_SAFETY_MULTIPLIER', 'SESSION_BASELINE_BYTES', 'SESSION_MAX_BUCKET_FRACTION',
  'STATEMENT_ADMISSION_FLOOR_FRACTION', 'STATEMENT_ADMISSION_WAIT_S', 'SANDBOX_LOCK_CONFIGURATION',
  'SANDBOX_DISABLED_FILESYSTEMS', 'ICEBERG_CACHE_MAX_BYTES', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME',
];
const ALLOWED = new Set([...BASICS, ...AGENT_VARIABLES]);

/** Only the allowed variables of `parent`, then `extra` (the agent's connection settings) on top. */
export function agentEnvironment(parent: Record<string, string | undefined>, extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) if (ALLOWED.has(k) && v !== undefined) out[k] = v;
  return { ...out, ...extra };
}
