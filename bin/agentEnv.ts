// The environment of the bundled agent. The agent runs user SQL, so it starts from nothing and gets only what an
// agent reads (spec: "an agent needs only CONTROL_PLANE_URL and BOOTSTRAP_TOKEN", plus its own tuning variables),
// never the api's CATALOG_CLIENT_SECRET, the object store's root key, SETUP_TOKEN, SECRET_KEY or DATABASE_URL.

import { AGENT_VARIABLES } from '../agent/config.ts';

// Process basics a Node process and DuckDB need to start.
const BASICS = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LC_ALL', 'NODE_ENV', 'LOG_LEVEL', 'DATA_DIR'];
// The agent's own variables: its configuration table (agent/config.ts), so a new agent variable reaches it.
const ALLOWED = new Set([...BASICS, ...Object.keys(AGENT_VARIABLES)]);

/** Only the allowed variables of `parent`, then `extra` (the agent's connection settings) on top. */
export function agentEnvironment(parent: Record<string, string | undefined>, extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) if (ALLOWED.has(k) && v !== undefined) out[k] = v;
  return { ...out, ...extra };
}
