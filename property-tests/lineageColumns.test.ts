// Column lineage of random CTAS statements (issue 17): statements built from a small grammar of projections
// (column references, arithmetic, functions, CASE, casts, aliases, `t.*`, joins, CTE indirection) over known
// source tables. The derived lineage of each target column must equal the set of source columns its generated
// expression references, through every CTE it reads. DuckDB runs each statement too, so the grammar never drifts
// into SQL that would not run, and the target columns' names and order must be DuckDB's.
// PROPERTY_RUNS raises the number of runs (default 200).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { deriveColumnLineage, loadParser, qualified, type ColumnEnv } from '../domain/lineage/columns.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

const TABLES: Record<string, string[]> = {
  orders: ['id', 'customer_id', 'amount', 'qty'],
  customers: ['id', 'name', 'region', 'score'],
};
const NUMERIC = new Set(['id', 'customer_id', 'amount', 'qty', 'score']);
const env: ColumnEnv = {
  resolveTable: (r) => `${(r.catalog ?? 'w').toLowerCase()}.${(r.schema ?? 'main').toLowerCase()}.${r.name.toLowerCase()}`,
  tables: new Map(Object.entries(TABLES).map(([t, cols]) => [`w.s.${t}`, cols])),
};

/** A column a projection may reference: how to write it, whether it is numeric, the source columns it carries. */
interface Visible {
  sql: string;
  numeric: boolean;
  refs: ReadonlySet<string>;
}

/** An expression with the source columns it references. */
interface Gen {
  sql: string;
  numeric: boolean;
  refs: Set<string>;
}

const lit = (numeric: boolean): fc.Arbitrary<Gen> =>
  (numeric ? fc.integer({ min: 0, max: 99 }).map(String) : fc.constantFrom("'x'", "'it''s'", "''")).map((sql) => ({ sql, numeric, refs: new Set<string>() }));

const merge = (...gs: Gen[]) => new Set(gs.flatMap((g) => [...g.refs]));

/** Expressions over the visible columns, numeric or text, to a bounded depth. */
function expr(cols: readonly Visible[], numeric: boolean, depth: number): fc.Arbitrary<Gen> {
  const fitting = cols.filter((c) => c.numeric === numeric);
  const ref: fc.Arbitrary<Gen> = fitting.length ? fc.constantFrom(...fitting).map((c) => ({ sql: c.sql, numeric, refs: new Set(c.refs) })) : lit(numeric);
  if (depth <= 0) return fc.oneof({ weight: 4, arbitrary: ref }, { weight: 1, arbitrary: lit(numeric) });
  const sub = (n: boolean) => expr(cols, n, depth - 1);
  const both = [
    { weight: 4, arbitrary: ref },
    { weight: 1, arbitrary: lit(numeric) },
    {
      weight: 2,
      arbitrary: fc.tuple(sub(true), sub(true), sub(numeric), sub(numeric)).map(([c1, c2, a, b]) => ({
        sql: `CASE WHEN ${c1.sql} > ${c2.sql} THEN ${a.sql} ELSE ${b.sql} END`,
        numeric,
        refs: merge(c1, c2, a, b),
      })),
    },
    { weight: 1, arbitrary: fc.tuple(sub(numeric), sub(numeric)).map(([a, b]) => ({ sql: `coalesce(${a.sql}, ${b.sql})`, numeric, refs: merge(a, b) })) },
    { weight: 1, arbitrary: sub(numeric).map((a) => ({ sql: `(${a.sql})`, numeric, refs: merge(a) })) },
  ];
  const numericOnly = [
    {
      weight: 3,
      arbitrary: fc.tuple(sub(true), fc.constantFrom('+', '-', '*'), sub(true)).map(([a, op, b]) => ({ sql: `${a.sql} ${op} ${b.sql}`, numeric, refs: merge(a, b) })),
    },
    { weight: 1, arbitrary: sub(true).map((a) => ({ sql: `abs(${a.sql})`, numeric, refs: merge(a) })) },
    { weight: 1, arbitrary: fc.tuple(sub(true), sub(true)).map(([a, b]) => ({ sql: `greatest(${a.sql}, ${b.sql})`, numeric, refs: merge(a, b) })) },
    { weight: 1, arbitrary: sub(false).map((a) => ({ sql: `length(${a.sql})`, numeric, refs: merge(a) })) },
  ];
  const textOnly = [
    { weight: 1, arbitrary: sub(false).map((a) => ({ sql: `upper(${a.sql})`, numeric, refs: merge(a) })) },
    { weight: 1, arbitrary: fc.tuple(sub(false), sub(false)).map(([a, b]) => ({ sql: `${a.sql} || ${b.sql}`, numeric, refs: merge(a, b) })) },
    { weight: 1, arbitrary: sub(true).map((a) => ({ sql: `CAST(${a.sql} AS VARCHAR)`, numeric, refs: merge(a) })) },
  ];
  return fc.oneof(...both, ...(numeric ? numericOnly : textOnly));
}

/** A FROM clause over the base tables: one table, or orders joined to customers; aliased or not. */
interface From {
  sql: string;
  /** per relation: its qualifier and columns */
  rels: Array<{ q: string; cols: Array<{ name: string; numeric: boolean; refs: ReadonlySet<string> }> }>;
}

