// Admission control: hands out memory reservations from the agent's budget so concurrent queries do not
// oversubscribe memory. No DuckDB in here, so it is tested directly. Policy (see docs/agent.md):
//  - auto: each query asks for its estimate; the queue head is admitted when the free budget covers the ask, or
//    covers STATEMENT_ADMISSION_FLOOR_FRACTION of it (a partial grant: the query runs with a tighter memory limit and
//    spills). After STATEMENT_ADMISSION_WAIT_S the head takes whatever is free as long as that reaches the estimate
//    floor. An idle agent always admits its head, so an ask larger than the budget cannot deadlock.
//  - static ladders: a fixed set of slots, each a fixed fraction of the budget; the head takes the largest free slot.
//  - at most `maxRunning` grants at once (the statements libuv's thread pool can run beside the agent's own calls).
//  - FIFO: only the head is admitted, so small queries cannot starve a large one.
//  - beyond MAX_QUEUE_DEPTH waiters a query fails "queue full"; a waiter older than QUEUED_TIMEOUT_S fails
//    "queued timeout"; a cancelled waiter fails "cancelled".
import type { AgentConfig, ConcurrencyProfile } from './config.ts';

const LADDERS: Readonly<Record<Exclude<ConcurrencyProfile, 'auto'>, readonly number[]>> = {
  single: [1],
  equal_2: [1 / 2, 1 / 2],
  decaying_2: [2 / 3, 1 / 3],
  decaying_3: [1 / 2, 1 / 3, 1 / 6],
};

export type AdmissionErrorCode = 'queue_full' | 'queued_timeout' | 'cancelled';

export class AdmissionError extends Error {
  readonly code: AdmissionErrorCode;
  constructor(code: AdmissionErrorCode) {
    super(code === 'queue_full' ? 'queue full' : code === 'queued_timeout' ? 'queued timeout' : 'cancelled while queued');
    this.name = 'AdmissionError';
    this.code = code;
  }
}

export interface AdmissionOptions {
  readonly budgetBytes: number;
  readonly profile: ConcurrencyProfile;
  readonly maxQueueDepth: number;
  /** 0 = off. */
  readonly queuedTimeoutMs: number;
  /** How long the head waits for STATEMENT_ADMISSION_FLOOR_FRACTION of its ask before taking what is free. */
  readonly admissionWaitMs: number;
  readonly admissionFloorFraction: number;
  /** Smallest grant worth running with (ESTIMATE_FLOOR_BYTES). */
  readonly floorBytes: number;
  /** Share of the idle (unreserved) budget a statement's memory limit may be topped up to. */
  readonly elasticCeilingFraction: number;
  /** Grants held at once at most (threadPool.ts: each running statement holds one of libuv's threads); default none. */
  readonly maxRunning?: number;
}

/** The options an agent's configuration gives for a memory budget of `budgetBytes` (no lane cap unless `maxRunning`). */
export function admissionOptions(config: AgentConfig, budgetBytes: number, maxRunning?: number): AdmissionOptions {
  return {
    budgetBytes,
    profile: config.maxConcurrencyProfile,
    maxQueueDepth: config.maxQueueDepth,
    queuedTimeoutMs: config.queuedTimeoutS * 1000,
    admissionWaitMs: config.statementAdmissionWaitS * 1000,
    admissionFloorFraction: config.statementAdmissionFloorFraction,
    floorBytes: config.estimateFloorBytes,
    elasticCeilingFraction: config.elasticCeilingFraction,
    ...(maxRunning === undefined ? {} : { maxRunning }),
  };
}

export interface Grant {
  readonly id: string;
  readonly askBytes: number;
  /** Bytes reserved against the budget. */
  readonly grantedBytes: number;
  /** Memory limit to give the engine: the grant, topped up from idle memory (never reserved). */
  readonly limitBytes: number;
  readonly queuedMs: number;
  readonly slot: number | null;
  release(): void;
}

export interface AdmissionStats {
  readonly running: number;
  readonly queued: number;
  readonly reservedBytes: number;
  readonly budgetBytes: number;
}

interface Waiter {
  readonly id: string;
  readonly askBytes: number;
  readonly enqueuedAt: number;
  relaxed: boolean;
  readonly timers: ReturnType<typeof setTimeout>[];
  readonly resolve: (grant: Grant) => void;
  readonly reject: (error: AdmissionError) => void;
}

export class AdmissionController {
  readonly #options: AdmissionOptions;
  readonly #queue: Waiter[] = [];
  readonly #slotsInUse: boolean[];
  readonly #slotSizes: readonly number[];
  #reservedBytes = 0;
  #running = 0;

  constructor(options: AdmissionOptions) {
    this.#options = options;
    this.#slotSizes =
      options.profile === 'auto' ? [] : LADDERS[options.profile].map((f) => Math.floor(f * options.budgetBytes));
    this.#slotsInUse = this.#slotSizes.map(() => false);
  }

