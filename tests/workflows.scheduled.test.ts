// A scheduled job, as users run one across features, on the real stack (a real agent process, the real catalog
// service and object store): a saved query that builds a table from another → a schedule → a run fired now → its
// query is `origin: scheduled` → the table it wrote has lineage with column detail → a semantic model over it
// (a keyless dataset) validates and compiles → the compiled SQL gives the right numbers → the maintenance scan lists
// the table → the MCP SQL tool reads the same rows. Each step reads what the step before left, so a fix to one
// feature that breaks its neighbour fails here.
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Caller } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const W = '/api/workspaces/default';
const TABLES = `${W}/catalogs/warehouse/schemas`;

const { t, admin, agentId, sql } = await stackWithAgent({ agent: { name: 'workflow-agent' } });
const req = (method: string, path: string, body?: unknown, as: Caller = admin) => t.req(method, path, { body, as });

let mcp: Client | undefined;
afterAll(async () => {
  await mcp?.close().catch(() => undefined);
});

/** Runs `text` through the query endpoint and returns its rows. */
async function rows(text: string): Promise<Record<string, unknown>[]> {
  const q = await sql(text);
  return (await req('GET', `/api/queries/${q.id}/rows?limit=1000`)).body.rows;
}

// What the job must produce from sales.orders: per region, the order count and the revenue.
const EXPECTED = [
  { region: 'east', orders: 3, revenue: 60 },
  { region: 'north', orders: 4, revenue: 100 },
  { region: 'south', orders: 3, revenue: 90 },
];

