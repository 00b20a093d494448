// The semantic layer against the real stack: a real agent process writes Iceberg tables through the query endpoint,
// the catalog service holds them, and every compiled statement is submitted through POST /queries and compared with
// hand-written SQL over the same tables.
import { beforeAll, describe, expect, it } from 'vitest';
import { newUser, type Caller, type Res } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const S = '/api/workspaces/default/semantic';
let today: string;

async function run(sql: string): Promise<Record<string, unknown>[]> {
  const submit = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: agentId }, as: admin });
  if (submit.status !== 202) throw new Error(`submit ${submit.status}: ${submit.text}\n${sql}`);
  const final = await t.req('GET', `/api/queries/${submit.body.id}?wait_timeout_s=60`, { as: admin });
  if (final.body.status !== 'done') throw new Error(`query ${final.body.status}: ${final.body.error}\n${sql}`);
  const rows = await t.req('GET', `/api/queries/${submit.body.id}/rows?limit=1000`, { as: admin });
  return rows.body.rows;
}

const call = (method: string, path: string, body?: unknown, as: Caller = admin) => t.req(method, path, { body, as });

function expectError(r: Res, status: number, code: string) {
  expect({ status: r.status, error: r.body?.error }, r.text).toEqual({ status, error: code });
  expect(r.body.detail).toEqual({ error: code, detail: r.body.message });
}

async function compiled(body: Record<string, unknown>): Promise<string> {
  const r = await call('POST', `${S}/compile`, { model: 'shop', ...body });
  expect(r.status, r.text).toBe(200);
  return r.body.sql;
}

const { t, admin, agentId } = await stackWithAgent({
  env: { AGENT_HEARTBEAT_INTERVAL_S: '0.5', AGENT_HEARTBEAT_TTL_S: '5' },
  agent: { name: 'semantic' },
});
beforeAll(async () => {
  await run('CREATE SCHEMA IF NOT EXISTS shop');
  await run(`CREATE TABLE shop.regions AS SELECT * FROM (VALUES (1, 'north'), (2, 'south'), (3, 'east')) AS r(id, name)`);
  // customer 7 has no region; customer ids run 1..7
  await run(`CREATE TABLE shop.customers AS
    SELECT range + 1 AS id, 'c' || (range + 1) AS name, CASE WHEN range = 6 THEN NULL ELSE range % 3 + 1 END AS region_id,
           CASE WHEN range % 2 = 0 THEN 'retail' ELSE 'wholesale' END AS segment,
           CAST(DATE '2023-01-15' + CAST(range * 40 AS INTEGER) AS DATE) AS signup_date
      FROM range(7)`);
  // 900 days of orders ending today; every 11th order names a customer that does not exist (a left join keeps it)
  await run(`CREATE TABLE shop.orders AS
    SELECT range AS id, CASE WHEN range % 11 = 0 THEN 99 ELSE range % 7 + 1 END AS customer_id,
           CAST((range * 37) % 500 AS DOUBLE) / 4 AS amount,
           CASE WHEN range % 3 = 0 THEN 'refunded' ELSE 'paid' END AS status,
           CAST(current_date - CAST(range AS INTEGER) AS DATE) AS order_date,
           'x' || (range % 5) AS channel
      FROM range(900)`);
  today = String((await run('SELECT CAST(current_date AS VARCHAR) AS d'))[0].d);
}, 180_000);

