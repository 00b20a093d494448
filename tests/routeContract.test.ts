// The route contract: a handler's reply is encoded by the schema its route declares for that status, so a field the
// schema does not name never reaches a client, and a body the schema refuses is our bug (500, logged), not data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Schema } from 'effect';
import { buildServer } from '../http/server.ts';
import { route } from '../http/route.ts';
import { setupAdmin, startTestApi, type SignedIn, type TestApi } from './support/api.ts';

let t: TestApi;
let base: string;
let close: () => Promise<void>;

const Out = Schema.Struct({ id: Schema.String, count: Schema.Finite });
const leaky = route({
  method: 'GET',
  path: '/api/test/leaky',
  operationId: 'get_test_leaky',
  summary: 'answers more than it declares',
  tags: ['test'],
  access: { kind: 'public' },
  responses: { 200: Out },
  // A handler that read a whole row: the schema's typing stops the extra field at compile time for literals, so the
  // row is widened here the way a repository result would be.
  handler: async () => {
    const row = { id: 'x', count: 1, password_hash: 'secret' } as { id: string; count: number };
    return { status: 200, body: row };
  },
});
const wrong = route({
  method: 'GET',
  path: '/api/test/wrong',
  operationId: 'get_test_wrong',
  summary: 'answers a body its schema refuses',
  tags: ['test'],
  access: { kind: 'public' },
  responses: { 200: Out },
  handler: async () => ({ status: 200, body: { id: 'x', count: 'many' } as unknown as { id: string; count: number } }),
});

beforeAll(async () => {
  t = await startTestApi();
  const app = await buildServer({ ctx: t.api.ctx, routes: [leaky, wrong] });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  close = () => app.close();
});
afterAll(async () => {
  await close?.();
  await t?.close();
});

describe('route contract', () => {
  it('drops fields the response schema does not declare', async () => {
    const res = await fetch(`${base}/api/test/leaky`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'x', count: 1 });
  });

  it('answers 500 internal_error, without the body, when a handler breaks its own schema', async () => {
    const res = await fetch(`${base}/api/test/wrong`);
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body.error).toBe('internal_error');
    expect(JSON.stringify(body)).not.toContain('many');
  });
});

// A body whose fields are all optional may be left out: an absent body, an empty one sent as JSON, and `{}` are the
// same request on every such route (a client posting `POST …/scan` with nothing must not get 422 "Expected object").
describe('a body without required fields', () => {
  const forms = [
    { name: 'absent', init: {} },
    { name: 'empty JSON', init: { headers: { 'content-type': 'application/json' }, body: '' } },
    { name: '{}', init: { headers: { 'content-type': 'application/json' }, body: '{}' } },
  ];
  const routes = [
    { method: 'POST', path: '/api/admin/maintenance/scan' },
    { method: 'PUT', path: '/api/admin/maintenance/policy' },
    { method: 'POST', path: '/api/admin/agents/bootstrap' },
    { method: 'POST', path: '/api/workspaces/default/assistant/conversations' },
  ];
  it.each(routes)('$method $path answers the same to an absent, an empty and an empty-object body', async ({ method, path }) => {
    const admin = await adminCaller();
    const answers: Array<{ form: string; status: number; error?: string }> = [];
    for (const f of forms) {
      const res = await fetch(`${t.url}${path}`, { method, ...f.init, headers: { ...(f.init.headers ?? {}), authorization: `Bearer ${admin.token}` } });
      const body = (await res.text()) || '{}';
      answers.push({ form: f.name, status: res.status, error: JSON.parse(body).error });
    }
    expect(answers.map((a) => a.status), JSON.stringify(answers)).toEqual(answers.map(() => answers[2].status));
    expect(answers[0].status, JSON.stringify(answers)).not.toBe(422);
    expect(answers[1].status, JSON.stringify(answers)).not.toBe(400);
  });

  it('a body with required fields names them whether it is absent, empty or {}', async () => {
    const admin = await adminCaller();
    for (const f of forms) {
      const res = await fetch(`${t.url}/api/admin/users`, { method: 'POST', ...f.init, headers: { ...(f.init.headers ?? {}), authorization: `Bearer ${admin.token}` } });
      const body = await res.json();
      expect(res.status, f.name).toBe(422);
      expect(body.details.fields.map((x: { field: string }) => x.field), f.name).toContain('email');
    }
  });

  it('a body that is not JSON is still 400', async () => {
    const admin = await adminCaller();
    const res = await fetch(`${t.url}/api/admin/maintenance/scan`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` }, body: '{"deep":' });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('bad_request');
  });
});

let signedIn: SignedIn | undefined;
async function adminCaller(): Promise<SignedIn> {
  signedIn ??= await setupAdmin(t);
  return signedIn;
}
