// Wraps a real Db to inject the failures a crash or a network cut produces: a statement that never reaches the
// server, or one the server committed whose answer never came back. Everything else goes to the real database.
import type { Db, Queryable } from '../../runtime/db.ts';

/** `before`: the statement never reaches the server; `after`: it ran, its answer is lost; `delay`: it is held back
 *  `delayMs` before it is sent (a slow network or a stalled process), then runs normally. */
export type FaultPoint = 'before' | 'after' | 'delay';

interface Fault {
  /** Which statement (counting from 1, matching `match` when given) fails. */
  nth: number;
  point: FaultPoint;
  match?: RegExp;
  /** After the fault, every later statement fails too, as if the process had died. */
  dead?: boolean;
  /** For `delay`: how long the statement is held back. */
  delayMs?: number;
}

class InjectedFault extends Error {
  constructor(point: FaultPoint) {
    super(`injected fault (${point})`);
    this.name = 'InjectedFault';
  }
}

export interface FaultyDb extends Db {
  inject(fault: Fault): void;
  /** True once an injected fault has fired. */
  readonly fired: boolean;
}

export function faultyDb(real: Db): FaultyDb {
  let fault: Fault | null = null;
  let delayMs = 0;
  let seen = 0;
  let fired = false;
  let dead = false;

  /** Counts a statement; the fault's point when this is the one that fails. */
  const trip = (text: string): FaultPoint | null => {
    if (dead) return 'before';
    if (fault && (!fault.match || fault.match.test(text)) && ++seen === fault.nth) {
      const f = fault;
      fault = null;
      fired = true;
      if (f.dead) dead = true;
      delayMs = f.delayMs ?? 0;
      return f.point;
    }
    return null;
  };
  const guard = async <T>(text: string, exec: () => Promise<T>): Promise<T> => {
    const point = trip(text);
    if (point === 'before') throw new InjectedFault('before');
    if (point === 'delay') await new Promise((r) => setTimeout(r, delayMs));
    const result = await exec();
    if (point === 'after') throw new InjectedFault('after');
    return result;
  };
  const wrap = (q: Queryable): Queryable => ({
    query: (text, params) => guard(text, () => q.query(text, params)),
  });
  // A transaction's COMMIT counts as a statement too (`COMMIT`): failing before it rolls back; after it, the
  // transaction committed and its answer was lost.
  const tx: Db['tx'] = async (fn) => {
    let point: FaultPoint | null = null;
    const result = await real.tx(async (q) => {
      const r = await fn(wrap(q));
      point = trip('COMMIT');
      if (point === 'before') throw new InjectedFault('before');
      return r;
    });
    if (point === 'after') throw new InjectedFault('after');
    return result;
  };

  return {
    query: (text, params) => guard(text, () => real.query(text, params)),
    tx,
    withConnection: (fn) => real.withConnection((q) => fn(wrap(q))),
    listen: (channel, onPayload) => real.listen(channel, onPayload),
    notify: (channel, payload) => real.notify(channel, payload),
    get stats() {
      return real.stats;
    },
    close: () => real.close(),
    inject(f: Fault) {
      fault = f;
      seen = 0;
    },
    get fired() {
      return fired;
    },
  };
}