describe('models and definitions', () => {
  it('builds the shop model through the API with its rules and errors', async () => {
    const created = await call('POST', `${S}/models`, { slug: 'shop', name: 'Shop', description: 'orders, customers, regions' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ slug: 'shop', status: 'draft', imported: false, provider: null, validation: { state: 'unchecked', problems: [] } });
    expectError(await call('POST', `${S}/models`, { slug: 'shop', name: 'Again' }), 409, 'conflict');
    const M = `${S}/models/shop`;
    for (const [name, table, pk] of [['orders', 'orders', ['id']], ['customers', 'customers', ['id']], ['regions', 'regions', ['id']]] as const) {
      const r = await call('POST', `${M}/datasets`, { name, catalog: 'warehouse', schema_name: 'shop', table_name: table, primary_key: pk });
      expect(r.status, r.text).toBe(201);
    }
    expectError(await call('POST', `${M}/datasets`, { name: 'orders', catalog: 'warehouse', schema_name: 'shop', table_name: 'orders', primary_key: [] }), 409, 'conflict');
    expectError(await call('POST', `${M}/datasets`, { name: 'elsewhere', catalog: 'nowhere', schema_name: 'shop', table_name: 'orders', primary_key: [] }), 403, 'catalog_not_attached');
    // relationships: left is the many side; one_to_many is refused; the unique side needs a declared key
    const oneToMany = await call('POST', `${M}/relationships`, { name: 'x', left_dataset: 'customers', right_dataset: 'orders', kind: 'one_to_many', join_columns: [{ left: 'id', right: 'customer_id' }] });
    expectError(oneToMany, 422, 'unprocessable_content');
    expect(oneToMany.body.message).toContain('one_to_many is not accepted');
    // primary_key is optional: a dataset without one is accepted (as none); only the unique side of a join needs one
    const keyless = await call('POST', `${M}/datasets`, { name: 'keyless', catalog: 'warehouse', schema_name: 'shop', table_name: 'regions' });
    expect(keyless.status, keyless.text).toBe(201);
    expect(keyless.body.primary_key).toEqual([]);
    expectError(await call('POST', `${M}/relationships`, { name: 'to_keyless', left_dataset: 'orders', right_dataset: 'keyless', join_columns: [{ left: 'customer_id', right: 'id' }] }), 422, 'primary_key_required');
    expectError(await call('POST', `${M}/relationships`, { name: 'to_ghost', left_dataset: 'orders', right_dataset: 'ghost', join_columns: [{ left: 'a', right: 'b' }] }), 422, 'unknown_dataset');
    expect((await call('DELETE', `${M}/datasets/keyless`)).status).toBe(204);
    for (const [name, left, right, l, r] of [['orders_customer', 'orders', 'customers', 'customer_id', 'id'], ['customer_region', 'customers', 'regions', 'region_id', 'id']]) {
      const res = await call('POST', `${M}/relationships`, { name, left_dataset: left, right_dataset: right, join_columns: [{ left: l, right: r }] });
      expect(res.status, res.text).toBe(201);
      expect(res.body.kind).toBe('many_to_one');
    }
    const dims = [
      { name: 'order_date', dataset: 'orders', kind: 'time', is_default_time: true, synonyms: ['day', 'purchase date'] },
      { name: 'status', dataset: 'orders', sample_values: ['paid', 'refunded'] },
      { name: 'channel', dataset: 'orders' },
      { name: 'segment', dataset: 'customers', synonyms: ['customer type'] },
      { name: 'signup_date', dataset: 'customers', kind: 'time', time_grains: ['month', 'year'], is_default_time: true },
      { name: 'region', dataset: 'regions', expr: 'upper(name)', display_name: 'Sales region', synonyms: ['territory', 'area'] },
    ];
    for (const d of dims) {
      const r = await call('POST', `${M}/dimensions`, d);
      expect(r.status, r.text).toBe(201);
    }
    expectError(await call('POST', `${M}/dimensions`, { name: 'region', dataset: 'orders' }), 409, 'conflict');
    expectError(await call('POST', `${M}/dimensions`, { name: 'bad', dataset: 'orders', expr: 'amount) AS x FROM t; DROP TABLE y; SELECT (1' }), 422, 'invalid_expression');
    expectError(await call('POST', `${M}/dimensions`, { name: 'bad', dataset: 'orders', expr: '(SELECT max(id) FROM warehouse.shop.customers)' }), 422, 'invalid_expression');
    const metrics = [
      { name: 'revenue', dataset: 'orders', agg: 'sum', expr: 'amount', filter: "status = 'paid'", display_name: 'Revenue', synonyms: ['sales', 'turnover'], caveat: 'paid orders only' },
      { name: 'order_count', dataset: 'orders', agg: 'count' },
      { name: 'refunds', dataset: 'orders', agg: 'sum', expr: 'amount', filter: "status = 'refunded'" },
      { name: 'avg_amount', dataset: 'orders', agg: 'avg', expr: 'amount' },
      { name: 'customers_signed_up', dataset: 'customers', agg: 'count_distinct', expr: 'id' },
    ];
    for (const m of metrics) {
      const r = await call('POST', `${M}/metrics`, m);
      expect(r.status, r.text).toBe(201);
    }
    expectError(await call('POST', `${M}/metrics`, { name: 'revenue', dataset: 'orders', agg: 'sum', expr: 'amount' }), 409, 'conflict');
    expectError(await call('POST', `${M}/metrics`, { name: 'nope', dataset: 'orders', agg: 'sum', expr: 'sum(amount)' }), 422, 'invalid_expression');
    expectError(await call('POST', `${M}/metrics`, { name: 'nope', dataset: 'orders', agg: 'sum', expr: 'amount', time_dimension: 'status' }), 422, 'unknown_dimension');
    // a customer metric cannot be measured on the order date: orders are the many side of customers
    expectError(await call('POST', `${M}/metrics`, { name: 'nope', dataset: 'customers', agg: 'count', time_dimension: 'order_date' }), 422, 'no_join_path');

    // delete rules
    const inUse = await call('DELETE', `${M}/datasets/orders`);
    expectError(inUse, 409, 'dataset_in_use');
    expect(inUse.body.details.dependents).toEqual(
      expect.arrayContaining(['dimension order_date', 'dimension status', 'metric revenue', 'metric order_count', 'relationship orders_customer']),
    );
    await call('POST', `${M}/metrics`, { name: 'dated_revenue', dataset: 'orders', agg: 'sum', expr: 'amount', time_dimension: 'order_date' });
    const dimInUse = await call('DELETE', `${M}/dimensions/order_date`);
    expectError(dimInUse, 409, 'dimension_in_use');
    expect(dimInUse.body.details.dependents).toEqual(['metric dated_revenue']);
    expect((await call('DELETE', `${M}/metrics/dated_revenue`)).status).toBe(204);
    expectError(await call('DELETE', `${M}/metrics/dated_revenue`), 404, 'not_found');

    const model = (await call('GET', M)).body;
    expect(model.datasets.map((d: any) => d.name)).toEqual(['customers', 'orders', 'regions']);
    expect(model.metrics.find((m: any) => m.name === 'revenue')).toMatchObject({ agg: 'sum', filter: "status = 'paid'", caveat: 'paid orders only', validation_state: 'unchecked' });
    expect(model.dimensions.find((d: any) => d.name === 'order_date')).toMatchObject({ kind: 'time', time_grains: ['day', 'week', 'month', 'quarter', 'year'], is_default_time: true });
  });

  it('roles: readers read and compile, writers define, owners publish and delete', async () => {
    const reader = await newUser(t, admin);
    const writer = await newUser(t, admin);
    await call('PUT', `/api/workspaces/default/members/${reader.id}`, { role: 'reader' });
    await call('PUT', `/api/workspaces/default/members/${writer.id}`, { role: 'writer' });
    expect((await call('GET', `${S}/models`, undefined, reader)).body.map((m: any) => m.slug)).toContain('shop');
    expect((await call('POST', `${S}/compile`, { model: 'shop', metrics: ['order_count'] }, reader)).status).toBe(200);
    expectError(await call('POST', `${S}/models`, { slug: 'r', name: 'R' }, reader), 403, 'forbidden');
    expectError(await call('POST', `${S}/models/shop/metrics`, { name: 'm', dataset: 'orders', agg: 'count' }, reader), 403, 'forbidden');
    expect((await call('POST', `${S}/models`, { slug: 'scratch', name: 'Scratch' }, writer)).status).toBe(201);
    expectError(await call('POST', `${S}/models/scratch/publish`, undefined, writer), 403, 'forbidden');
    expectError(await call('DELETE', `${S}/models/scratch`, undefined, writer), 403, 'forbidden');
    expect((await call('PATCH', `${S}/models/scratch`, { description: 'for a test' }, writer)).body.description).toBe('for a test');
    expect((await call('DELETE', `${S}/models/scratch`)).status).toBe(204);
    expectError(await call('GET', `${S}/models/scratch`), 404, 'not_found');
  });
});

