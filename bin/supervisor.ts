// `eider up`'s supervision of its parts: a part that dies (a DuckDB crash or an out-of-memory kill of the agent, a
// crashed api replica) is started again and logged: at once when it had run for stableAfterMs, with backoff when it
// failed sooner. The stack stops only when asked (SIGINT/SIGTERM), when a part refuses its configuration (exit code
// 2), or when one part keeps failing: maxFailures exits within windowMs, each after running less than stableAfterMs
// (a part that ran for a while and then died is restarted however often that happens; a crash loop is not).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../runtime/logger.ts';
import { Backoff } from '../actors/backoff.ts';

/** The exit code of an `eider` command that refused its configuration (bin/eider.ts `fail`). */
export const CONFIGURATION_EXIT = 2;

/** Set in a part's environment: its stdin is the supervisor's pipe, and its end means the supervisor is gone. */
export const SUPERVISED_ENV = 'EIDER_SUPERVISED';

export interface PartSpec {
  /** What the logs call it: `api-2`, `agent`… */
  name: string;
  /** The `eider` subcommand that runs it. */
  command: string;
  env: Record<string, string>;
}

export interface SupervisorOptions {
  /** The `eider` entry script the parts are started from. */
  self: string;
  logger: Logger;
  maxFailures?: number;
  windowMs?: number;
  /** A part that ran this long before it exited was healthy: its exit does not count towards giving up. */
  stableAfterMs?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Called once when a part keeps failing: the caller stops the stack. */
  onGiveUp: (part: string, reason: string) => void;
}

interface Part {
  spec: PartSpec;
  child: ChildProcess | null;
  exits: number[];
  startedAt: number;
  restartTimer: NodeJS.Timeout | null;
}

export class Supervisor {
  readonly #o: Required<Omit<SupervisorOptions, 'onGiveUp'>> & Pick<SupervisorOptions, 'onGiveUp'>;
  readonly #parts: Part[] = [];
  readonly #backoff: Backoff;
  #stopping = false;

  constructor(options: SupervisorOptions) {
    this.#o = { maxFailures: 5, windowMs: 300_000, stableAfterMs: 10_000, initialBackoffMs: 1_000, maxBackoffMs: 30_000, ...options };
    this.#backoff = new Backoff({ backoffMs: this.#o.initialBackoffMs, maxBackoffMs: this.#o.maxBackoffMs });
  }

  start(spec: PartSpec): void {
    const part: Part = { spec, child: null, exits: [], startedAt: 0, restartTimer: null };
    this.#parts.push(part);
    this.#spawn(part);
  }

  /** The live child of a part (tests and the operator's view). */
  pid(name: string): number | undefined {
    return this.#parts.find((p) => p.spec.name === name)?.child?.pid;
  }

  #spawn(part: Part): void {
    // stdin is a pipe nothing is written to: the system closes it when this process ends, and the part then stops.
    const child = spawn(process.execPath, [this.#o.self, part.spec.command], {
      env: { ...part.spec.env, [SUPERVISED_ENV]: '1' },
      stdio: ['pipe', 'inherit', 'inherit'],
    });
    part.child = child;
    part.startedAt = Date.now();
    child.on('exit', (code, signal) => {
      if (part.child === child) part.child = null;
      if (this.#stopping) return;
      // Exit code 2: the part refused its configuration (a bad value, a port in use, a replica id taken), and
      // would refuse it again; it said why on its stderr.
      if (code === CONFIGURATION_EXIT) {
        const reason = `${part.spec.name} cannot start with this configuration`;
        this.#o.logger.error({ part: part.spec.name, code }, `${reason}; shutting down`);
        this.#o.onGiveUp(part.spec.name, reason);
        return;
      }
      const now = Date.now();
      const recent = part.exits.filter((t) => now - t < this.#o.windowMs);
      const stable = now - part.startedAt >= this.#o.stableAfterMs;
      part.exits = stable ? recent : [...recent, now];
      if (part.exits.length >= this.#o.maxFailures) {
        const reason = `${part.spec.name} stopped ${part.exits.length} times within ${Math.round(this.#o.windowMs / 1000)} s`;
        this.#o.logger.error({ part: part.spec.name, code, signal }, `${reason}; shutting down`);
        this.#o.onGiveUp(part.spec.name, reason);
        return;
      }
      // A part that ran stably and then died (killed, out of memory) is started again at once: the backoff is for
      // a part failing soon after its start, which would fail again at once.
      const delay = stable ? 0 : this.#backoff.delayMs(Math.max(1, part.exits.length));
      this.#o.logger.error({ part: part.spec.name, code, signal, restartInMs: delay }, 'a part of the stack stopped; restarting it');
      part.restartTimer = setTimeout(() => {
        part.restartTimer = null;
        if (!this.#stopping) this.#spawn(part);
      }, delay);
    });
  }

  /** Stops every part, the last started first (agents and apis before the storage they use). */
  async stopAll(graceMs = 10_000): Promise<void> {
    this.#stopping = true;
    for (const part of [...this.#parts].reverse()) {
      if (part.restartTimer) clearTimeout(part.restartTimer);
      const c = part.child;
      if (!c || c.exitCode !== null || c.signalCode !== null) continue;
      await new Promise<void>((res) => {
        c.once('exit', () => res());
        c.kill('SIGTERM');
        setTimeout(() => c.kill('SIGKILL'), graceMs).unref();
      });
    }
  }
}
