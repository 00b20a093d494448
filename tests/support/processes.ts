// The parts as separate `eider` processes, for tests that kill one (SIGKILL) and start the next.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { freePort } from '../../runtime/postgres.ts';
import { requestsTo, setupAdmin, SETUP_TOKEN, type SignedIn, type TestApi } from './api.ts';
import type { Queryable } from '../../runtime/db.ts';

export const EIDER = join(import.meta.dirname, '..', '..', 'bin', 'eider.ts');

/** `eider <name>` with only PATH, LOG_LEVEL=warn and `env`; output discarded. */
export function startEider(name: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [EIDER, name], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, stdio: 'ignore' });
}

/** Where a test's `eider api` process (and an agent beside it) run: a free port and a temporary folder. */
export interface ProcessSite {
  dir: string;
  port: number;
  url: string;
  /** The api's own settings: the database, the port, its data folder (`dir`/api) and the setup token. */
  apiEnv: { DATABASE_URL: string; PORT: string; DATA_DIR: string; SETUP_TOKEN: string };
  /** An agent named `name` dialling the api with `bootstrapToken`, its data in `dir`/agent. */
  agentEnv(name: string, bootstrapToken: string): Record<string, string>;
  /** Removes the folder. */
  remove(): void;
}

export async function processSite(databaseUrl: string, prefix: string): Promise<ProcessSite> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const port = await freePort();
  return {
    dir,
    port,
    url: `http://127.0.0.1:${port}`,
    apiEnv: { DATABASE_URL: databaseUrl, PORT: String(port), DATA_DIR: join(dir, 'api'), SETUP_TOKEN },
    agentEnv: (name, bootstrapToken) => ({
      CONTROL_PLANE_URL: `ws://127.0.0.1:${port}/agents/connect`,
      BOOTSTRAP_TOKEN: bootstrapToken,
      AGENT_DATA_DIR: join(dir, 'agent'),
      AGENT_NAME: name,
      RESULTS_HTTP_PORT: '0',
    }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Waits (at most `ms`) until the api process at `url` answers its readiness probe. */
export const apiReady = (url: string, what = 'api ready', ms = 60_000) => until(async () => ((await fetch(`${url}/api/readyz`)).ok ? true : undefined), ms, what);

export interface ProcessAdmin extends SignedIn {
  /** Requests to the process, signed in as the admin by the session cookie unless a request names its own caller. */
  req: TestApi['req'];
}

/**
 * On a freshly started api process at `url` (a readiness probe answered): creates the first admin with the setup
 * token and signs in, as setupAdmin does for an api in this process. A refused setup or sign-in throws.
 */
export async function adminOn(url: string): Promise<ProcessAdmin> {
  const admin = await setupAdmin({ req: requestsTo(url) });
  return { ...admin, req: requestsTo(url, { cookie: admin.cookie }) };
}

export const exited = (c: ChildProcess) => new Promise<void>((res) => (c.exitCode !== null || c.signalCode !== null ? res() : c.once('exit', () => res())));

/** Polls `fn` every 100 ms until it returns a value (a throw counts as not yet), for at most `ms`. */
export async function until<T>(fn: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  try {
    return await vi.waitFor(
      async () => {
        const v = await fn().catch(() => undefined);
        if (v === undefined) throw new Error('not yet');
        return v;
      },
      { timeout: ms, interval: 100 },
    );
  } catch {
    throw new Error(`timed out: ${what}`);
  }
}

/**
 * Waits until `probe` gives a value, asking again every 100 ms for at most `timeoutMs`: undefined, null, false (or a
 * throw) is "not yet". On timeout it fails naming `what` and the probe's last error.
 */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  let last: unknown;
  try {
    return await vi.waitFor(
      async () => {
        let v: T | undefined | null | false;
        try {
          v = await probe();
        } catch (e) {
          last = e;
          throw e;
        }
        if (v === undefined || v === null || v === false) throw new Error('not yet');
        return v;
      },
      { timeout: timeoutMs, interval: 100 },
    );
  } catch {
    throw new Error(`timed out: ${what}${last ? ` (${(last as Error).message})` : ''}`);
  }
}

/**
 * Asks `probe` every `intervalMs` until `done` holds for its answer, for at most `timeoutMs`, and returns the answer;
 * on timeout it returns the last answer instead of failing, so the caller's assertion on it names what was seen.
 * A probe that never answered rethrows its last error.
 */
export async function pollUntil<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number, intervalMs = 100): Promise<T> {
  let last: { value: T } | undefined;
  try {
    return await vi.waitFor(
      async () => {
        const value = await probe();
        last = { value };
        if (!done(value)) throw new Error('not yet');
        return value;
      },
      { timeout: timeoutMs, interval: intervalMs },
    );
  } catch (e) {
    if (last) return last.value;
    throw e;
  }
}

