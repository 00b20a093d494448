// The one way the app talks to the api: same-origin fetch with the session cookie, JSON in and out, and every
// failure turned into an ApiError carrying the envelope's code and message.

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

export type Query = Record<string, string | number | boolean | undefined | null | Array<string | number>>;

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

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** return the raw text (SVG, Mermaid) instead of parsed JSON */
  text?: boolean;
  /** send a string body as it is with this content type (a YAML document) instead of as JSON */
  contentType?: string;
}

export async function request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: opts.text ? '*/*' : 'application/json', ...(opts.headers ?? {}) };
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
  const text = await res.text();
  if (!res.ok) {
    let parsed: any = null;
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
  if (opts.text) return text as T;
  return (text ? JSON.parse(text) : undefined) as T;
}

export const api = {
  get: <T = any>(path: string, opts?: RequestOptions) => request<T>('GET', path, opts),
  post: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => request<T>('POST', path, { ...opts, body }),
  put: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => request<T>('PUT', path, { ...opts, body }),
  patch: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => request<T>('PATCH', path, { ...opts, body }),
  del: <T = any>(path: string, opts?: RequestOptions) => request<T>('DELETE', path, opts),
};

export const enc = encodeURIComponent;
