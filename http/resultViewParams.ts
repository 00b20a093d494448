// The `order_by` and `filter` query parameters of a result's rows and export (docs/api-decisions.md "Result views"):
// each a JSON array, decoded by the view's schema (protocol/resultView.ts). What they say wrongly is a 400 naming the
// parameter; whether their columns exist is checked against the result (usecases/resultPages.ts).
import { Schema } from 'effect';
import { AppError } from '../domain/errors.ts';
import { ResultView, RowFilter, SortKey, type ResultView as View } from '../protocol/index.ts';

export const ViewQuery = {
  order_by: Schema.optionalKey(
    Schema.String.annotate({ description: 'JSON array of sort keys `[{"column": "amount", "dir": "desc"}]` (dir `asc` by default; NULLs last); ties keep the query’s order' }),
  ),
  filter: Schema.optionalKey(
    Schema.String.annotate({
      description:
        'JSON array of filters, all of which a row must pass: `[{"column": "name", "op": "contains", "value": "ab"}]`; ' +
        'op `contains` (case-insensitive, on the value’s text), `=`, `!=`, `<`, `<=`, `>`, `>=` (the value cast to the column’s type), `is_null`, `is_not_null` (no value)',
    }),
  ),
  search: Schema.optionalKey(Schema.String.annotate({ description: 'rows holding this text (case-insensitive) in the text of any of their columns' })),
};

const decodeKeys = Schema.decodeUnknownExit(Schema.Array(SortKey));
const decodeFilters = Schema.decodeUnknownExit(Schema.Array(RowFilter));

function parse<T>(name: 'order_by' | 'filter', text: string | undefined, decode: (u: unknown) => { _tag: string; value?: T }, shape: string): T | [] {
  if (text === undefined || text.trim() === '') return [];
  const code = name === 'order_by' ? 'invalid_order_by' : 'invalid_filter';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError(400, code, `${name} is not JSON: expected ${shape}`, { parameter: name });
  }
  const exit = decode(json);
  if (exit._tag !== 'Success') throw new AppError(400, code, `${name} is not ${shape}`, { parameter: name });
  return exit.value as T;
}

/** The view the parameters ask for (empty when neither is given). */
export function viewFromQuery(query: { order_by?: string; filter?: string; search?: string }): View {
  const view: typeof ResultView.Type = {
    order_by: parse('order_by', query.order_by, decodeKeys, 'an array of {column, dir?: "asc" | "desc"}'),
    filter: parse('filter', query.filter, decodeFilters, 'an array of {column, op, value?}'),
    ...(query.search ? { search: query.search } : {}),
  };
  return view;
}
