// Configuration of the catalog service, read from the environment by `eider catalog` (and `eider up`) with the
// loader every Eider process shares (settings/variables.ts).
import { ConfigError, int, readVariables, str, url, type VariableTable } from '../settings/variables.ts';

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
  /** Seals warehouse secrets at rest (the same SECRET_KEY as the api's). */
  secretKey: string | undefined;
}

export const CATALOG_VARIABLES = {
  CATALOG_HOST: str('catalog', '127.0.0.1'),
  CATALOG_PORT: int('catalog', '8181', 0, 65535),
  DATABASE_URL: url('catalog', null, ['postgres:', 'postgresql:'], true),
  CATALOG_CLIENT_ID: str('catalog', 'root'),
  CATALOG_CLIENT_SECRET: str('catalog', undefined, true),
  CATALOG_REALM: str('catalog', 'POLARIS'),
  CATALOG_TOKEN_TTL_SECONDS: int('catalog', '3600', 60, 86400),
  CATALOG_CREDENTIAL_TTL_SECONDS: int('catalog', '900', 1, 43200),
  SECRET_KEY: str('catalog', null, true),
} as const satisfies VariableTable;

export function catalogConfigFromEnv(env: Record<string, string | undefined> = process.env): CatalogConfig {
  const v = readVariables(CATALOG_VARIABLES, env);
  if (!v.CATALOG_CLIENT_SECRET) throw new ConfigError('CATALOG_CLIENT_SECRET', 'CATALOG_CLIENT_SECRET is required: the OAuth2 client secret clients present');
  return {
    host: v.CATALOG_HOST,
    port: v.CATALOG_PORT,
    databaseUrl: v.DATABASE_URL ?? undefined,
    clientId: v.CATALOG_CLIENT_ID,
    clientSecret: v.CATALOG_CLIENT_SECRET,
    realm: v.CATALOG_REALM,
    tokenTtlSeconds: v.CATALOG_TOKEN_TTL_SECONDS,
    credentialTtlSeconds: v.CATALOG_CREDENTIAL_TTL_SECONDS,
    secretKey: v.SECRET_KEY ?? undefined,
  };
}