/** The fields of `/proc/<pid>/stat` after "pid (comm)": state, ppid, …; null when the process is gone. comm may hold
 *  blanks, so they follow the last ')'. */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** A process's state letter from `/proc/<pid>/stat` (R, S, T stopped, Z zombie…), or null when it is gone. */
export function processState(pid: number): string | null {
  return statFields(pid)?.[0] ?? null;
}

/** Whether `pid` still runs (or is exiting): there, and neither a zombie waiting to be reaped nor dead. */
export function processRunning(pid: number): boolean {
  const state = processState(pid);
  return state !== null && state !== 'Z' && state !== 'X';
}

/** The pids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d) && Number(statFields(d)?.[1]) === pid)
    .map(Number);
}

/** The addresses (`a.b.c.d:port`, IPv4) on which `pid` listens: its socket inodes matched in /proc/net/tcp. */
export function listeningAddresses(pid: number): string[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== '0A' || !inodes.has(f[9])) continue; // 0A: LISTEN
    const [hex, port] = f[1].split(':');
    const ip = [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16)).reverse().join('.');
    out.push(`${ip}:${parseInt(port, 16)}`);
  }
  return out;
}

/** An `eider` process whose output the test reads. */
export interface LoggedProcess {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved as they came */
  logs(): string;
  /** its exit code (null when a signal ended it) */
  exited: Promise<number | null>;
}

/** `eider <args>` with only PATH and `env`, its output kept for the test to read. */
export function runEider(args: string[], env: Record<string, string>): LoggedProcess {
  const child = spawn(process.execPath, [EIDER, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let logs = '';
  child.stdout!.on('data', (d) => (logs += d));
  child.stderr!.on('data', (d) => (logs += d));
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  return { child, logs: () => logs, exited };
}

/** What the api replicas of a test's cluster share: one database, a folder, the agents' token, the peers' secret. */
export interface Cluster {
  databaseUrl: string;
  dir: string;
  bootstrapToken: string;
  internalSecret: string;
}

export interface Replica {
  id: string;
  port: number;
  url: string;
  proc: LoggedProcess;
}

/**
 * `eider api` as replica `id` of the cluster on 127.0.0.1:`port`, its data in `dir`/`id`. Agents heartbeat every
 * 0.5 s and the actor reaper ticks as often, so a replica's death shows within seconds; it has no catalog service.
 * `env` is the test's own settings (the agents' presence and heartbeat TTLs among them).
 */
export function startReplica(cluster: Cluster, id: string, port: number, env: Record<string, string> = {}): Replica {
  const proc = runEider(['api'], {
    DATABASE_URL: cluster.databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: join(cluster.dir, id),
    REPLICA_ID: id,
    SETUP_TOKEN,
    AGENT_BOOTSTRAP_TOKEN: cluster.bootstrapToken,
    INTERNAL_API_SECRET: cluster.internalSecret,
    AGENT_HEARTBEAT_INTERVAL_S: '0.5',
    ACTOR_REAPER_TICK_S: '0.5',
    CATALOG_URL: 'http://127.0.0.1:1',
    LOG_LEVEL: 'info',
    ...env,
  });
  return { id, port, url: `http://127.0.0.1:${port}`, proc };
}

/** `eider agent` named `name` listing every replica of the cluster, its data in `dir`/agent; `env` adds to it. */
export function startClusterAgent(cluster: Cluster, replicas: Replica[], name: string, env: Record<string, string> = {}): LoggedProcess {
  return runEider(['agent'], {
    CONTROL_PLANE_URL: replicas.map((r) => `ws://127.0.0.1:${r.port}/agents/connect`).join(','),
    BOOTSTRAP_TOKEN: cluster.bootstrapToken,
    AGENT_DATA_DIR: join(cluster.dir, 'agent'),
    AGENT_NAME: name,
    RESULTS_HTTP_PORT: '0',
    RESULTS_HTTP_HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ...env,
  });
}

/** The replica the agent's row names as its holder while the agent is healthy; undefined otherwise. */
export async function agentHolder(db: Queryable, agentId: string, replicas: Replica[]): Promise<Replica | undefined> {
  const [row] = await db.query<{ owner_replica: string | null; status: string }>(`select owner_replica, status from eider.agents where id = $1`, [agentId]);
  return row?.status === 'healthy' ? replicas.find((r) => r.id === row.owner_replica) : undefined;
}
