// Wires the api process: configuration, database (embedded or DATABASE_URL), migrations, secrets, routes.
import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { ldapInClear, loadConfig, unbuiltSettings, type Config } from '../runtime/config.ts';
import { connectDb, type Db } from '../runtime/db.ts';
import { migrate } from '../runtime/migrate.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { createMetrics } from '../runtime/metrics.ts';
import { loadOrCreateSecret } from '../runtime/bootSecrets.ts';
import { databaseUrlFor } from '../runtime/postgres.ts';
import { buildServer } from '../http/server.ts';
import { allRoutes } from '../http/routes/index.ts';
import type { AppContext } from '../usecases/context.ts';
import { ensureBundledCatalog } from '../domain/bootstrap.ts';
import { seedBootstrapToken } from '../domain/agents.ts';
import { AgentSockets } from '../runtime/agentSockets.ts';
import { createActorHost } from '../actors/host.ts';
import { reapDue, startActorReaper } from '../actors/reaper.ts';
import { elasticCounts } from '../domain/elastic.ts';
import { startElasticCompute } from './elastic.ts';
import { scanDue, scanTables } from '../domain/maintenance/scan.ts';
import { readPolicy } from '../domain/maintenance/store.ts';
import { ensureAssistantAccount } from '../domain/assistant/serviceAccount.ts';
import { agentConnectionKind } from '../actors/agentConnectionKind.ts';
import { queryKind } from '../actors/queryKind.ts';
import { closeSessionsOfInactiveUsers, sqlSessionKind } from '../actors/sqlSessionKind.ts';
import { statementKind } from '../actors/statementKind.ts';
import { statementCatalogs } from '../usecases/querySubmission.ts';
import { registerAgentChannel, type AgentChannel } from '../http/agentSocket.ts';
import { registerInternalApi } from '../http/internal.ts';
import { agentLink } from '../actors/agentLink.ts';
import { startActorHousekeeping } from '../actors/housekeeping.ts';
import { MigrationRunner } from '../actors/migrationRunner.ts';
import { storageMigrationKind } from '../actors/storageMigrationKind.ts';
import { peerClient } from '../runtime/peerClient.ts';
import { registerReplica, resolveInternalUrl, resolveReplicaId } from '../runtime/replicas.ts';
import { registerUi } from '../http/ui.ts';
import { startSamplesSeed } from '../usecases/samplesSeed.ts';
import { catalogClientFromConfig } from '../runtime/catalogClient.ts';
import { ensureCatalogWarehouses } from '../domain/catalogs/warehouseSync.ts';
import { sealStoredBackendSecrets } from '../domain/catalogs/backends.ts';
import { pruneAudit } from '../domain/audit.ts';
import { ldapSettingsFrom } from '../domain/ldap.ts';
import { oidcClients } from '../domain/oidc.ts';
import { oidcProviders } from '../runtime/config.ts';
import { startLeaderLoop } from '../runtime/timers.ts';
import { createTracing } from '../telemetry/tracing.ts';
import { registerMcp } from '../http/mcp.ts';
import { startScheduler } from '../usecases/scheduler.ts';
import { startPgWire } from '../pgwire/server.ts';
import { indexDocs } from '../domain/docsIndex.ts';
import { removeSessionStaging, sessionCounts, statementStaging, sweepEndedStaging } from '../domain/sqlSessions.ts';

export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

export interface RunningApi {
  url: string;
  port: number;
  /** the PostgreSQL wire endpoint's port, null when PG_PORT is unset */
  pgPort: number | null;
  ctx: AppContext;
  app: FastifyInstance;
  db: Db;
  /** graceful: not-ready first, then in-flight requests finish, then the pool closes */
  close(): Promise<void>;
}

