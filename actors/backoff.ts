// Supervision's waits between attempts, for deliveries and effects alike: exponential from `backoffMs`, capped at
// `maxBackoffMs`, and all cancelled at once when the host closes, so nothing sleeps through a shutdown.
import { ActorError } from './errors.ts';

export class Backoff {
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly sleeps = new Set<{ timer: NodeJS.Timeout; reject: (e: unknown) => void }>();

  constructor(opts: { backoffMs: number; maxBackoffMs: number }) {
    this.baseMs = opts.backoffMs;
    this.maxMs = opts.maxBackoffMs;
  }

  /** The wait after `failures` consecutive failures. */
  delayMs(failures: number): number {
    return Math.min(this.maxMs, this.baseMs * 2 ** (failures - 1));
  }

  /** Waits out the backoff after `failures` consecutive failures; rejects with `unavailable` if the host closes. */
  after(failures: number): Promise<void> {
    return this.sleep(this.delayMs(failures));
  }

  /** Rejects every pending wait (the host closing). */
  cancelAll(): void {
    for (const s of this.sleeps) {
      clearTimeout(s.timer);
      s.reject(new ActorError('unavailable', '', '', 'actor host closed'));
    }
    this.sleeps.clear();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const s = {
        timer: setTimeout(() => {
          this.sleeps.delete(s);
          resolve();
        }, ms),
        reject,
      };
      this.sleeps.add(s);
    });
  }
}
