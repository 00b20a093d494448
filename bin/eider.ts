#!/usr/bin/env node
// The `eider` command: `up` (the whole stack on one machine), `api`, `agent`, `catalog`, `migrate`, `openapi`,
// `agent-image` (the elastic agent's container image).
// First of all: libuv's thread pool sized for an agent's DuckDB calls, before the imports below use it.
import '../agent/threadPool.ts';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { connectDb } from '../runtime/db.ts';
import { migrate } from '../runtime/migrate.ts';
import { needsAdmin } from '../domain/identity.ts';
import { databaseUrlFor, DataDirInUseError, startEmbeddedPostgres } from '../runtime/postgres.ts';
import { loadOrCreateSecret, writeSecretFile } from '../runtime/bootSecrets.ts';
import { agentEnvironment, bundledResultsPort, catalogEnvironment, objectStoreEnvironment } from './agentEnv.ts';
import { CONFIGURATION_EXIT, Supervisor, SUPERVISED_ENV } from './supervisor.ts';
import { PostgresKeeper } from './postgresKeeper.ts';
import { checkConfig, findHaproxy, formatBackends, haproxyConfig, parseBackends, runHaproxy } from './loadBalancer.ts';
import { ReplicaIdTakenError } from '../runtime/replicas.ts';

const SELF = fileURLToPath(import.meta.url);

/** The variable that names the port each command listens on. */
const PORT_VARIABLES: Record<string, string> = { api: 'PORT', catalog: 'CATALOG_PORT', objectstore: 'OBJECT_STORE_PORT', agent: 'RESULTS_HTTP_PORT', lb: 'LB_PORT' };

