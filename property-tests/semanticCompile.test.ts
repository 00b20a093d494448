// Properties of the semantic compiler over a model built with the same rules the API admits definitions by: every
// random valid request compiles to one statement that DuckDB parses and runs over tables of the model's shape, the
// result has one row per dimension combination (no tuple twice, whatever the joins), the text is the same each time
// the request is compiled, and filter values of any text come back as data, never as SQL.
// PROPERTY_RUNS raises the number of runs (default 150).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { compile, type CompileRequest } from '../domain/semantic/compiler.ts';
import { admitDataset, admitDimension, admitMetric, admitRelationship, timeDimensionOf } from '../domain/semantic/rules.ts';
import { reach } from '../domain/semantic/joins.ts';
import type { Grain, Model } from '../domain/semantic/definitions.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
let conn: DuckDBConnection;
let model: Model;

async function buildModel(): Promise<Model> {
  const m: Model = {
    id: 'm', workspace_id: 'w', slug: 'shop', name: 'Shop', description: '', status: 'draft', provider: null,
    validation: { state: 'unchecked', checked_at: null, problems: [] },
    datasets: [], relationships: [], dimensions: [], metrics: [], created_at: '', updated_at: '',
  };
  const v = { validation_state: 'unchecked' as const };
  for (const [name, pk] of [['orders', ['id']], ['customers', ['id']], ['regions', ['id']], ['items', ['id']]] as const) {
    m.datasets.push({ ...admitDataset(m, { name, catalog: 'warehouse', schema_name: 'shop', table_name: name, primary_key: [...pk] }), ...v });
  }
  for (const [name, l, r, lc] of [['order_customer', 'orders', 'customers', 'customer_id'], ['customer_region', 'customers', 'regions', 'region_id'], ['item_order', 'items', 'orders', 'order_id']] as const) {
    m.relationships.push({ ...admitRelationship(m, { name, left_dataset: l, right_dataset: r, join_columns: [{ left: lc, right: 'id' }] }), ...v });
  }
  const dims = [
    { name: 'order_date', dataset: 'orders', kind: 'time' as const, is_default_time: true },
    { name: 'status', dataset: 'orders' },
    { name: 'segment', dataset: 'customers' },
    { name: 'signup', dataset: 'customers', kind: 'time' as const, time_grains: ['month' as const, 'year' as const], expr: 'signup_date' },
    { name: 'region', dataset: 'regions', expr: "coalesce(name, 'none')" },
    { name: 'sku', dataset: 'items' },
  ];
  for (const d of dims) m.dimensions.push({ ...(await admitDimension(m, d)), ...v });
  const metrics = [
    { name: 'revenue', dataset: 'orders', agg: 'sum' as const, expr: 'amount', filter: "status <> 'void'" },
    { name: 'orders_n', dataset: 'orders', agg: 'count' as const },
    { name: 'avg_amount', dataset: 'orders', agg: 'avg' as const, expr: 'amount * 1.0' },
    { name: 'buyers', dataset: 'customers', agg: 'count_distinct' as const, expr: 'id', time_dimension: 'signup' },
    { name: 'items_sold', dataset: 'items', agg: 'sum' as const, expr: 'qty', time_dimension: 'order_date' },
    { name: 'max_qty', dataset: 'items', agg: 'max' as const, expr: 'qty', filter: 'qty > 1', time_dimension: 'order_date' },
  ];
  for (const x of metrics) m.metrics.push({ ...(await admitMetric(m, x)), ...v });
  return m;
}