// ---- compile against hand-written SQL ---------------------------------------------------------------------------

const GRAINS = ['day', 'week', 'month', 'quarter', 'year'] as const;
type Grain = (typeof GRAINS)[number];

const iso = (d: Date) => d.toISOString().slice(0, 10);
function truncate(d: Date, grain: Grain): Date {
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (grain === 'day') return new Date(Date.UTC(y, m, d.getUTCDate()));
  if (grain === 'week') return new Date(Date.UTC(y, m, d.getUTCDate() - ((d.getUTCDay() + 6) % 7)));
  if (grain === 'month') return new Date(Date.UTC(y, m, 1));
  if (grain === 'quarter') return new Date(Date.UTC(y, m - (m % 3), 1));
  return new Date(Date.UTC(y, 0, 1));
}
function shift(d: Date, grain: Grain, n: number): Date {
  if (grain === 'day') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + n));
  if (grain === 'week') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 7 * n));
  const months = grain === 'month' ? n : grain === 'quarter' ? 3 * n : 12 * n;
  // DuckDB's month arithmetic clamps to the month's last day, as here
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1));
  const last = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  return new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth(), Math.min(d.getUTCDate(), last)));
}
/** [start, end) of a range as the decision defines it, worked out here independently of the compiler. */
function bounds(kind: string, grain: Grain, n: number): [string, string] {
  const now = new Date(`${today}T00:00:00Z`);
  const tomorrow = shift(now, 'day', 1);
  if (kind === 'last_complete') return [iso(shift(truncate(now, grain), grain, -n)), iso(truncate(now, grain))];
  if (kind === 'trailing') return [iso(shift(tomorrow, grain, -n)), iso(tomorrow)];
  if (kind === 'to_date') return [iso(truncate(now, grain)), iso(tomorrow)];
  return ['2024-02-10', '2025-03-05'];
}
const dateTrunc = (grain: Grain, col: string) => `CAST(date_trunc('${grain}', ${col}) AS DATE)`;