export async function startApi(opts: { config?: Config; env?: Record<string, string | undefined>; logger?: Logger } = {}): Promise<RunningApi> {
  const env = opts.env ?? process.env;
  const loaded = opts.config ?? loadConfig(env);
  const dataDir = resolve(loaded.DATA_DIR);
  // Generated on first boot (or SECRET_KEY) so every replica of a deployment can share it: it signs the OIDC
  // handshake cookie, which one replica sets and another may read, and seals storage-backend secrets at rest.
  // From here on config.SECRET_KEY is the key in effect.
  const secretKey = loadOrCreateSecret(dataDir, 'secret-key', loaded.SECRET_KEY || null);
  const config: Config = { ...loaded, REPLICA_ID: resolveReplicaId(loaded.REPLICA_ID, env), SECRET_KEY: secretKey };
  const logger = opts.logger ?? createLogger({ level: config.LOG_LEVEL, name: 'api' });
  for (const { name, feature } of unbuiltSettings(opts.env ?? process.env))
    logger.warn({ variable: name, feature }, `${name} is set, but ${feature} is not built yet: it has no effect`);
  if (ldapInClear(config)) {
    logger.warn({ variable: 'LDAP_ALLOW_INSECURE' }, 'LDAP_ALLOW_INSECURE is set: bind passwords go to the directory in clear (ldap:// without StartTLS)');
  }
  // Read before anything starts, so an unreadable CA bundle stops the process with nothing to clean up.
  const ldap = ldapSettingsFrom(config);
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
  const sealed = await sealStoredBackendSecrets(db, config);
  if (sealed > 0) logger.info({ backends: sealed }, 'storage-backend secrets sealed with SECRET_KEY');
  // SETUP_TOKEN from the environment is used as given and never written to DATA_DIR (docs/api-decisions.md).
  const setupToken = loadOrCreateSecret(dataDir, 'setup-token', config.SETUP_TOKEN || null, 24);

  await seedBootstrapToken(db, config.AGENT_BOOTSTRAP_TOKEN);

  // Refuses to start when a live replica holds this REPLICA_ID. The address is final once the api listens.
  const replica = await registerReplica({
    db,
    id: config.REPLICA_ID,
    internalUrl: resolveInternalUrl(config.REPLICA_INTERNAL_URL, config.PORT),
    presenceTtlS: config.AGENT_PRESENCE_TTL_S,
    logger,
  }).catch(async (e) => {
    await db.close();
    await embedded?.stop();
    throw e;
  });

  const sockets = new AgentSockets();
  const link = agentLink({
    db,
    sockets,
    peers: peerClient(config.INTERNAL_API_SECRET),
    replicaId: config.REPLICA_ID,
    presenceTtlS: config.AGENT_PRESENCE_TTL_S,
    logger: logger.child({ part: 'agent-link' }),
  });
  const tracing = createTracing({ serviceName: config.OTEL_SERVICE_NAME, endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const catalog = catalogClientFromConfig(config, tracing);
  const elastic = startElasticCompute({ config, db, link, logger });
  const metrics = config.METRICS_ENABLED ? createMetrics(() => db.stats, () => sessionCounts(db), () => elasticCounts(db)) : undefined;
  // Execution lineage reads the source tables' schemas (column lineage) and counts what it could not read.
  const lineage = { catalog, failed: (stage: 'statement' | 'columns') => metrics?.lineageFailures.inc({ stage }) };
  // Storage migrations: the runner does the phases the storageMigration actors (actors/storageMigrationKind.ts) ask for.
  const migrationRunner = new MigrationRunner({
    db,
    catalog,
    config,
    logger: logger.child({ part: 'migrations' }),
    enabled: config.MIGRATION_RUNNER_ENABLED,
  });
  const host = await createActorHost({
    db,
    replicaId: config.REPLICA_ID,
    logger: logger.child({ part: 'actors' }),
    kinds: {
      agentConnection: agentConnectionKind({ db, sockets, link, replicaId: config.REPLICA_ID }),
      query: queryKind({ db, sockets, link, logger, tracing, elastic, lineage, catalogToken: (scope, ttlSeconds) => catalog.scopedToken(scope, ttlSeconds) }),
      sqlSession: sqlSessionKind({ db, link, logger, elastic, removeStaging: (id) => removeSessionStaging(db, config, catalog, id) }),
      ...(elastic ? { elasticAgent: elastic.kind } : {}),
      storageMigration: storageMigrationKind(migrationRunner),
      statement: statementKind({
        db,
        link,
        sockets,
        tracing,
        catalogsFor: (statementId) => statementCatalogs({ db, config, catalog }, statementId),
        catalogToken: (scope, ttlSeconds) => catalog.scopedToken(scope, ttlSeconds),
        stagingFor: (sessionId, sql, ttlSeconds) => statementStaging(db, config, catalog, sessionId, sql, ttlSeconds),
        elastic,
        lineage,
      }),
    },
  });
  migrationRunner.attach(host);
  await host.rehydrate();
  const reaper = startActorReaper({
    db,
    host,
    // storageMigration: a phase's lapsed lease runs it again; the end of the retention starts the purge.
    kinds: ['agentConnection', 'query', 'storageMigration'],
    logger: logger.child({ part: 'reaper' }),
    tickMs: config.ACTOR_REAPER_TICK_S * 1000,
    holdAfterOutageMs: config.AGENT_HEARTBEAT_TTL_S * 1000,
  });
  // SQL sessions and their statements: the spec's session reaper, on its own tick.
  const sessionReaper = startActorReaper({
    db,
    host,
    name: 'session-reaper',
    kinds: ['sqlSession', 'statement'],
    logger: logger.child({ part: 'reaper' }),
    tickMs: config.SQL_SESSION_REAPER_TICK_S * 1000,
    holdAfterOutageMs: config.AGENT_HEARTBEAT_TTL_S * 1000,
    // A deactivation closes its user's sessions at once; this catches a replica that died before it could. Ended
    // sessions whose staging URLs could not be revoked have their staging areas swept once those expired.
    alsoEachTick: async () => {
      await closeSessionsOfInactiveUsers(db, host, logger.child({ part: 'reaper' }));
      const swept = await sweepEndedStaging(db, config, catalog, config.SQL_SESSION_STAGING_SWEEP_GRACE_S, (sessionId, e) =>
        logger.warn({ part: 'reaper', sessionId, err: (e as Error)?.message ?? String(e) }, 'staging sweep failed; retried at the next tick'),
      );
      if (swept.sessions > 0) logger.info({ part: 'reaper', ...swept }, 'ended sessions’ staging areas swept after their URLs expired');
    },
  });
  // Elastic agents' deadlines (dial home, idle, lifetime) and the reconciliation with what the provider runs.
  const elasticReaper = startLeaderLoop({
    db,
    name: 'elastic-reaper',
    tickMs: config.ELASTIC_REAPER_TICK_S * 1000,
    enabled: elastic !== undefined,
    logger,
    run: async ({ signal }) => {
      const reaped = await reapDue({ db, host, kinds: ['elasticAgent'], logger: logger.child({ part: 'elastic' }) }, signal);
      const r = await elastic!.reconcile(host);
      if (reaped.due > 0 || r.leaked > 0 || r.vanished > 0) logger.info({ loop: 'elastic-reaper', ...reaped, ...r }, 'elastic compute reconciled');
    },
  });
  const housekeeping = startActorHousekeeping({
    db,
    host,
    logger: logger.child({ part: 'actors' }),
    presenceTtlS: config.AGENT_PRESENCE_TTL_S,
    historyRetentionDays: config.ACTOR_HISTORY_RETENTION_DAYS,
    resultRetentionHours: config.RESULT_RETENTION_HOURS,
  });

  // One replica at a time prunes the audit trail; hourly is plenty for a retention counted in days.
  const auditRetention = startLeaderLoop({
    db,
    name: 'audit-retention',
    tickMs: 3_600_000,
    enabled: config.AUDIT_RETENTION_DAYS > 0,
    logger,
    run: async ({ tx }) => {
      const n = await pruneAudit(tx, config.AUDIT_RETENTION_DAYS);
      if (n > 0) logger.info({ pruned: n, retentionDays: config.AUDIT_RETENTION_DAYS }, 'audit rows pruned');
    },
  });
  void auditRetention.tickNow();

  // Table maintenance: each tick, the leader scans when the runtime policy's cadence is due (deep at its interval).
  const maintenanceScanner = startLeaderLoop({
    db,
    name: 'maintenance-scanner',
    tickMs: config.MAINTENANCE_SCAN_TICK_S * 1000,
    enabled: config.MAINTENANCE_SCANNER_ENABLED,
    logger,
    run: async ({ signal }) => {
      const due = scanDue(await readPolicy(db), Date.now(), config.MAINTENANCE_DEEP_SCAN_INTERVAL_S);
      if (!due.scan) return;
      const r = await scanTables(db, catalog, { deep: due.deep, signal });
      logger.info({ loop: 'maintenance-scanner', deep: r.deep, tables: r.tables, opened: r.recommendations_opened, resolved: r.recommendations_resolved, errors: r.errors.length }, 'tables scanned');
    },
  });

  // The leader begins pending migrations and resumes phases whose process died (at once at start: a restart after
  // a crash picks its migration up without waiting a tick).
  const migrationLoop = startLeaderLoop({
    db,
    name: 'migration-runner',
    tickMs: config.MIGRATION_RUNNER_TICK_S * 1000,
    enabled: config.MIGRATION_RUNNER_ENABLED && catalog !== undefined,
    logger,
    run: async () => {
      const r = await migrationRunner.tick();
      if (r.begun > 0 || r.resumed > 0) logger.info({ loop: 'migration-runner', ...r }, 'storage migrations started or resumed');
    },
  });
  void migrationLoop.tickNow();

  const ctx: AppContext = {
    db,
    config,
    logger,
    metrics,
    elastic,
    migrations: { tickNow: () => migrationLoop.tickNow() },
    version: VERSION,
    setupToken,
    draining: { value: false },
    tracing,
    host,
    sockets,
    link,
    replica,
    catalog,
    ldap,
    oidc: oidcClients(oidcProviders(config)),
    secretKey,
    onFirstAdmin: [],
  };
  // The assistant's service account exists from startup when the assistant is on (spec: ASSISTANT_ENABLED).
  if (config.ASSISTANT_ENABLED) await db.tx((tx) => ensureAssistantAccount(tx));
  const warehouses = keepWarehousesRegistered(ctx);
  const scheduler = startScheduler(ctx);
  // The documentation tools' index (/mcp): rebuilt from ASSISTANT_DOCS_DIR at every start; absent docs withhold them.
  let docsIndexed = false;
  if (config.ASSISTANT_DOCS_ENABLED) {
    docsIndexed = await indexDocs(db, resolve(config.ASSISTANT_DOCS_DIR)).catch((e) => {
      logger.warn({ err: (e as Error).message }, 'documentation index not built; the documentation tools are withheld');
      return false;
    });
  }
  const seed = startSamplesSeed(ctx);
  let channel: AgentChannel | undefined;
  const app = await buildServer({
    ctx,
    routes: allRoutes,
    extend: async (a) => {
      channel = await registerAgentChannel(a, { ctx, host, sockets });
      registerInternalApi(a, { secret: config.INTERNAL_API_SECRET, sockets });
      registerMcp(a, ctx, { docsIndexed: () => docsIndexed });
      registerUi(a, resolve(import.meta.dirname, '..', 'ui', 'dist'));
    },
  });
  await app.listen({ port: config.PORT, host: config.HOST });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  const listenHost = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  // Unset, the peer address is this process's own port (several replicas on one machine, or an ephemeral port).
  if (!env.REPLICA_INTERNAL_URL) await replica.setInternalUrl(`http://${listenHost}:${port}`);
  else if (config.REPLICA_INTERNAL_URL === 'auto') await replica.setInternalUrl(resolveInternalUrl('auto', port));
  logger.info({ port, replica: replica.id, internalUrl: replica.internalUrl }, 'api listening');
  // The PostgreSQL wire endpoint (docs/postgres-protocol.md), off unless PG_PORT is set.
  const pgwire = config.PG_PORT === null ? null : await startPgWire(ctx, { port: config.PG_PORT, host: config.PG_HOST ?? config.HOST });
  return {
    url: `http://${listenHost}:${port}`,
    port,
    pgPort: pgwire?.port ?? null,
    ctx,
    app,
    db,
    close() {
      // The drain is bounded whatever clients do (a long-poll, a keep-alive connection, an agent dialling back): the
      // process may exit once DRAIN_BOUND_MS passed; what it did not finish is in the database (the outbox, live
      // actors), taken over by the other replicas.
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((res) => {
        timer = setTimeout(() => {
          logger.warn({ boundMs: DRAIN_BOUND_MS }, 'drain bound passed; exiting with parts still closing');
          res();
        }, DRAIN_BOUND_MS);
      });
      return Promise.race([closeInOrder(), bound]).finally(() => clearTimeout(timer));
    },
  };

  async function closeInOrder() {
    // Drain: not ready, then the agents are handed over (their connection actors record the drain and the socket's
    // end before the host closes), then in-flight requests finish: long-polls answer at once with where their query
    // stands, answers close their connections, and after DRAIN_REQUESTS_MS the connections left are closed.
    ctx.draining.value = true;
    host.releaseWaiters();
    await replica.setDraining().catch(() => undefined);
    await channel?.drain(5_000);
    // Wire connections end first: each closes its session while the actor host still runs.
    await pgwire?.close();
    warehouses.stop();
    await seed.stop();
    await reaper.stop();
    await sessionReaper.stop();
    await elasticReaper.stop();
    await housekeeping.stop();
    await auditRetention.stop();
    await maintenanceScanner.stop();
    await migrationLoop.stop();
    await migrationRunner.close();
    await scheduler.stop();
    await closeServer(app, DRAIN_REQUESTS_MS, logger);
    await host.close();
    await replica.stop();
    await db.close();
    await tracing.shutdown();
    if (embedded) await embedded.stop();
  }
}

/** How long in-flight requests get to finish once the agents are handed over; then their connections are closed. */
const DRAIN_REQUESTS_MS = 10_000;
/** The whole drain, from SIGTERM to exit, at most. */
export const DRAIN_BOUND_MS = 30_000;

/** Closes the server: in-flight requests finish (idle keep-alive connections are closed at once); whatever is still
 *  open after `graceMs` (a request that does not end, an upgraded socket) is closed. */
async function closeServer(app: FastifyInstance, graceMs: number, logger: Logger): Promise<void> {
  const closing = app.close();
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([closing.then(() => false), new Promise<boolean>((res) => (timer = setTimeout(() => res(true), graceMs)))]);
  clearTimeout(timer);
  if (!late) return;
  logger.warn({ graceMs }, 'in-flight requests outlived the drain; closing their connections');
  app.server.closeAllConnections();
  await closing;
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
