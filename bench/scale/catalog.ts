// Catalog size: `size` tables in the default catalog, 100 to a schema (one real table made through the api, then
// its metastore row copied with generate_series), then the api's schema and table lists, a table's detail, the
// catalog service's own loadTable and a page of listTables, the search route (issue 35: the api's catalog-search and
// the catalog service's name search behind it), and the web app's search as it ran before that route (every schema's
// table list, then a match in the browser).
import type { Axis, AxisContext, Figure } from './measure.ts';
import { explain, seconds, serverSide, timed } from './measure.ts';
import { searchNames } from '../../catalog/metastore.ts';

const N = 100;
const BASE = '/api/workspaces/default/catalogs/warehouse';

async function catalogToken(ctx: AxisContext): Promise<string> {
  const r = await fetch(`${ctx.api.catalogUrl}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'root', client_secret: 'bench-catalog-secret' }),
  });
  return ((await r.json()) as { access_token: string }).access_token;
}

/** Schemas s{j} holding tables t{i} (i = j × 100 …), copies of s0.t0's row, until there are `to` tables. */
export async function buildTables(ctx: AxisContext, from: number, to: number) {
  await ctx.db.query(
    `insert into catalog.namespaces (warehouse, namespace, depth)
     select 'warehouse', 's' || j, 1 from generate_series($1::int, $2::int) j on conflict do nothing`,
    [Math.floor(from / 100), Math.floor((to - 1) / 100)],
  );
  await ctx.db.query(
    `insert into catalog.tables (warehouse, namespace, name, table_uuid, metadata_location, metadata_json)
     select 'warehouse', 's' || (i / 100), 't' || i, gen_random_uuid(), src.metadata_location, src.metadata_json
       from generate_series($1::int, $2::int) i, (select metadata_location, metadata_json from catalog.tables where namespace = 's0' and name = 't0') src
     on conflict do nothing`,
    [Math.max(from, 1), to - 1],
  );
  await ctx.db.query(`vacuum analyze catalog.tables`);
  await ctx.db.query(`vacuum analyze catalog.namespaces`);
}

/** warehouse.s0.t0, made through the api: the row every other table copies. */
export async function firstTable(ctx: AxisContext) {
  const headers = { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' };
  const post = (path: string, body: unknown) => fetch(`${ctx.api.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  let r = await post(`${BASE}/schemas`, { name: 's0' });
  if (r.status !== 201 && r.status !== 200) throw new Error(`schema: ${r.status} ${await r.text()}`);
  r = await post(`${BASE}/schemas/s0/tables`, { name: 't0', columns: [{ name: 'id', type: 'BIGINT' }, { name: 'v', type: 'VARCHAR' }] });
  if (r.status !== 201) throw new Error(`table: ${r.status} ${await r.text()}`);
}

export const catalogAxis: Axis = async function* (ctx, [small, large]) {
  await firstTable(ctx);
  const rest = await catalogToken(ctx);
  const restPost = async (path: string, body: unknown) => {
    const res = await fetch(`${ctx.api.catalogUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${rest}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const restGet = async (path: string) => {
    const res = await fetch(`${ctx.api.catalogUrl}${path}`, { headers: { authorization: `Bearer ${rest}` } });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  let built = 1;
  for (const size of [small, large]) {
    const t0 = performance.now();
    await buildTables(ctx, built, size);
    built = size;
    console.log(`built ${size.toLocaleString('en')} tables in ${seconds(t0)} s`);
    const schemas = Math.ceil(size / 100);
    const some = (i: number) => (i * 7919) % schemas;
    const figures: Figure[] = [];
    // The search route: a table's exact name (t{n}: itself and up to 10 longer t{n}…), a short text every table name
    // starts with (t: the first 100 of `size`), a schema's name (s{n}), a text nothing matches.
    const SEARCH = '/api/workspaces/default/catalog-search';
    figures.push(await timed('api: search, a table’s name (limit 20)', N, (i) => ctx.get(`${SEARCH}?q=t${some(i) * 100 + 7}&limit=20`)));
    figures.push(await timed('api: search, “t”: every table matches (limit 100)', N, () => ctx.get(`${SEARCH}?q=t`)));
    figures.push(await timed('api: search, a schema’s name (limit 20)', N, (i) => ctx.get(`${SEARCH}?q=s${some(i)}&limit=20`)));
    figures.push(await timed('api: search, no match', N, (i) => ctx.get(`${SEARCH}?q=zz${i}`)));
    figures.push(await timed('catalog: name search, a table’s name (limit 20)', N, (i) => restPost('/management/v1/warehouses/warehouse/search', { q: `t${some(i) * 100 + 7}`, limit: 20 })));
    // The statements behind it, on the server's side (what does not move with the machine's load): both scans.
    figures.push(await serverSide(ctx, 'name search, a table’s name (limit 20)', (q) => searchNames(q, 'warehouse', `t${some(5) * 100 + 7}`, 20)));
    figures.push(await serverSide(ctx, 'name search, “t” (limit 100)', (q) => searchNames(q, 'warehouse', 't', 100)));
    figures.push(await timed('api: list schemas', N, () => ctx.get(`${BASE}/schemas`)));
    figures.push(await timed('api: list a schema’s 100 tables', N, (i) => ctx.get(`${BASE}/schemas/s${some(i)}/tables`)));
    figures.push(await timed('api: a table’s detail', N, (i) => ctx.get(`${BASE}/schemas/s${some(i)}/tables/t${some(i) * 100 + 1}`)));
    figures.push(await timed('catalog: loadTable', N, (i) => restGet(`/v1/warehouse/namespaces/s${some(i)}/tables/t${some(i) * 100 + 2}`)));
    figures.push(await timed('catalog: listTables, a page of 100', N, (i) => restGet(`/v1/warehouse/namespaces/s${some(i)}/tables?pageSize=100`)));
    figures.push(await timed('catalog: listNamespaces, a page of 100', N, () => restGet(`/v1/warehouse/namespaces?pageSize=100`)));
    // The web app's search before the route (CatalogScreen's CatalogSearch until issue 35): the catalogs, every schema, every schema's tables.
    figures.push(
      await timed(
        'web app search (every schema listed)',
        size > 10_000 ? 3 : 20,
        async () => {
          const list = (await ctx.get(`${BASE}/schemas`)) as Array<{ name: string }>;
          for (let i = 0; i < list.length; i += 8) await Promise.all(list.slice(i, i + 8).map((s) => ctx.get(`${BASE}/schemas/${s.name}/tables`)));
        },
        1,
      ),
    );
    await explain(
      ctx,
      `name search at ${size}`,
      `select whole, term, namespace, name from catalog.name_search where warehouse = 'warehouse' and whole = false and term >= 't' and term < 't' || chr(1114111) order by term, namespace, name limit 101`,
    );
    await explain(ctx, `loadTable at ${size}`, `select * from catalog.tables where warehouse = 'warehouse' and namespace = $1 and name = $2`, [`s${some(3)}`, `t${some(3) * 100 + 2}`]);
    yield { size, figures };
  }
};
