// The outcomes (query_done / query_failed) this agent reported recently. A frame sent just before a replica died,
// or while the socket was down, may never have been acted on: after every reconnect the recent ones are sent again,
// and a dispatch of a query that already finished (the control plane's at-least-once retry) is answered with its
// outcome instead of running it twice. The control plane ignores an outcome for a query that already ended.
import type { AgentFrame } from '../protocol/index.ts';

export type OutcomeFrame = Extract<AgentFrame, { type: 'query_done' | 'query_failed' }>;

export interface OutcomeLedgerOptions {
  /** Outcomes kept at most (oldest dropped first). */
  readonly maxEntries: number;
  /** How long after it was reported an outcome is re-sent on reconnect. */
  readonly resendWindowMs: number;
  readonly now?: () => number;
}

export class OutcomeLedger {
  readonly #o: OutcomeLedgerOptions;
  readonly #byQuery = new Map<string, { frame: OutcomeFrame; at: number }>();

  constructor(options: OutcomeLedgerOptions) {
    this.#o = options;
  }

  record(frame: OutcomeFrame): void {
    const id = frame.payload.query_id;
    this.#byQuery.delete(id);
    this.#byQuery.set(id, { frame, at: (this.#o.now ?? Date.now)() });
    while (this.#byQuery.size > this.#o.maxEntries) this.#byQuery.delete(this.#byQuery.keys().next().value!);
  }

  /** The outcome of a query this agent already finished, if it still remembers it. */
  outcomeOf(queryId: string): OutcomeFrame | undefined {
    return this.#byQuery.get(queryId)?.frame;
  }

  /** The outcomes reported within the resend window, oldest first. */
  recent(): OutcomeFrame[] {
    const since = (this.#o.now ?? Date.now)() - this.#o.resendWindowMs;
    return [...this.#byQuery.values()].filter((e) => e.at >= since).map((e) => e.frame);
  }

  get size(): number {
    return this.#byQuery.size;
  }
}
