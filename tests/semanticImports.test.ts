// Semantic-layer imports against a real api, catalog service and object store: the native YAML shape and a dbt
// manifest.json with several semantic models, reconciliation by provider run, bad artifacts, read-only imported
// models, and models hidden from a workspace whose scoped attachment does not grant their tables.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupAdmin, startTestStack, type Caller, type Res, type TestStack } from './support/api.ts';

let t: TestStack;
let admin: Caller & { id: string };
const S = '/api/workspaces/default/semantic';
const TABLES = '/api/workspaces/default/catalogs/warehouse/schemas';

const call = (method: string, path: string, body?: unknown, as: Caller = admin) => t.req(method, path, { body, as });
const importText = (provider: string, text: string, query = '', contentType = 'text/plain', ws = 'default') =>
  t.req('POST', `/api/workspaces/${ws}/semantic/imports/${provider}${query}`, { rawBody: text, headers: { 'content-type': contentType }, as: admin });

function expectError(r: Res, status: number, code: string) {
  expect({ status: r.status, error: r.body?.error }, r.text).toEqual({ status, error: code });
}

beforeAll(async () => {
  t = await startTestStack();
  admin = await setupAdmin(t);
  expect((await call('POST', TABLES, { name: 'jaffle' })).status).toBe(201);
  const tables: Record<string, Array<[string, string]>> = {
    orders: [['order_id', 'BIGINT'], ['customer_id', 'BIGINT'], ['location_id', 'BIGINT'], ['order_total', 'DOUBLE'], ['ordered_at', 'TIMESTAMP'], ['is_food_order', 'BOOLEAN']],
    customers: [['customer_id', 'BIGINT'], ['customer_name', 'VARCHAR'], ['first_ordered_at', 'TIMESTAMP']],
    locations: [['location_id', 'BIGINT'], ['location_name', 'VARCHAR'], ['opened_at', 'DATE'], ['tax_rate', 'DOUBLE']],
    order_items: [['order_item_id', 'BIGINT'], ['order_id', 'BIGINT'], ['product_id', 'BIGINT'], ['product_price', 'DOUBLE'], ['is_drink', 'BOOLEAN'], ['ordered_at', 'TIMESTAMP']],
  };
  for (const [name, cols] of Object.entries(tables)) {
    const r = await call('POST', `${TABLES}/jaffle/tables`, { name, columns: cols.map(([n, type]) => ({ name: n, type })) });
    expect(r.status, r.text).toBe(201);
  }
});
afterAll(async () => t?.close());

