// The typed client: a call's URL comes from its operation's path template, and its types from the operation map. The
// `@ts-expect-error` lines are checked by the app's typecheck (`tsc -p ui`): each fails it if the call they mark
// were accepted.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { call, pathOf } from './client.ts';
import { standInApi } from '../testing/standInApi.ts';

afterEach(() => vi.unstubAllGlobals());

describe('call', () => {
  it('fills the path template (encoded), sends the query and body, and answers the JSON', async () => {
    const asked = standInApi(() => ({ id: 'q1', status: 'queued' }));
    const out = await call('POST /api/workspaces/{workspace}/queries', { path: { workspace: 'a b/c' }, body: { sql: 'select 1' }, query: undefined });
    expect(out.status).toBe('queued');
    expect(asked[0].method).toBe('POST');
    expect(asked[0].url.pathname).toBe('/api/workspaces/a%20b%2Fc/queries');
    expect(asked[0].body).toEqual({ sql: 'select 1' });

    await call('GET /api/queries/{query_id}', { path: { query_id: 'q1' }, query: { wait_timeout_s: 10 } });
    expect(asked[1].url.pathname + asked[1].url.search).toBe('/api/queries/q1?wait_timeout_s=10');
  });

  it('refuses a template whose parameter has no value', () => {
    expect(() => pathOf('GET /api/queries/{query_id}', {} as { query_id: string })).toThrow(/query_id/);
  });

  it('types the call by its operation', () => {
    const typed = async () => {
      const q = await call('GET /api/queries/{query_id}', { path: { query_id: 'x' } });
      const status: 'queued' | 'running' | 'done' | 'failed' | 'cancelled' = q.status;
      // @ts-expect-error: the answer has no such field
      void q.no_such_field;
      // @ts-expect-error: a path parameter is required
      await call('GET /api/queries/{query_id}');
      // @ts-expect-error: the parameter is named query_id
      await call('GET /api/queries/{query_id}', { path: { id: 'x' } });
      // @ts-expect-error: no such operation
      await call('GET /api/queries/{query_id}/nothing', { path: { query_id: 'x' } });
      // @ts-expect-error: the body is required and typed
      await call('POST /api/workspaces/{workspace}/queries', { path: { workspace: 'w' }, body: { sql: 1 } });
      // @ts-expect-error: a GET sends no body
      await call('GET /api/me', { body: {} });
      // @ts-expect-error: the audit filter takes the server's actions only
      await call('GET /api/admin/audit', { query: { action: 'no.such_action' } });
      return status;
    };
    expect(typeof typed).toBe('function');
  });
});