beforeAll(async () => {
  model = await buildModel();
  conn = await (await DuckDBInstance.create(':memory:')).connect();
  for (const s of [
    `ATTACH ':memory:' AS warehouse`,
    `CREATE SCHEMA warehouse.shop`,
    `CREATE TABLE warehouse.shop.regions AS SELECT range + 1 AS id, CASE WHEN range = 2 THEN NULL ELSE 'r' || range END AS name FROM range(3)`,
    `CREATE TABLE warehouse.shop.customers AS SELECT range + 1 AS id, CASE WHEN range % 4 = 3 THEN NULL ELSE range % 3 + 1 END AS region_id,
       CASE WHEN range % 2 = 0 THEN 'a' ELSE 'b' END AS segment, DATE '2024-01-01' + CAST(range * 17 AS INTEGER) AS signup_date FROM range(20)`,
    `CREATE TABLE warehouse.shop.orders AS SELECT range + 1 AS id, range % 23 + 1 AS customer_id, CAST(range % 97 AS DOUBLE) AS amount,
       CASE range % 4 WHEN 0 THEN 'void' WHEN 1 THEN 'paid' WHEN 2 THEN 'it''s' ELSE NULL END AS status,
       CAST(current_date - CAST(range * 3 AS INTEGER) AS DATE) AS order_date FROM range(400)`,
    `CREATE TABLE warehouse.shop.items AS SELECT range + 1 AS id, range % 410 + 1 AS order_id, range % 5 AS qty, 'sku' || (range % 6) AS sku FROM range(1200)`,
  ]) await conn.run(s);
});
afterAll(() => conn?.closeSync());

const GRAINS: Grain[] = ['day', 'week', 'month', 'quarter', 'year'];
const DATES = ['2024-03-01', '2025-01-01', '2025-06-30', '2026-01-15'];
const METRIC_NAMES = ['revenue', 'orders_n', 'avg_amount', 'buyers', 'items_sold', 'max_qty'];
const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('paid', "it's", 'a', 'b', "x' OR '1'='1", '--', 'sku1'), fc.integer({ min: -5, max: 100 }), fc.boolean());

/** A request the model accepts: dimensions every chosen metric reaches, grains the time dimensions have. */
const requestArb = fc
  .record({
    metrics: fc.uniqueArray(fc.constantFrom(...METRIC_NAMES), { minLength: 1, maxLength: 4 }),
    dimPicks: fc.uniqueArray(fc.nat(20), { maxLength: 3 }),
    grainPick: fc.option(fc.constantFrom(...GRAINS), { nil: undefined }),
    range: fc.option(
      fc.oneof(
        fc.record({ kind: fc.constantFrom('last_complete' as const, 'trailing' as const), grain: fc.constantFrom(...GRAINS), n: fc.integer({ min: 1, max: 30 }) }),
        fc.record({ kind: fc.constant('to_date' as const), grain: fc.constantFrom(...GRAINS) }),
        fc.record({ kind: fc.constant('absolute' as const), start: fc.constantFrom('2023-01-01', '2024-06-15'), end: fc.constantFrom('2025-01-01', '2030-12-31') }),
      ),
      { nil: undefined },
    ),
    filters: fc.array(
      fc.record({
        pick: fc.nat(20),
        op: fc.constantFrom('=', '!=', '<', '<=', '>', '>=', 'in', 'not_in', 'like', 'is_null', 'is_not_null'),
        value: scalar,
        list: fc.array(scalar, { minLength: 1, maxLength: 4 }),
      }),
      { maxLength: 3 },
    ),
    orderPicks: fc.array(fc.record({ pick: fc.nat(20), desc: fc.boolean() }), { maxLength: 2 }),
    limit: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
  })
  .map((r) => {
    const metrics = r.metrics.map((name) => model.metrics.find((m) => m.name === name)!);
    const legal = model.dimensions.filter((d) => metrics.every((m) => reach(model, m.dataset, d.dataset).kind === 'ok'));
    const dims = [...new Set(r.dimPicks.filter(() => legal.length > 0).map((p) => legal[p % legal.length]))];
    const timeDims = dims.filter((d) => d.kind === 'time');
    // a grain every requested time dimension has; without a time dimension only when the metrics share one
    const times = metrics.map((m) => timeDimensionOf(model, m));
    const shared = times.every((x) => x && x === times[0]) ? times[0]! : null;
    const grainHolders = timeDims.length ? timeDims : shared ? [shared] : [];
    const grain = r.grainPick && grainHolders.length && grainHolders.every((d) => d.time_grains.includes(r.grainPick!)) ? r.grainPick : undefined;
    const dimensions = dims.map((d) => (d.kind === 'time' && !grain ? `${d.name}__${d.time_grains[d.time_grains.length - 1]}` : d.name));
    const time_range = r.range && times.every(Boolean) ? r.range : undefined;
    const filters = legal.length
      ? r.filters.map((f) => {
          const d = legal[f.pick % legal.length];
          // values of the dimension's type: every dimension here is text or a date
          const typed = (v: unknown, i: number) => (d.kind === 'time' ? DATES[(i + String(v).length) % DATES.length] : String(v));
          if (f.op === 'is_null' || f.op === 'is_not_null') return { dimension: d.name, op: f.op };
          if (f.op === 'in' || f.op === 'not_in') return { dimension: d.name, op: f.op, value: f.list.map(typed) };
          if (f.op === 'like' && d.kind === 'time') return { dimension: d.name, op: 'is_not_null' as const };
          return { dimension: d.name, op: f.op, value: typed(f.value, f.pick) };
        })
      : [];
    const req = { model: 'shop', metrics: r.metrics, dimensions, grain, time_range, filters, limit: r.limit } as CompileRequest;
    return { req, orderPicks: r.orderPicks };
  });