// A dbt manifest as `dbt parse` writes it (trimmed to what the semantic layer reads, plus nodes it ignores).
function manifest(opts: { withoutFoodRevenue?: boolean } = {}) {
  const relation = (alias: string) => ({ alias, schema_name: 'jaffle', database: 'warehouse', relation_name: `"warehouse"."jaffle"."${alias}"` });
  const semantic_models = {
    'semantic_model.jaffle_shop.orders': {
      name: 'orders',
      resource_type: 'semantic_model',
      description: 'Order fact table. One row per order.',
      node_relation: relation('orders'),
      defaults: { agg_time_dimension: 'ordered_at' },
      primary_entity: null,
      entities: [
        { name: 'order_id', type: 'primary', expr: null },
        { name: 'location', type: 'foreign', expr: 'location_id' },
        { name: 'customer', type: 'foreign', expr: 'customer_id' },
      ],
      dimensions: [
        { name: 'ordered_at', type: 'time', expr: null, type_params: { time_granularity: 'day' }, label: 'Ordered at' },
        { name: 'order_total_dim', type: 'categorical', expr: "CASE WHEN order_total > 20 THEN 'large' ELSE 'small' END" },
        { name: 'is_food_order', type: 'categorical', expr: null },
      ],
      measures: [
        { name: 'order_total', agg: 'sum', expr: null, description: 'The total amount for each order including taxes.' },
        { name: 'order_count', agg: 'count', expr: '1' },
        { name: 'food_orders', agg: 'sum', expr: 'case when is_food_order = true then order_total else 0 end' },
        { name: 'median_order_total', agg: 'percentile', expr: 'order_total', agg_params: { percentile: 0.5 } },
        { name: 'customers_with_orders', agg: 'count_distinct', expr: 'customer_id' },
      ],
    },
    'semantic_model.jaffle_shop.customers': {
      name: 'customers',
      description: 'Customer grain mart.',
      node_relation: relation('customers'),
      defaults: { agg_time_dimension: 'first_ordered_at' },
      entities: [{ name: 'customer', type: 'primary', expr: 'customer_id' }],
      dimensions: [
        { name: 'customer_name', type: 'categorical', expr: null },
        { name: 'first_ordered_at', type: 'time', expr: null, type_params: { time_granularity: 'day' } },
      ],
      measures: [{ name: 'customers', agg: 'count_distinct', expr: 'customer_id' }],
    },
    'semantic_model.jaffle_shop.locations': {
      name: 'locations',
      description: 'Store locations',
      node_relation: relation('locations'),
      entities: [{ name: 'location', type: 'primary', expr: 'location_id' }],
      dimensions: [
        { name: 'location_name', type: 'categorical', expr: null },
        { name: 'opened_at', type: 'time', expr: null, type_params: { time_granularity: 'month' } },
      ],
      measures: [{ name: 'average_tax_rate', agg: 'average', expr: 'tax_rate' }],
    },
    'semantic_model.jaffle_shop.order_items': {
      name: 'order_items',
      node_relation: relation('order_items'),
      defaults: { agg_time_dimension: 'ordered_at' },
      entities: [
        { name: 'order_item', type: 'primary', expr: 'order_item_id' },
        { name: 'order_id', type: 'foreign', expr: 'order_id' },
        { name: 'product', type: 'foreign', expr: 'product_id' },
      ],
      dimensions: [
        { name: 'ordered_at', type: 'time', expr: null, type_params: { time_granularity: 'day' } },
        { name: 'is_drink', type: 'categorical', expr: null },
      ],
      measures: [{ name: 'revenue', agg: 'sum', expr: 'product_price' }],
    },
  };
  const simple = (name: string, measure: string, extra: Record<string, unknown> = {}) => ({
    name,
    resource_type: 'metric',
    type: 'simple',
    label: name.replace(/_/g, ' '),
    description: `the ${name}`,
    type_params: { measure: { name: measure, filter: null, alias: null } },
    filter: null,
    ...extra,
  });
  const metrics: Record<string, unknown> = {
    'metric.jaffle_shop.order_total': simple('order_total', 'order_total'),
    'metric.jaffle_shop.order_count': simple('order_count', 'order_count'),
    'metric.jaffle_shop.large_orders': simple('large_orders', 'order_count', {
      filter: { where_filters: [{ where_sql_template: "{{ Dimension('order_id__order_total_dim') }} = 'large'" }] },
    }),
    'metric.jaffle_shop.food_revenue': simple('food_revenue', 'order_total', {
      filter: { where_filters: [{ where_sql_template: "{{ Dimension('order_id__is_food_order') }} = true" }] },
    }),
    'metric.jaffle_shop.revenue': simple('revenue', 'revenue'),
    'metric.jaffle_shop.median_order_total': simple('median_order_total', 'median_order_total'),
    'metric.jaffle_shop.new_customer_orders': simple('new_customer_orders', 'order_count', {
      filter: { where_filters: [{ where_sql_template: "{{ Dimension('customer__customer_name') }} is not null" }] },
    }),
    'metric.jaffle_shop.customers': simple('customers', 'customers'),
    'metric.jaffle_shop.average_tax_rate': simple('average_tax_rate', 'average_tax_rate'),
    'metric.jaffle_shop.food_share': {
      name: 'food_share', type: 'ratio', type_params: { numerator: { name: 'food_revenue' }, denominator: { name: 'order_total' } },
    },
    'metric.jaffle_shop.cumulative_revenue': { name: 'cumulative_revenue', type: 'cumulative', type_params: { measure: { name: 'revenue' } } },
  };
  if (opts.withoutFoodRevenue) delete metrics['metric.jaffle_shop.food_revenue'];
  return {
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json', dbt_version: '1.9.0', project_name: 'jaffle_shop', adapter_type: 'duckdb' },
    nodes: { 'model.jaffle_shop.orders': { resource_type: 'model', name: 'orders' } },
    sources: {},
    semantic_models,
    metrics,
    saved_queries: {},
  };
}

