// The parts as separate `eider` processes, for tests that kill one (SIGKILL) and start the next.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { vi } from 'vitest';

export const EIDER = join(import.meta.dirname, '..', '..', 'bin', 'eider.ts');

/** `eider <name>` with only PATH, LOG_LEVEL=warn and `env`; output discarded. */
export function startEider(name: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [EIDER, name], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, stdio: 'ignore' });
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
