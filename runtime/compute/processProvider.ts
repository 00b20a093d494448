// The `process` provider: each elastic agent is a local `eider agent` process with a fresh data directory, the
// one-machine default. Instances are directories under `root` (one per incarnation, holding the agent's data, its
// log and its pid), so any api replica on this machine can list and stop what another one started, and a
// restarted api still finds its processes.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ComputeProvider, ManagedInstance, ProvisionRequest } from './provider.ts';
import { hasProcfs, liveProcess } from '../procfs.ts';

export interface ProcessProviderOptions {
  /** Where instance directories live (DATA_DIR/elastic). */
  root: string;
  /** The command that starts an agent: [executable, ...args]. */
  command: readonly string[];
  /** How long a terminated process gets to exit on SIGTERM before SIGKILL. */
  stopGraceMs?: number;
}

const PID_FILE = 'agent.pid';
const ID = /^[0-9a-f-]{36}$/i;

/** Whether `pid` is still one of our agent processes: running or exiting, not yet a zombie. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!hasProcfs()) return true; // no /proc to ask: the signal answered
  const s = liveProcess(pid);
  if (!s) return false;
  // A reused pid is not ours: the process must still be an `eider agent` (Linux names its command line). An
  // exiting process has already lost its command line and is still ours until it is a zombie.
  return s.cmdline === '' || s.cmdline.includes('agent');
}

/** Waits up to `ms` for `pid` to be gone; whether it is. */
async function gone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

function readPid(dir: string): number | null {
  try {
    const n = Number(readFileSync(join(dir, PID_FILE), 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

export function processProvider(opts: ProcessProviderOptions): ComputeProvider {
  const grace = opts.stopGraceMs ?? 10_000;
  const dirOf = (elasticId: string) => join(opts.root, elasticId);
  return {
    name: 'process',
    async provision(req: ProvisionRequest) {
      if (!ID.test(req.elasticId)) throw new Error(`not an incarnation id: ${req.elasticId}`);
      const dir = dirOf(req.elasticId);
      const running = readPid(dir);
      // Provisioning runs at least once: a second call finds the first one's process.
      if (running !== null && alive(running)) return { providerRef: req.elasticId };
      mkdirSync(join(dir, 'data'), { recursive: true, mode: 0o700 });
      const log = openSync(join(dir, 'agent.log'), 'a', 0o600);
      const child = spawn(opts.command[0], opts.command.slice(1), {
        env: { ...req.env, AGENT_DATA_DIR: join(dir, 'data'), DATA_DIR: join(dir, 'data') },
        // Its own process group: it outlives an api that crashes (the reaper adopts it) and is stopped as a whole.
        detached: true,
        stdio: ['ignore', log, log],
      });
      closeSync(log);
      if (!child.pid) throw new Error('the agent process did not start');
      writeFileSync(join(dir, PID_FILE), String(child.pid), { mode: 0o600 });
      child.unref();
      return { providerRef: req.elasticId };
    },
    async terminate(providerRef: string) {
      if (!ID.test(providerRef)) return;
      const dir = dirOf(providerRef);
      const pid = readPid(dir);
      if (pid !== null && alive(pid)) {
        try {
          process.kill(-pid, 'SIGTERM');
        } catch {
          // already gone
        }
        if (!(await gone(pid, grace))) {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            // already gone
          }
          // Terminated means gone: SIGKILL is delivered asynchronously, so its end is waited for too (bounded).
          await gone(pid, 5_000);
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
    async list(): Promise<ManagedInstance[]> {
      if (!existsSync(opts.root)) return [];
      return readdirSync(opts.root)
        .filter((d) => ID.test(d))
        .map((d) => {
          const pid = readPid(dirOf(d));
          return { providerRef: d, elasticId: d, running: pid !== null && alive(pid) };
        });
    },
    hourlyCost: () => null,
  };
}