describe('transform provider (dbt manifest)', () => {
  it('imports semantic models, entities, dimensions, measures and simple metrics; skips the rest with reasons', async () => {
    const r = await importText('transform', JSON.stringify(manifest()), '', 'application/json');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ provider: 'transform', created: ['jaffle_shop'], updated: [], retired: [] });
    expect(r.body.skipped).toEqual([
      { item: 'entity order_items.product', reason: 'no semantic model declares product as its primary entity' },
      { item: 'metric cumulative_revenue', reason: 'cumulative metrics are not imported (only simple metrics)' },
      { item: 'metric food_share', reason: 'ratio metrics are not imported (only simple metrics)' },
      { item: 'metric median_order_total', reason: expect.stringContaining('aggregation percentile is not supported') },
      { item: 'metric new_customer_orders', reason: expect.stringContaining('reaches beyond semantic model orders') },
    ]);
    const m = (await call('GET', `${S}/models/jaffle_shop`)).body;
    expect(m).toMatchObject({ slug: 'jaffle_shop', status: 'draft', imported: true, provider: 'transform' });
    expect(m.datasets.map((d: any) => [d.name, `${d.catalog}.${d.schema_name}.${d.table_name}`, d.primary_key])).toEqual([
      ['customers', 'warehouse.jaffle.customers', ['customer_id']],
      ['locations', 'warehouse.jaffle.locations', ['location_id']],
      ['order_items', 'warehouse.jaffle.order_items', ['order_item_id']],
      ['orders', 'warehouse.jaffle.orders', ['order_id']],
    ]);
    expect(m.relationships.map((x: any) => [x.name, x.left_dataset, x.right_dataset, x.join_columns])).toEqual([
      ['order_items__order_id', 'order_items', 'orders', [{ left: 'order_id', right: 'order_id' }]],
      ['orders__customer', 'orders', 'customers', [{ left: 'customer_id', right: 'customer_id' }]],
      ['orders__location', 'orders', 'locations', [{ left: 'location_id', right: 'location_id' }]],
    ]);
    // ordered_at is declared by two semantic models: both are named by their semantic model
    expect(m.dimensions.map((d: any) => d.name)).toEqual([
      'customer_name', 'first_ordered_at', 'is_drink', 'is_food_order', 'location_name', 'opened_at', 'order_items__ordered_at', 'order_total_dim', 'orders__ordered_at',
    ]);
    expect(m.dimensions.find((d: any) => d.name === 'opened_at')).toMatchObject({ kind: 'time', time_grains: ['month', 'quarter', 'year'] });
    expect(m.dimensions.find((d: any) => d.name === 'orders__ordered_at')).toMatchObject({ kind: 'time', is_default_time: true, expr: '"ordered_at"', display_name: 'Ordered at' });
    expect(m.metrics.map((x: any) => [x.name, x.dataset, x.agg, x.expr, x.filter, x.time_dimension])).toEqual([
      ['average_tax_rate', 'locations', 'avg', 'tax_rate', null, null],
      ['customers', 'customers', 'count_distinct', 'customer_id', null, 'first_ordered_at'],
      ['food_revenue', 'orders', 'sum', 'order_total', '((is_food_order) = true)', 'orders__ordered_at'],
      ['large_orders', 'orders', 'count', null, `((CASE WHEN order_total > 20 THEN 'large' ELSE 'small' END) = 'large')`, 'orders__ordered_at'],
      ['order_count', 'orders', 'count', null, null, 'orders__ordered_at'],
      ['order_total', 'orders', 'sum', 'order_total', null, 'orders__ordered_at'],
      ['revenue', 'order_items', 'sum', 'product_price', null, 'order_items__ordered_at'],
    ]);

    // it validates against the real tables and publishes
    const published = await call('POST', `${S}/models/jaffle_shop/publish`);
    expect(published.status, published.text).toBe(200);
    expect(published.body).toMatchObject({ status: 'published', validation: { state: 'ok' } });
    // and compiles across its relationships: item revenue by the order's location, two hops away
    const c = await call('POST', `${S}/compile`, { model: 'jaffle_shop', metrics: ['revenue'], dimensions: ['location_name'], grain: 'month' });
    expect(c.status, c.text).toBe(200);
    expect(c.body.dimensions).toEqual(['location_name', 'order_items__ordered_at__month']);
    expect(c.body.sql).toContain('LEFT JOIN "warehouse"."jaffle"."orders" AS "orders" ON "order_items"."order_id" = "orders"."order_id"');
    expect(c.body.sql).toContain('LEFT JOIN "warehouse"."jaffle"."locations" AS "locations" ON "orders"."location_id" = "locations"."location_id"');
  });

  it('imported models are read-only; importing again updates only what changed', async () => {
    const M = `${S}/models/jaffle_shop`;
    expectError(await call('PATCH', `${M}/metrics/revenue`, { caveat: 'x' }), 409, 'model_imported');
    expectError(await call('PATCH', M, { name: 'Renamed' }), 409, 'model_imported');
    expectError(await call('POST', `${M}/dimensions`, { name: 'x', dataset: 'orders' }), 409, 'model_imported');
    expectError(await call('DELETE', `${M}/metrics/revenue`), 409, 'model_imported');
    const same = await importText('transform', JSON.stringify(manifest()));
    expect(same.body).toMatchObject({ created: [], updated: [], retired: [] });
    expect((await call('GET', M)).body.status).toBe('published');
    const changed = await importText('transform', JSON.stringify(manifest({ withoutFoodRevenue: true })));
    expect(changed.body).toMatchObject({ created: [], updated: ['jaffle_shop'], retired: [] });
    const after = (await call('GET', M)).body;
    expect(after.status).toBe('draft');
    expect(after.metrics.map((x: any) => x.name)).not.toContain('food_revenue');
  });

  it('a bad artifact is 422 naming the expected format, never 500', async () => {
    for (const body of ['not json at all', '[]', '{"nodes": {}}', '{"semantic_models": 5}', '']) {
      const r = await importText('transform', body);
      expect(r.status, `${body}: ${r.text}`).toBe(422);
      if (body !== '') expect(r.body.error).toBe('invalid_artifact');
      if (body !== '') expect(r.body.message).toContain('dbt manifest.json');
    }
    expectError(await importText('dbt_cloud', '{}'), 422, 'unprocessable_content');
  });
});

