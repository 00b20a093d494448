// Hostile text at the edge, generated from the route table: every route's path parameters, query parameters and
// body fields get a NUL and other control characters, as an admin (so the request reaches the handler) and anonymously.
// No answer may be a 5xx, and every refusal is the spec's envelope; a NUL is refused with 422 before anything reads
// the database. The catalog service and /mcp get the same treatment.
import { expect } from 'vitest';
import { randomUUID } from 'node:crypto';
import { allRoutes } from '../http/routes/index.ts';
import { jsonSchemaOf, type RouteDef } from '../http/route.ts';
import { stackTest } from './support/fixtures.ts';
import type { Caller, Res } from './support/api.ts';

/** Control characters a client can put in a URL or JSON string: NUL first (PostgreSQL text refuses it). */
const CONTROL = ['\u0000', '\u0001', '\u0008', '\n', '\r', '\u001f', '\u007f', '\u0085'];
const NUL_IN = (s: string) => `a${s}b`;

const propertiesOf = (schema: RouteDef['query']): string[] => {
  if (!schema) return [];
  const js = jsonSchemaOf(schema) as { properties?: Record<string, unknown>; anyOf?: { properties?: Record<string, unknown> }[] };
  const keys = new Set(Object.keys(js.properties ?? {}));
  for (const alt of js.anyOf ?? []) for (const k of Object.keys(alt.properties ?? {})) keys.add(k);
  return [...keys];
};

const isEnvelope = (r: Res) =>
  r.body !== null && typeof r.body === 'object' && typeof r.body.error === 'string' && typeof r.body.message === 'string';

interface Case {
  method: string;
  path: string;
  body?: unknown;
  rawBody?: string;
  /** the case carries a NUL: it must be refused with 422 */
  nul: boolean;
}

function casesFor(r: RouteDef, fixtures: Record<string, string>): Case[] {
  const params = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
  const fill = (over: Record<string, string> = {}) =>
    r.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => over[name] ?? encodeURIComponent(fixtures[name] ?? randomUUID()));
  const hasBody = ['POST', 'PUT', 'PATCH'].includes(r.method);
  const base = hasBody ? { body: {} } : {};
  const out: Case[] = [];
  for (const c of CONTROL) {
    const enc = encodeURIComponent(c);
    for (const p of params) {
      out.push({ method: r.method, path: fill({ [p]: enc }), ...base, nul: c === '\u0000' });
      out.push({ method: r.method, path: fill({ [p]: encodeURIComponent(NUL_IN(c)) }), ...base, nul: c === '\u0000' });
    }
    for (const q of [...propertiesOf(r.query), 'undeclared']) {
      out.push({ method: r.method, path: `${fill()}?${q}=${encodeURIComponent(NUL_IN(c))}`, ...base, nul: c === '\u0000' });
    }
    if (hasBody) {
      const fields = propertiesOf(r.body);
      for (const f of fields) out.push({ method: r.method, path: fill(), body: { [f]: NUL_IN(c) }, nul: c === '\u0000' });
      if (fields.length) {
        // every declared field at once, as a string and inside an array
        out.push({ method: r.method, path: fill(), body: Object.fromEntries(fields.map((f) => [f, NUL_IN(c)])), nul: c === '\u0000' });
        out.push({ method: r.method, path: fill(), body: Object.fromEntries(fields.map((f) => [f, [NUL_IN(c)]])), nul: c === '\u0000' });
      }
      out.push({ method: r.method, path: fill(), body: { [NUL_IN(c)]: { [c]: 1 } }, nul: c === '\u0000' });
      out.push({ method: r.method, path: fill(), body: NUL_IN(c), nul: c === '\u0000' });
    }
  }
  return out;
}

