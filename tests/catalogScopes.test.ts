// Scoped catalog tokens (issue 9): the token a dispatched query carries reaches only the warehouses that query may
// use, writes only where it may write, and lives only as long as the query may run. The catalog service enforces
// it, so it is the second line of I10 behind the api's grant checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from './support/database.ts';
import { startCatalogStack, STACK_CLIENT, type CatalogStack } from '../catalog/harness.ts';
import { dispatchScope } from '../actors/queryKind.ts';

let tdb: TestDatabase;
let stack: CatalogStack;

beforeAll(async () => {
  tdb = await freshDatabase();
  stack = await startCatalogStack({ db: tdb.db });
  await stack.createWarehouse('alpha');
  await stack.createWarehouse('beta');
  for (const wh of ['alpha', 'beta']) expect((await stack.request('POST', `/v1/${wh}/namespaces`, { namespace: ['sales'] })).status).toBe(200);
});
afterAll(async () => {
  await stack?.close();
  await tdb?.drop();
});

async function tokenFor(scope: string, expiresIn?: number) {
  const form: Record<string, string> = { grant_type: 'client_credentials', client_id: STACK_CLIENT.id, client_secret: STACK_CLIENT.secret, scope };
  if (expiresIn !== undefined) form.expires_in = String(expiresIn);
  const res = await fetch(`${stack.catalog.url}/v1/oauth/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: res.status, body: (await res.json()) as { access_token?: string; expires_in?: number; error?: string } };
}

const call = (token: string, method: string, path: string, body?: unknown) =>
  fetch(`${stack.catalog.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  }).then((r) => r.status);

describe('scoped catalog tokens', () => {
  it('read scope: reads its warehouse, cannot change it, cannot reach another or manage warehouses', async () => {
    const { body } = await tokenFor('warehouse:alpha:read');
    const t = body.access_token!;
    expect(await call(t, 'GET', '/v1/config?warehouse=alpha')).toBe(200);
    expect(await call(t, 'GET', '/v1/alpha/namespaces')).toBe(200);
    expect(await call(t, 'POST', '/v1/alpha/namespaces', { namespace: ['more'] })).toBe(403);
    expect(await call(t, 'GET', '/v1/beta/namespaces')).toBe(403);
    expect(await call(t, 'GET', '/v1/config?warehouse=beta')).toBe(403);
    expect(await call(t, 'GET', '/management/v1/warehouses')).toBe(403);
  });

  it('write scope changes only its warehouse; the unscoped token still manages', async () => {
    const t = (await tokenFor('warehouse:alpha:write warehouse:beta:read')).body.access_token!;
    expect(await call(t, 'POST', '/v1/alpha/namespaces', { namespace: ['written'] })).toBe(200);
    expect(await call(t, 'POST', '/v1/beta/namespaces', { namespace: ['written'] })).toBe(403);
    expect(await call(stack.token, 'GET', '/management/v1/warehouses')).toBe(200);
    // Conventional scopes of other clients (`catalog`) narrow nothing.
    const plain = (await tokenFor('catalog')).body.access_token!;
    expect(await call(plain, 'GET', '/management/v1/warehouses')).toBe(200);
  });

  it('lives as long as asked (capped by the service), and refuses malformed scopes', async () => {
    const short = await tokenFor('warehouse:alpha:read', 1);
    expect(short.body.expires_in).toBe(1);
    expect((await tokenFor('warehouse:alpha:read', 999_999)).body.expires_in).toBe(3600);
    await new Promise((r) => setTimeout(r, 2100));
    expect(await call(short.body.access_token!, 'GET', '/v1/alpha/namespaces')).toBe(401);
    expect((await tokenFor('warehouse:alpha:delete')).body.error).toBe('invalid_scope');
    expect((await tokenFor('warehouse:alpha:read', -5)).status).toBe(400);
  });

  it('a dispatch reads every attached catalog and writes only the catalogs a write names', () => {
    const catalogs = [
      { name: 'sales', default: true, warehouse: 'sales' },
      { name: 'hr', default: false, warehouse: 'hr' },
      { name: 'ops', default: false, warehouse: 'ops' },
    ];
    expect(dispatchScope(catalogs, { write: false, tables: [{ catalog: 'hr', schema: 's', name: 't' }] })).toEqual([
      { warehouse: 'sales', access: 'read' },
      { warehouse: 'hr', access: 'read' },
      { warehouse: 'ops', access: 'read' },
    ]);
    expect(dispatchScope(catalogs, { write: true, tables: [{ catalog: 'hr', schema: 's', name: 't' }, { catalog: null, schema: 's', name: 'u' }] })).toEqual([
      { warehouse: 'sales', access: 'write' },
      { warehouse: 'hr', access: 'write' },
      { warehouse: 'ops', access: 'read' },
    ]);
  });
});
