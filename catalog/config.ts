// Configuration of the catalog service, read from the environment by `eider catalog` (and `eider up`).
export interface CatalogConfig {
  host: string;
  port: number;
  /** PostgreSQL holding the metastore (schema `catalog`). */
  databaseUrl: string | undefined;
  /** OAuth2 client credentials accepted at POST /v1/oauth/tokens. */
  clientId: string;
  clientSecret: string;
  realm: string;
  /** Lifetime of bearer tokens issued by /v1/oauth/tokens. */
  tokenTtlSeconds: number;
  /** Lifetime of vended storage credentials. */
  credentialTtlSeconds: number;
}

export class CatalogConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogConfigError';
  }
}

function int(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new CatalogConfigError(`${name} must be an integer between ${min} and ${max}`);
  return n;
}

export function catalogConfigFromEnv(env: Record<string, string | undefined> = process.env): CatalogConfig {
  const clientSecret = env.CATALOG_CLIENT_SECRET;
  if (!clientSecret) throw new CatalogConfigError('CATALOG_CLIENT_SECRET is required (the OAuth2 client secret clients present)');
  return {
    host: env.CATALOG_HOST || '127.0.0.1',
    port: int(env, 'CATALOG_PORT', 8181, 0, 65535),
    databaseUrl: env.DATABASE_URL || undefined,
    clientId: env.CATALOG_CLIENT_ID || 'root',
    clientSecret,
    realm: env.CATALOG_REALM || 'POLARIS',
    tokenTtlSeconds: int(env, 'CATALOG_TOKEN_TTL_SECONDS', 3600, 60, 86400),
    credentialTtlSeconds: int(env, 'CATALOG_CREDENTIAL_TTL_SECONDS', 900, 1, 43200),
  };
}