  get stats(): AdmissionStats {
    return {
      running: this.#running,
      queued: this.#queue.length,
      reservedBytes: this.#reservedBytes,
      budgetBytes: this.#options.budgetBytes,
    };
  }

  /** Reserve memory for query `id`. Resolves when admitted; rejects with AdmissionError. */
  acquire(id: string, askBytes: number, opts: { queuedTimeoutMs?: number } = {}): Promise<Grant> {
    const ask = Math.max(1, Math.min(Math.ceil(askBytes), this.#options.budgetBytes));
    return new Promise<Grant>((resolve, reject) => {
      const waiter: Waiter = { id, askBytes: ask, enqueuedAt: Date.now(), relaxed: false, timers: [], resolve, reject };
      if (this.#queue.length === 0 && this.#tryAdmit(waiter)) return;
      if (this.#queue.length >= this.#options.maxQueueDepth) {
        reject(new AdmissionError('queue_full'));
        return;
      }
      // A session's open waits SESSION_QUEUED_TIMEOUT_S, a query QUEUED_TIMEOUT_S.
      const queuedTimeoutMs = opts.queuedTimeoutMs ?? this.#options.queuedTimeoutMs;
      if (queuedTimeoutMs > 0) {
        waiter.timers.push(setTimeout(() => this.#drop(waiter, new AdmissionError('queued_timeout')), queuedTimeoutMs));
      }
      if (this.#options.profile === 'auto') {
        const relax = () => {
          waiter.relaxed = true;
          this.#pump();
        };
        if (this.#options.admissionWaitMs <= 0) waiter.relaxed = true;
        else waiter.timers.push(setTimeout(relax, this.#options.admissionWaitMs));
      }
      this.#queue.push(waiter);
      // A relaxed waiter may already fit.
      this.#pump();
    });
  }

  /** Remove a queued query; returns false when it is not waiting (running or unknown). */
  cancel(id: string): boolean {
    const waiter = this.#queue.find((w) => w.id === id);
    if (!waiter) return false;
    this.#drop(waiter, new AdmissionError('cancelled'));
    return true;
  }

  isQueued(id: string): boolean {
    return this.#queue.some((w) => w.id === id);
  }

  /** Fail every waiter (shutdown). */
  close(): void {
    for (const waiter of [...this.#queue]) this.#drop(waiter, new AdmissionError('cancelled'));
  }

  #drop(waiter: Waiter, error: AdmissionError): void {
    const index = this.#queue.indexOf(waiter);
    if (index < 0) return;
    this.#queue.splice(index, 1);
    for (const t of waiter.timers) clearTimeout(t);
    waiter.reject(error);
    // The head may have changed.
    this.#pump();
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const head = this.#queue[0];
      if (!this.#tryAdmit(head)) return;
      this.#queue.shift();
      for (const t of head.timers) clearTimeout(t);
    }
  }

  // Admits `waiter` if policy allows, resolving its promise; returns whether it was admitted.
  #tryAdmit(waiter: Waiter): boolean {
    const o = this.#options;
    if (this.#running >= (o.maxRunning ?? Infinity)) return false;
    if (o.profile !== 'auto') {
      let best = -1;
      for (let i = 0; i < this.#slotSizes.length; i++) {
        if (!this.#slotsInUse[i] && (best < 0 || this.#slotSizes[i] > this.#slotSizes[best])) best = i;
      }
      if (best < 0) return false;
      this.#slotsInUse[best] = true;
      const size = this.#slotSizes[best];
      this.#grant(waiter, size, size, best);
      return true;
    }
    const free = o.budgetBytes - this.#reservedBytes;
    let granted: number | null = null;
    if (this.#running === 0) granted = Math.min(waiter.askBytes, o.budgetBytes);
    else if (free >= waiter.askBytes) granted = waiter.askBytes;
    else if (free >= o.admissionFloorFraction * waiter.askBytes) granted = free;
    else if (waiter.relaxed && free >= Math.min(waiter.askBytes, o.floorBytes)) granted = free;
    if (granted === null || granted <= 0) return false;
    const topUp = Math.floor(o.elasticCeilingFraction * free);
    this.#grant(waiter, granted, Math.max(granted, Math.min(topUp, o.budgetBytes)), null);
    return true;
  }

  #grant(waiter: Waiter, grantedBytes: number, limitBytes: number, slot: number | null): void {
    this.#reservedBytes += grantedBytes;
    this.#running += 1;
    let released = false;
    const grant: Grant = {
      id: waiter.id,
      askBytes: waiter.askBytes,
      grantedBytes,
      limitBytes,
      queuedMs: Date.now() - waiter.enqueuedAt,
      slot,
      release: () => {
        if (released) return;
        released = true;
        this.#reservedBytes -= grantedBytes;
        this.#running -= 1;
        if (slot !== null) this.#slotsInUse[slot] = false;
        this.#pump();
      },
    };
    waiter.resolve(grant);
  }
}