describe('compile', () => {
  it('every time-range kind at every grain equals hand-written SQL (revenue by region and period, through two joins)', async () => {
    for (const kind of ['last_complete', 'trailing', 'to_date', 'absolute'] as const) {
      for (const grain of GRAINS) {
        const range = kind === 'absolute' ? { kind, start: '2024-02-10', end: '2025-03-05' } : { kind, grain, n: 2 };
        const sql = await compiled({ metrics: ['revenue', 'order_count'], dimensions: ['region'], grain, time_range: range });
        const [start, end] = bounds(kind, grain, 2);
        const hand = `
          SELECT upper(r.name) AS region, ${dateTrunc(grain, 'o.order_date')} AS order_date__${grain},
                 sum(o.amount) FILTER (WHERE o.status = 'paid') AS revenue, count(*) AS order_count
            FROM warehouse.shop.orders o
            LEFT JOIN warehouse.shop.customers c ON c.id = o.customer_id
            LEFT JOIN warehouse.shop.regions r ON r.id = c.region_id
           WHERE o.order_date >= DATE '${start}' AND o.order_date < DATE '${end}'
           GROUP BY ALL ORDER BY region NULLS LAST, order_date__${grain}`;
        // The two metrics have different filters, so the compiler computes them apart and joins them: a period with
        // orders but no paid ones keeps its row with revenue null, as the FILTER form gives.
        expect({ kind, grain, rows: await run(sql) }).toEqual({ kind, grain, rows: await run(hand) });
      }
    }
  });

  it('metric filters apply before aggregation; a grain alone groups by the default time dimension', async () => {
    // the first half of last year: inside the 900 days of orders
    const year = Number(today.slice(0, 4)) - 1;
    const sql = await compiled({ metrics: ['revenue'], grain: 'month', time_range: { kind: 'absolute', start: `${year}-01-01`, end: `${year}-07-01` } });
    const hand = `SELECT CAST(date_trunc('month', order_date) AS DATE) AS m, sum(amount) AS revenue FROM warehouse.shop.orders
                   WHERE status = 'paid' AND order_date >= DATE '${year}-01-01' AND order_date < DATE '${year}-07-01' GROUP BY 1 ORDER BY 1`;
    const got = await run(sql);
    expect(got.map((r) => [r.order_date__month, r.revenue])).toEqual((await run(hand)).map((r) => [r.m, r.revenue]));
    expect(got.length).toBe(6);
  });

  it('two-hop join with filters of every operator, order and limit', async () => {
    const filters = [
      { dimension: 'segment', op: 'in', value: ['retail', 'wholesale'] },
      { dimension: 'region', op: '!=', value: 'EAST' },
      { dimension: 'channel', op: 'not_in', value: ['x4'] },
      { dimension: 'channel', op: 'like', value: 'x%' },
      { dimension: 'status', op: '=', value: 'paid' },
      { dimension: 'order_date', op: '>=', value: '2024-01-01' },
      { dimension: 'order_date', op: '<', value: '2025-01-01' },
      { dimension: 'region', op: 'is_not_null' },
    ];
    const sql = await compiled({ metrics: ['order_count', 'avg_amount'], dimensions: ['region', 'segment'], filters, order_by: [{ field: 'order_count', direction: 'desc' }], limit: 4 });
    const hand = `
      SELECT upper(r.name) AS region, c.segment, count(*) AS order_count, avg(o.amount) AS avg_amount
        FROM warehouse.shop.orders o LEFT JOIN warehouse.shop.customers c ON o.customer_id = c.id LEFT JOIN warehouse.shop.regions r ON c.region_id = r.id
       WHERE c.segment IN ('retail', 'wholesale') AND upper(r.name) <> 'EAST' AND o.channel NOT IN ('x4') AND o.channel LIKE 'x%'
         AND o.status = 'paid' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01' AND r.name IS NOT NULL
       GROUP BY 1, 2 ORDER BY order_count DESC, region, segment LIMIT 4`;
    expect(await run(sql)).toEqual(await run(hand));
    const nulls = await compiled({ metrics: ['order_count'], dimensions: ['region'], filters: [{ dimension: 'region', op: 'is_null' }] });
    // orders of customer 7 (no region) and of the missing customer 99
    expect(await run(nulls)).toEqual(await run(`SELECT NULL AS region, count(*) AS order_count FROM warehouse.shop.orders o LEFT JOIN warehouse.shop.customers c ON o.customer_id = c.id WHERE c.region_id IS NULL`));
  });

  it('filter values cannot inject SQL; identifiers are quoted; the same request gives the same text', async () => {
    const evil = "paid' OR 1=1; DROP TABLE warehouse.shop.orders; --";
    const body = { metrics: ['order_count'], dimensions: ['status'], filters: [{ dimension: 'status', op: '=', value: evil }] };
    const sql = await compiled(body);
    expect(sql).toContain(`'paid'' OR 1=1; DROP TABLE warehouse.shop.orders; --'`);
    expect(await run(sql)).toEqual([]);
    expect(await compiled(body)).toBe(sql);
    expect(sql).toContain('"warehouse"."shop"."orders"');
    const inList = await compiled({ metrics: ['order_count'], filters: [{ dimension: 'status', op: 'in', value: ["a'b", 1, true] }] });
    expect(inList).toContain(`IN ('a''b', 1, TRUE)`);
    expectError(await call('POST', `${S}/compile`, { model: 'shop', metrics: ['order_count'], filters: [{ dimension: 'status', op: '=', value: { sql: 'x' } }] }), 422, 'unprocessable_content');
    expectError(await call('POST', `${S}/compile`, { model: 'shop', metrics: ['order_count'], filters: [{ dimension: 'status', op: '=', value: null }] }), 422, 'unprocessable_content');
    expectError(await call('POST', `${S}/compile`, { model: 'shop', metrics: ['order_count'], filters: [{ dimension: 'status', op: 'regex', value: 'x' }] }), 422, 'unprocessable_content');
    expectError(await call('POST', `${S}/compile`, { model: 'shop', metrics: ['order_count'], time_range: { kind: 'absolute', start: '2024-02-30', end: '2024-03-01' } }), 422, 'unprocessable_content');
    expectError(await call('POST', `${S}/compile`, { model: 'shop', metrics: ['order_count'], time_range: { kind: 'absolute', start: "2024-01-01' OR '1", end: '2024-03-01' } }), 422, 'unprocessable_content');
  });

  it('fan-out is guarded: a customer metric is never grouped by an order dimension; an order metric by a region is not repeated', async () => {
    const fan = await call('POST', `${S}/compile`, { model: 'shop', metrics: ['customers_signed_up'], dimensions: ['status'] });
    expectError(fan, 422, 'no_join_path');
    expect(fan.body.details.alternatives).toEqual(['region', 'segment', 'signup_date']);
    // sum of order amounts by region equals the plain sum: each order row is counted once
    const rows = await run(await compiled({ metrics: ['avg_amount', 'order_count'], dimensions: ['region'] }));
    const total = rows.reduce((s, r) => s + Number(r.order_count), 0);
    expect(total).toBe(900);
    // metrics of two datasets together: one row per dimension combination
    const both = await run(await compiled({ metrics: ['order_count', 'customers_signed_up'], dimensions: ['segment'] }));
    expect(both).toEqual(
      await run(`WITH o AS (SELECT c.segment, count(*) AS n FROM warehouse.shop.orders o LEFT JOIN warehouse.shop.customers c ON o.customer_id = c.id GROUP BY 1),
                      cu AS (SELECT segment, count(DISTINCT id) AS k FROM warehouse.shop.customers GROUP BY 1)
                 SELECT o.segment, o.n AS order_count, cu.k AS customers_signed_up FROM o LEFT JOIN cu ON o.segment = cu.segment ORDER BY 1 NULLS LAST`),
    );
  });

  it('422 names the legal alternatives', async () => {
    const unknownMetric = await call('POST', `${S}/compile`, { model: 'shop', metrics: ['profit'] });
    expectError(unknownMetric, 422, 'unknown_metric');
    expect(unknownMetric.body.details.alternatives).toEqual(['avg_amount', 'customers_signed_up', 'order_count', 'refunds', 'revenue']);
    const unknownDim = await call('POST', `${S}/compile`, { model: 'shop', metrics: ['revenue'], dimensions: ['planet'] });
    expectError(unknownDim, 422, 'unknown_dimension');
    expect(unknownDim.body.details.alternatives).toEqual(['channel', 'order_date', 'region', 'segment', 'signup_date', 'status']);
    const grain = await call('POST', `${S}/compile`, { model: 'shop', metrics: ['customers_signed_up'], dimensions: ['signup_date'], grain: 'day' });
    expectError(grain, 422, 'unsupported_grain');
    expect(grain.body.details.alternatives).toEqual(['month', 'year']);
    expectError(await call('POST', `${S}/compile`, { model: 'nope', metrics: ['revenue'] }), 404, 'not_found');
    expectError(await call('POST', `${S}/compile?published_only=true`, { model: 'shop', metrics: ['revenue'] }), 422, 'model_not_published');
  });

  it('an ambiguous join path is 422 naming both paths', async () => {
    const r = await call('POST', `${S}/models`, { slug: 'diamond', name: 'Two ways to a region' });
    expect(r.status).toBe(201);
    const D = `${S}/models/diamond`;
    for (const [name, table] of [['orders', 'orders'], ['customers', 'customers'], ['regions', 'regions'], ['buyers', 'customers']]) {
      await call('POST', `${D}/datasets`, { name, catalog: 'warehouse', schema_name: 'shop', table_name: table, primary_key: ['id'] });
    }
    for (const [name, l, rr, lc, rc] of [['customer', 'orders', 'customers', 'customer_id', 'id'], ['buyer', 'orders', 'buyers', 'customer_id', 'id'], ['c_region', 'customers', 'regions', 'region_id', 'id'], ['b_region', 'buyers', 'regions', 'region_id', 'id']]) {
      expect((await call('POST', `${D}/relationships`, { name, left_dataset: l, right_dataset: rr, join_columns: [{ left: lc, right: rc }] })).status).toBe(201);
    }
    await call('POST', `${D}/dimensions`, { name: 'region', dataset: 'regions', expr: 'name' });
    await call('POST', `${D}/metrics`, { name: 'n', dataset: 'orders', agg: 'count' });
    const amb = await call('POST', `${S}/compile`, { model: 'diamond', metrics: ['n'], dimensions: ['region'] });
    expectError(amb, 422, 'ambiguous_join_path');
    expect(amb.body.details.alternatives).toEqual(['orders > buyer > buyers > b_region > regions', 'orders > customer > customers > c_region > regions']);
    const legal = await call('GET', `${D}/metrics/n/dimensions`);
    expect(legal.body).toEqual([]);
    expect((await call('DELETE', `${S}/models/diamond`)).status).toBe(204);
  });
});

