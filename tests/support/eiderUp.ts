// `eider up` as a user starts it, for the tests that run the whole stack: its variables, its output and its stop in
// one place. Only PATH and HOME come from the test's own environment; everything else is named here or by the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import { freePort } from '../../runtime/postgres.ts';
import { EIDER, exited, pollUntil } from './processes.ts';

export interface UpPorts {
  api: number;
  catalog: number;
  store: number;
}

export const freeUpPorts = async (): Promise<UpPorts> => ({ api: await freePort(), catalog: await freePort(), store: await freePort() });

export interface EiderUp {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  out(): string;
  /** Waits until it prints "Eider is up." (an exit before that fails with its output). */
  ready(timeoutMs?: number): Promise<void>;
  /** Ctrl-C as a terminal sends it (SIGINT to its process group), then waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `eider up` in a process group of its own (as a shell starts a foreground job) on `dataDir` and `ports`,
 * without the sample seed, logging at `info`; `env` adds or overrides variables.
 */
export function startEiderUp(o: { dataDir: string; ports: UpPorts; env?: Record<string, string>; cwd?: string; home?: string }): EiderUp {
  const child = spawn(process.execPath, [EIDER, 'up'], {
    cwd: o.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: o.home ?? process.env.HOME ?? o.dataDir,
      DATA_DIR: o.dataDir,
      PORT: String(o.ports.api),
      CATALOG_PORT: String(o.ports.catalog),
      OBJECT_STORE_PORT: String(o.ports.store),
      RESULTS_HTTP_PORT: '0',
      SEED_SAMPLES: 'false',
      LOG_LEVEL: 'info',
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return {
    child,
    out: () => out,
    ready: async (timeoutMs = 240_000) => {
      await pollUntil(async () => out, (s) => s.includes('Eider is up.') || child.exitCode !== null, timeoutMs, 200);
      expect(out, out.slice(-3000)).toContain('Eider is up.');
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGINT');
      await exited(child);
    },
  };
}
