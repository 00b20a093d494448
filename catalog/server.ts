// The Iceberg REST catalog service (`eider catalog`): one Fastify server hosting many warehouses (the REST
// "prefix" is the warehouse name), its metastore in PostgreSQL schema `catalog`, metadata files on each
// warehouse's S3 storage.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply } from 'fastify';
import type { Tracing } from '../telemetry/tracing.ts';
import { traceRequests } from '../telemetry/requestTracing.ts';
import { connectDb, type Db } from '../runtime/db.ts';
import { migrate } from '../runtime/migrate.ts';
import { makeTokenIssuer, scopeAllows } from './auth.ts';
import type { CatalogConfig } from './config.ts';
import type { CatalogContext } from './context.ts';
import { installErrorHandler, installParsers, refuseNulBytes, rememberWarehouse, sendJson } from './http.ts';
import { WarehouseStorage } from './storage.ts';
import { TableService } from './tables.ts';
import { oauthRoutes } from './routes/oauth.ts';
import { namespaceRoutes } from './routes/namespaces.ts';
import { tableRoutes } from './routes/tables.ts';
import { managementRoutes } from './routes/management.ts';
import { badRequest, forbidden, notAuthorized } from './errors.ts';
import * as store from './metastore.ts';

export interface CatalogServiceOptions extends Partial<Omit<CatalogConfig, 'clientSecret'>> {
  clientSecret: string;
  /** An open database; when absent one is opened from `databaseUrl`. */
  db?: Db;
  /** Apply migrations/catalog at start (default true). */
  migrate?: boolean;
  /** pino logger (fastify's); none by default. */
  logger?: FastifyBaseLogger;
  /** spans per request, commit and metadata read/write; none by default */
  tracing?: Tracing;
  /** SECRET_KEY: warehouse secrets are sealed with it at rest (settings/secretBox.ts). */
  secretKey?: string;
}

export interface CatalogService {
  url: string;
  port: number;
  db: Db;
  close(): Promise<void>;
}

/** A path segment as the router decodes it; malformed escapes (`%zz`) are the client's error, not a 500. */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`'${segment}' is not a valid url component`);
  }
}

const PUBLIC_ROUTES = new Set(['/v1/oauth/tokens', '/healthz']);

export async function startCatalogService(opts: CatalogServiceOptions): Promise<CatalogService> {
  const ownDb = !opts.db;
  if (!opts.db && !opts.databaseUrl) throw new Error('startCatalogService needs db or databaseUrl');
  const db = opts.db ?? (await connectDb({ url: opts.databaseUrl!, poolSize: 10, maxOverflow: 10, applicationName: 'eider-catalog' }));
  if (opts.migrate !== false) await migrate(db, 'catalog');

  const tracing = opts.tracing;
  const storage = new WarehouseStorage(tracing, opts.secretKey);
  // Secrets written before the service had SECRET_KEY are sealed now (idempotent; replicas racing write the same).
  if (opts.secretKey) {
    const n = await store.resealWarehouseSecrets(db, (stored) => storage.reseal(stored));
    if (n > 0) opts.logger?.info({ warehouses: n }, 'warehouse secrets sealed with SECRET_KEY');
  } else {
    opts.logger?.warn('SECRET_KEY is not set: warehouse secrets are stored in the metastore as given');
  }
  const ctx: CatalogContext = {
    db,
    storage,
    tables: new TableService(db, storage, tracing),
    credentialTtlSeconds: opts.credentialTtlSeconds ?? 900,
  };
  const tokens = makeTokenIssuer({
    clientId: opts.clientId ?? 'root',
    clientSecret: opts.clientSecret,
    realm: opts.realm ?? 'POLARIS',
    ttlSeconds: opts.tokenTtlSeconds ?? 3600,
  });

  const app = Fastify({
    loggerInstance: opts.logger,
    // One log line per request at info is most of a small request's cost; failures are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    // HEAD routes are real operations here (namespace/table exists), not GET without a body.
    exposeHeadRoutes: false,
    bodyLimit: 16 * 1024 * 1024,
    routerOptions: { maxParamLength: 1024 },
    // Errors Fastify answers before any hook (an over-long path segment, a malformed escape): the ErrorModel too.
    frameworkErrors: (err, _req, reply) => {
      const [status, message] = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? [414, 'a path segment is longer than 1024 characters'] : [400, err.code === 'FST_ERR_BAD_URL' ? 'the url holds a malformed percent-escape' : String(err.message)];
      void (reply as FastifyReply).code(status).type('application/json').send(JSON.stringify({ error: { message, type: 'BadRequestException', code: status } }));
    },
  });
  installParsers(app);
  installErrorHandler(app);
  refuseNulBytes(app);
  if (tracing?.enabled) traceRequests(app, tracing);
  app.addHook('onRequest', async (req) => {
    const path = req.url.split('?')[0];
    if (PUBLIC_ROUTES.has(path)) return;
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    const claims = m ? tokens.verify(m[1].trim()) : undefined;
    if (!claims) throw notAuthorized('a valid bearer token is required (POST /v1/oauth/tokens)');
    const refused = scopeAllows(claims, req.method, path, req.query as Record<string, string | undefined>);
    if (refused) throw forbidden(refused);
    // Any change to a warehouse a storage migration is copying is refused (commits check again under a row lock).
    const change = /^\/v1\/([^/]+)\//.exec(path);
    if (change && req.method !== 'GET' && req.method !== 'HEAD' && change[1] !== 'oauth') {
      const w = await store.findWarehouse(db, decodedSegment(change[1]));
      if (w?.readOnly) throw store.readOnlyWarehouse(w.name);
      if (w) rememberWarehouse(req, w);
    }
  });
  app.get('/healthz', async (_req, reply) => sendJson(reply, 200, { status: 'ok' }));
  oauthRoutes(app, tokens);
  namespaceRoutes(app, ctx);
  tableRoutes(app, ctx);
  managementRoutes(app, ctx);

  const host = opts.host ?? '127.0.0.1';
  await app.listen({ host, port: opts.port ?? 8181 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (opts.port ?? 8181);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    db,
    async close() {
      await app.close();
      storage.close();
      await tracing?.flush();
      if (ownDb) await db.close();
    },
  };
}

