// Every configuration variable of the spec's Limits section, read, validated and defaulted here and nowhere else.
// A bad value stops the process with one line naming the variable, the problem and the expected form.
import { Exit, Schema, SchemaIssue } from 'effect';

type Kind =
  | { t: 'string' }
  | { t: 'int'; min?: number; max?: number }
  | { t: 'number'; min?: number; max?: number }
  | { t: 'bool' }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'json'; shape: 'array' | 'object' }
  | { t: 'url'; protocols: readonly string[] };

interface VarSpec {
  kind: Kind;
  def: string | null;
  secret?: boolean;
  group: string;
}

// Helpers keep each variable's kind and default as literal types, so Config below is typed per variable.
const s = <D extends string | null>(group: string, def: D, secret = false) => ({ kind: { t: 'string' } as const, def, secret, group });
const i = (group: string, def: string, min = 0, max?: number) => ({ kind: { t: 'int', min, max } as const, def, group });
const n = (group: string, def: string, min = 0, max?: number) => ({ kind: { t: 'number', min, max } as const, def, group });
const b = (group: string, def: 'true' | 'false') => ({ kind: { t: 'bool' } as const, def, group });
const e = <D extends string | null>(group: string, def: D, values: readonly string[]) => ({ kind: { t: 'enum', values } as const, def, group });
const j = <S extends 'array' | 'object'>(group: string, def: string, shape: S, secret = false) => ({ kind: { t: 'json', shape } as const, def, secret, group });
const u = <D extends string | null>(group: string, def: D, protocols: readonly string[], secret = false) => ({ kind: { t: 'url', protocols } as const, def, secret, group });

const DEFAULT_CREDENTIAL = 'eider-default-credential';

