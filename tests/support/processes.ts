// The parts as separate `eider` processes, for tests that kill one (SIGKILL) and start the next.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const EIDER = join(import.meta.dirname, '..', '..', 'bin', 'eider.ts');

/** `eider <name>` with only PATH, LOG_LEVEL=warn and `env`; output discarded. */
export function startEider(name: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [EIDER, name], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, stdio: 'ignore' });
}

export const exited = (c: ChildProcess) => new Promise<void>((res) => (c.exitCode !== null || c.signalCode !== null ? res() : c.once('exit', () => res())));

/** Polls `fn` every 100 ms until it returns a value (a throw counts as not yet), for at most `ms`. */
export async function until<T>(fn: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