describe('semantic compiler (properties)', () => {
  it('random valid requests give one deterministic statement that DuckDB runs, one row per dimension combination', async () => {
    const seen = { ran: 0, withRows: 0, joined: 0, combined: 0 };
    await fc.assert(
      fc.asyncProperty(requestArb, async ({ req: base, orderPicks }) => {
        // order_by names result columns: the first compile tells them
        const columns = (({ dimensions, metrics }) => [...dimensions, ...metrics])(compile(model, base));
        const req = { ...base, order_by: orderPicks.map((o) => ({ field: columns[o.pick % columns.length], direction: o.desc ? ('desc' as const) : ('asc' as const) })) };
        const out = compile(model, req);
        expect(compile(model, req).sql).toBe(out.sql);
        // Filter values have their dimension's type, so every statement must run.
        const rows = (await conn.runAndReadAll(out.sql)).getRowObjectsJS() as Record<string, unknown>[];
        seen.ran++;
        if (rows.length) seen.withRows++;
        if (out.sql.includes('LEFT JOIN')) seen.joined++;
        if (out.sql.startsWith('WITH')) seen.combined++;
        const keys = rows.map((r) => JSON.stringify(out.dimensions.map((d) => String(r[d]))));
        expect(new Set(keys).size, out.sql).toBe(keys.length);
        expect(Object.keys(rows[0] ?? Object.fromEntries([...out.dimensions, ...out.metrics].map((c) => [c, 0])))).toEqual([...out.dimensions, ...out.metrics]);
        if (req.limit !== undefined) expect(rows.length).toBeLessThanOrEqual(req.limit);
        if (out.dimensions.length === 0 && (req.metrics.length === 1 || req.time_range === undefined)) expect(rows.length).toBeLessThanOrEqual(1);
      }),
      { numRuns: RUNS },
    );
    // not a vacuous property: many requests return rows, go through joins and combine groups
    expect(seen.ran).toBe(RUNS);
    expect(seen.withRows, JSON.stringify(seen)).toBeGreaterThan(RUNS / 4);
    expect(seen.joined, JSON.stringify(seen)).toBeGreaterThan(RUNS / 10);
    expect(seen.combined, JSON.stringify(seen)).toBeGreaterThan(RUNS / 10);
  });

  it('a string value of any text is data: the statement parses to one statement and the value round-trips', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }).filter((s) => !s.includes('\u0000')), async (value) => {
        const out = compile(model, { model: 'shop', metrics: ['orders_n'], dimensions: ['status'], filters: [{ dimension: 'status', op: '=', value }] });
        const statements = await conn.extractStatements(out.sql);
        expect(statements.count).toBe(1);
        const echoed = (await conn.runAndReadAll(`SELECT ${out.sql.match(/= ('(?:[^']|'')*')/)![1]} AS v`)).getRowObjectsJS();
        expect(echoed).toEqual([{ v: value }]);
      }),
      { numRuns: RUNS },
    );
  });
});
