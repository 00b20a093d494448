// The environments of the parts `eider up` starts besides the api. The agent runs user SQL, so it starts from
// nothing and gets only what an agent reads (spec: "an agent needs only CONTROL_PLANE_URL and BOOTSTRAP_TOKEN", plus
// its own tuning variables), never the api's CATALOG_CLIENT_SECRET, the object store's root key, SETUP_TOKEN,
// SECRET_KEY or DATABASE_URL. The object store and the catalog service likewise get only what they read: neither
// sees the setup token, the agent bootstrap token, INTERNAL_API_SECRET or the sign-in secrets (OIDC, LDAP).

import { AGENT_VARIABLES } from '../agent/config.ts';
import { CATALOG_VARIABLES } from '../catalog/config.ts';

// Process basics a Node process and DuckDB need to start.
const BASICS = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LC_ALL', 'NODE_ENV', 'NODE_COMPILE_CACHE', 'LOG_LEVEL', 'DATA_DIR'];
// The agent's own variables: its configuration table (agent/config.ts), so a new agent variable reaches it.
const ALLOWED = new Set([...BASICS, ...Object.keys(AGENT_VARIABLES)]);

/** Only the allowed variables of `parent`, then `extra` (the agent's connection settings) on top. */
export function agentEnvironment(parent: Record<string, string | undefined>, extra: Record<string, string>): Record<string, string> {
  return pick(ALLOWED, parent, extra);
}

// What `eider objectstore` reads: its port, bucket and root key, and the database holding the catalog's revocation
// list of vended keys.
const OBJECT_STORE = new Set([...BASICS, 'DATABASE_URL', 'OBJECT_STORE_PORT', 'STORE_BUCKET', 'OBJECT_STORE_ACCESS_KEY', 'OBJECT_STORE_SECRET_KEY']);
// What `eider catalog` reads: its own table (catalog/config.ts, which includes the database and SECRET_KEY, which
// unseals the storage backends' keys it vends from) and tracing.
const CATALOG = new Set([...BASICS, ...Object.keys(CATALOG_VARIABLES), 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME']);

/** The object store's environment: only what it reads of `parent`, then `extra`. */
export function objectStoreEnvironment(parent: Record<string, string | undefined>, extra: Record<string, string> = {}): Record<string, string> {
  return pick(OBJECT_STORE, parent, extra);
}

/** The catalog service's environment: only what it reads of `parent`, then `extra`. */
export function catalogEnvironment(parent: Record<string, string | undefined>, extra: Record<string, string> = {}): Record<string, string> {
  return pick(CATALOG, parent, extra);
}

function pick(allowed: ReadonlySet<string>, parent: Record<string, string | undefined>, extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) if (allowed.has(k) && v !== undefined) out[k] = v;
  return { ...out, ...extra };
}

/**
 * The bundled agent's RESULTS_HTTP_PORT when `eider up` must choose it: its default (8001) is the port API_REPLICAS ≥ 2
 * gives to api-2 under the default PORT, so when unset and taken by another part the agent gets a free port ('0';
 * it tells the api where its results are). Undefined: the agent's own setting stands.
 */
export function bundledResultsPort(parent: Record<string, string | undefined>, taken: readonly number[]): string | undefined {
  if (parent.RESULTS_HTTP_PORT !== undefined) return undefined;
  return taken.includes(Number(AGENT_VARIABLES.RESULTS_HTTP_PORT.def)) ? '0' : undefined;
}
