// The statement policy off the event loop. Parsing is CPU work that grows with the text (a 900 KB script took 36 s
// on the main thread and stalled every request and agent heartbeat), so it runs in worker threads with a time
// budget: a worker that overruns is terminated and replaced, and the submission gets 422 instead of a stall.
import { Worker } from 'node:worker_threads';
import { finishPolicy, tooComplex } from '../domain/statementPolicy/policy.ts';
import type { PolicyOptions, PolicyResult, Unparsed } from '../domain/statementPolicy/policy.ts';

const WORKER_URL = new URL('./policyWorker.ts', import.meta.url);
const POOL_SIZE = 2;

interface Slot {
  worker: Worker;
  // settles when the worker has loaded the parser
  ready: Promise<void>;
  busy: boolean;
}

let nextId = 0;
const slots: Slot[] = [];
const waiting: Array<(slot: Slot) => void> = [];

function spawn(): Slot {
  const worker = new Worker(WORKER_URL);
  worker.unref(); // an idle pool never keeps the process alive
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (m: { ready?: boolean }) => {
      if (!m.ready) return;
      worker.off('message', onMessage);
      worker.off('error', reject);
      resolve();
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
  ready.catch(() => {}); // observed by the caller that waits on it
  return { worker, ready, busy: false };
}

function replace(slot: Slot): void {
  const fresh = spawn();
  slot.worker = fresh.worker;
  slot.ready = fresh.ready;
}

function acquire(): Promise<Slot> {
  const free = slots.find((s) => !s.busy);
  if (free) return Promise.resolve(((free.busy = true), free));
  if (slots.length < POOL_SIZE) {
    const slot = spawn();
    slot.busy = true;
    slots.push(slot);
    return Promise.resolve(slot);
  }
  return new Promise((resolve) => waiting.push(resolve));
}

function release(slot: Slot): void {
  const next = waiting.shift();
  if (next) next(slot);
  else slot.busy = false;
}

// The policy is a pure function of the text and the options: the verdicts of statements allowed recently are kept,
// so a statement run again (a dashboard tile, a scheduled job, a BI tool's probe) skips the worker round trip and
// the parse. Small texts only, a bounded number, the oldest dropped first; each hit hands out a copy.
const ALLOWED_CACHE_ENTRIES = 1000;
const ALLOWED_CACHE_MAX_SQL = 16 * 1024;
const allowed = new Map<string, PolicyResult>();

/** checkStatementPolicy in a worker thread, answering `sql_too_complex` when it does not finish in `budgetMs`. */
export async function checkPolicyOffThread(sql: string, opts: PolicyOptions, budgetMs: number): Promise<PolicyResult> {
  const key = sql.length <= ALLOWED_CACHE_MAX_SQL ? `${JSON.stringify(opts)}\0${sql}` : null;
  const hit = key === null ? undefined : allowed.get(key);
  if (hit) {
    allowed.delete(key!);
    allowed.set(key!, hit);
    return structuredClone(hit);
  }
  const result = await checkInWorker(sql, opts, budgetMs);
  if (key !== null && result.ok) {
    allowed.set(key, structuredClone(result));
    if (allowed.size > ALLOWED_CACHE_ENTRIES) allowed.delete(allowed.keys().next().value as string);
  }
  return result;
}

async function checkInWorker(sql: string, opts: PolicyOptions, budgetMs: number): Promise<PolicyResult> {
  const slot = await acquire();
  const id = nextId++;
  try {
    await slot.ready;
  } catch {
    replace(slot);
    release(slot);
    throw new Error('the statement policy worker failed to start');
  }
  const decided = await new Promise<Unparsed | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      // The worker is mid-parse and cannot be interrupted: replace it.
      void slot.worker.terminate();
      replace(slot);
      resolve(null);
    }, budgetMs);
    const onMessage = (m: { id: number; result: Unparsed }) => {
      if (m.id !== id) return;
      cleanup();
      resolve(m.result);
    };
    const onError = (e: Error) => {
      cleanup();
      replace(slot); // a worker that failed is not reused
      reject(e);
    };
    const cleanup = () => {
      clearTimeout(timer);
      slot.worker.off('message', onMessage);
      slot.worker.off('error', onError);
    };
    slot.worker.on('message', onMessage);
    slot.worker.on('error', onError);
    slot.worker.postMessage({ id, sql, opts });
  }).finally(() => release(slot));
  if (decided === null) return tooComplex(`The SQL could not be checked within ${budgetMs} ms; split it into smaller submissions.`);
  return finishPolicy(sql, decided);
}
