// Wires the api process: configuration, database (embedded or DATABASE_URL), migrations, secrets, routes.
import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { loadConfig, unbuiltSettings, type Config } from '../runtime/config.ts';
import { connectDb, type Db } from '../runtime/db.ts';
import { migrate } from '../runtime/migrate.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { createMetrics } from '../runtime/metrics.ts';
import { loadOrCreateSecret } from '../runtime/bootSecrets.ts';
import { startEmbeddedPostgres, type EmbeddedPg } from '../runtime/postgres.ts';
import { buildServer } from '../http/server.ts';
import { allRoutes } from '../http/routes/index.ts';
import type { AppContext } from '../http/context.ts';
import { ensureBundledCatalog } from '../domain/bootstrap.ts';
import { seedBootstrapToken } from '../domain/agents.ts';
import { AgentSockets } from '../runtime/agentSockets.ts';
import { createActorHost } from '../actors/host.ts';
import { startActorReaper } from '../actors/reaper.ts';
import { agentConnectionKind } from '../actors/agentConnectionKind.ts';
import { queryKind } from '../actors/queryKind.ts';
import { registerAgentChannel } from '../http/agentSocket.ts';
import { registerUi } from '../http/ui.ts';
import { registerAbsentFeatures } from '../http/absentFeatures.ts';
import { startSamplesSeed } from '../http/samplesSeed.ts';
import { catalogClientFromConfig } from '../runtime/catalogClient.ts';
import { ensureCatalogWarehouses } from '../domain/catalogs.ts';

export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

export interface RunningApi {
  url: string;
  port: number;
  ctx: AppContext;
  app: FastifyInstance;
  db: Db;
  /** graceful: not-ready first, then in-flight requests finish, then the pool closes */
  close(): Promise<void>;
}

export async function databaseUrlFor(config: Config, logger: Logger): Promise<{ url: string; embedded?: EmbeddedPg }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL };
  if (config.POSTGRES_HOST) {
    const u = new URL('postgres://localhost');
    u.hostname = config.POSTGRES_HOST;
    u.port = String(config.POSTGRES_PORT);
    u.username = config.POSTGRES_USER;
    u.password = config.POSTGRES_PASSWORD;
    u.pathname = `/${config.POSTGRES_DB}`;
    return { url: u.toString() };
  }
  const dir = resolve(config.DATA_DIR, 'pg');
  logger.info({ dir }, 'starting embedded PostgreSQL');
  const embedded = await startEmbeddedPostgres(dir, { onLog: (l) => logger.debug({ pg: l }, 'postgres') });
  return { url: embedded.url, embedded };
}

export async function startApi(opts: { config?: Config; env?: Record<string, string | undefined>; logger?: Logger } = {}): Promise<RunningApi> {
  const config = opts.config ?? loadConfig(opts.env ?? process.env);
  const logger = opts.logger ?? createLogger({ level: config.LOG_LEVEL, name: 'api' });
  for (const { name, feature } of unbuiltSettings(opts.env ?? process.env))
    logger.warn({ variable: name, feature }, `${name} is set, but ${feature} is not built yet: it has no effect`);
  const dataDir = resolve(config.DATA_DIR);
  const { url: dbUrl, embedded } = await databaseUrlFor(config, logger);
  const db = await connectDb({
    url: dbUrl,
    poolSize: config.DB_POOL_SIZE,
    maxOverflow: config.DB_MAX_OVERFLOW,
    recycleSeconds: config.DB_POOL_RECYCLE_S,
    applicationName: `eider-api-${config.REPLICA_ID}`,
  });
  const applied = await migrate(db, 'control');
  if (applied.applied.length) logger.info({ applied: applied.applied }, 'migrations applied');
  await ensureBundledCatalog(db, { bucket: config.STORE_BUCKET, endpoint: config.STORE_ENDPOINT, region: config.STORE_REGION });

  // Generated on first boot (or SECRET_KEY) so every replica of a deployment can share it; its only consumer in the
  // spec, the OIDC handshake cookie, is not built yet.
  loadOrCreateSecret(dataDir, 'secret-key', config.SECRET_KEY || null);
  // SETUP_TOKEN from the environment is used as given and never written to DATA_DIR (decisions.md).
  const setupToken = loadOrCreateSecret(dataDir, 'setup-token', config.SETUP_TOKEN || null, 24);

  await seedBootstrapToken(db, config.AGENT_BOOTSTRAP_TOKEN);

  const sockets = new AgentSockets();
  const catalog = catalogClientFromConfig(config);
  const host = await createActorHost({
    db,
    replicaId: config.REPLICA_ID,
    logger: logger.child({ part: 'actors' }),
    kinds: {
      agentConnection: agentConnectionKind({ db, sockets }),
      query: queryKind({ db, sockets, logger, catalogToken: (scope, ttlSeconds) => catalog.scopedToken(scope, ttlSeconds) }),
    },
  });
  await host.rehydrate();
  const reaper = startActorReaper({
    db,
    host,
    kinds: ['agentConnection', 'query'],
    logger: logger.child({ part: 'reaper' }),
    tickMs: config.ACTOR_REAPER_TICK_S * 1000,
  });

  const ctx: AppContext = {
    db,
    config,
    logger,
    metrics: config.METRICS_ENABLED ? createMetrics(() => db.stats) : undefined,
    version: VERSION,
    setupToken,
    draining: { value: false },
    host,
    sockets,
    catalog,
    onFirstAdmin: [],
  };
  const warehouses = keepWarehousesRegistered(ctx);
  const seed = startSamplesSeed(ctx);
  const app = await buildServer({
    ctx,
    routes: allRoutes,
    extend: async (a) => {
      await registerAgentChannel(a, { ctx, host, sockets });
      registerAbsentFeatures(a);
      registerUi(a, resolve(import.meta.dirname, '..', 'ui', 'dist'));
    },
  });
  await app.listen({ port: config.PORT, host: config.HOST });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  const listenHost = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  logger.info({ port }, 'api listening');
  return {
    url: `http://${listenHost}:${port}`,
    port,
    ctx,
    app,
    db,
    async close() {
      ctx.draining.value = true;
      // Agents reconnect to a live replica; their connection actors record the shutdown.
      for (const conn of sockets.all()) conn.close(1012, 'replica shutting down');
      warehouses.stop();
      await seed.stop();
      await reaper.stop();
      await app.close();
      await host.close();
      await db.close();
      if (embedded) await embedded.stop();
    },
  };
}

/**
 * Registers every catalog's warehouse with the catalog service, retrying in the background until the service
 * answers: the api may start before the catalog service, and the two are separate processes.
 */
function keepWarehousesRegistered(ctx: AppContext): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let attempt = 0;
  const tryOnce = async () => {
    if (stopped || !ctx.catalog) return;
    try {
      // Only the first failure is worth an error line; retries stay quiet until one succeeds.
      const r = await ensureCatalogWarehouses(ctx.db, ctx.catalog, ctx.config, attempt === 0 ? ctx.logger : undefined);
      if (r.failed.length === 0) {
        ctx.logger.info({ created: r.created, updated: r.updated }, 'catalog warehouses registered');
        return;
      }
    } catch (err) {
      (attempt === 0 ? ctx.logger.warn.bind(ctx.logger) : ctx.logger.debug.bind(ctx.logger))(
        { err: (err as Error).message },
        'catalog service not reachable yet; will retry',
      );
    }
    attempt++;
    if (!stopped) timer = setTimeout(tryOnce, Math.min(30_000, 500 * 2 ** Math.min(attempt, 6))).unref();
  };
  void tryOnce();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