describe('native provider (YAML)', () => {
  const yaml = (models: string) => `version: 1\nmodels:\n${models}`;
  const sales = `  - slug: sales
    name: Sales
    datasets:
      - { name: orders, catalog: warehouse, schema: jaffle, table: orders, primary_key: [order_id] }
      - { name: customers, catalog: warehouse, schema: jaffle, table: customers, primary_key: [customer_id] }
    relationships:
      - name: order_customer
        left: orders
        right: customers
        join: [{ left: customer_id, right: customer_id }]
    dimensions:
      - { name: ordered_at, dataset: orders, kind: time, default_time: true, synonyms: [order date] }
      - { name: customer_name, dataset: customers, synonyms: [buyer], sample_values: [Ann, Bo] }
      - { name: bogus, dataset: nowhere }
    metrics:
      - { name: revenue, dataset: orders, agg: sum, expr: order_total, filter: "is_food_order = false", measured_on: ordered_at, synonyms: [sales], caveat: excludes food }
      - { name: weird, dataset: orders, agg: percentile, expr: order_total }
`;
  const stores = `  - slug: stores
    name: Stores
    datasets:
      - { name: locations, catalog: warehouse, schema: jaffle, table: locations }
    metrics:
      - { name: tax, dataset: locations, agg: avg, expr: tax_rate }
`;

  it('imports the spec’s shape, skips unusable items, and reconciles by provider run', async () => {
    const r = await importText('native', yaml(sales + stores), '', 'application/yaml');
    expect(r.status, r.text).toBe(200);
    expect(r.body.created).toEqual(['sales', 'stores']);
    expect(r.body.skipped).toEqual([
      { item: 'sales: dimension bogus', reason: expect.stringContaining('no dataset nowhere') },
      { item: 'sales: metric weird', reason: expect.stringContaining('agg') },
    ]);
    const m = (await call('GET', `${S}/models/sales`)).body;
    expect(m).toMatchObject({ imported: true, provider: 'native', status: 'draft' });
    expect(m.metrics).toEqual([
      expect.objectContaining({ name: 'revenue', agg: 'sum', expr: 'order_total', filter: 'is_food_order = false', time_dimension: 'ordered_at', synonyms: ['sales'], caveat: 'excludes food' }),
    ]);
    expect(m.dimensions.find((d: any) => d.name === 'customer_name')).toMatchObject({ synonyms: ['buyer'], sample_values: ['Ann', 'Bo'] });
    expect((await call('POST', `${S}/models/sales/validate`)).body.validation.state).toBe('ok');
    // a dataset without primary_key imports (none): only the unique side of a relationship needs one
    expect((await call('GET', `${S}/models/stores`)).body.datasets).toEqual([expect.objectContaining({ name: 'locations', primary_key: [] })]);

    // the next run no longer declares stores: it is retired (deprecated), unless reconcile=none
    const kept = await importText('native', yaml(sales), '?reconcile=none');
    expect(kept.body).toMatchObject({ created: [], updated: [], retired: [] });
    const run2 = await importText('native', yaml(sales));
    expect(run2.body).toMatchObject({ created: [], updated: [], retired: ['stores'] });
    expect((await call('GET', `${S}/models/stores`)).body.status).toBe('deprecated');
    // declared again, it comes back as a draft
    expect((await importText('native', yaml(sales + stores))).body).toMatchObject({ updated: ['stores'] });
    expect((await call('GET', `${S}/models/stores`)).body.status).toBe('draft');
  });

  it('leaves a slug it does not own alone, refuses bad YAML, and deletes a provider’s models', async () => {
    expect((await call('POST', `${S}/models`, { slug: 'handmade', name: 'Handmade' })).status).toBe(201);
    const r = await importText('native', yaml(`  - slug: handmade\n    name: Mine now\n`));
    expect(r.body.skipped).toEqual([{ item: 'handmade: model', reason: 'slug handmade belongs to a model made through the API' }]);
    expect((await call('GET', `${S}/models/handmade`)).body).toMatchObject({ name: 'Handmade', imported: false });
    for (const bad of ['version: 2\nmodels: []\n', 'models: [\n', '- just\n- a list\n', 'version: 1\nmodels:\n  - name: no slug\n', 'version: 1\nmodels:\n  - slug: a\n  - slug: a\n']) {
      const res = await importText('native', bad);
      expectError(res, 422, 'invalid_artifact');
      expect(res.body.message).toContain('expected a YAML document with version: 1');
    }
    const del = await call('DELETE', `${S}/imports?provider=native`);
    expect(del.status, del.text).toBe(200);
    expect(del.body).toEqual({ provider: 'native', deleted: ['sales', 'stores'] });
    expectError(await call('GET', `${S}/models/sales`), 404, 'not_found');
    expectError(await call('DELETE', `${S}/imports`), 422, 'unprocessable_content');
  });
});

