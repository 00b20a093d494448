// The API's cross-cutting conventions: the error envelope everywhere, version, health, readiness, OpenAPI, metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, setupAdmin, type TestApi, type Caller } from './support/api.ts';
import { allRoutes } from '../http/routes/index.ts';
import { apiForTest } from './support/fixtures.ts';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { buildServer } from '../http/server.ts';

/** Writes `request` on a fresh connection and reads everything the server sends until it closes the connection. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', (e) => (text ? resolve(text) : reject(e)));
  });
}

let t: TestApi;
let admin: Caller;

beforeAll(async () => {
  t = await startTestApi({ BODY_LIMIT_BYTES: '4096' });
  admin = await setupAdmin(t);
});
afterAll(async () => t?.close());

const isEnvelope = (b: any) =>
  b && typeof b.error === 'string' && /^[a-z_]+$/.test(b.error) && typeof b.message === 'string' && b.detail?.error === b.error;

describe('error envelope', () => {
  it('unrouted 404 and 405 with Allow', async () => {
    const r = await t.req('GET', '/api/nope');
    expect(r.status).toBe(404);
    expect(isEnvelope(r.body)).toBe(true);
    expect(r.body.error).toBe('not_found');
    // `details` is always there, an empty object when there is nothing to add (spec: {error, message, details}).
    expect(r.body.details).toEqual({});
    const m = await t.req('DELETE', '/api/version');
    expect(m.status).toBe(405);
    // The spec names no code for a 405: it is the derived one of "any other 4xx" (Errors 2).
    expect(m.body.error).toBe('bad_request');
    expect(m.headers.get('allow')).toBe('GET');
    const p = await t.req('PATCH', '/api/workspaces/x');
    expect(p.status).toBe(405);
    expect(isEnvelope(p.body)).toBe(true);
    expect(p.body.error).toBe('bad_request');
  });

  it('malformed JSON is 400 bad_request (the spec code for a 400); schema violations are 422 naming each field', async () => {
    const r = await t.req('POST', '/api/workspaces', { rawBody: '{"slug":', as: admin });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.message).toMatch(/not valid JSON/);
    const v = await t.req('POST', '/api/admin/users', { body: { email: 'not-an-email', role: 'king', name: '' }, as: admin });
    expect(v.status).toBe(422);
    expect(v.body.error).toBe('unprocessable_content');
    expect(v.body.details.fields.map((f: any) => f.field).sort()).toEqual(['email', 'name', 'password', 'role']);
    const missing = await t.req('POST', '/api/admin/users', { as: admin });
    expect(missing.status).toBe(422);
  });

  // Dates JavaScript accepts but PostgreSQL refuses, and forged cursors, used to reach SQL and answer 500.
  it('history filters and cursors are validated: 422 or invalid_cursor, never 500', async () => {
    const H = '/api/workspaces/default/queries';
    for (const bad of ['1', 'Feb 30 2024', '2024-02-30', '2023-02-29T00:00:00Z', '99999-01-01', '2024-13-01', '2024-01-01T25:00:00Z', 'yesterday']) {
      for (const key of ['since', 'until']) {
        const r = await t.req('GET', `${H}?${key}=${encodeURIComponent(bad)}`, { as: admin });
        expect({ key, bad, status: r.status, error: r.body?.error }).toEqual({ key, bad, status: 422, error: 'unprocessable_content' });
      }
    }
    for (const good of ['2024-02-29', '2024-02-29T12:00:00Z', '2024-02-29T12:00:00.123+02:00']) {
      expect((await t.req('GET', `${H}?since=${encodeURIComponent(good)}`, { as: admin })).status).toBe(200);
    }
    const forge = (p: unknown) => Buffer.from(JSON.stringify(p)).toString('base64url');
    const id = '00000000-0000-4000-8000-000000000001';
    const forged = [
      forge({ s: 'started_at:desc', k: 'Feb 30 2024', id }),
      forge({ s: 'started_at:desc', k: '1', id }),
      forge({ s: 'duration:desc', k: 'abc', id }),
      forge({ s: 'started_at:desc', k: 5, id }),
      forge([1, 2]),
      'not base64 at all!',
    ];
    for (const [i, cursor] of forged.entries()) {
      const sort = i === 2 ? '&sort=duration' : '';
      const r = await t.req('GET', `${H}?cursor=${encodeURIComponent(cursor)}${sort}`, { as: admin });
      expect({ i, status: r.status < 500, error: r.body?.error }).toEqual({ i, status: true, error: 'invalid_cursor' });
    }
    for (const n of ['1e400', '-1', '1.5', 'NaN', '99999999999999999999']) {
      const r = await t.req('GET', `${H}?slower_than_ms=${n}&limit=${n}`, { as: admin });
      expect({ n, status: r.status }).toEqual({ n, status: 422 });
    }
  });

  it('oversized bodies are 413 in the envelope', async () => {
    const r = await t.req('POST', '/api/workspaces', { rawBody: JSON.stringify({ slug: 'x', name: 'y'.repeat(10_000) }), as: admin });
    expect(r.status).toBe(413);
    expect(r.body.error).toBe('payload_too_large');
  });

  it("the framework's own refusals are the envelope: a path segment too long, a malformed escape, a media type no route takes", async () => {
    // (a GET of it falls through to the web app's catch-all, which answers 404)
    const long = await t.req('DELETE', `/api/workspaces/${'w'.repeat(600)}`, { as: admin });
    expect(long.status, long.text).toBe(414);
    expect(isEnvelope(long.body), long.text).toBe(true);
    expect(long.body.error).toBe('uri_too_long');
    const bad = await t.req('GET', '/api/workspaces/%zz', { as: admin });
    expect(bad.status, bad.text).toBe(400);
    expect(isEnvelope(bad.body), bad.text).toBe(true);
    const media = await t.req('POST', '/api/workspaces', { rawBody: '<x/>', headers: { 'content-type': 'application/xml' }, as: admin });
    expect(media.status, media.text).toBe(415);
    expect(isEnvelope(media.body), media.text).toBe(true);
    const empty = await t.req('POST', '/api/workspaces', { rawBody: '', headers: { 'content-type': 'application/json' }, as: admin });
    expect(empty.status, empty.text).toBeLessThan(500);
    expect(isEnvelope(empty.body), empty.text).toBe(true);
  });

  it('requests Node refuses before Fastify sees them (not HTTP, headers too large) are answered in the envelope', async () => {
    const { port } = new URL(t.url);
    const bad = await rawExchange(Number(port), 'GET /api/version HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1.1 400 /);
    expect(isEnvelope(JSON.parse(bad.split('\r\n\r\n')[1]))).toBe(true);
    const big = await rawExchange(Number(port), `GET /api/version HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1.1 431 /);
    expect(isEnvelope(JSON.parse(big.split('\r\n\r\n')[1]))).toBe(true);
  });

  it('a request arriving while the server closes is 503 in the envelope', async () => {
    const app = await buildServer({ ctx: t.api.ctx, routes: [] });
    await app.listen({ port: 0, host: '127.0.0.1' });
    let serverSide: Socket | undefined;
    app.server.once('connection', (c: Socket) => (serverSide = c));
    const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    const ended = new Promise((r) => socket.once('close', r));
    // A request begun before the close (so its connection is not idle and survives) and finished after it.
    socket.write('GET /api/version HTTP/1.1\r\nHost: x\r\n');
    // the server has read those bytes (it feeds its parser in the same tick), so the connection counts as busy
    await expect.poll(() => serverSide?.bytesRead ?? 0).toBeGreaterThan(0);
    const closed = app.close();
    await expect.poll(() => app.server.listening).toBe(false);
    socket.write('\r\n');
    await ended;
    await closed;
    expect(text).toMatch(/^HTTP\/1.1 503 /);
    const body = JSON.parse(text.split('\r\n\r\n')[1]);
    expect(isEnvelope(body), text).toBe(true);
    expect(body.error).toBe('unavailable');
  });

  it('an unhandled exception is internal_error with a fixed message and no stack', async () => {
    // a real route whose database is gone: the driver error is unhandled by design
    const broken = await apiForTest();
    await setupAdmin(broken);
    const admin2 = await broken.req('POST', '/api/auth/login', { body: { email: 'admin@example.com', password: 'admin-password-1' } });
    const cookie = (admin2.headers.get('set-cookie') ?? '').split(';')[0];
    await broken.database.db.query(`alter table eider.workspaces rename to workspaces_gone`);
    const r = await broken.req('GET', '/api/workspaces', { as: { cookie } });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: 'internal_error', message: 'internal server error', details: {}, detail: { error: 'internal_error', detail: 'internal server error' } });
    expect(r.text).not.toContain('workspaces_gone');
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('features not offered', () => {
  it('SQL session routes answer 404 with "not enabled", as existing clients expect', async () => {
    for (const [method, path] of [
      ['POST', '/api/workspaces/default/sql/sessions'],
      ['GET', '/api/sql/sessions/00000000-0000-4000-8000-000000000000'],
      ['POST', '/api/sql/sessions/00000000-0000-4000-8000-000000000000/statements'],
      ['DELETE', '/api/sql/sessions/00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const r = await t.req(method, path, { as: admin, ...(method === 'POST' ? { body: {} } : {}) });
      expect(r.status, path).toBe(404);
      expect(r.body.error).toBe('not_found');
      expect(r.body.message).toContain('not enabled');
    }
  });
});

describe('the data assistant', () => {
  it('answers 503 assistant_disabled while ASSISTANT_ENABLED is off (the default)', async () => {
    for (const [method, path] of [
      ['GET', '/api/workspaces/default/assistant/conversations'],
      ['POST', '/api/workspaces/default/assistant/conversations'],
      ['GET', '/api/workspaces/default/assistant/conversations/00000000-0000-4000-8000-000000000000'],
      ['POST', '/api/workspaces/default/assistant/conversations/00000000-0000-4000-8000-000000000000/messages'],
    ] as const) {
      const r = await t.req(method, path, { as: admin, ...(method === 'POST' ? { body: { content: 'hi' } } : {}) });
      expect(r.status, path).toBe(503);
      expect(r.body.error).toBe('assistant_disabled');
    }
    expect((await t.req('GET', '/api/workspaces/default/assistant/conversations')).status).toBe(401);
  });
});

describe('version, health, readiness', () => {
  it('version is api_version 2, unauthenticated', async () => {
    const r = await t.req('GET', '/api/version');
    expect(r.body).toEqual({ version: expect.any(String), api_version: 2 });
  });
  it('healthz and readyz answer; readyz is 503 while draining and while the database is unreachable', async () => {
    expect((await t.req('GET', '/api/healthz')).status).toBe(200);
    expect((await t.req('GET', '/api/readyz')).status).toBe(200);
    t.api.ctx.draining.value = true;
    const d = await t.req('GET', '/api/readyz');
    expect(d.status).toBe(503);
    expect(isEnvelope(d.body)).toBe(true);
    t.api.ctx.draining.value = false;

    const other = await apiForTest();
    expect((await other.req('GET', '/api/readyz')).status).toBe(200);
    // terminate every backend of that database and forbid new connections: the server cannot reach it
    await t.database.db.query(`update pg_database set datallowconn = false where datname = $1`, [other.database.name]);
    await t.database.db.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [other.database.name]);
    const down = await other.req('GET', '/api/readyz');
    expect(down.status).toBe(503);
    await t.database.db.query(`update pg_database set datallowconn = true where datname = $1`, [other.database.name]);
  });
});

describe('OpenAPI and docs', () => {
  it('is generated from the running server with unique snake_case verb_subject operation ids', async () => {
    const r = await t.req('GET', '/api/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    expect(r.body.components.securitySchemes).toHaveProperty('cookieAuth');
    expect(r.body.components.securitySchemes).toHaveProperty('bearerAuth');
    const ops: string[] = [];
    for (const [path, methods] of Object.entries<any>(r.body.paths)) {
      for (const [m, op] of Object.entries<any>(methods)) {
        ops.push(op.operationId);
        expect(op.operationId, `${m} ${path}`).toMatch(/^(get|list|create|update|delete|put|patch|cancel|run|start|stop|attach|detach|refresh|issue|revoke|disconnect|restart|terminate|publish|deprecate|validate|compile|import|search|open|close|read|export|stage|dismiss|apply|scan)_[a-z0-9_]+$/);
      }
    }
    expect(new Set(ops).size).toBe(ops.length);
    expect(ops.length).toBe(allRoutes.length);
    expect(r.body.paths['/api/workspaces/{workspace}'].get.operationId).toBe('get_workspace');
  });
  it('serves interactive docs', async () => {
    const r = await fetch(`${t.url}/api/docs/static/index.html`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('swagger');
  });
});

describe('metrics', () => {
  it('exposes request counts and latency by route and status, and pool usage', async () => {
    await t.req('GET', '/api/version');
    const r = await t.req('GET', '/api/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/plain');
    expect(r.text).toMatch(/eider_http_requests_total\{method="GET",route="\/api\/version",status="200"\} \d+/);
    expect(r.text).toContain('eider_http_request_duration_seconds_bucket');
    expect(r.text).toContain('eider_db_pool_max_connections 15');
  });
  it('is absent when METRICS_ENABLED=false', async () => {
    const off = await apiForTest({ METRICS_ENABLED: 'false' });
    const r = await off.req('GET', '/api/metrics');
    expect(r.status).toBe(404);
  });
});
