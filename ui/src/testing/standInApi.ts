// A stand-in api for the component tests: `fetch` is stubbed (vi.stubGlobal: the test's afterEach calls
// vi.unstubAllGlobals), every request is recorded in the order it was made, and `answer` decides each response: a
// Response as it is, anything else as its JSON (200, or `postStatus` for a POST).
import { vi } from 'vitest';

export interface Asked {
  method: string;
  /** The path without the query string (`url` has both). */
  path: string;
  url: URL;
  /** The JSON body sent, parsed. */
  body: any;
  accept: string | null;
}

export function standInApi(answer: (a: Asked) => unknown, opts: { postStatus?: number } = {}): Asked[] {
  const asked: Asked[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: string, init: RequestInit = {}) => {
      const url = new URL(String(input), 'http://eider.test');
      const a: Asked = {
        method: init.method ?? 'GET',
        path: url.pathname,
        url,
        body: init.body ? JSON.parse(String(init.body)) : undefined,
        accept: new Headers(init.headers).get('accept'),
      };
      asked.push(a);
      const out = await answer(a);
      return out instanceof Response ? out : new Response(JSON.stringify(out), { status: a.method === 'POST' ? (opts.postStatus ?? 200) : 200 });
    }),
  );
  return asked;
}

export type Route = (body: any, url: URL) => unknown;

/**
 * Answers by `"METHOD /path"` (the query string is the handler's to read); a request no route names gets the api's
 * own 404 for a route it does not have (which the client reads as "not available on this server").
 */
export function byRoute(routes: Record<string, Route>): (a: Asked) => unknown {
  return (a) => {
    const handler = routes[`${a.method} ${a.path}`];
    if (!handler) return new Response(JSON.stringify({ error: 'not_found', message: `no route for ${a.method} ${a.path}` }), { status: 404 });
    return handler(a.body, a.url);
  };
}
