// /mcp with the official SDK's own client against the real stack (a real agent process): every tool, the row and
// byte caps with cursor paging, writes refused and allowed (MCP_ALLOW_WRITES re-read per call), nothing beyond
// what the token reaches through REST, and the endpoint's own rules (token, Origin, MCP_ENABLED).
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { newUser } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const clients: Client[] = [];

const { t, admin, agentId } = await stackWithAgent({
  env: { MCP_RESULT_ROW_CAP: '5', MCP_RESULT_BYTE_CAP: '4096', CORS_ORIGINS: 'https://allowed.example' },
  agent: { name: 'mcp-agent' },
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'eider-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = (await client.callTool({ name, arguments: args })) as { content: Array<{ type: string; text: string }>; isError?: boolean };
  const text = r.content[0]?.text ?? '';
  let value: any = text;
  try {
    value = JSON.parse(text);
  } catch {
    // an error message
  }
  return { isError: r.isError === true, value, text };
}

describe('/mcp', () => {
  it('lists every tool of the decision, with JSON Schema inputs and server instructions', async () => {
    const c = await connect(admin.token!);
    const names = (await c.listTools()).tools.map((x) => x.name).sort();
    expect(names).toEqual(
      ['describe_table', 'explain_metric', 'get_lineage', 'get_query_result', 'get_semantic_model', 'list_catalogs', 'list_schemas', 'list_tables', 'list_workspaces', 'query_metric', 'read_doc_page', 'run_sql', 'search_docs', 'search_semantic'].sort(),
    );
    const runSql = (await c.listTools()).tools.find((x) => x.name === 'run_sql')!;
    expect(runSql.inputSchema).toMatchObject({ type: 'object', properties: { workspace: expect.any(Object), sql: expect.any(Object) } });
    expect(c.getInstructions()).toContain('run_sql');
  });

  it('browses and runs SQL as the token: caps, paging by cursor, writes refused then allowed', async () => {
    const c = await connect(admin.token!);
    expect((await call(c, 'list_workspaces')).value.map((w: any) => w.slug)).toContain('default');
    expect((await call(c, 'list_catalogs', { workspace: 'default' })).value.map((x: any) => x.slug)).toContain('warehouse');

    const first = await call(c, 'run_sql', { workspace: 'default', sql: 'SELECT range AS n FROM range(12) ORDER BY n' });
    expect(first.isError, first.text).toBe(false);
    expect(first.value).toMatchObject({ status: 'done', columns: ['n'], truncated: true, total_rows: 12 });
    expect(first.value.rows).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    const second = await call(c, 'get_query_result', { cursor: first.value.next_cursor });
    expect(second.value.rows).toEqual([5, 6, 7, 8, 9].map((n) => ({ n })));
    const third = await call(c, 'get_query_result', { cursor: second.value.next_cursor });
    expect(third.value).toMatchObject({ rows: [{ n: 10 }, { n: 11 }], truncated: false, next_cursor: null });
    // The byte cap cuts rows too.
    const wide = await call(c, 'run_sql', { workspace: 'default', sql: "SELECT repeat('x', 2000) AS big FROM range(5)" });
    expect(wide.value.rows.length).toBeLessThan(5);
    expect(wide.value.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(wide.value.rows))).toBeLessThanOrEqual(4096);

    const write = await call(c, 'run_sql', { workspace: 'default', sql: 'CREATE TABLE mcp_t AS SELECT 1 AS x', agent_id: agentId });
    expect(write.isError).toBe(true);
    expect(write.text).toContain('MCP_ALLOW_WRITES');
    (t.api.ctx.config as { MCP_ALLOW_WRITES: boolean }).MCP_ALLOW_WRITES = true;
    try {
      expect((await call(c, 'run_sql', { workspace: 'default', sql: 'CREATE TABLE mcp_t AS SELECT 1 AS x' })).isError).toBe(false);
    } finally {
      (t.api.ctx.config as { MCP_ALLOW_WRITES: boolean }).MCP_ALLOW_WRITES = false;
    }
    expect((await call(c, 'list_tables', { workspace: 'default', catalog: 'warehouse', schema: 'main' })).value.map((x: any) => x.name)).toContain('mcp_t');
    expect((await call(c, 'describe_table', { workspace: 'default', catalog: 'warehouse', schema: 'main', table: 'mcp_t' })).value.columns.map((x: any) => x.name)).toEqual(['x']);
    // Policy still applies, and a failing statement is a tool error with the API's code.
    expect((await call(c, 'run_sql', { workspace: 'default', sql: "ATTACH 'x.db' AS x" })).text).toContain('sql_not_allowed');
    expect((await call(c, 'run_sql', { workspace: 'default' })).text).toContain('invalid arguments');
    const graph = await call(c, 'get_lineage', { workspace: 'default', catalog: 'warehouse', schema: 'main', table: 'mcp_t' });
    expect(graph.isError, graph.text).toBe(false);
    expect(graph.value).toMatchObject({ truncated: false, hidden: false });
  });

  it('semantic tools: search, read a model, explain and query a metric', async () => {
    const S = '/api/workspaces/default/semantic/models';
    for (const [path, body] of [
      [S, { slug: 'mcpm', name: 'MCP model' }],
      [`${S}/mcpm/datasets`, { name: 't', catalog: 'warehouse', schema_name: 'main', table_name: 'mcp_t', primary_key: ['x'] }],
      [`${S}/mcpm/dimensions`, { name: 'x_dim', dataset: 't', expr: 'x' }],
      [`${S}/mcpm/metrics`, { name: 'x_total', dataset: 't', agg: 'sum', expr: 'x', synonyms: ['grand total'] }],
    ] as const) {
      const r = await t.req('POST', path, { body, as: admin });
      expect(r.status, r.text).toBe(201);
    }
    const c = await connect(admin.token!);
    expect((await call(c, 'search_semantic', { workspace: 'default', q: 'grand total' })).value.items[0]).toMatchObject({ kind: 'metric', name: 'x_total' });
    expect((await call(c, 'get_semantic_model', { workspace: 'default', model: 'mcpm' })).value.metrics.map((m: any) => m.name)).toEqual(['x_total']);
    const explained = await call(c, 'explain_metric', { workspace: 'default', model: 'mcpm', metrics: ['x_total'] });
    expect(explained.value.sql).toMatch(/sum\(/i);
    expect(explained.value.metrics[0]).toMatchObject({ name: 'x_total', agg: 'sum' });
    const computed = await call(c, 'query_metric', { workspace: 'default', model: 'mcpm', metrics: ['x_total'], dimensions: ['x_dim'] });
    expect(computed.isError, computed.text).toBe(false);
    expect(computed.value.status, JSON.stringify(computed.value)).toBe('done');
    // sum() is a 128-bit integer in DuckDB: it travels as a string, exact.
    expect(computed.value.rows.map((r: any) => [Number(r.x_dim), Number(r.x_total)])).toEqual([[1, 1]]);
    expect(computed.value.sql).toBe((await call(c, 'explain_metric', { workspace: 'default', model: 'mcpm', metrics: ['x_total'], dimensions: ['x_dim'] })).value.sql);
    expect((await call(c, 'query_metric', { workspace: 'default', model: 'mcpm', metrics: ['nope'] })).text).toContain('unknown_metric');
  });

  it('reaches nothing the token cannot: another workspace, another user’s query', async () => {
    const admins = await connect(admin.token!);
    const mine = await call(admins, 'run_sql', { workspace: 'default', sql: 'SELECT 1 AS one' });
    const stranger = await newUser(t, admin);
    const c = await connect(stranger.token!);
    expect((await call(c, 'list_workspaces')).value).toEqual([]);
    const r = await call(c, 'list_catalogs', { workspace: 'default' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/not_found/);
    expect((await call(c, 'run_sql', { workspace: 'default', sql: 'SELECT 1', agent_id: agentId })).isError).toBe(true);
    expect((await call(c, 'get_query_result', { query_id: mine.value.query_id })).isError).toBe(true);
  });

  it('documentation tools search and read the project’s docs', async () => {
    const c = await connect(admin.token!);
    const found = await call(c, 'search_docs', { query: 'SQL session staging files', limit: 3 });
    expect(found.value.results.length).toBeGreaterThan(0);
    expect(found.value.results.map((x: any) => x.path)).toContain('sql-sessions.md');
    // the count is clamped to 1..10 (spec Limits), not refused
    const many = await call(c, 'search_docs', { query: 'catalog', limit: 50 });
    expect([many.isError, many.value.results.length]).toEqual([false, 10]);
    const none = await call(c, 'search_docs', { query: 'SQL session staging files', limit: 0 });
    expect([none.isError, none.value.results.length]).toEqual([false, 1]);
    const page = await call(c, 'read_doc_page', { path: 'sql-sessions.md' });
    expect(page.value).toMatchObject({ title: 'SQL sessions', path: 'sql-sessions.md' });
    expect(page.value.text).toContain('staging');
    expect((await call(c, 'read_doc_page', { path: 'nope.md' })).isError).toBe(true);
  });

  it('refuses without a token (401), from a foreign Origin (403), and when switched off (503); counts tool calls', async () => {
    const rpc = (headers: Record<string, string>) =>
      fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
    expect((await rpc({})).status).toBe(401);
    expect((await rpc({ authorization: 'Bearer eid_pat_not_a_token' })).status).toBe(401);
    const foreign = await rpc({ authorization: `Bearer ${admin.token}`, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error).toBe('forbidden');
    expect((await rpc({ authorization: `Bearer ${admin.token}`, origin: 'https://allowed.example' })).status).toBe(200);
    (t.api.ctx.config as { MCP_ENABLED: boolean }).MCP_ENABLED = false;
    try {
      expect((await rpc({ authorization: `Bearer ${admin.token}` })).status).toBe(503);
    } finally {
      (t.api.ctx.config as { MCP_ENABLED: boolean }).MCP_ENABLED = true;
    }
    // GET (a server-sent stream) is not offered: 405 with Allow, in the envelope with the spec's derived code
    const get = await fetch(`${t.url}/mcp`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${admin.token}` } });
    expect([get.status, get.headers.get('allow'), (await get.json()).error]).toEqual([405, 'POST', 'bad_request']);
    // a truncated JSON body is a JSON-RPC parse error object (code -32700, id null), not an empty 400
    const truncated = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${admin.token}` },
      body: '{"jsonrpc": "2.0", "id": 1, "method": "tools/li',
    });
    expect(truncated.status).toBe(400);
    expect(await truncated.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.stringContaining('Parse error') }, id: null });
    const metrics = (await t.req('GET', '/api/metrics')).text;
    expect(metrics).toMatch(/eider_mcp_tool_calls_total\{tool="run_sql",outcome="ok"\} \d+/);
    expect(metrics).toMatch(/eider_mcp_tool_calls_total\{tool="run_sql",outcome="tool_error"\} \d+/);
  });
});
