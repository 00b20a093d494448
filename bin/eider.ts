#!/usr/bin/env node
// The `eider` command: `up` (the whole stack on one machine), `api`, `agent`, `catalog`, `migrate`.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { connectDb } from '../runtime/db.ts';
import { migrate } from '../runtime/migrate.ts';
import { startEmbeddedPostgres } from '../runtime/postgres.ts';
import { loadOrCreateSecret, writeSecretFile } from '../runtime/bootSecrets.ts';
import { databaseUrlFor, startApi } from './api.ts';

const SELF = fileURLToPath(import.meta.url);

function fail(e: unknown): never {
  if (e instanceof ConfigError) {
    process.stderr.write(`eider: configuration error: ${e.message}\n`);
    process.exit(2);
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
}

async function cmdApi() {
  const api = await startApi();
  onSignals(() => api.close());
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

async function cmdUp() {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'up' });
  const dataDir = resolve(config.DATA_DIR);
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  let stopPg: (() => Promise<void>) | undefined;
  if (!config.DATABASE_URL && !config.POSTGRES_HOST) {
    const pg = await startEmbeddedPostgres(resolve(dataDir, 'pg'), { onLog: (l) => logger.debug({ pg: l }, 'postgres') });
    env.DATABASE_URL = pg.url;
    stopPg = () => pg.stop();
  }
  const setupToken = loadOrCreateSecret(dataDir, 'setup-token', config.SETUP_TOKEN || null, 24);
  const tokenFile = writeSecretFile(dataDir, 'setup-token', setupToken);
  env.SETUP_TOKEN = setupToken;

  const children: ChildProcess[] = [];
  const start = (name: string) => {
    const child = spawn(process.execPath, [SELF, name], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code, signal) => {
      if (!stopping) {
        logger.error({ part: name, code, signal }, 'a part of the stack stopped; shutting down');
        void shutdown().then(() => process.exit(1));
      }
    });
    children.push(child);
    return child;
  };
  let stopping = false;
  const shutdown = async () => {
    stopping = true;
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((res) => {
            if (c.exitCode !== null || c.signalCode !== null) return res();
            c.once('exit', () => res());
            c.kill('SIGTERM');
            setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
    await stopPg?.();
  };
  onSignals(shutdown);

  start('api');
  const url = `http://127.0.0.1:${config.PORT}`;
  await waitForReady(`${url}/api/readyz`, 120_000);
  process.stdout.write(
    `\nEider is up.\n  URL:          ${url}\n  Setup token:  ${setupToken}\n  (also in ${tokenFile})\n` +
      `  First admin:  curl -X POST ${url}/api/setup/admin -H 'X-Setup-Token: ${setupToken}' -H 'content-type: application/json' -d '{"email":"you@example.com","password":"a-long-password","name":"You"}'\n` +
      `Press Ctrl-C to stop.\n\n`,
  );
}

async function waitForReady(url: string, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${url}`);
}

const commands: Record<string, () => Promise<void>> = {
  up: cmdUp,
  api: cmdApi,
  migrate: cmdMigrate,
};

const name = process.argv[2] ?? 'up';
const cmd = commands[name];
if (!cmd) {
  process.stderr.write(`usage: eider <${Object.keys(commands).join('|')}>\n`);
  process.exit(2);
}
cmd().catch(fail);