stackTest.describe('hostile text at the edge', () => {
  stackTest('every route refuses NUL with 422 and answers control characters without a 5xx, in the envelope', async ({ stack, admin }) => {
    const ws = await stack.req('POST', '/api/workspaces', { body: { slug: 'fuzz', name: 'Fuzz' }, as: admin });
    expect(ws.status, ws.text).toBe(201);
    const fixtures: Record<string, string> = { workspace: 'fuzz', catalog: 'warehouse' };
    const failures: string[] = [];
    let sent = 0;
    for (const r of allRoutes) {
      // sign-out and token revocation would end the admin's own credentials half way through
      if (r.path === '/api/auth/logout') continue;
      const callers: (Caller | undefined)[] = r.access.kind === 'public' ? [undefined] : [{ token: admin.token }];
      for (const as of callers) {
        for (const c of casesFor(r, fixtures)) {
          const res = await stack.req(c.method, c.path, { body: c.body, as });
          sent++;
          const line = `${c.method} ${c.path} ${c.body === undefined ? '' : JSON.stringify(c.body)} → ${res.status} ${res.text.slice(0, 160)}`;
          // a feature switched off answers its own 503 (the assistant without a model): a decision, not a fault
          const switchedOff = r.gate && res.status === 503 && isEnvelope(res) && res.body.error !== 'internal_error';
          if (res.status >= 500 && !switchedOff) failures.push(`5xx: ${line}`);
          else if (res.status >= 400 && !isEnvelope(res)) failures.push(`not an envelope: ${line}`);
          else if (c.nul && res.status !== 422 && res.status !== 404) failures.push(`NUL not refused: ${line}`);
        }
      }
    }
    expect(failures.slice(0, 40), `${failures.length} of ${sent} requests`).toEqual([]);
    expect(sent).toBeGreaterThan(3000);
  }, 300_000);

  stackTest('unauthenticated sign-in with a NUL in the email is 422, not a database error', async ({ stack }) => {
    const r = await stack.req('POST', '/api/auth/login', { body: { email: 'a\u0000@example.com', password: 'x' } });
    expect(r.status, r.text).toBe(422);
    expect(r.body).toMatchObject({ error: 'unprocessable_content', details: { fields: [{ field: 'email', in: 'body' }] } });
    const path = await stack.req('GET', '/api/workspaces/%00', { as: undefined });
    expect(path.status, path.text).toBe(422);
  });

  stackTest('/mcp refuses NUL in tool arguments with 422', async ({ stack, admin }) => {
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_catalogs', arguments: { workspace: 'a\u0000' } } };
    const r = await stack.req('POST', '/mcp', {
      body: rpc,
      as: { token: admin.token },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(r.status, r.text).toBe(422);
    expect(r.body.error).toBe('unprocessable_content');
  });

  stackTest('the catalog service refuses NUL in its path, query and body with its ErrorModel', async ({ stack }) => {
    await stack.stack.createWarehouse('fuzzwh');
    const answers = [
      await stack.stack.request('GET', '/v1/fuzzwh/namespaces/a%00b'),
      await stack.stack.request('GET', '/v1/fuzz%00wh/namespaces'),
      await stack.stack.request('GET', '/v1/fuzzwh/namespaces?parent=a%00'),
      await stack.stack.request('POST', '/v1/fuzzwh/namespaces', { namespace: ['a\u0000b'] }),
    ];
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).toBe(422);
      expect(a.body.error).toMatchObject({ type: 'UnprocessableEntityException', code: 422 });
    }
    const paths = ['/v1/fuzzwh/namespaces/X', '/v1/fuzzwh/namespaces/ns/tables/X', '/v1/X/namespaces', '/v1/config?warehouse=X'];
    for (const c of CONTROL.slice(1)) {
      const a = await stack.stack.request('POST', '/v1/fuzzwh/namespaces', { namespace: [NUL_IN(c)] });
      expect(a.status, JSON.stringify(a.body)).toBeLessThan(500);
      for (const p of paths) {
        for (const method of ['GET', 'DELETE', 'POST']) {
          const r = await stack.stack.request(method, p.replace('X', encodeURIComponent(NUL_IN(c))), method === 'POST' ? {} : undefined);
          expect(r.status, `${method} ${p} ${JSON.stringify(r.body)}`).toBeLessThan(500);
          if (r.status >= 400) expect(r.body.error).toMatchObject({ type: expect.any(String), code: r.status });
        }
      }
    }
    const malformed = await stack.stack.request('POST', '/v1/fuzz%zzwh/namespaces', { namespace: ['x'] });
    expect(malformed.status, JSON.stringify(malformed.body)).toBe(400);
    // What Fastify answers before any hook is in the ErrorModel too: an over-long path segment, a malformed escape.
    const long = await stack.stack.request('GET', `/v1/fuzzwh/namespaces/${'n'.repeat(2000)}`);
    expect(long.status).toBe(414);
    expect(long.body.error).toMatchObject({ type: 'BadRequestException', code: 414 });
    const escape = await stack.stack.request('GET', '/v1/fuzzwh/namespaces/%zz');
    expect(escape.status).toBe(400);
    expect(escape.body.error).toMatchObject({ code: 400 });
  });
});