/** The variables, grouped as in the spec. Placeholders stand where the spec's defaults are placeholders. */
export const CONFIG_VARIABLES = {
  // Process and storage layout (ours: decisions.md)
  PORT: i('process', '8000', 0, 65535),
  HOST: s('process', '0.0.0.0'),
  DATA_DIR: s('process', './.eider'),
  LOG_LEVEL: e('process', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  BODY_LIMIT_BYTES: i('process', '1048576', 1024),
  CATALOG_PORT: i('process', '8181', 0, 65535),
  CATALOG_URL: u('process', null, ['http:', 'https:']),
  OBJECT_STORE_PORT: i('process', '9000', 0, 65535),
  AGENT_HEARTBEAT_INTERVAL_S: n('process', '10', 0.05),
  AGENT_HEARTBEAT_TTL_S: n('process', '30', 0.1),
  QUERY_DEFAULT_TIMEOUT_S: i('process', '600', 1),
  // Bounds on the statement policy's work per submission (ours, issue 9): size, statement count, parse time.
  SQL_MAX_BYTES: i('process', '262144', 64),
  SQL_MAX_STATEMENTS: i('process', '1000', 1),
  SQL_POLICY_TIME_BUDGET_MS: i('process', '5000', 10),
  // Peers whose X-Forwarded-For is believed on /agents/connect (addresses or CIDR ranges, comma-separated).
  TRUSTED_PROXIES: s('process', '127.0.0.0/8,::1'),
  SEED_SAMPLES: b('process', 'false'),
  // Control plane
  SECRET_KEY: s('control', null, true),
  SETUP_TOKEN: s('control', null, true),
  DATABASE_URL: u('control', null, ['postgres:', 'postgresql:'], true),
  DB_AUTH_MODE: e('control', 'password', ['password', 'managed_identity']),
  DB_ENTRA_SCOPE: s('control', 'https://ossrdbms-aad.database.windows.net/.default'),
  POSTGRES_PASSWORD: s('control', DEFAULT_CREDENTIAL, true),
  POSTGRES_USER: s('control', 'eider'),
  POSTGRES_HOST: s('control', null),
  POSTGRES_PORT: i('control', '5432', 1, 65535),
  POSTGRES_DB: s('control', 'eider'),
  CATALOG_REALM: s('control', 'POLARIS'),
  CATALOG_CLIENT_ID: s('control', 'root'),
  CATALOG_CLIENT_SECRET: s('control', DEFAULT_CREDENTIAL, true),
  OBJECT_STORE_ACCESS_KEY: s('control', 'eider-root'),
  OBJECT_STORE_SECRET_KEY: s('control', DEFAULT_CREDENTIAL, true),
  STORE_BUCKET: s('control', 'warehouse'),
  STORE_REGION: s('control', 'us-east-1'),
  STORE_ENDPOINT: u('control', 'http://127.0.0.1:9000', ['http:', 'https:']),
  STORE_ENDPOINT_INTERNAL: u('control', 'http://127.0.0.1:9000', ['http:', 'https:']),
  STORE_ENDPOINT_PUBLIC: s('control', ''),
  STORE_ACCESS_KEY: s('control', null),
  STORE_SECRET_KEY: s('control', null, true),
  AWS_ACCESS_KEY_ID: s('control', '', true),
  AWS_SECRET_ACCESS_KEY: s('control', '', true),
  AWS_REGION: s('control', ''),
  AZURE_TENANT_ID: s('control', ''),
  AZURE_CLIENT_ID: s('control', ''),
  AZURE_CLIENT_SECRET: s('control', '', true),
  COOKIE_SECURE: b('control', 'false'),
  SESSION_MAX_AGE_SECONDS: i('control', '604800', 60),
  AGENT_BOOTSTRAP_TOKEN: s('control', DEFAULT_CREDENTIAL, true),
  CORS_ORIGINS: s('control', ''),
  // Identity and SSO
  OIDC_PROVIDERS: j('identity', '[]', 'array', true),
  OIDC_REDIRECT_BASE_URL: s('identity', ''),
  OIDC_ENABLED: b('identity', 'false'),
  OIDC_LABEL: s('identity', 'SSO'),
  OIDC_SERVER_METADATA_URL: s('identity', null),
  OIDC_CLIENT_ID: s('identity', null),
  OIDC_CLIENT_SECRET: s('identity', null, true),
  OIDC_SCOPES: s('identity', 'openid email profile groups'),
  OIDC_GROUPS_CLAIM: s('identity', 'groups'),
  OIDC_GROUP_ROLE_MAP: j('identity', '{}', 'object'),
  LDAP_ENABLED: b('identity', 'false'),
  LDAP_SERVER_URI: u('identity', null, ['ldap:', 'ldaps:']),
  LDAP_USE_START_TLS: b('identity', 'false'),
  LDAP_BIND_DN: s('identity', null),
  LDAP_BIND_PASSWORD: s('identity', null, true),
  LDAP_USER_SEARCH_BASE: s('identity', null),
  LDAP_USER_FILTER: s('identity', '(mail={email})'),
  LDAP_EMAIL_ATTR: s('identity', 'mail'),
  LDAP_NAME_ATTR: s('identity', 'displayName'),
  LDAP_GROUP_ATTR: s('identity', 'memberOf'),
  LDAP_GROUP_ROLE_MAP: j('identity', '{}', 'object'),
  LDAP_TLS_CA_CERT: s('identity', null),
  LDAP_TIMEOUT_S: n('identity', '10', 0),
  // High availability
  REPLICA_ID: s('ha', 'api'),
  REPLICA_INTERNAL_URL: s('ha', 'http://localhost:8000'),
  INTERNAL_API_SECRET: s('ha', '', true),
  AGENT_PRESENCE_TTL_S: i('ha', '90', 1),
  DB_POOL_SIZE: i('ha', '5', 1, 1000),
  DB_MAX_OVERFLOW: i('ha', '10', 0, 1000),
  DB_POOL_RECYCLE_S: i('ha', '1800', 1),
  // Background loops
  MAINTENANCE_SCANNER_ENABLED: b('loops', 'true'),
  MAINTENANCE_SCAN_TICK_S: i('loops', '900', 1),
  MAINTENANCE_DEEP_SCAN_INTERVAL_S: i('loops', '604800', 1),
  SCHEDULER_ENABLED: b('loops', 'true'),
  SCHEDULER_TICK_S: i('loops', '60', 1),
  LINEAGE_STALE_AFTER_DAYS: i('loops', '30', 0),
  MIGRATION_RUNNER_ENABLED: b('loops', 'true'),
  MIGRATION_RUNNER_TICK_S: i('loops', '30', 1),
  MIGRATION_RETENTION_DAYS: i('loops', '7', 0),
  ACTOR_REAPER_TICK_S: n('loops', '1', 0.05),
  // SQL sessions
  SQL_SESSIONS_ENABLED: b('sessions', 'false'),
  SQL_SESSION_IDLE_TIMEOUT_S: i('sessions', '900', 1),
  SQL_SESSION_MAX_LIFETIME_S: i('sessions', '14400', 1),
  SQL_SESSION_REAPER_TICK_S: i('sessions', '30', 1),
  SQL_SESSION_OPEN_TIMEOUT_S: i('sessions', '30', 1),
  SQL_SESSION_WAIT_TIMEOUT_S: i('sessions', '45', 0),
  SQL_SESSION_MAX_WAIT_TIMEOUT_S: i('sessions', '120', 0),
  SQL_SESSION_OPENING_DEADLINE_S: i('sessions', '120', 1),
  SQL_SESSION_STAGING_PREFIX_SEGMENT: s('sessions', '_staging'),
  SQL_SESSION_STAGING_URL_TTL_S: i('sessions', '900', 1),
  SQL_STATEMENT_ACK_DEADLINE_S: i('sessions', '15', 1),
  SQL_STATEMENT_TIMEOUT_GRACE_S: i('sessions', '30', 0),
  SQL_STATEMENT_DEFAULT_TIMEOUT_S: i('sessions', '600', 1),
  SQL_STATEMENT_WAIT_TIMEOUT_S: i('sessions', '10', 0),
  SQL_STATEMENT_FIRST_PAGE_LIMIT: i('sessions', '200', 0, 200),
  SQL_STATEMENT_MAX_WAIT_TIMEOUT_S: i('sessions', '60', 0),
  // Elastic compute
  ELASTIC_COMPUTE_ENABLED: b('elastic', 'false'),
  ELASTIC_PROVIDER: e('elastic', 'null', ['null', 'cloud_container', 'docker']),
  ELASTIC_CONTROL_PLANE_URL: u('elastic', null, ['ws:', 'wss:']),
  ELASTIC_AGENT_CATALOG_BASE_URL: s('elastic', null),
  ELASTIC_IDLE_TIMEOUT_S: i('elastic', '900', 1),
  ELASTIC_MAX_LIFETIME_S: i('elastic', '14400', 1),
  ELASTIC_PROVISIONING_DEADLINE_S: i('elastic', '300', 1),
  ELASTIC_REAPER_TICK_S: i('elastic', '30', 1),
  ELASTIC_MAX_AGENTS_PER_POOL: i('elastic', '1', 1),
  ELASTIC_DEFAULT_CPU: n('elastic', '2', 0.25),
  ELASTIC_DEFAULT_MEMORY_GB: n('elastic', '4', 0.5),
  ELASTIC_AGENT_ENV: j('elastic', '{}', 'object', true),
  ELASTIC_CLOUD_SUBSCRIPTION_ID: s('elastic', null),
  ELASTIC_CLOUD_RESOURCE_GROUP: s('elastic', null),
  ELASTIC_CLOUD_SUBNET_ID: s('elastic', null),
  ELASTIC_CLOUD_LOCATION: s('elastic', 'eastus'),
  ELASTIC_CLOUD_PRICE_VCPU_HOUR: n('elastic', '0.0486', 0),
  ELASTIC_CLOUD_PRICE_MEMORY_GB_HOUR: n('elastic', '0.0054', 0),
  ELASTIC_CLOUD_PRICE_CURRENCY: s('elastic', 'USD'),
  ELASTIC_REGISTRY_SERVER: s('elastic', null),
  ELASTIC_REGISTRY_IDENTITY_ID: s('elastic', null),
  ELASTIC_DOCKER_HOST: s('elastic', 'tcp://docker-socket-proxy:2375'),
  ELASTIC_DOCKER_NETWORK: s('elastic', 'eider_internal'),
  ELASTIC_DOCKER_RESERVE_CPU: n('elastic', '1', 0),
  ELASTIC_DOCKER_RESERVE_MEMORY_GB: n('elastic', '2', 0),
  // AI assistant
  ASSISTANT_ENABLED: b('assistant', 'false'),
  ASSISTANT_MODEL: s('assistant', 'openai:gpt-4o-mini'),
  ASSISTANT_OPENAI_BASE_URL: s('assistant', null),
  ASSISTANT_API_KEY: s('assistant', null, true),
  ASSISTANT_PAT_TTL_S: i('assistant', '3600', 60),
  ASSISTANT_MAX_CONCURRENCY: i('assistant', '4', 1),
  ASSISTANT_REQUEST_LIMIT: i('assistant', '20', 1),
  ASSISTANT_MAX_OUTPUT_TOKENS: i('assistant', '4096', 1),
  ASSISTANT_HISTORY_TURN_CAP: i('assistant', '40', 0),
  ASSISTANT_RESULT_ROW_CAP: i('assistant', '100', 0),
  ASSISTANT_RESULT_BYTE_CAP: i('assistant', '32768', 0),
  ASSISTANT_TRACE_INCLUDE_CONTENT: b('assistant', 'true'),
  ASSISTANT_DOCS_ENABLED: b('assistant', 'true'),
  ASSISTANT_DOCS_DIR: s('assistant', './docs'),
  ASSISTANT_DOCS_MAX_PAGE_CHARS: i('assistant', '20000', 1),
  ASSISTANT_DOCS_SEARCH_LIMIT: i('assistant', '5', 1, 10),
  DOCS_SITE_URL: s('assistant', ''),
  // Tool-protocol endpoint and observability
  MCP_ENABLED: b('mcp', 'true'),
  MCP_ALLOW_WRITES: b('mcp', 'false'),
  MCP_QUERY_TIMEOUT_S: n('mcp', '120', 0),
  MCP_RESULT_ROW_CAP: i('mcp', '100', 1),
  MCP_RESULT_BYTE_CAP: i('mcp', '32768', 1),
  METRICS_ENABLED: b('mcp', 'true'),
  AGENT_METRICS_RETENTION_HOURS: i('mcp', '168', 1),
  OTEL_EXPORTER_OTLP_ENDPOINT: s('mcp', ''),
  OTEL_SERVICE_NAME: s('mcp', 'eider-api'),
} as const satisfies Record<string, VarSpec>;

export type ConfigName = keyof typeof CONFIG_VARIABLES;

type ValueOf<K extends Kind> = K extends { t: 'int' | 'number' }
  ? number
  : K extends { t: 'bool' }
    ? boolean
    : K extends { t: 'json'; shape: 'array' }
      ? unknown[]
      : K extends { t: 'json' }
        ? Record<string, unknown>
        : string;

export type Config = {
  readonly [K in ConfigName]: (typeof CONFIG_VARIABLES)[K]['def'] extends null
    ? ValueOf<(typeof CONFIG_VARIABLES)[K]['kind']> | null
    : ValueOf<(typeof CONFIG_VARIABLES)[K]['kind']>;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const expected = (k: Kind): string => {
  switch (k.t) {
    case 'string':
      return 'a string';
    case 'int':
      return `an integer${k.min !== undefined ? ` >= ${k.min}` : ''}${k.max !== undefined ? ` and <= ${k.max}` : ''}`;
    case 'number':
      return `a number${k.min !== undefined ? ` >= ${k.min}` : ''}${k.max !== undefined ? ` and <= ${k.max}` : ''}`;
    case 'bool':
      return 'true or false';
    case 'enum':
      return `one of ${k.values.join(', ')}`;
    case 'json':
      return `a JSON ${k.shape}`;
    case 'url':
      return `a URL starting with ${k.protocols.map((p) => `${p}//`).join(' or ')}`;
  }
};

/** The effect Schema that decodes one variable's text into its typed value. */
function schemaFor(k: Kind): Schema.Top {
  const str = Schema.String;
  switch (k.t) {
    case 'string':
      return str;
    case 'int': {
      let num = Schema.NumberFromString.check(Schema.isInt());
      if (k.min !== undefined) num = num.check(Schema.isGreaterThanOrEqualTo(k.min));
      if (k.max !== undefined) num = num.check(Schema.isLessThanOrEqualTo(k.max));
      return num;
    }
    case 'number': {
      let num = Schema.NumberFromString.check(Schema.isFinite());
      if (k.min !== undefined) num = num.check(Schema.isGreaterThanOrEqualTo(k.min));
      if (k.max !== undefined) num = num.check(Schema.isLessThanOrEqualTo(k.max));
      return num;
    }
    case 'bool':
      return Schema.Literals(['true', 'false', '1', '0', 'yes', 'no']);
    case 'enum':
      return Schema.Literals(k.values as [string, ...string[]]);
    case 'json':
      return Schema.fromJsonString(k.shape === 'array' ? Schema.Array(Schema.Unknown) : Schema.Record(Schema.String, Schema.Unknown));
    case 'url':
      return str.check(
        Schema.makeFilter((v: string) => {
          try {
            return k.protocols.includes(new URL(v).protocol);
          } catch {
            return false;
          }
        }),
      );
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1();

/** Reads the whole configuration from `env`; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(CONFIG_VARIABLES) as [ConfigName, VarSpec][]) {
    const raw = env[name];
    const text = raw === undefined || (raw === '' && spec.kind.t !== 'string') ? spec.def : raw;
    if (text === null) {
      out[name] = null;
      continue;
    }
    const exit = Schema.decodeUnknownExit(schemaFor(spec.kind) as any)(spec.kind.t === 'bool' ? text.toLowerCase() : text);
    if (Exit.isFailure(exit)) {
      const failure = exit.cause.reasons.find((r: any) => r._tag === 'Fail') as any;
      const problem = failure ? formatter(failure.error.issue).issues.map((x) => x.message.replace('Expected <filter>', 'not a valid URL')).join('; ') : 'invalid';
      const shown = spec.secret ? '(hidden)' : JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
      throw new ConfigError(`${name}: invalid value ${shown}: ${problem}; expected ${expected(spec.kind)}`);
    }
    out[name] = spec.kind.t === 'bool' ? ['true', '1', 'yes'].includes(exit.value as string) : exit.value;
  }
  const cfg = out as Config;
  if (cfg.SQL_SESSION_OPENING_DEADLINE_S <= cfg.SQL_SESSION_OPEN_TIMEOUT_S) {
    throw new ConfigError(
      `SQL_SESSION_OPENING_DEADLINE_S: invalid value ${cfg.SQL_SESSION_OPENING_DEADLINE_S}: must exceed SQL_SESSION_OPEN_TIMEOUT_S (${cfg.SQL_SESSION_OPEN_TIMEOUT_S}); expected an integer > ${cfg.SQL_SESSION_OPEN_TIMEOUT_S}`,
    );
  }
  return Object.freeze(cfg);
}

/** Names of variables whose values must never be printed. */
export const SECRET_VARIABLES: readonly ConfigName[] = (Object.entries(CONFIG_VARIABLES) as [ConfigName, VarSpec][])
  .filter(([, v]) => v.secret)
  .map(([k]) => k);

/** The configuration with secrets replaced, for diagnostics. */
export function redactedConfig(cfg: Config): Record<string, unknown> {
  const out: Record<string, unknown> = { ...cfg };
  for (const k of SECRET_VARIABLES) if (out[k] !== null && out[k] !== '') out[k] = '(set)';
  return out;
}
