// Catalog search (GET /api/workspaces/{ws}/catalog-search, issue 35): names matched at word starts by the catalog
// service's index, the workspace's attachments and a scoped attachment's grants applied as the browse routes apply
// them, bad input answered with the envelope. A real api, catalog service and object store on a fresh database.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newUser, setupAdmin, startTestStack, type Caller, type Res, type TestStack } from './support/api.ts';
import { catalogClientFromConfig } from '../runtime/catalogClient.ts';
import { nameTerms } from '../domain/catalogSearch.ts';

let t: TestStack;
let admin: Caller;
let outsider: Caller;

const BASE = '/api/workspaces/default/catalogs/warehouse';
const search = (ws: string, query: string, as: Caller): Promise<Res> => t.req('GET', `/api/workspaces/${ws}/catalog-search?${query}`, { as });
/** The items as `kind catalog.schema.table` lines, in the order answered. */
const names = (res: Res): string[] => {
  expect(res.status, res.text).toBe(200);
  return res.body.items.map((i: { kind: string; catalog: string; schema: string | null; table: string | null }) =>
    `${i.kind} ${[i.catalog, i.schema, i.table].filter((x) => x !== null).join('.')}`,
  );
};

beforeAll(async () => {
  t = await startTestStack();
  admin = await setupAdmin(t);
  outsider = await newUser(t, admin);
  const client = catalogClientFromConfig(t.api.ctx.config);
  await vi.waitFor(async () => expect(await client.getWarehouse('warehouse')).toBeDefined(), { timeout: 20_000, interval: 100 });
  for (const name of ['sales', 'sales_archive', 'hr']) expect((await t.req('POST', `${BASE}/schemas`, { as: admin, body: { name } })).status).toBe(201);
  const tables: Array<[string, string]> = [
    ['sales', 'customer_orders'],
    ['sales', 'orderItems'],
    ['sales', 'Orders2024'],
    ['sales', 'borders'],
    ['sales_archive', 'orders_old'],
    ['hr', 'people'],
  ];
  for (const [schema, name] of tables) {
    const res = await t.req('POST', `${BASE}/schemas/${schema}/tables`, { as: admin, body: { name, columns: [{ name: 'id', type: 'BIGINT' }] } });
    expect(res.status, res.text).toBe(201);
  }
  // The outsider's own workspace, to which nothing is attached yet.
  expect((await t.req('POST', '/api/workspaces', { as: outsider, body: { slug: 'other', name: 'Other' } })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('catalog search', () => {
  it('matches word starts, whole names first, case-insensitively, across schemas and tables', async () => {
    expect(names(await search('default', 'q=ord', admin))).toEqual([
      'table warehouse.sales.orderItems',
      'table warehouse.sales.Orders2024',
      'table warehouse.sales_archive.orders_old',
      'table warehouse.sales.customer_orders',
    ]);
    // `borders` has no word starting with `ord`; camelCase and digits start words; `_` joins whole-name prefixes
    expect(names(await search('default', 'q=ITEMS', admin))).toEqual(['table warehouse.sales.orderItems']);
    expect(names(await search('default', 'q=2024', admin))).toEqual(['table warehouse.sales.Orders2024']);
    expect(names(await search('default', 'q=customer_or', admin))).toEqual(['table warehouse.sales.customer_orders']);
    expect(names(await search('default', 'q=sales', admin))).toEqual(['schema warehouse.sales', 'schema warehouse.sales_archive']);
    expect(names(await search('default', 'q=archive', admin))).toEqual(['schema warehouse.sales_archive']);
    expect(names(await search('default', 'q=ware', admin))).toEqual(['catalog warehouse']);
    expect(names(await search('default', 'q=zzz', admin))).toEqual([]);
  });

  it('pages as search results do: limit, has_more, no cursor; catalog narrows to one attachment', async () => {
    const first = await search('default', 'q=ord&limit=2', admin);
    expect(first.body).toEqual({
      items: [
        { kind: 'table', catalog: 'warehouse', schema: 'sales', table: 'orderItems' },
        { kind: 'table', catalog: 'warehouse', schema: 'sales', table: 'Orders2024' },
      ],
      has_more: true,
    });
    expect((await search('default', 'q=ord&limit=4', admin)).body.has_more).toBe(false);
    expect(names(await search('default', 'q=people&catalog=warehouse', admin))).toEqual(['table warehouse.hr.people']);
    const missing = await search('default', 'q=people&catalog=nosuch', admin);
    expect({ status: missing.status, error: missing.body.error }).toEqual({ status: 404, error: 'not_found' });
  });

  it('answers at the spec’s workspace-level /search too: the same items, q required, readers only', async () => {
    const at = (path: string, query: string, as?: Caller) => t.req('GET', `/api/workspaces/default/${path}?${query}`, as ? { as } : {});
    expect((await at('search', 'q=ord&limit=3', admin)).body).toEqual((await at('catalog-search', 'q=ord&limit=3', admin)).body);
    expect(names(await at('search', 'q=people', admin))).toEqual(['table warehouse.hr.people']);
    const noQ = await at('search', '', admin);
    expect({ status: noQ.status, error: noQ.body.error }).toEqual({ status: 422, error: 'unprocessable_content' });
    expect((await at('search', 'q=ord', outsider)).status).toBe(404);
    expect((await at('search', 'q=ord')).status).toBe(401);
  });

  it('follows the index when tables are dropped', async () => {
    expect((await t.req('POST', `${BASE}/schemas/hr/tables`, { as: admin, body: { name: 'people_tmp', columns: [{ name: 'id', type: 'BIGINT' }] } })).status).toBe(201);
    expect(names(await search('default', 'q=people', admin))).toEqual(['table warehouse.hr.people', 'table warehouse.hr.people_tmp']);
    expect((await t.req('DELETE', `${BASE}/schemas/hr/tables/people_tmp`, { as: admin })).status).toBe(204);
    expect(names(await search('default', 'q=people', admin))).toEqual(['table warehouse.hr.people']);
  });

  it('a member of another workspace sees nothing of this one', async () => {
    const res = await search('default', 'q=ord', outsider);
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 404, error: 'not_found' });
    // in their own workspace, with no catalog attached, nothing matches
    expect(await search('other', 'q=ord', outsider).then((r) => r.body)).toEqual({ items: [], has_more: false });
  });

  it('a scoped attachment shows only what its grants name', async () => {
    const attach = await t.req('PUT', '/api/workspaces/other/catalogs/warehouse', { as: admin, body: { make_default: true, access_mode: 'scoped' } });
    expect(attach.status, attach.text).toBe(201);
    // no grant yet: the catalog shows (it is attached), nothing in it does
    expect(names(await search('other', 'q=ord', outsider))).toEqual([]);
    expect(names(await search('other', 'q=warehouse', outsider))).toEqual(['catalog warehouse']);
    const grant = await t.req('PUT', '/api/workspaces/other/catalogs/warehouse/grants', { as: admin, body: { schema: 'SALES', table: 'Customer_Orders', privilege: 'read' } });
    expect(grant.status, grant.text).toBe(201);
    expect(names(await search('other', 'q=ord', outsider))).toEqual(['table warehouse.sales.customer_orders']);
    // the schema shows because a table in it is granted; its sibling schema does not
    expect(names(await search('other', 'q=sales', outsider))).toEqual(['schema warehouse.sales']);
    expect(names(await search('other', 'q=people', outsider))).toEqual([]);
    // a schema grant opens the whole schema, as it does for browsing
    expect((await t.req('PUT', '/api/workspaces/other/catalogs/warehouse/grants', { as: admin, body: { schema: 'hr', privilege: 'read' } })).status).toBe(201);
    expect(names(await search('other', 'q=people', outsider))).toEqual(['table warehouse.hr.people']);
    expect(names(await search('other', 'q=ord', outsider))).toEqual(['table warehouse.sales.customer_orders']);
    // and the browse route agrees about what the workspace can reach
    const listed = await t.req('GET', '/api/workspaces/other/catalogs/warehouse/schemas/sales/tables', { as: outsider });
    expect(listed.body.map((x: { name: string }) => x.name)).toEqual(['customer_orders']);
  });

  it('splits catalog slugs into words as the metastore splits schema and table names', async () => {
    const samples = ['sales_Orders2024 x.y-zA', '_tmp__A1', 'warehouse', 'ÉtéCafé_2', 'a..b', 'x9y', 'ABCdef'];
    for (const name of samples) {
      const fromSql = await t.database.db.query<{ term: string; whole: boolean }>('select term, whole from catalog.name_search_terms($1)', [name]);
      expect(nameTerms(name), name).toEqual(fromSql.map((r) => ({ term: r.term, whole: r.whole })));
    }
  });

  it('a table page’s layout, and column statistics of a table never written', async () => {
    const table = await t.req('GET', `${BASE}/schemas/sales/tables/customer_orders`, { as: admin });
    expect(table.body).toMatchObject({ partition_spec: [], sort_order: [], format_version: expect.any(Number), properties: expect.any(Object) });
    const stats = await t.req('GET', `${BASE}/schemas/sales/tables/customer_orders/column-stats`, { as: admin });
    expect(stats.status, stats.text).toBe(200);
    expect(stats.body).toEqual({
      snapshot_id: null,
      data_files: 0,
      files_read: 0,
      delete_files: 0,
      columns: [{ field_id: 1, name: 'id', type: 'BIGINT', value_count: null, null_count: null, nan_count: null, size_bytes: null, lower_bound: null, upper_bound: null }],
    });
    const missing = await t.req('GET', `${BASE}/schemas/sales/tables/nosuch/column-stats`, { as: admin });
    expect({ status: missing.status, error: missing.body.error }).toEqual({ status: 404, error: 'not_found' });
    // the outsider's scoped attachment grants customer_orders, not orderItems
    expect((await t.req('GET', '/api/workspaces/other/catalogs/warehouse/schemas/sales/tables/customer_orders/column-stats', { as: outsider })).status).toBe(200);
    const refused = await t.req('GET', '/api/workspaces/other/catalogs/warehouse/schemas/sales/tables/orderItems/column-stats', { as: outsider });
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 403, error: 'not_granted' });
  });

  it('answers bad input with the error envelope, never a 5xx', async () => {
    for (const query of ['', 'q=', 'q=%20%20', 'q=ord&limit=0', 'q=ord&limit=1001', 'q=ord&limit=ten', `q=${'x'.repeat(201)}`]) {
      const res = await search('default', query, admin);
      expect({ query, status: res.status, error: res.body?.error }).toEqual({ query, status: 422, error: 'unprocessable_content' });
      expect(res.body).toMatchObject({ message: expect.any(String), details: expect.any(Object) });
    }
    const missing = await search('default', '', admin);
    expect(JSON.stringify(missing.body.details)).toContain('q');
    // a malformed escape in the path is the framework's 400, in the envelope too
    const malformed = await search('%E0%A4%A', 'q=ord', admin);
    expect({ status: malformed.status, error: malformed.body?.error }).toEqual({ status: 400, error: 'bad_request' });
    const nul = await search('default', 'q=a%00b', admin);
    expect(nul.status).toBe(422);
    // names are data, not patterns: LIKE's wildcards and a quote match themselves
    for (const q of ['%', '_', "o'r", '\\']) expect(names(await search('default', `q=${encodeURIComponent(q)}`, admin))).toEqual([]);
    const unauthenticated = await t.req('GET', '/api/workspaces/default/catalog-search?q=ord');
    expect(unauthenticated.status).toBe(401);
  });
});
