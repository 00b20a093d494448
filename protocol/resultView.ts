// A view of a query's result: the order and the filters the api asks the agent to apply to the result file when it
// reads a page or makes an export (docs/api-decisions.md "Result views"). Structured, never SQL: the agent builds the
// statement from it, quoting the column names it finds in the file and binding every value as a parameter.
import { Schema } from 'effect';

/** The filter operators; `contains` is case-insensitive on the value's text, the comparisons use the column's type. */
const FILTER_OPS = ['contains', '=', '!=', '<', '<=', '>', '>=', 'is_null', 'is_not_null'] as const;
type FilterOp = (typeof FILTER_OPS)[number];
/** Operators that take no value. */
const VALUELESS_OPS: ReadonlySet<FilterOp> = new Set(['is_null', 'is_not_null']);

/** The most sort keys and filters one view may carry (each becomes a term of the statement the agent runs). */
const MAX_VIEW_TERMS = 32;
/** A filter value's length at most, in characters. */
const MAX_FILTER_VALUE_CHARS = 1000;

export const SortKey = Schema.Struct({
  column: Schema.String,
  dir: Schema.optionalKey(Schema.Literals(['asc', 'desc'])),
});
export type SortKey = typeof SortKey.Type;

export const RowFilter = Schema.Struct({
  column: Schema.String,
  op: Schema.String,
  /** Compared as the column's type (cast on the agent); a number or boolean is taken as its text. */
  value: Schema.optionalKey(Schema.NullOr(Schema.Union([Schema.String, Schema.Finite, Schema.Boolean]))),
});
export type RowFilter = typeof RowFilter.Type;

export const ResultView = Schema.Struct({
  order_by: Schema.Array(SortKey),
  filter: Schema.Array(RowFilter),
  /** Rows holding this text (case-insensitive) in the text of any column; besides the filters. */
  search: Schema.optionalKey(Schema.String),
});
export type ResultView = typeof ResultView.Type;

/** Why a view cannot be applied to a result with these columns (bad column, operator or value), or null. */
export function viewProblem(view: ResultView, columns: readonly string[]): { code: 'unknown_column' | 'invalid_filter' | 'invalid_order_by'; message: string; column?: string } | null {
  const known = new Set(columns);
  if (view.order_by.length > MAX_VIEW_TERMS) return { code: 'invalid_order_by', message: `at most ${MAX_VIEW_TERMS} sort keys` };
  if (view.filter.length > MAX_VIEW_TERMS) return { code: 'invalid_filter', message: `at most ${MAX_VIEW_TERMS} filters` };
  if ((view.search ?? '').length > MAX_FILTER_VALUE_CHARS) return { code: 'invalid_filter', message: `search is at most ${MAX_FILTER_VALUE_CHARS} characters` };
  for (const k of view.order_by) {
    if (!known.has(k.column)) return { code: 'unknown_column', message: `order_by names a column the result does not have: ${k.column}`, column: k.column };
  }
  for (const f of view.filter) {
    if (!known.has(f.column)) return { code: 'unknown_column', message: `filter names a column the result does not have: ${f.column}`, column: f.column };
    if (!(FILTER_OPS as readonly string[]).includes(f.op)) return { code: 'invalid_filter', message: `unknown filter operator ${JSON.stringify(f.op)}; one of ${FILTER_OPS.join(', ')}`, column: f.column };
    const needsValue = !VALUELESS_OPS.has(f.op as FilterOp);
    if (needsValue && (f.value === undefined || f.value === null)) return { code: 'invalid_filter', message: `the ${f.op} filter on ${f.column} needs a value`, column: f.column };
    if (!needsValue && f.value !== undefined && f.value !== null) return { code: 'invalid_filter', message: `the ${f.op} filter takes no value`, column: f.column };
    if (typeof f.value === 'string' && f.value.length > MAX_FILTER_VALUE_CHARS) return { code: 'invalid_filter', message: `a filter value is at most ${MAX_FILTER_VALUE_CHARS} characters`, column: f.column };
  }
  return null;
}

export const isEmptyView = (view: ResultView) => view.order_by.length === 0 && view.filter.length === 0 && !view.search;

/** The view as it travels to the agent (a query parameter): base64url of its JSON, in a canonical key order. */
export function encodeView(view: ResultView): string {
  const canonical = {
    order_by: view.order_by.map((k) => ({ column: k.column, dir: k.dir ?? 'asc' })),
    filter: view.filter.map((f) => ({ column: f.column, op: f.op, ...(f.value === undefined || f.value === null ? {} : { value: String(f.value) }) })),
    ...(view.search ? { search: view.search } : {}),
  };
  return Buffer.from(JSON.stringify(canonical), 'utf8').toString('base64url');
}

const decodeViewJson = Schema.decodeUnknownExit(ResultView);

/** The view a query parameter carries, or null when it is not one. */
export function decodeView(text: string): ResultView | null {
  try {
    const exit = decodeViewJson(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
    return exit._tag === 'Success' ? exit.value : null;
  } catch {
    return null;
  }
}

/** The export formats the agent writes (DuckDB's COPY): CSV with a header row, Parquet, JSON (one array). */
export const EXPORT_FORMATS = ['csv', 'parquet', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
  json: 'application/json',
};
