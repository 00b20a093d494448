// The api's configuration (and what `eider up` passes on): every variable of the spec's Limits section for the
// control plane, declared here and read by the shared loader (settings/variables.ts) that the agent and the catalog
// service use too. A bad value stops the process with one line naming the variable and the expected form.
import {
  bool, ConfigError, int, json, notBuilt, num, oneOf, range, readVariables, str, unbuiltSettings as unbuiltIn, url, urls,
  type Values, type VariableTable,
} from '../settings/variables.ts';

export { ConfigError };

const DEFAULT_CREDENTIAL = 'eider-default-credential';

/** The variables, grouped as in the spec. Placeholders stand where the spec's defaults are placeholders. */
export const CONFIG_VARIABLES = {
  // Process and storage layout (ours: docs/api-decisions.md "Processes")
  PORT: int('process', '8000', 0, 65535),
  // Loopback unless told otherwise: a laptop's `npm start` serves no other machine (docs/production.md).
  HOST: str('process', '127.0.0.1'),
  DATA_DIR: str('process', './.eider'),
  LOG_LEVEL: oneOf('process', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  BODY_LIMIT_BYTES: int('process', '1048576', 1024),
  CATALOG_PORT: int('process', '8181', 0, 65535),
  CATALOG_URL: url('process', null, ['http:', 'https:']),
  OBJECT_STORE_PORT: int('process', '9000', 0, 65535),
  AGENT_HEARTBEAT_INTERVAL_S: num('process', '10', 0.05),
  AGENT_HEARTBEAT_TTL_S: num('process', '30', 0.1),
  QUERY_DEFAULT_TIMEOUT_S: int('process', '600', 1),
  // Bounds on the statement policy's work per submission (ours, issue 9): size, statement count, parse time.
  SQL_MAX_BYTES: int('process', '262144', 64),
  SQL_MAX_STATEMENTS: int('process', '1000', 1),
  SQL_POLICY_TIME_BUDGET_MS: int('process', '5000', 10),
  // Peers whose X-Forwarded-For is believed on /agents/connect (addresses or CIDR ranges, comma-separated).
  TRUSTED_PROXIES: str('process', '127.0.0.0/8,::1'),
  SEED_SAMPLES: bool('process', 'false'),
  // Readiness waits (once, at startup) for the agent of this name to be healthy; `eider up` names its bundled agent.
  READY_AFTER_AGENT: str('process', null),
  // Control plane
  SECRET_KEY: str('control', null, true),
  SETUP_TOKEN: str('control', null, true),
  DATABASE_URL: url('control', null, ['postgres:', 'postgresql:'], true),
  DB_AUTH_MODE: notBuilt('managed-identity database sign-in', oneOf('control', 'password', ['password', 'managed_identity'])),
  DB_ENTRA_SCOPE: notBuilt('managed-identity database sign-in', str('control', 'https://ossrdbms-aad.database.windows.net/.default')),
  POSTGRES_PASSWORD: str('control', DEFAULT_CREDENTIAL, true),
  POSTGRES_USER: str('control', 'eider'),
  POSTGRES_HOST: str('control', null),
  POSTGRES_PORT: int('control', '5432', 1, 65535),
  POSTGRES_DB: str('control', 'eider'),
  CATALOG_REALM: str('control', 'POLARIS'),
  CATALOG_CLIENT_ID: str('control', 'root'),
  CATALOG_CLIENT_SECRET: str('control', DEFAULT_CREDENTIAL, true),
  OBJECT_STORE_ACCESS_KEY: str('control', 'eider-root'),
  OBJECT_STORE_SECRET_KEY: str('control', DEFAULT_CREDENTIAL, true),
  STORE_BUCKET: str('control', 'warehouse'),
  STORE_REGION: str('control', 'us-east-1'),
  STORE_ENDPOINT: url('control', 'http://127.0.0.1:9000', ['http:', 'https:']),
  STORE_ENDPOINT_INTERNAL: notBuilt('separate staging signing settings (staging URLs are signed with the catalog backend’s own endpoint and keys)', url('control', 'http://127.0.0.1:9000', ['http:', 'https:'])),
  STORE_ENDPOINT_PUBLIC: str('control', ''),
  STORE_ACCESS_KEY: notBuilt('separate staging signing settings (staging URLs are signed with the catalog backend’s own endpoint and keys)', str('control', null)),
  STORE_SECRET_KEY: notBuilt('separate staging signing settings (staging URLs are signed with the catalog backend’s own endpoint and keys)', str('control', null, true)),
  AWS_ACCESS_KEY_ID: str('control', '', true),
  AWS_SECRET_ACCESS_KEY: str('control', '', true),
  AWS_REGION: str('control', ''),
  AZURE_TENANT_ID: notBuilt('an Azure service principal (azure backends sign with their own account key)', str('control', '')),
  AZURE_CLIENT_ID: notBuilt('an Azure service principal (azure backends sign with their own account key)', str('control', '')),
  AZURE_CLIENT_SECRET: notBuilt('an Azure service principal (azure backends sign with their own account key)', str('control', '', true)),
  COOKIE_SECURE: bool('control', 'false'),
  SESSION_MAX_AGE_SECONDS: int('control', '604800', 60),
  AGENT_BOOTSTRAP_TOKEN: str('control', DEFAULT_CREDENTIAL, true),
  CORS_ORIGINS: str('control', ''),
  // Identity and SSO
  OIDC_PROVIDERS: json('identity', '[]', 'array', true),
  OIDC_REDIRECT_BASE_URL: str('identity', ''),
  OIDC_ENABLED: bool('identity', 'false'),
  OIDC_LABEL: str('identity', 'SSO'),
  OIDC_SERVER_METADATA_URL: str('identity', null),
  OIDC_CLIENT_ID: str('identity', null),
  OIDC_CLIENT_SECRET: str('identity', null, true),
  OIDC_SCOPES: str('identity', 'openid email profile groups'),
  OIDC_GROUPS_CLAIM: str('identity', 'groups'),
  OIDC_GROUP_ROLE_MAP: json('identity', '{}', 'object'),
  LDAP_ENABLED: bool('identity', 'false'),
  LDAP_SERVER_URI: url('identity', null, ['ldap:', 'ldaps:']),
  LDAP_USE_START_TLS: bool('identity', 'false'),
  // An ldap:// address without StartTLS sends the bind passwords in clear: refused unless this says so (logged).
  LDAP_ALLOW_INSECURE: bool('identity', 'false'),
  LDAP_BIND_DN: str('identity', null),
  LDAP_BIND_PASSWORD: str('identity', null, true),
  LDAP_USER_SEARCH_BASE: str('identity', null),
  LDAP_USER_FILTER: str('identity', '(mail={email})'),
  LDAP_EMAIL_ATTR: str('identity', 'mail'),
  LDAP_NAME_ATTR: str('identity', 'displayName'),
  LDAP_GROUP_ATTR: str('identity', 'memberOf'),
  LDAP_GROUP_ROLE_MAP: json('identity', '{}', 'object'),
  LDAP_TLS_CA_CERT: str('identity', null),
  LDAP_TIMEOUT_S: range('identity', '10', { above: 0 }),
  // High availability
  REPLICA_ID: str('ha', 'api'),
  REPLICA_INTERNAL_URL: str('ha', 'http://localhost:8000'),
  INTERNAL_API_SECRET: str('ha', '', true),
  AGENT_PRESENCE_TTL_S: int('ha', '90', 1),
  API_REPLICAS: int('ha', '1', 1, 16),
  // `eider up` with API_REPLICAS >= 2: the HAProxy load balancer in front of the replicas (docs/ha.md).
  LB_PORT: int('ha', '8080', 0, 65535),
  DB_POOL_SIZE: int('ha', '5', 1, 1000),
  DB_MAX_OVERFLOW: int('ha', '10', 0, 1000),
  DB_POOL_RECYCLE_S: int('ha', '1800', 1),
  // Background loops
  MAINTENANCE_SCANNER_ENABLED: bool('loops', 'true'),
  MAINTENANCE_SCAN_TICK_S: num('loops', '900', 0.05),
  MAINTENANCE_DEEP_SCAN_INTERVAL_S: int('loops', '604800', 1),
  SCHEDULER_ENABLED: bool('loops', 'true'),
  SCHEDULER_TICK_S: num('loops', '60', 0.05),
  LINEAGE_STALE_AFTER_DAYS: int('loops', '30', 0),
  MIGRATION_RUNNER_ENABLED: bool('loops', 'true'),
  MIGRATION_RUNNER_TICK_S: num('loops', '30', 0.05),
  // Days of retention of a migrated catalog's old files; a fraction of a day is allowed (tests use seconds).
  MIGRATION_RETENTION_DAYS: num('loops', '7', 0),
  ACTOR_REAPER_TICK_S: num('loops', '1', 0.05),
  ACTOR_HISTORY_RETENTION_DAYS: num('loops', '7', 0),
  // Small results the api keeps inline (sent in query_done) expire with the agent's files: give both the same value.
  RESULT_RETENTION_HOURS: num('loops', '24', 0.0001),
  // Audit rows older than this are pruned (docs/api-decisions.md "Tracing and audit"); 0 keeps them forever.
  AUDIT_RETENTION_DAYS: int('loops', '365', 0),
  // SQL sessions
  SQL_SESSIONS_ENABLED: bool('sessions', 'false'),
  SQL_SESSION_IDLE_TIMEOUT_S: int('sessions', '900', 1),
  SQL_SESSION_MAX_LIFETIME_S: int('sessions', '14400', 1),
  SQL_SESSION_REAPER_TICK_S: num('sessions', '30', 0.05),
  SQL_SESSION_OPEN_TIMEOUT_S: int('sessions', '30', 1),
  SQL_SESSION_WAIT_TIMEOUT_S: int('sessions', '45', 0),
  SQL_SESSION_MAX_WAIT_TIMEOUT_S: int('sessions', '120', 0),
  SQL_SESSION_OPENING_DEADLINE_S: int('sessions', '120', 1),
  SQL_SESSION_STAGING_PREFIX_SEGMENT: str('sessions', '_staging'),
  SQL_SESSION_STAGING_URL_TTL_S: int('sessions', '900', 1),
  // On stores that cannot revoke staging URLs: how long after the last one expired an ended session's staging area
  // is swept again (a store checks expiry when a request starts; an upload begun just before may still land).
  SQL_SESSION_STAGING_SWEEP_GRACE_S: int('sessions', '3600', 0),
  SQL_STATEMENT_ACK_DEADLINE_S: int('sessions', '15', 1),
  SQL_STATEMENT_TIMEOUT_GRACE_S: int('sessions', '30', 0),
  SQL_STATEMENT_DEFAULT_TIMEOUT_S: int('sessions', '600', 1),
  SQL_STATEMENT_WAIT_TIMEOUT_S: notBuilt('a default statement wait (a statement without wait_timeout_s answers 202 at once)', int('sessions', '10', 0)),
  SQL_STATEMENT_FIRST_PAGE_LIMIT: int('sessions', '200', 0, 200),
  SQL_STATEMENT_MAX_WAIT_TIMEOUT_S: int('sessions', '60', 0),
  // The PostgreSQL wire endpoint over SQL sessions (docs/postgres-protocol.md): off unless PG_PORT is set.
  PG_PORT: { kind: { t: 'int', min: 0, max: 65535 } as const, def: null, group: 'sessions' },
  PG_HOST: str('sessions', null),
  PG_TLS_CERT_FILE: str('sessions', null),
  PG_TLS_KEY_FILE: str('sessions', null),
  // Elastic compute
  ELASTIC_COMPUTE_ENABLED: bool('elastic', 'false'),
  ELASTIC_PROVIDER: oneOf('elastic', 'null', ['null', 'process', 'cloud_container', 'docker']),
  ELASTIC_CONTROL_PLANE_URL: urls('elastic', null, ['ws:', 'wss:']),
  // Not in the spec's table: the image docker and cloud_container run (the agent's own image, `eider agent`).
  ELASTIC_AGENT_IMAGE: str('elastic', 'eider-agent:latest'),
  ELASTIC_AGENT_CATALOG_BASE_URL: str('elastic', null),
  ELASTIC_IDLE_TIMEOUT_S: int('elastic', '900', 1),
  ELASTIC_MAX_LIFETIME_S: int('elastic', '14400', 1),
  ELASTIC_PROVISIONING_DEADLINE_S: int('elastic', '300', 1),
  ELASTIC_REAPER_TICK_S: num('elastic', '30', 0.05),
  ELASTIC_MAX_AGENTS_PER_POOL: int('elastic', '1', 1),
  ELASTIC_DEFAULT_CPU: num('elastic', '2', 0.25),
  ELASTIC_DEFAULT_MEMORY_GB: num('elastic', '4', 0.5),
  ELASTIC_AGENT_ENV: json('elastic', '{}', 'object', true),
  ELASTIC_CLOUD_SUBSCRIPTION_ID: str('elastic', null),
  ELASTIC_CLOUD_RESOURCE_GROUP: str('elastic', null),
  ELASTIC_CLOUD_SUBNET_ID: str('elastic', null),
  ELASTIC_CLOUD_LOCATION: str('elastic', 'eastus'),
  ELASTIC_CLOUD_PRICE_VCPU_HOUR: num('elastic', '0.0486', 0),
  ELASTIC_CLOUD_PRICE_MEMORY_GB_HOUR: num('elastic', '0.0054', 0),
  ELASTIC_CLOUD_PRICE_CURRENCY: str('elastic', 'USD'),
  ELASTIC_REGISTRY_SERVER: str('elastic', null),
  ELASTIC_REGISTRY_IDENTITY_ID: str('elastic', null),
  ELASTIC_DOCKER_HOST: str('elastic', 'tcp://docker-socket-proxy:2375'),
  ELASTIC_DOCKER_NETWORK: str('elastic', 'eider_internal'),
  ELASTIC_DOCKER_RESERVE_CPU: num('elastic', '1', 0),
  ELASTIC_DOCKER_RESERVE_MEMORY_GB: num('elastic', '2', 0),
  // AI assistant
  ASSISTANT_ENABLED: bool('assistant', 'false'),
  // <provider>:<model>; the model part is sent. Without ASSISTANT_OPENAI_BASE_URL only `openai:` has a known endpoint.
  ASSISTANT_MODEL: str('assistant', 'openai:gpt-4o-mini'),
  ASSISTANT_OPENAI_BASE_URL: url('assistant', null, ['http:', 'https:']),
  ASSISTANT_API_KEY: str('assistant', null, true),
  ASSISTANT_PAT_TTL_S: int('assistant', '3600', 60),
  // Turns running at once across every replica (rows in assistant_turns), not per process: see docs/assistant.md.
  ASSISTANT_MAX_CONCURRENCY: int('assistant', '4', 1),
  ASSISTANT_REQUEST_LIMIT: int('assistant', '20', 1),
  ASSISTANT_MAX_OUTPUT_TOKENS: int('assistant', '4096', 1),
  ASSISTANT_HISTORY_TURN_CAP: int('assistant', '40', 0),
  ASSISTANT_RESULT_ROW_CAP: int('assistant', '100', 0),
  ASSISTANT_RESULT_BYTE_CAP: int('assistant', '32768', 0),
  ASSISTANT_TRACE_INCLUDE_CONTENT: bool('assistant', 'true'),
  ASSISTANT_DOCS_ENABLED: bool('assistant', 'true'),
  ASSISTANT_DOCS_DIR: str('assistant', './docs'),
  ASSISTANT_DOCS_MAX_PAGE_CHARS: int('assistant', '20000', 1),
  ASSISTANT_DOCS_SEARCH_LIMIT: int('assistant', '5', 1, 10),
  // Where the assistant links documentation pages (`<DOCS_SITE_URL>/<page>`); empty: it names the page only.
  DOCS_SITE_URL: str('assistant', ''),
  // Tool-protocol endpoint and observability
  MCP_ENABLED: bool('mcp', 'true'),
  MCP_ALLOW_WRITES: bool('mcp', 'false'),
  MCP_QUERY_TIMEOUT_S: num('mcp', '120', 0),
  MCP_RESULT_ROW_CAP: int('mcp', '100', 1),
  MCP_RESULT_BYTE_CAP: int('mcp', '32768', 1),
  METRICS_ENABLED: bool('mcp', 'true'),
  AGENT_METRICS_RETENTION_HOURS: notBuilt('agent monitoring history', int('mcp', '168', 1)),
  OTEL_EXPORTER_OTLP_ENDPOINT: str('mcp', ''),
  OTEL_SERVICE_NAME: str('mcp', 'eider-api'),
} as const satisfies VariableTable;

export type ConfigName = keyof typeof CONFIG_VARIABLES;
export type Config = Values<typeof CONFIG_VARIABLES>;

/** Reads the whole configuration from `env`; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cfg = readVariables(CONFIG_VARIABLES, env);
  if (cfg.SQL_SESSION_OPENING_DEADLINE_S <= cfg.SQL_SESSION_OPEN_TIMEOUT_S) {
    throw new ConfigError(
      'SQL_SESSION_OPENING_DEADLINE_S',
      `SQL_SESSION_OPENING_DEADLINE_S: invalid value ${cfg.SQL_SESSION_OPENING_DEADLINE_S}: must exceed SQL_SESSION_OPEN_TIMEOUT_S (${cfg.SQL_SESSION_OPEN_TIMEOUT_S}); expected an integer > ${cfg.SQL_SESSION_OPEN_TIMEOUT_S}`,
    );
  }
  checkIdentitySettings(cfg);
  checkElasticSettings(cfg);
  // Empty disables tracing (the spec's "unset"); anything else must be an http(s) URL.
  if (cfg.OTEL_EXPORTER_OTLP_ENDPOINT.trim() && !/^https?:\/\/[^\s]+$/.test(cfg.OTEL_EXPORTER_OTLP_ENDPOINT.trim())) {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      `OTEL_EXPORTER_OTLP_ENDPOINT: invalid value ${cfg.OTEL_EXPORTER_OTLP_ENDPOINT}: expected a URL starting with http:// or https://, or empty`,
    );
  }
  return cfg;
}

/** Elastic compute on needs a provider that can start something, and docker and cloud need their addresses. */
function checkElasticSettings(cfg: Config) {
  if (!cfg.ELASTIC_COMPUTE_ENABLED) return;
  if (cfg.ELASTIC_PROVIDER === 'docker' || cfg.ELASTIC_PROVIDER === 'cloud_container') {
    // A process agent dials this machine; a container or cloud instance must be told where the control plane is.
    if (!cfg.ELASTIC_CONTROL_PLANE_URL) bad('ELASTIC_CONTROL_PLANE_URL', `required with ELASTIC_PROVIDER=${cfg.ELASTIC_PROVIDER}: the wss URL ending /agents/connect that provisioned agents dial`);
  }
  if (cfg.ELASTIC_PROVIDER === 'cloud_container') {
    for (const name of ['ELASTIC_CLOUD_SUBSCRIPTION_ID', 'ELASTIC_CLOUD_RESOURCE_GROUP', 'ELASTIC_CLOUD_SUBNET_ID'] as const) {
      if (!cfg[name]) bad(name, 'required with ELASTIC_PROVIDER=cloud_container');
    }
  }
}

/** One OIDC provider as OIDC_PROVIDERS lists it (or the shorthand synthesizes it), checked and defaulted. */
export interface OidcProviderConfig {
  id: string;
  label: string;
  server_metadata_url: string;
  client_id: string;
  client_secret: string | null;
  scopes: string;
  groups_claim: string;
  group_role_map: Readonly<Record<string, 'admin' | 'member'>>;
}

const bad = (name: string, problem: string): never => {
  throw new ConfigError(name, `${name}: ${problem}`);
};

function roleMap(name: string, v: unknown): Record<string, 'admin' | 'member'> {
  if (v === undefined) return {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return bad(name, 'group_role_map must be a JSON object of group to role');
  for (const [g, r] of Object.entries(v)) if (r !== 'admin' && r !== 'member') bad(name, `group ${JSON.stringify(g)} maps to ${JSON.stringify(r)}; expected admin or member`);
  return v as Record<string, 'admin' | 'member'>;
}

const isHttpUrl = (v: unknown) => {
  try {
    return typeof v === 'string' && ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
};

/** The OIDC providers in force: OIDC_PROVIDERS, else the shorthand provider `sso` when OIDC_ENABLED. */
export function oidcProviders(cfg: Config): OidcProviderConfig[] {
  if (cfg.OIDC_PROVIDERS.length === 0) {
    if (!cfg.OIDC_ENABLED) return [];
    if (!isHttpUrl(cfg.OIDC_SERVER_METADATA_URL)) bad('OIDC_SERVER_METADATA_URL', 'OIDC_ENABLED needs the provider\'s discovery URL (http:// or https://)');
    if (!cfg.OIDC_CLIENT_ID) bad('OIDC_CLIENT_ID', 'OIDC_ENABLED needs the client id registered with the provider');
    return [
      {
        id: 'sso',
        label: cfg.OIDC_LABEL,
        server_metadata_url: cfg.OIDC_SERVER_METADATA_URL!,
        client_id: cfg.OIDC_CLIENT_ID!,
        client_secret: cfg.OIDC_CLIENT_SECRET,
        scopes: cfg.OIDC_SCOPES,
        groups_claim: cfg.OIDC_GROUPS_CLAIM,
        group_role_map: roleMap('OIDC_GROUP_ROLE_MAP', cfg.OIDC_GROUP_ROLE_MAP),
      },
    ];
  }
  const seen = new Set<string>();
  return cfg.OIDC_PROVIDERS.map((raw, i) => {
    const at = `entry ${i + 1}`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return bad('OIDC_PROVIDERS', `${at} is not an object`);
    const p = raw as Record<string, unknown>;
    if (typeof p.id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,39}$/.test(p.id)) bad('OIDC_PROVIDERS', `${at}: id must be lowercase letters, digits, - or _ (at most 40)`);
    if (seen.has(p.id as string)) bad('OIDC_PROVIDERS', `${at}: id ${p.id} appears twice`);
    seen.add(p.id as string);
    if (!isHttpUrl(p.server_metadata_url)) bad('OIDC_PROVIDERS', `${at} (${p.id}): server_metadata_url must be an http:// or https:// URL`);
    if (typeof p.client_id !== 'string' || !p.client_id) bad('OIDC_PROVIDERS', `${at} (${p.id}): client_id is required`);
    for (const k of ['label', 'client_secret', 'scopes', 'groups_claim'] as const) {
      if (p[k] !== undefined && p[k] !== null && typeof p[k] !== 'string') bad('OIDC_PROVIDERS', `${at} (${p.id}): ${k} must be a string`);
    }
    return {
      id: p.id as string,
      label: (p.label as string | undefined) ?? (p.id as string),
      server_metadata_url: p.server_metadata_url as string,
      client_id: p.client_id as string,
      client_secret: (p.client_secret as string | undefined) ?? null,
      scopes: (p.scopes as string | undefined) ?? 'openid email profile',
      groups_claim: (p.groups_claim as string | undefined) ?? 'groups',
      group_role_map: roleMap('OIDC_PROVIDERS', p.group_role_map),
    };
  });
}

/** LDAP and OIDC settings that only make sense together, checked at startup so a bad one stops the process. */
function checkIdentitySettings(cfg: Config) {
  oidcProviders(cfg);
  if (cfg.OIDC_REDIRECT_BASE_URL && !isHttpUrl(cfg.OIDC_REDIRECT_BASE_URL)) bad('OIDC_REDIRECT_BASE_URL', 'expected the public http:// or https:// address of the api');
  if (!cfg.LDAP_ENABLED) return;
  if (!cfg.LDAP_SERVER_URI) bad('LDAP_SERVER_URI', 'LDAP_ENABLED needs the directory address (ldap:// or ldaps://)');
  if (!cfg.LDAP_USER_SEARCH_BASE) bad('LDAP_USER_SEARCH_BASE', 'LDAP_ENABLED needs the base DN to search users under');
  if (cfg.LDAP_USE_START_TLS && cfg.LDAP_SERVER_URI!.startsWith('ldaps:')) bad('LDAP_USE_START_TLS', 'StartTLS upgrades ldap://; an ldaps:// address is TLS already');
  if (ldapInClear(cfg) && !cfg.LDAP_ALLOW_INSECURE) {
    bad('LDAP_SERVER_URI', 'an ldap:// address without LDAP_USE_START_TLS=true sends the bind passwords in clear: use ldaps://, set LDAP_USE_START_TLS=true, or LDAP_ALLOW_INSECURE=true on a network you trust');
  }
  if (!cfg.LDAP_USER_FILTER.includes('{email}')) bad('LDAP_USER_FILTER', 'the filter must contain {email}');
  roleMap('LDAP_GROUP_ROLE_MAP', cfg.LDAP_GROUP_ROLE_MAP);
}

/** LDAP is on with an ldap:// address and no StartTLS: the service and user bind passwords travel in clear. */
export function ldapInClear(cfg: Pick<Config, 'LDAP_ENABLED' | 'LDAP_SERVER_URI' | 'LDAP_USE_START_TLS'>): boolean {
  return cfg.LDAP_ENABLED && (cfg.LDAP_SERVER_URI ?? '').startsWith('ldap:') && !cfg.LDAP_USE_START_TLS;
}

/** Variables set in `env` whose feature is not built yet. */
export function unbuiltSettings(env: Record<string, string | undefined> = process.env): { name: ConfigName; feature: string }[] {
  return unbuiltIn(CONFIG_VARIABLES, env) as { name: ConfigName; feature: string }[];
}
