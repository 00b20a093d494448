// `eider up`'s embedded PostgreSQL, kept running like the other parts: a server that dies (killed, out of memory) is
// started again on the same data directory and port, with backoff, and the parts carry on (meanwhile they answer 503
// `unavailable`, then reconnect). Only `stop` ends it.
import type { Logger } from '../runtime/logger.ts';
import type { EmbeddedPg } from '../runtime/postgres.ts';
import { Backoff } from '../actors/backoff.ts';

export class PostgresKeeper {
  readonly #start: () => Promise<EmbeddedPg>;
  readonly #logger: Logger;
  #pg: EmbeddedPg;
  #stopping = false;
  #restarting: Promise<void> = Promise.resolve();
  readonly #backoff = new Backoff({ backoffMs: 500, maxBackoffMs: 30_000 });

  /** `start` starts the server again on the same directory and port. */
  constructor(first: EmbeddedPg, start: () => Promise<EmbeddedPg>, logger: Logger) {
    this.#pg = first;
    this.#start = start;
    this.#logger = logger;
    this.#watch(first);
  }

  get url(): string {
    return this.#pg.url;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#backoff.cancelAll();
    await this.#restarting;
    await this.#pg.stop();
  }

  #watch(pg: EmbeddedPg): void {
    void pg.exited.then(() => {
      if (!this.#stopping) this.#restarting = this.#restart();
    });
  }

  async #restart(): Promise<void> {
    for (let attempt = 1; !this.#stopping; attempt++) {
      this.#logger.error({ part: 'postgres', restartInMs: this.#backoff.delayMs(attempt) }, 'a part of the stack stopped; restarting it');
      try {
        await this.#backoff.after(attempt);
      } catch {
        return; // stopped during the wait
      }
      try {
        this.#pg = await this.#start();
        this.#logger.info({ part: 'postgres' }, 'PostgreSQL is running again');
        this.#watch(this.#pg);
        return;
      } catch (e) {
        this.#logger.error({ part: 'postgres', err: e instanceof Error ? e.message : String(e) }, 'PostgreSQL did not start');
      }
    }
  }
}
