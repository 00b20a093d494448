// Lineage: `size` execution edges between tables warehouse.s{i/100}.t{i} that exist in the catalog (500 tables with
// two edges out of each at 1k edges; 50,000 tables with twenty out of each at 1M), then the graph around
// warehouse.s0.t0, both directions, depth 5 (every walk stops at the 500-node cap) and depth 2.
import type { Axis, Figure } from './measure.ts';
import { explain, seconds, timed } from './measure.ts';
import { buildTables, firstTable } from './catalog.ts';

const N = 30;
const key = (i: string) => `'warehouse.s' || (${i} / 100) || '.t' || ${i}`;

export const lineageAxis: Axis = async function* (ctx, [small, large]) {
  await firstTable(ctx);
  let tables = 1;
  const path = '/api/workspaces/default/catalogs/warehouse/schemas/s0/tables/t0/lineage?direction=both';
  for (const size of [small, large]) {
    const t0 = performance.now();
    const nodes = Math.max(500, Math.ceil(size / 20));
    const degree = Math.ceil(size / nodes);
    await buildTables(ctx, tables, nodes);
    tables = nodes;
    for (let lo = 0; lo < nodes; lo += 5_000) {
      await ctx.db.query(
        `insert into lineage_edges (source_key, target_key, provider, first_seen_at, last_seen_at, observation_count, columns, column_lineage)
         select ${key('a')}, ${key('((a * 31 + j * 7919) % $3)')}, 'execution', now() - interval '30 days', now(), 3,
                '[{"source_column": "id", "target_column": "id"}]'::jsonb, 'derived'
           from generate_series($1::int, $2::int) a, generate_series(1, $4::int) j
          where (a * 31 + j * 7919) % $3 <> a
         on conflict do nothing`,
        [lo, Math.min(nodes, lo + 5_000) - 1, nodes, degree],
      );
    }
    await ctx.db.query(`vacuum analyze lineage_edges`);
    const [{ n }] = await ctx.db.query<{ n: number }>(`select count(*)::int as n from lineage_edges`);
    console.log(`built ${n.toLocaleString('en')} edges over ${nodes.toLocaleString('en')} tables in ${seconds(t0)} s`);
    const figures: Figure[] = [];
    const g = await ctx.get(`${path}&depth=5`);
    console.log(`  depth 5: ${g.nodes.length} nodes, ${g.edges.length} edges, truncated ${g.truncated}`);
    figures.push(await timed('graph, both directions, depth 5', N, () => ctx.get(`${path}&depth=5`), 2));
    figures.push(await timed('graph, both directions, depth 2', N, () => ctx.get(`${path}&depth=2`), 2));
    const frontier = g.nodes.slice(0, 200).map((x: { key: string }) => x.key);
    await explain(
      ctx,
      `one hop of 200 keys at ${size}`,
      `select source_key, target_key, provider from lineage_edges where (target_key = any($1::text[]) or source_key = any($1::text[]))`,
      [frontier],
    );
    yield { size: n, figures };
  }
};
