// Scoped catalog tokens (issue 9): the token a dispatched query carries reaches only the warehouses that query may
// use, writes only where it may write, and lives only as long as the query may run. The catalog service enforces
// it, so it is the second line of I10 behind the api's grant checks.
import { beforeAll, describe, expect, it } from 'vitest';
import { STACK_CLIENT } from './support/catalogStack.ts';
import { catalogWithBridge } from './support/catalogWithBridge.ts';
import { dispatchScope } from '../actors/queryKind.ts';
import { writeCatalogs } from '../domain/catalogGrants.ts';
import { checkStatementPolicy } from '../domain/statementPolicy/policy.ts';

const { stack } = await catalogWithBridge({ warehouses: ['alpha', 'beta'] });

beforeAll(async () => {
  for (const wh of ['alpha', 'beta']) expect((await stack.request('POST', `/v1/${wh}/namespaces`, { namespace: ['sales'] })).status).toBe(200);
});

async function tokenFor(scope: string, expiresIn?: number) {
  const form: Record<string, string> = { grant_type: 'client_credentials', client_id: STACK_CLIENT.id, client_secret: STACK_CLIENT.secret, scope };
  if (expiresIn !== undefined) form.expires_in = String(expiresIn);
  const res = await fetch(`${stack.catalog.url}/v1/oauth/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: res.status, body: (await res.json()) as { access_token?: string; expires_in?: number; error?: string } };
}

const call = (token: string, method: string, path: string, body?: unknown, base = stack.catalog.url) =>
  fetch(`${base}${path}`, {
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
    // Time itself must pass: the 1 s token expires (a fixed wait, nothing to observe first).
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

  // What the api decides a write may write (writeCatalogs, from the statement policy's tables and schema targets,
  // resolved as DuckDB and the grant check resolve names) is exactly what the dispatched token may write.
  it('every DDL and DML kind gets write scope in the catalogs its names resolve to, and only there', async () => {
    const attached = [{ slug: 'sales' }, { slug: 'hr' }, { slug: 'ops' }];
    const catalogs = attached.map((a) => ({ name: a.slug, default: a.slug === 'sales', warehouse: a.slug }));
    const writes = async (sql: string, defaultCatalog = 'sales') => {
      const p = await checkStatementPolicy(sql, { mode: 'session' });
      if (!p.ok) throw new Error(p.message);
      const slugs = writeCatalogs(p.tables, p.schemas, defaultCatalog, attached);
      const scope = dispatchScope(catalogs, { write: true, tables: p.tables, write_catalogs: slugs });
      return scope.filter((x) => x.access === 'write').map((x) => x.warehouse);
    };
    expect(await writes('CREATE SCHEMA hr.s')).toEqual(['hr']);
    expect(await writes('CREATE SCHEMA IF NOT EXISTS HR.s')).toEqual(['hr']);
    expect(await writes('CREATE SCHEMA s')).toEqual(['sales']);
    expect(await writes('CREATE SCHEMA s', 'ops')).toEqual(['ops']);
    expect(await writes('DROP SCHEMA hr.s CASCADE')).toEqual(['hr']);
    expect(await writes('DROP SCHEMA IF EXISTS s')).toEqual(['sales']);
    expect(await writes('CREATE TABLE hr.s.t AS SELECT 1 AS a')).toEqual(['hr']);
    expect(await writes('CREATE OR REPLACE VIEW ops.s.v AS SELECT 1 AS a')).toEqual(['ops']);
    expect(await writes('INSERT INTO hr.s.t SELECT * FROM hr.s.u')).toEqual(['hr']);
    expect(await writes('UPDATE ops.s.t SET a = 2')).toEqual(['ops']);
    expect(await writes('DELETE FROM hr.s.t WHERE a = 1')).toEqual(['hr']);
    expect(await writes('MERGE INTO hr.s.t USING (SELECT 1 AS a) AS src ON t.a = src.a WHEN MATCHED THEN DELETE')).toEqual(['hr']);
    expect(await writes('ALTER TABLE ops.s.t ADD COLUMN b INTEGER')).toEqual(['ops']);
    expect(await writes('DROP TABLE hr.s.t')).toEqual(['hr']);
    // `hr.t` is schema hr of the default catalog, or catalog hr's main schema (as DuckDB reads it): both.
    expect(await writes('CREATE TABLE hr.t AS SELECT 1 AS a')).toEqual(['sales', 'hr']);
    expect(await writes('CREATE TABLE s.t AS SELECT 1 AS a')).toEqual(['sales']);
    // A session's catalog (its USE) is the default an unqualified name resolves in.
    expect(await writes('INSERT INTO t VALUES (1)', 'hr')).toEqual(['hr']);
    // Not a catalog a workspace attaches: never writable.
    expect(await writes('CREATE SCHEMA elsewhere.s')).toEqual([]);
  });
});

describe('the token a dispatched query carries', () => {
  it('reaches only its workspace’s catalogs, and writes only for a write', { timeout: 120_000 }, async () => {
    const { startTestStack, setupAdmin } = await import('./support/api.ts');
    const { waitForHealthyAgent } = await import('./support/agent.ts');
    const { PROTOCOL_VERSION } = await import('../protocol/index.ts');
    const { rawAgentSocket } = await import('./support/frames.ts');
    const t = await startTestStack({ AGENT_BOOTSTRAP_TOKEN: 'scope-bootstrap-token-123' });
    let agent: Awaited<ReturnType<typeof rawAgentSocket>> | undefined;
    try {
      const admin = await setupAdmin(t);
      // A second catalog the `default` workspace does not attach.
      const backends = (await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as { id: string; name: string }[];
      const bundled = backends.find((b) => b.name === 'bundled')!;
      expect((await t.req('POST', '/api/catalogs', { body: { slug: 'elsewhere', storage_backend_id: bundled.id }, as: admin })).status).toBe(201);

      // A raw agent speaking the protocol, recording what it is sent (waits as long as expect.poll's default).
      agent = await rawAgentSocket(t.url, { timeoutMs: 1000 });
      agent.send({ type: 'auth', payload: { protocol_version: PROTOCOL_VERSION, results_port: 8001, agent_version: 'test', bootstrap_token: 'scope-bootstrap-token-123', name: 'scope-raw' } });
      await agent.next('auth_ok');
      agent.send({ type: 'agent_status', payload: { capabilities: { engine_version: 'v1.5.6', extensions: [], memory_limit_bytes: 1024, max_concurrency_profile: 'auto' } } });
      const agentId = await waitForHealthyAgent(t, admin, 'scope-raw');

      const dispatched = async (sql: string) => {
        const r = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: agentId }, as: admin });
        expect(r.status, r.text).toBe(202);
        const frame = await agent!.next('dispatch_query', (f) => f.payload.query_id === r.body.id);
        expect(frame.payload.catalogs.map((c: any) => c.name)).toEqual(['warehouse']);
        return frame.payload.catalogs[0].token as string;
      };

      const read = await dispatched('SELECT 42');
      expect(read).not.toBe(t.stack.token);
      const at = t.stack.catalog.url;
      expect(await call(read, 'GET', '/v1/config?warehouse=warehouse', undefined, at)).toBe(200);
      expect(await call(read, 'GET', '/v1/config?warehouse=elsewhere', undefined, at)).toBe(403);
      expect(await call(read, 'POST', '/v1/warehouse/namespaces', { namespace: ['scope_probe'] }, at)).toBe(403);
      expect(await call(read, 'GET', '/management/v1/warehouses', undefined, at)).toBe(403);

      const write = await dispatched('CREATE TABLE scratch.t AS SELECT 1 AS a');
      expect(await call(write, 'POST', '/v1/warehouse/namespaces', { namespace: ['scope_probe'] }, at)).toBe(200);
      expect(await call(write, 'GET', '/v1/config?warehouse=elsewhere', undefined, at)).toBe(403);
    } finally {
      agent?.ws.close();
      await t.close();
    }
  });
});