const baseCols = (table: string) => TABLES[table].map((name) => ({ name, numeric: NUMERIC.has(name), refs: new Set([`w.s.${table}.${name}`]) }));

const fromArb: fc.Arbitrary<From> = fc.oneof(
  fc.tuple(fc.constantFrom('orders', 'customers'), fc.boolean()).map(([table, aliased]) => ({
    sql: `s.${table}${aliased ? ' AS t' : ''}`,
    rels: [{ q: aliased ? 't' : table, cols: baseCols(table) }],
  })),
  fc.constant<From>({
    sql: 's.orders o JOIN s.customers c ON c.id = o.customer_id',
    rels: [
      { q: 'o', cols: baseCols('orders') },
      { q: 'c', cols: baseCols('customers') },
    ],
  }),
);

/** How a projection may write each column: qualified always when the name is ambiguous, at random otherwise. */
function visibleOf(from: From, qualify: boolean): Visible[] {
  const count = new Map<string, number>();
  for (const r of from.rels) for (const c of r.cols) count.set(c.name, (count.get(c.name) ?? 0) + 1);
  return from.rels.flatMap((r) => r.cols.map((c) => ({ sql: qualify || count.get(c.name)! > 1 ? `${r.q}.${c.name}` : c.name, numeric: c.numeric, refs: c.refs })));
}

/** A select list: aliased expressions and, sometimes, one relation's `q.*`; with what each output column reads. */
function selectList(from: From, prefix: string): fc.Arbitrary<{ sql: string; cols: Array<{ name: string; numeric: boolean; refs: Set<string> }> }> {
  return fc
    .record({
      qualify: fc.boolean(),
      items: fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
      star: fc.option(fc.nat(from.rels.length - 1), { nil: undefined }),
    })
    .chain(({ qualify, items, star }) => {
      const visible = visibleOf(from, qualify);
      return fc.tuple(...items.map((numeric) => expr(visible, numeric, 2))).map((gens) => {
        const cols = gens.map((g, i) => ({ name: `${prefix}${i}`, numeric: g.numeric, refs: g.refs }));
        const parts = gens.map((g, i) => `${g.sql} AS ${prefix}${i}`);
        if (star !== undefined) {
          const rel = from.rels[star];
          parts.push(`${rel.q}.*`);
          cols.push(...rel.cols.map((c) => ({ name: c.name, numeric: c.numeric, refs: new Set(c.refs) })));
        }
        return { sql: parts.join(', '), cols };
      });
    });
}

/** `[WITH c0 AS (…), c1 AS (SELECT … FROM c0)] SELECT … FROM …`: zero to two CTE layers, each reading the one before. */
const statementArb = fc.tuple(fromArb, fc.nat(2)).chain(([from0, layers]) => {
  const step = (from: From, layer: number, ctes: string[]): fc.Arbitrary<{ sql: string; cols: Array<{ name: string; refs: Set<string> }> }> => {
    if (layer === layers) {
      return selectList(from, 'out').map((sl) => ({
        sql: `CREATE TABLE s.out AS ${ctes.length ? `WITH ${ctes.join(', ')} ` : ''}SELECT ${sl.sql} FROM ${from.sql}`,
        cols: sl.cols,
      }));
    }
    const name = `c${layer}`;
    return selectList(from, `${name}_`).chain((sl) => {
      const next: From = { sql: name, rels: [{ q: name, cols: sl.cols }] };
      return step(next, layer + 1, [...ctes, `${name} AS (SELECT ${sl.sql} FROM ${from.sql})`]);
    });
  };
  return step(from0, 0, []);
});

let conn: DuckDBConnection;
beforeAll(async () => {
  await loadParser();
  conn = await (await DuckDBInstance.create(':memory:')).connect();
  for (const s of [
    `ATTACH ':memory:' AS w`,
    `USE w`,
    `CREATE SCHEMA s`,
    `CREATE TABLE s.orders (id INTEGER, customer_id INTEGER, amount DOUBLE, qty INTEGER)`,
    `CREATE TABLE s.customers (id INTEGER, name VARCHAR, region VARCHAR, score DOUBLE)`,
  ]) await conn.run(s);
});
afterAll(() => conn?.closeSync());

describe('column lineage of generated CTAS statements', () => {
  it('each target column derives from exactly the source columns its expression references', async () => {
    await fc.assert(
      fc.asyncProperty(statementArb, async ({ sql, cols }) => {
        await conn.run('DROP TABLE IF EXISTS s.out');
        await conn.run(sql);
        const names = (await conn.runAndReadAll('SELECT * FROM s.out LIMIT 0')).columnNames();
        const r = deriveColumnLineage(sql, env);
        expect(r, sql).toMatchObject({ state: 'derived' });
        if (r.state !== 'derived') return;
        expect(r.columns.map((c) => c.target_column)).toEqual(names);
        expect(r.columns.map((c) => [c.target_column, c.sources.map(qualified).sort()])).toEqual(cols.map((c) => [c.name, [...c.refs].sort()]));
      }),
      { numRuns: RUNS },
    );
  });
});