function fail(e: unknown): never {
  if (e instanceof ConfigError) {
    process.stderr.write(`eider: configuration error: ${e.message}\n`);
    process.exit(CONFIGURATION_EXIT);
  }
  if (e instanceof ReplicaIdTakenError || e instanceof DataDirInUseError) {
    process.stderr.write(`eider: ${e.message}\n`);
    process.exit(CONFIGURATION_EXIT);
  }
  // A port something else holds: starting again cannot help (exit 2 tells `eider up` not to retry).
  const bind = e as { code?: string; address?: string; port?: number };
  if (bind?.code === 'EADDRINUSE') {
    const variable = PORT_VARIABLES[process.argv[2] ?? ''];
    process.stderr.write(`eider: ${bind.address ?? ''}:${bind.port ?? ''} is already in use${variable ? `: stop what holds it, or set ${variable}` : ''}\n`);
    process.exit(CONFIGURATION_EXIT);
  }
  process.stderr.write(`eider: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
}

function onSignals(stop: () => Promise<void>) {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (e) => fail(e),
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  // A closed terminal: stop in order too (left alone, the parts would die at once and the embedded PostgreSQL,
  // which takes SIGHUP as "reload", would stay running behind them).
  process.on('SIGHUP', handler);
}

// Each part loads its own modules only (the api's are the most): a part restarted by `eider up` serves again sooner.
async function cmdApi() {
  const { startApi } = await import('./api.ts');
  const api = await startApi();
  onSignals(() => api.close());
}

async function cmdAgent() {
  const { main } = await import('../agent/cli.ts');
  await main();
}

async function cmdCatalog() {
  const { catalogConfigFromEnv } = await import('../catalog/config.ts');
  const { startCatalogService } = await import('../catalog/server.ts');
  const { createTracing } = await import('../telemetry/tracing.ts');
  const config = loadConfig();
  // Both loaders throw the shared ConfigError, which fail() prints as one line.
  const cc = catalogConfigFromEnv({ ...process.env, CATALOG_PORT: process.env.CATALOG_PORT ?? String(config.CATALOG_PORT), CATALOG_CLIENT_SECRET: config.CATALOG_CLIENT_SECRET });
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'catalog' });
  const { url, embedded } = await databaseUrlFor(config, logger);
  // The api's default service name is not the catalog's: only an explicit OTEL_SERVICE_NAME renames it.
  const tracing = createTracing({ serviceName: process.env.OTEL_SERVICE_NAME || 'eider-catalog', endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const service = await startCatalogService({ ...cc, databaseUrl: url, logger, tracing });
  logger.info({ url: service.url }, 'catalog service listening');
  onSignals(async () => {
    await service.close();
    await tracing.shutdown();
    await embedded?.stop();
  });
}

async function cmdObjectStore() {
  const { startObjectStore } = await import('../runtime/objectStore.ts');
  const { revocationCheck } = await import('../catalog/vending.ts');
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'objectstore' });
  const { url, embedded } = await databaseUrlFor(config, logger);
  const db = await connectDb({ url, poolSize: 2, maxOverflow: 2, applicationName: 'eider-objectstore' });
  // The catalog's revocation list lives in its schema: make sure it exists before the store consults it.
  await migrate(db, 'catalog');
  const store = await startObjectStore({
    dir: resolve(config.DATA_DIR, 'objectstore'),
    port: config.OBJECT_STORE_PORT,
    bucket: config.STORE_BUCKET,
    accessKey: config.OBJECT_STORE_ACCESS_KEY,
    secretKey: config.OBJECT_STORE_SECRET_KEY,
    isRevoked: revocationCheck(db),
  });
  logger.info({ endpoint: store.endpoint, bucket: config.STORE_BUCKET }, 'object store listening');
  onSignals(async () => {
    await store.close();
    await db.close();
    await embedded?.stop();
  });
}

/** HAProxy in front of the replicas named by LB_BACKENDS, on HOST:LB_PORT, until stopped. */
async function cmdLb() {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'lb' });
  const haproxy = findHaproxy();
  if (!haproxy) {
    process.stderr.write('eider: haproxy is not installed (Debian: apt-get install haproxy)\n');
    process.exit(CONFIGURATION_EXIT);
  }
  const backends = parseBackends(process.env.LB_BACKENDS ?? '');
  if (backends.length === 0) throw new ConfigError('LB_BACKENDS', 'LB_BACKENDS: expected name=host:port,… (at least one replica)');
  // With PG_PORT, the replicas' PostgreSQL endpoints too (LB_PG_BACKENDS), on PG_PORT.
  const pgBackends = parseBackends(process.env.LB_PG_BACKENDS ?? '');
  const pg = config.PG_PORT !== null && pgBackends.length > 0 ? { port: config.PG_PORT, backends: pgBackends } : undefined;
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const path = resolve(dataDir, 'haproxy.cfg');
  writeFileSync(path, haproxyConfig({ host: config.HOST, port: config.LB_PORT, backends, pg }));
  const invalid = checkConfig(haproxy, path);
  if (invalid) {
    process.stderr.write(`eider: the generated HAProxy configuration (${path}) is refused: ${invalid}\n`);
    process.exit(CONFIGURATION_EXIT);
  }
  const child = runHaproxy(haproxy, path);
  logger.info({ port: config.LB_PORT, backends: backends.map((b) => `${b.host}:${b.port}`) }, 'load balancer listening');
  const exited = new Promise<number>((res) => child.once('exit', (code, signal) => res(code ?? (signal ? 1 : 0))));
  onSignals(async () => {
    // SIGUSR1: HAProxy's soft stop (stop listening, let open requests finish).
    child.kill('SIGUSR1');
    const timer = setTimeout(() => child.kill('SIGTERM'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  // HAProxy gone by itself: this part ends with it, and `eider up` starts it again.
  process.exit(await exited);
}

async function cmdMigrate() {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'migrate' });
  const { url, embedded } = await databaseUrlFor(config, logger);
  const db = await connectDb({ url, poolSize: 1, maxOverflow: 1 });
  for (const set of ['control', 'catalog'] as const) {
    const r = await migrate(db, set);
    logger.info({ set, applied: r.applied }, 'migrated');
  }
  await db.close();
  await embedded?.stop();
}

/** A persisted generated secret unless the environment names one (then used as given). */
function secretFor(dataDir: string, file: string, envName: string): string {
  const given = process.env[envName];
  return given ? given : loadOrCreateSecret(dataDir, file, null);
}

async function cmdUp() {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'up' });
  const dataDir = resolve(config.DATA_DIR);
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  let stopPg: (() => Promise<void>) | undefined;
  if (!config.DATABASE_URL && !config.POSTGRES_HOST) {
    const pgDir = resolve(dataDir, 'pg');
    const startPg = (port?: number) =>
      startEmbeddedPostgres(pgDir, { port, onLog: (l) => logger.debug({ pg: l }, 'postgres'), onNotice: (l) => logger.warn(l), ownProcessGroup: true });
    const first = await startPg();
    const pg = new PostgresKeeper(first, () => startPg(first.port), logger);
    env.DATABASE_URL = pg.url;
    stopPg = () => pg.stop();
  }
  // Whether the first admin is still to be created decides what the start-up banner offers: a restarted stack whose
  // admin exists prints no setup token (using it would answer 409).
  let adminMissing: boolean;
  {
    const db = await connectDb({ url: env.DATABASE_URL ?? config.DATABASE_URL!, poolSize: 1, maxOverflow: 1 });
    for (const set of ['control', 'catalog'] as const) await migrate(db, set);
    adminMissing = await needsAdmin(db);
    await db.close();
  }
  // A generated token is kept in DATA_DIR/setup-token for the operator; one given by SETUP_TOKEN is never written.
  const setupToken = loadOrCreateSecret(dataDir, 'setup-token', config.SETUP_TOKEN || null, 24);
  const tokenFile = config.SETUP_TOKEN ? null : writeSecretFile(dataDir, 'setup-token', setupToken);
  env.SETUP_TOKEN = setupToken;
  // The placeholder credentials of the spec are replaced by generated ones, kept under DATA_DIR (0600).
  env.AGENT_BOOTSTRAP_TOKEN = secretFor(dataDir, 'agent-bootstrap-token', 'AGENT_BOOTSTRAP_TOKEN');
  env.CATALOG_CLIENT_SECRET = secretFor(dataDir, 'catalog-client-secret', 'CATALOG_CLIENT_SECRET');
  env.OBJECT_STORE_SECRET_KEY = secretFor(dataDir, 'object-store-secret-key', 'OBJECT_STORE_SECRET_KEY');
  // One SECRET_KEY for the api replicas and the catalog service: both seal storage-backend secrets with it.
  env.SECRET_KEY = secretFor(dataDir, 'secret-key', 'SECRET_KEY');
  env.CATALOG_URL ??= `http://127.0.0.1:${config.CATALOG_PORT}`;
  env.DATA_DIR = dataDir;
  // Node's compile cache for the parts (their TypeScript stripped and compiled once, then read back): a restart's
  // parts load their modules in about two thirds of the CPU. Under DATA_DIR, which only the stack writes.
  env.NODE_COMPILE_CACHE ??= resolve(dataDir, 'compile-cache');
  env.SEED_SAMPLES ??= 'true';
  env.STORE_ENDPOINT ??= `http://127.0.0.1:${config.OBJECT_STORE_PORT}`;
  // The api says ready only once the README's next steps work: the bundled agent connected, the samples seeded.
  env.READY_AFTER_AGENT ??= 'bundled';

  // API_REPLICAS api processes on PORT, PORT+1…, one secret between them; the agent lists them all.
  const replicas = config.API_REPLICAS;
  env.INTERNAL_API_SECRET = secretFor(dataDir, 'internal-api-secret', 'INTERNAL_API_SECRET');
  const apiPorts = Array.from({ length: replicas }, (_, i) => config.PORT + i);

  let exitCode = 0;
  const supervisor = new Supervisor({
    self: SELF,
    logger,
    onGiveUp: () => {
      exitCode = 1;
      void shutdown().then(() => process.exit(1));
    },
  });
  // Each part gets what it reads: the agent (it runs user SQL), the object store and the catalog service an
  // allow-listed environment, not the stack's secrets; the api all of it.
  const environments: Record<string, (parent: Record<string, string>, extra: Record<string, string>) => Record<string, string>> = {
    agent: agentEnvironment,
    objectstore: objectStoreEnvironment,
    catalog: catalogEnvironment,
  };
  const start = (name: string, command: string, extra: Record<string, string> = {}) =>
    supervisor.start({ name, command, env: environments[command]?.(env, extra) ?? { ...env, ...extra } });
  let stopped: Promise<void> | null = null;
  // The elastic `process` agents the api started are in process groups of their own (they outlive an api that
  // crashes): once the api replicas are down, the stack stops them too.
  const shutdown = () => (stopped ??= supervisor.stopAll().then(async () => (await import('./elastic.ts')).stopLocalElasticAgents(dataDir, logger)).then(() => stopPg?.()));
  onSignals(shutdown);

  // Several replicas get one address in front of them when HAProxy is there; without it, each replica's own.
  const haproxy = replicas > 1 ? findHaproxy() : null;
  if (replicas > 1 && !haproxy) {
    logger.warn('haproxy is not installed, so the replicas have no load balancer in front (Debian: apt-get install haproxy); use any replica\'s URL');
  }
  const lbUrl = haproxy ? `http://127.0.0.1:${config.LB_PORT}` : null;
  // With PG_PORT, each replica's PostgreSQL endpoint needs a port of its own: PG_PORT+i, or behind the balancer (which
  // takes PG_PORT) PG_PORT+1+i.
  const pgPortOf = (i: number) => (config.PG_PORT === null || config.PG_PORT === 0 ? null : config.PG_PORT + i + (lbUrl ? 1 : 0));
  const replicaPgPort = (i: number): Record<string, string> => (pgPortOf(i) === null ? {} : { PG_PORT: String(pgPortOf(i)) });
  const url = lbUrl ?? `http://127.0.0.1:${config.PORT}`;
  const resultsPort = bundledResultsPort(env, [...apiPorts, config.CATALOG_PORT, config.OBJECT_STORE_PORT, ...(lbUrl ? [config.LB_PORT] : [])]);
  const startAgent = () =>
    start('agent', 'agent', {
      // Behind the load balancer the agent dials it (any replica may take the socket); otherwise every replica.
      CONTROL_PLANE_URL: lbUrl ? `ws://127.0.0.1:${config.LB_PORT}/agents/connect` : apiPorts.map((p) => `ws://127.0.0.1:${p}/agents/connect`).join(','),
      BOOTSTRAP_TOKEN: env.AGENT_BOOTSTRAP_TOKEN,
      AGENT_NAME: 'bundled',
      OTEL_SERVICE_NAME: 'eider-agent',
      // The bundled agent's result server listens where the api does (loopback by default), unless set apart.
      RESULTS_HTTP_HOST: env.RESULTS_HTTP_HOST ?? config.HOST,
      ...(resultsPort === undefined ? {} : { RESULTS_HTTP_PORT: resultsPort }),
    });
  try {
    // The parts start together: most of a part's start is loading its modules, and none needs another to start (the
    // api registers its warehouses with the catalog service once that answers, the catalog service reaches the
    // object store only when a table is written, the agent dials until an api replica takes it). One after another
    // they cost the sum of their starts (issue #36: about 8 of the 11 s of a restart); together the longest.
    start('objectstore', 'objectstore');
    // OTEL_SERVICE_NAME renames the api alone: the bundled parts keep their names (docs/api-decisions.md "Tracing and audit").
    start('catalog', 'catalog', { OTEL_SERVICE_NAME: 'eider-catalog' });
    for (const [i, port] of apiPorts.entries()) {
      const id = replicas === 1 && process.env.REPLICA_ID ? process.env.REPLICA_ID : `api-${i + 1}`;
      start(id, 'api', { PORT: String(port), REPLICA_ID: id, REPLICA_INTERNAL_URL: `http://127.0.0.1:${port}`, ...replicaPgPort(i) });
    }
    // Behind the load balancer the agent dials it, which needs the replicas up first.
    if (!lbUrl) startAgent();
    await waitForPort(config.OBJECT_STORE_PORT, 60_000);
    await waitForPort(config.CATALOG_PORT, 60_000);
    for (const port of apiPorts) await waitForReady(`http://127.0.0.1:${port}/api/healthz`, 120_000);
    if (lbUrl) {
      start('lb', 'lb', {
        LB_BACKENDS: formatBackends(apiPorts.map((port, i) => ({ name: `api-${i + 1}`, host: '127.0.0.1', port }))),
        ...(pgPortOf(0) === null ? {} : { LB_PG_BACKENDS: formatBackends(apiPorts.map((_, i) => ({ name: `api-${i + 1}`, host: '127.0.0.1', port: pgPortOf(i)! }))) }),
      });
      await waitForPort(config.LB_PORT, 30_000);
      startAgent();
    }
    // Readiness names what it still waits for (the agent, the sample data): say it while waiting.
    await waitForReady(`${url}/api/readyz`, 600_000, (waiting) => logger.info({ waiting }, 'starting'));
  } catch (e) {
    // A stack that cannot start stops whole, with the reason: no part is left running behind a failed `eider up`.
    await shutdown();
    throw e;
  }
  if (exitCode !== 0) return;
  process.stdout.write(
    `\nEider is up.\n  URL:          ${url}\n` +
      (replicas > 1 ? `  Replicas:     ${apiPorts.map((p) => `http://127.0.0.1:${p}`).join(', ')}${lbUrl ? ' (behind the URL above)' : ''}\n` : '') +
      (pgPortOf(0) === null ? '' : `  PostgreSQL:   host=127.0.0.1 port=${config.PG_PORT} (a token as the password; docs/postgres-protocol.md)\n`) +
      (adminMissing
        ? `  Setup token:  ${setupToken}\n${tokenFile ? `  (also in ${tokenFile})\n` : ''}` +
          `  First admin:  curl -X POST ${url}/api/setup/admin -H 'X-Setup-Token: ${setupToken}' -H 'content-type: application/json' -d '{"email":"you@example.com","password":"a-long-password","name":"You"}'\n`
        : `  Sign in at ${url} (the first admin exists).\n`) +
      `Press Ctrl-C to stop.\n\n`,
  );
}

async function waitForPort(port: number, timeoutMs: number) {
  const { connect } = await import('node:net');
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ok = await new Promise<boolean>((res) => {
      const sock = connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        res(true);
      });
      sock.once('error', () => res(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for 127.0.0.1:${port}`);
}

async function waitForReady(url: string, timeoutMs: number, onWaiting?: (message: string) => void) {
  const until = Date.now() + timeoutMs;
  let said = '';
  let last = '';
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
      last = String(((await r.json().catch(() => ({}))) as { message?: string }).message ?? r.status);
      if (onWaiting && last !== said) onWaiting((said = last));
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${url}${last ? ` (${last})` : ''}`);
}

/** Prints the api's OpenAPI document (or, with --typescript, the web app's types written from it); no database. */
async function cmdOpenApi() {
  const { openApiDocument } = await import('../http/openapi.ts');
  const { typesFromOpenApi } = await import('../http/openapiTypes.ts');
  const { allRoutes } = await import('../http/routes/index.ts');
  const { VERSION } = await import('./api.ts');
  const doc = await openApiDocument(allRoutes, VERSION);
  process.stdout.write(process.argv.includes('--typescript') ? typesFromOpenApi(doc) : `${JSON.stringify(doc, null, 2)}\n`);
}

/** The Docker Engine's unix socket from ELASTIC_DOCKER_HOST (image builds and network rules need the local engine). */
function localDockerSocket(host: string | undefined): string {
  if (!host || !host.startsWith('unix://')) return '/var/run/docker.sock';
  return host.slice('unix://'.length);
}

/**
 * `eider agent-image`: builds the elastic agent's image from this checkout and the Node running it, imported into the
 * local engine (no registry), tagged ELASTIC_AGENT_IMAGE's repository with its content digest and with
 * ELASTIC_AGENT_IMAGE's own tag. `--network PORT,PORT…` also creates ELASTIC_DOCKER_NETWORK, on which agents reach
 * only those host ports (the control plane's, the catalog service's, the object store's).
 */
async function cmdAgentImage() {
  const { buildAgentImage } = await import('../runtime/compute/agentImage.ts');
  const { ensureAgentNetwork } = await import('../runtime/compute/agentNetwork.ts');
  const socketPath = localDockerSocket(process.env.ELASTIC_DOCKER_HOST);
  const configured = process.env.ELASTIC_AGENT_IMAGE || 'eider-agent:latest';
  const colon = configured.lastIndexOf(':');
  const [repository, alias] = colon > configured.lastIndexOf('/') ? [configured.slice(0, colon), configured.slice(colon + 1)] : [configured, 'latest'];
  const { image, built } = await buildAgentImage({ socketPath, repository, alias, root: resolve(import.meta.dirname, '..'), nodeBinary: process.execPath });
  process.stdout.write(`${built ? 'built' : 'found'} ${image}, tagged ${repository}:${alias}\n`);
  const i = process.argv.indexOf('--network');
  if (i > 0) {
    const ports = (process.argv[i + 1] ?? '').split(',').map(Number);
    if (!ports.length || ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) throw new ConfigError('--network', '--network takes the host ports agents may reach: PORT,PORT…');
    const net = await ensureAgentNetwork({ socketPath, name: process.env.ELASTIC_DOCKER_NETWORK || 'eider_internal', allowPorts: ports });
    process.stdout.write(`network ${net.name} (${net.subnet}): agents reach ${net.gateway} on ports ${ports.join(', ')} only\n`);
  }
}

const commands: Record<string, () => Promise<void>> = {
  up: cmdUp,
  api: cmdApi,
  agent: cmdAgent,
  catalog: cmdCatalog,
  objectstore: cmdObjectStore,
  migrate: cmdMigrate,
  openapi: cmdOpenApi,
  lb: cmdLb,
  'agent-image': cmdAgentImage,
};

const name = process.argv[2] ?? 'up';
const cmd = commands[name];
if (!cmd) {
  process.stderr.write(`usage: eider <${Object.keys(commands).join('|')}>\n`);
  process.exit(2);
}
// A part started by `eider up` stops with it, however it ends (even killed with SIGKILL, when it cannot stop its
// parts): its stdin is a pipe from the supervisor, which the system closes then; the part stops as on SIGTERM.
if (process.env[SUPERVISED_ENV] === '1') {
  process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
  process.stdin.resume();
  // Watching the pipe must not keep a part alive that has finished (an agent refusing its configuration returns).
  (process.stdin as { unref?: () => void }).unref?.();
}
cmd().catch(fail);
