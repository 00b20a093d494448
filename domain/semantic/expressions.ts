// Expressions in definitions (a dimension's or metric's `expr`, a metric's `filter`) are SQL written by workspace
// writers. Before one is stored it must parse as exactly one scalar expression over the columns of one dataset:
// no second statement smuggled after a parenthesis, no subquery reaching another table, no aggregate (the metric's
// `agg` is the only aggregation) and no function the statement policy denies. The columns it names are returned,
// so validation can check them against the live table.
import { Dialect, init, parse } from '@polyglot-sql/sdk';
import { isDeniedFunction } from '../statementPolicy/rules.ts';
import { unprocessable } from '../errors.ts';

let ready: Promise<void> | null = null;

const ALIAS = '__eider_expr';
const TABLE = '__eider_dataset';

// Node kinds polyglot gives aggregates and windows; an expression holding one would aggregate twice.
const AGGREGATE_KINDS = new Set([
  'sum', 'count', 'avg', 'min', 'max', 'median', 'mode', 'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop',
  'var_samp', 'array_agg', 'string_agg', 'group_concat', 'list', 'approx_distinct', 'count_if', 'bool_and', 'bool_or',
  'any_value', 'first', 'last', 'quantile', 'percentile_cont', 'percentile_disc', 'aggregate_function', 'window',
  'window_function', 'over',
]);
const FORBIDDEN_KINDS = new Set(['subquery', 'select', 'table', 'union', 'intersect', 'except', 'exists', 'with']);

export interface ExpressionFacts {
  /** column names the expression reads, in order of first appearance */
  columns: string[];
}

type Obj = Record<string, unknown>;

/** Checks `text` as a scalar expression; throws 422 `invalid_expression` naming `field` when it is not one. */
export async function checkExpression(text: string, field: string): Promise<ExpressionFacts> {
  ready ??= init();
  await ready;
  const fail = (why: string) =>
    unprocessable(`${field}: ${why}`, 'invalid_expression', { fields: [{ field, in: 'body', message: why }] });
  if (text.includes(';')) throw fail('an expression holds no semicolon');
  const parsed = parse(`SELECT (${text}) AS ${ALIAS} FROM ${TABLE}`, Dialect.DuckDB) as unknown as { success: boolean; ast?: unknown[]; error?: string };
  if (!parsed.success || !parsed.ast) throw fail(`not a SQL expression (${parsed.error ?? 'parse error'})`);
  if (parsed.ast.length !== 1) throw fail('one expression, not several statements');
  const select = (parsed.ast[0] as Obj).select as Obj | undefined;
  const projections = (select?.expressions ?? []) as Obj[];
  const from = ((select?.from as Obj | null)?.expressions ?? []) as Obj[];
  const alias = projections[0]?.alias as Obj | undefined;
  const aliasName = ((alias?.alias as Obj | undefined)?.name as string | undefined) ?? '';
  const tableName = (((from[0]?.table as Obj | undefined)?.name as Obj | undefined)?.name as string | undefined) ?? '';
  const clean =
    select &&
    projections.length === 1 &&
    aliasName === ALIAS &&
    from.length === 1 &&
    tableName === TABLE &&
    ((select.joins as unknown[] | undefined)?.length ?? 0) === 0 &&
    ['where_clause', 'group_by', 'having', 'qualify', 'order_by', 'limit', 'offset', 'with'].every((k) => select[k] === null || select[k] === undefined);
  // Anything else means the text closed our parenthesis and went on writing SQL of its own.
  if (!clean) throw fail('one expression over the dataset’s columns');
  const columns: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    for (const [kind, value] of Object.entries(node as Obj)) {
      if (FORBIDDEN_KINDS.has(kind) && value && typeof value === 'object') throw fail(`a ${kind} is not allowed: an expression reads its own dataset's row`);
      if (AGGREGATE_KINDS.has(kind) && value && typeof value === 'object') throw fail(`${kind} aggregates: a metric's agg is its only aggregation`);
      if (kind === 'column' && value && typeof value === 'object') {
        const col = value as Obj;
        if (col.table) throw fail('name columns without a table qualifier: an expression reads its own dataset');
        const name = (col.name as Obj | undefined)?.name;
        if (typeof name === 'string' && !columns.includes(name)) columns.push(name);
        continue;
      }
      if (kind === 'function' && value && typeof value === 'object') {
        const name = String((value as Obj).name ?? '');
        if (isDeniedFunction(name)) throw fail(`function ${name} is not allowed`);
      }
      walk(value);
    }
  };
  walk(alias?.this);
  return { columns };
}