describe('validation and lifecycle', () => {
  it('validates against the live catalog, publishes, and a dropped table breaks the model', async () => {
    const M = `${S}/models/shop`;
    // a metric over a column that does not exist, and a sum over text: both broken
    await call('POST', `${M}/metrics`, { name: 'ghost', dataset: 'orders', agg: 'sum', expr: 'no_such_column' });
    await call('POST', `${M}/metrics`, { name: 'text_sum', dataset: 'orders', agg: 'sum', expr: 'channel' });
    const v = await call('POST', `${M}/validate`);
    expect(v.status, v.text).toBe(200);
    expect(v.body.validation.state).toBe('broken');
    expect(v.body.validation.problems).toEqual([
      { kind: 'metric', name: 'ghost', message: 'column orders.no_such_column does not exist' },
      { kind: 'metric', name: 'text_sum', message: 'sum needs a number; column channel is VARCHAR' },
    ]);
    expect(v.body.metrics.find((m: any) => m.name === 'revenue').validation_state).toBe('ok');
    const pub = await call('POST', `${M}/publish`);
    expectError(pub, 422, 'model_broken');
    expect(pub.body.details.problems.length).toBe(2);
    // an edit resets the metric to unchecked
    const fixed = await call('PATCH', `${M}/metrics/ghost`, { expr: 'amount', caveat: null });
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.body).toMatchObject({ expr: 'amount', validation_state: 'unchecked' });
    expect((await call('GET', M)).body.validation.state).toBe('unchecked');
    await call('DELETE', `${M}/metrics/text_sum`);
    const published = await call('POST', `${M}/publish`);
    expect(published.status, published.text).toBe(200);
    expect(published.body).toMatchObject({ status: 'published', validation: { state: 'ok', problems: [] } });
    expect((await call('GET', `${S}/models?status=published`)).body.map((m: any) => m.slug)).toEqual(['shop']);
    expect((await call('GET', `${S}/models?status=draft&status=deprecated`)).body.map((m: any) => m.slug)).not.toContain('shop');
    expectError(await call('GET', `${S}/models?status=gone`), 422, 'unprocessable_content');
    expect((await call('POST', `${S}/compile?published_only=true`, { model: 'shop', metrics: ['revenue'] })).status).toBe(200);

    // a dataset on a table about to be dropped
    await run('CREATE TABLE shop.doomed AS SELECT 1 AS id');
    await call('POST', `${S}/models`, { slug: 'doomed', name: 'Doomed' });
    await call('POST', `${S}/models/doomed/datasets`, { name: 'd', catalog: 'warehouse', schema_name: 'shop', table_name: 'doomed', primary_key: ['id'] });
    expect((await call('POST', `${S}/models/doomed/publish`)).body.status).toBe('published');
    expect((await call('DELETE', '/api/workspaces/default/catalogs/warehouse/schemas/shop/tables/doomed')).status).toBe(204);
    const after = (await call('GET', `${S}/models/doomed`)).body;
    expect(after.validation.state).toBe('broken');
    expect(after.datasets[0].validation_state).toBe('broken');
    const again = (await call('POST', `${S}/models/doomed/validate`)).body;
    expect(again.validation.problems).toEqual([{ kind: 'dataset', name: 'd', message: 'table warehouse.shop.doomed does not exist' }]);
    // Dropped through SQL, the same: the model is broken without anyone validating it.
    await run('CREATE TABLE shop.doomed AS SELECT 1 AS id');
    expect((await call('POST', `${S}/models/doomed/validate`)).body.validation.state).toBe('ok');
    await run('DROP TABLE shop.doomed');
    await expect.poll(async () => (await call('GET', `${S}/models/doomed`)).body.validation.state).toBe('broken');
    expect((await call('GET', `${S}/models/doomed`)).body.validation.problems).toEqual([
      { kind: 'dataset', name: 'd', message: 'table warehouse.shop.doomed was dropped' },
    ]);
    expect((await call('POST', `${S}/models/doomed/deprecate`)).body.status).toBe('deprecated');
    expectError(await call('POST', `${S}/models/doomed/publish`), 409, 'invalid_transition');
    await call('DELETE', `${S}/models/doomed`);
  });

  it('search, legal dimensions per metric and the table’s semantic route', async () => {
    const s = await call('GET', `${S}/search?q=turnover`);
    expect(s.body.items).toEqual([expect.objectContaining({ kind: 'metric', model: 'shop', name: 'revenue', display_name: 'Revenue' })]);
    expect(s.body.has_more).toBe(false);
    const area = await call('GET', `${S}/search?q=area`);
    expect(area.body.items[0]).toMatchObject({ kind: 'dimension', name: 'region' });
    expectError(await call('GET', `${S}/search`), 422, 'unprocessable_content');
    const dims = await call('GET', `${S}/models/shop/metrics/revenue/dimensions`);
    expect(dims.body.map((d: any) => [d.name, d.join_path])).toEqual([
      ['channel', null],
      ['order_date', null],
      ['region', 'orders > orders_customer > customers > customer_region > regions'],
      ['segment', 'orders > orders_customer > customers'],
      ['signup_date', 'orders > orders_customer > customers'],
      ['status', null],
    ]);
    const onTable = await call('GET', '/api/workspaces/default/catalogs/warehouse/schemas/shop/tables/regions/semantic');
    expect(onTable.status, onTable.text).toBe(200);
    expect(onTable.body.map((x: any) => `${x.model}:${x.kind}:${x.name}`)).toEqual(['shop:dataset:regions', 'shop:relationship:customer_region', 'shop:dimension:region']);
    const byColumn = await call('GET', '/api/workspaces/default/catalogs/warehouse/schemas/shop/tables/orders/semantic?column=amount');
    expect(byColumn.body.map((x: any) => x.name).sort()).toEqual(['avg_amount', 'ghost', 'refunds', 'revenue']);
  });
});
