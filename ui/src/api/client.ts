// The one way the app talks to the api: `call('METHOD /api/path/{param}', {path, query, body})`, typed by the
// server's operation map (generated.ts), over same-origin fetch with the session cookie, JSON in and out, and every
// failure turned into an ApiError carrying the envelope's code and message. onlyTypedCalls.test.ts keeps every
// call of the app going through here.
import type { Operations } from './generated.ts';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
  /**
   * True when the server has no such route yet (404 from the router, or 405): endpoints still being built answer
   * this way, and screens say so instead of showing an empty list.
   */
  get notBuilt(): boolean {
    return this.status === 405 || (this.status === 404 && this.message.startsWith('no route for'));
  }
}

type Query = Record<string, string | number | boolean | undefined | null | Array<string | number>>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) for (const item of v) sp.append(k, String(item));
    else sp.append(k, String(v));
  }
  const s = sp.toString();
  return s ? `${path}?${s}` : path;
}

/** Called when any request answers 401, so the app can return to sign-in. */
let onUnauthorized: (() => void) | null = null;
export function setUnauthorizedHandler(fn: (() => void) | null) {
  onUnauthorized = fn;
}

interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** return the raw text (SVG, Mermaid) instead of parsed JSON */
  text?: boolean;
  /** send a string body as it is with this content type (a YAML document) instead of as JSON */
  contentType?: string;
}

async function request(method: string, path: string, opts: RequestOptions = {}): Promise<unknown> {
  const res = await send(method, path, opts, opts.text ? '*/*' : 'application/json');
  const text = await res.text();
  if (opts.text) return text;
  return text ? JSON.parse(text) : undefined;
}

/** Sends the request and answers the response when it succeeded; a failure becomes its ApiError. */
async function send(method: string, path: string, opts: RequestOptions, accept: string): Promise<Response> {
  const headers: Record<string, string> = { accept, ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (opts.body !== undefined && opts.contentType && typeof opts.body === 'string') {
    headers['content-type'] = opts.contentType;
    body = opts.body;
  } else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(withQuery(path, opts.query), { method, headers, body, credentials: 'same-origin', signal: opts.signal });
  } catch (e) {
    if ((e as Error)?.name === 'AbortError') throw e;
    throw new ApiError(0, 'network_error', 'the server could not be reached');
  }
  if (res.ok) return res;
  const text = await res.text();
  // The api's error envelope when the body is one; anything else reads as having none of its fields.
  let parsed: { error?: unknown; message?: unknown; details?: unknown } | null = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  const err = new ApiError(
    res.status,
    String(parsed?.error ?? `http_${res.status}`),
    String(parsed?.message ?? (text.slice(0, 200) || res.statusText)),
    parsed?.details,
  );
  if (res.status === 401 && onUnauthorized && !path.startsWith('/api/auth/')) onUnauthorized();
  throw err;
}

/** An operation of the api by its method and path template, as the server's OpenAPI document names it. */
export type Operation = keyof Operations;
/** What the operation answers: its JSON body, or void when it answers 204. */
export type ResponseOf<K extends Operation> = Operations[K]['response'];
export type BodyOf<K extends Operation> = Operations[K]['body'];
export type QueryOf<K extends Operation> = Operations[K]['query'];
export type PathOf<K extends Operation> = Operations[K]['path'];

type Has<T> = [T] extends [never] ? false : true;
/** Path parameters and a body are required where the operation has them; its query is always optional. */
type Sends<K extends Operation> = (Has<Operations[K]['path']> extends true ? { path: Operations[K]['path'] } : { path?: never }) &
  (Has<Operations[K]['query']> extends true ? { query?: Operations[K]['query'] } : { query?: never }) &
  (Has<Operations[K]['body']> extends true ? { body: Operations[K]['body'] } : { body?: never });
type CallOptions<K extends Operation> = Sends<K> & Omit<RequestOptions, 'query' | 'body'>;
// The options may be left out when nothing in them is required (no path parameters, no body).
type CallArgs<K extends Operation> = Partial<Sends<K>> extends Sends<K> ? [opts?: CallOptions<K>] : [opts: CallOptions<K>];

/** The operation's URL path: the template with each `{param}` filled in, encoded. */
export function pathOf<K extends Operation>(op: K, params?: Operations[K]['path']): string {
  const template = op.slice(op.indexOf(' ') + 1);
  const values = (params ?? {}) as Record<string, string>;
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (values[name] === undefined) throw new Error(`${op}: no value for {${name}}`);
    return encodeURIComponent(values[name]);
  });
}

/** Calls one operation; its path parameters, query, body and answer are typed by the operation. */
export function call<K extends Operation>(op: K, ...[opts]: CallArgs<K>): Promise<ResponseOf<K>> {
  const o = (opts ?? {}) as CallOptions<K> & { path?: Operations[K]['path']; query?: Query; body?: unknown };
  const { path, ...rest } = o;
  return request(op.slice(0, op.indexOf(' ')), pathOf(op, path), rest) as Promise<ResponseOf<K>>;
}

/** Calls an operation that streams (server-sent events): the successful response, to be read as it arrives. */
export function callStream<K extends Operation>(op: K, ...[opts]: CallArgs<K>): Promise<Response> {
  const o = (opts ?? {}) as CallOptions<K> & { path?: Operations[K]['path']; query?: Query; body?: unknown };
  const { path, ...rest } = o;
  return send(op.slice(0, op.indexOf(' ')), pathOf(op, path), rest, 'text/event-stream');
}

export const enc = encodeURIComponent;