describe('scoped attachments', () => {
  it('a model binding a table the workspace cannot read is absent from lists and searches, and 404', async () => {
    expect((await call('POST', '/api/workspaces', { slug: 'scoped', name: 'Scoped' })).status).toBe(201);
    expect((await call('PUT', '/api/workspaces/scoped/catalogs/warehouse', { make_default: true, access_mode: 'scoped' })).status).toBe(201);
    const grant = await call('PUT', '/api/workspaces/scoped/catalogs/warehouse/grants', { schema: 'jaffle', table: 'orders', privilege: 'read' });
    expect(grant.status, grant.text).toBe(201);
    const SS = '/api/workspaces/scoped/semantic';
    const doc = `version: 1
models:
  - slug: granted
    name: Granted
    datasets: [{ name: orders, catalog: warehouse, schema: jaffle, table: orders, primary_key: [order_id] }]
    metrics: [{ name: order_count, dataset: orders, agg: count }]
  - slug: partly
    name: Partly
    datasets: [{ name: customers, catalog: warehouse, schema: jaffle, table: customers, primary_key: [customer_id] }]
`;
    const r = await importText('native', doc, '', 'text/plain', 'scoped');
    expect(r.status, r.text).toBe(200);
    expect(r.body.skipped).toEqual([{ item: 'partly: dataset customers', reason: expect.stringContaining('not readable') }]);
    expectError(await call('POST', `${SS}/models/partly/datasets`, { name: 'c', catalog: 'warehouse', schema_name: 'jaffle', table_name: 'customers', primary_key: [] }), 403, 'not_granted');
    expect((await call('GET', `${SS}/models`)).body.map((m: any) => m.slug)).toEqual(['granted', 'partly']);
    expect((await call('GET', `${SS}/search?q=order_count`)).body.items.map((i: any) => i.model)).toEqual(['granted']);
    // the grant goes: the model binding orders disappears
    expect((await call('DELETE', `/api/workspaces/scoped/catalogs/warehouse/grants/${grant.body.id}`)).status).toBe(204);
    expect((await call('GET', `${SS}/models`)).body.map((m: any) => m.slug)).toEqual(['partly']);
    expectError(await call('GET', `${SS}/models/granted`), 404, 'not_found');
    expect((await call('GET', `${SS}/search?q=order_count`)).body.items).toEqual([]);
    expectError(await call('POST', `${SS}/compile`, { model: 'granted', metrics: ['order_count'] }), 404, 'not_found');
  });
});