describe('a scheduled job read by lineage, the semantic layer, maintenance and MCP', () => {
  it('saved query → schedule → run → lineage → semantic model → maintenance scan → MCP, on the same rows', async () => {
    await sql('CREATE SCHEMA IF NOT EXISTS sales');
    await sql('CREATE SCHEMA IF NOT EXISTS mart');
    await sql(`CREATE TABLE sales.orders AS SELECT * FROM (VALUES
        (1, 'north', 10.0), (2, 'north', 20.0), (3, 'north', 30.0), (4, 'north', 40.0),
        (5, 'south', 25.0), (6, 'south', 30.0), (7, 'south', 35.0),
        (8, 'east', 15.0), (9, 'east', 20.0), (10, 'east', 25.0)) AS o(id, region, amount)`);

    // 1. A saved query that builds the mart table, on a schedule, fired now.
    const saved = await req('POST', `${W}/saved-queries`, {
      name: 'region totals',
      sql: 'CREATE TABLE mart.region_totals AS SELECT region, count(*) AS orders, sum(amount) AS revenue FROM sales.orders GROUP BY region',
      default_agent_id: agentId,
    });
    expect(saved.status, saved.text).toBe(201);
    const schedule = await req('POST', `${W}/schedules`, { saved_query_id: saved.body.id, cron: '0 3 * * *', agent_id: agentId });
    expect(schedule.status, schedule.text).toBe(201);
    const fired = await req('POST', `${W}/schedules/${schedule.body.id}/run`);
    expect(fired.status, fired.text).toBe(202);
    const runOf = async () => (await req('GET', `${W}/schedules/${schedule.body.id}/runs`)).body.items.find((r: any) => r.id === fired.body.id);
    await expect.poll(async () => (await runOf())?.status, { timeout: 60_000, interval: 200 }).toBe('done');
    const run = await runOf();
    expect(run).toMatchObject({ schedule_id: schedule.body.id, error: null, query_id: expect.any(String) });
    expect((await req('GET', `${W}/schedules/${schedule.body.id}`)).body.last_status).toBe('done');

    // 2. Its query is the schedule's.
    const query = (await req('GET', `/api/queries/${run.query_id}`)).body;
    expect(query).toMatchObject({ origin: 'scheduled', schedule_id: schedule.body.id, status: 'done', statement_type: 'create' });
    const table = await req('GET', `${TABLES}/mart/tables/region_totals`);
    expect(table.status, table.text).toBe(200);
    expect(table.body.last_write).toMatchObject({ query_id: run.query_id, operation: 'create' });
    // the source was only read: its last write is still its own CTAS
    expect((await req('GET', `${TABLES}/sales/tables/orders`)).body.last_write.query_id).not.toBe(run.query_id);

    // 3. The table it wrote has lineage, with column detail when asked for.
    const lineagePath = `${TABLES}/mart/tables/region_totals/lineage?direction=upstream&depth=1&columns_for=warehouse.mart.region_totals`;
    await expect.poll(async () => (await req('GET', lineagePath)).body.edges?.length ?? 0, { timeout: 10_000 }).toBe(1);
    const graph = (await req('GET', lineagePath)).body;
    expect(graph.edges[0]).toMatchObject({ source: 'warehouse.sales.orders', target: 'warehouse.mart.region_totals', providers: [{ provider: 'execution', column_lineage: 'derived' }] });
    expect(graph.edges[0].columns.map((c: any) => `${c.source_column} -> ${c.target_column}`).sort()).toEqual(['amount -> revenue', 'region -> region']);
    expect(graph.nodes.map((n: any) => [n.key, n.column_count])).toEqual([
      ['warehouse.mart.region_totals', 3],
      ['warehouse.sales.orders', 3],
    ]);

    // 4. A semantic model over it (a dataset without primary_key) validates and compiles.
    const S = `${W}/semantic`;
    const M = `${S}/models/regions`;
    expect((await req('POST', `${S}/models`, { slug: 'regions', name: 'Regions' })).status).toBe(201);
    const dataset = await req('POST', `${M}/datasets`, { name: 'totals', catalog: 'warehouse', schema_name: 'mart', table_name: 'region_totals' });
    expect(dataset.status, dataset.text).toBe(201);
    expect((await req('POST', `${M}/dimensions`, { name: 'region', dataset: 'totals' })).status).toBe(201);
    expect((await req('POST', `${M}/metrics`, { name: 'revenue', dataset: 'totals', agg: 'sum', expr: 'revenue' })).status).toBe(201);
    expect((await req('POST', `${M}/metrics`, { name: 'orders', dataset: 'totals', agg: 'sum', expr: 'orders' })).status).toBe(201);
    const validated = await req('POST', `${M}/validate`);
    expect(validated.status, validated.text).toBe(200);
    expect(validated.body.validation).toMatchObject({ state: 'ok', problems: [] });
    const compiled = await req('POST', `${S}/compile`, { model: 'regions', metrics: ['orders', 'revenue'], dimensions: ['region'], order_by: [{ field: 'region', direction: 'asc' }] });
    expect(compiled.status, compiled.text).toBe(200);

    // 5. The compiled SQL runs through the query endpoint with the right numbers.
    const numbers = (r: Record<string, unknown>) => ({ region: r.region, orders: Number(r.orders), revenue: Number(r.revenue) });
    expect((await rows(compiled.body.sql)).map(numbers)).toEqual(EXPECTED);

    // 6. The maintenance scan reads the new table and lists it.
    const scan = await req('POST', '/api/admin/maintenance/scan');
    expect(scan.status, scan.text).toBe(200);
    expect(scan.body.errors).toEqual([]);
    const health = (await req('GET', `${W}/maintenance/health`)).body as any[];
    expect(health.find((h) => h.schema === 'mart' && h.table === 'region_totals')).toMatchObject({ catalog: 'warehouse' });
    expect((await req('GET', `${TABLES}/mart/tables/region_totals/health`)).body.metrics).toMatchObject({ records: 3 });

    // 7. The MCP SQL tool reads the same rows.
    mcp = new Client({ name: 'workflow-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${admin.token}` } } }));
    const viaMcp = (await mcp.callTool({ name: 'run_sql', arguments: { workspace: 'default', sql: 'SELECT region, orders, revenue FROM mart.region_totals ORDER BY region' } })) as {
      content: Array<{ text: string }>;
      isError?: boolean;
    };
    expect(viaMcp.isError ?? false, viaMcp.content[0]?.text).toBe(false);
    const result = JSON.parse(viaMcp.content[0].text);
    expect(result).toMatchObject({ status: 'done', truncated: false });
    expect(result.rows.map(numbers)).toEqual(EXPECTED);
  }, 240_000);
});
