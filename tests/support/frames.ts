// Waiting on what arrives over a WebSocket, without polling: frames (or connections) are kept in arrival order and a
// wait takes the first one that matches as soon as it is there. A wait that times out says what it waited for, for
// how long, and what had arrived instead; once the socket has closed, a wait that finds nothing fails at once.
import WebSocket from 'ws';

export class Arrivals<T> {
  readonly #items: T[] = [];
  readonly #waiting = new Set<() => void>();
  #ended: string | undefined;
  readonly #describe: (item: T) => string;

  constructor(describe: (item: T) => string = String) {
    this.#describe = describe;
  }

  push(item: T): void {
    this.#items.push(item);
    this.#notify();
  }

  /** Nothing more will arrive (`why`: what ended it, for the failure of a wait). */
  end(why: string): void {
    this.#ended ??= why;
    this.#notify();
  }

  /** Takes the first item that `match` accepts, waiting at most `timeoutMs` for one; `what` names it in a failure. */
  take(what: string, match: (item: T) => boolean, timeoutMs: number): Promise<T> {
    const started = Date.now();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const finish = () => {
        settled = true;
        clearTimeout(timer);
        this.#waiting.delete(look);
      };
      const fail = (why: string) => {
        finish();
        reject(new Error(`no ${what} ${why}; arrived and not taken: ${this.#unclaimed()}`));
      };
      const look = () => {
        if (settled) return;
        let i: number;
        try {
          i = this.#items.findIndex(match);
        } catch (e) {
          // a `match` that throws fails the wait, not the socket's message handler that told of an arrival
          finish();
          reject(e);
          return;
        }
        if (i >= 0) {
          finish();
          resolve(this.#items.splice(i, 1)[0]);
        } else if (this.#ended !== undefined) fail(`before ${this.#ended} (waited ${Date.now() - started} ms)`);
      };
      const timer = setTimeout(() => fail(`within ${timeoutMs} ms`), timeoutMs);
      this.#waiting.add(look);
      look();
    });
  }

  #notify(): void {
    for (const look of [...this.#waiting]) look();
  }

  #unclaimed(): string {
    return this.#items.length ? this.#items.map(this.#describe).join(', ') : 'nothing';
  }
}

export interface Frame {
  type: string;
  payload?: unknown;
}

/** The frames of `F` whose type is `T` (all of `F` when `F` does not tell its types apart, as raw JSON does not). */
export type FrameOf<F extends Frame, T extends string> = [Extract<F, { type: T }>] extends [never] ? F : Extract<F, { type: T }>;

const MAX_SHOWN = 300;
const show = (f: Frame) => {
  const json = JSON.stringify(f);
  return json.length > MAX_SHOWN ? `${json.slice(0, MAX_SHOWN)}…` : json;
};

/** Frames in arrival order; `next` takes the first of a type (and matching `where`), waiting for it. */
export class FrameInbox<F extends Frame = { type: string; payload: any }> extends Arrivals<F> {
  readonly timeoutMs: number;

  constructor(timeoutMs = 15_000) {
    super(show);
    this.timeoutMs = timeoutMs;
  }

  next<T extends F['type']>(type: T, where?: (f: FrameOf<F, T>) => boolean, timeoutMs = this.timeoutMs): Promise<FrameOf<F, T>> {
    const matching = (f: F) => f.type === type && (!where || where(f as FrameOf<F, T>));
    return this.take(`${type} frame${where ? ' that matches' : ''}`, matching, timeoutMs) as Promise<FrameOf<F, T>>;
  }
}

/** A raw agent: a WebSocket client of the api's /agents/connect that speaks JSON frames and keeps what it is sent. */
export interface RawAgentSocket {
  ws: WebSocket;
  /** The next frame of `type` (matching `where`) the api sent, removed from the inbox. */
  next: FrameInbox['next'];
  /** Sends a frame as JSON (a string as it is, for malformed frames). */
  send(frame: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

/** Connects to the api at `apiUrl` (http: or ws:); `timeoutMs` is how long `next` waits unless told. */
export async function rawAgentSocket(apiUrl: string, opts: { headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<RawAgentSocket> {
  const ws = new WebSocket(apiUrl.replace(/^http/, 'ws') + '/agents/connect', { headers: opts.headers ?? {} });
  const inbox = new FrameInbox(opts.timeoutMs);
  ws.on('message', (d) => inbox.push(JSON.parse(String(d))));
  const closed = new Promise<{ code: number; reason: string }>((res) =>
    ws.on('close', (code, reason) => {
      inbox.end(`the socket closed (${code}${reason.length ? ` ${String(reason)}` : ''})`);
      res({ code, reason: String(reason) });
    }),
  );
  await new Promise((res, rej) => {
    ws.once('open', res);
    ws.once('error', rej);
  });
  return {
    ws,
    next: (type, where, timeoutMs) => inbox.next(type, where, timeoutMs),
    send: (f) => ws.send(typeof f === 'string' ? f : JSON.stringify(f)),
    closed,
  };
}
