// What the grid's sort, column filters and search ask of the api: the `order_by`, `filter` and `search` parameters
// of a result's rows and export (docs/api-decisions.md "Result views"). The agent holding the result sorts and
// filters it whole, whatever its size, so the grid shows, counts and exports the same rows.
import type { ColumnKind } from './cells.ts';
import { pathOf, withQuery } from '../api/client.ts';

export interface SortBy {
  column: string;
  dir: 'asc' | 'desc';
}

export interface RowFilter {
  column: string;
  op: string;
  value?: string;
}

export interface GridView {
  sort: SortBy | null;
  /** a column filter's text as typed, by column name */
  filters: Record<string, string>;
  /** text in any column */
  search: string;
}

export const emptyView: GridView = { sort: null, filters: {}, search: '' };

const OPERATORS = ['>=', '<=', '!=', '<>', '=', '>', '<'] as const;

/**
 * A column filter as typed: `null` / `!null` (or `is null`, `not null`), a comparison (`> 5`, `<= 2024-01-01`,
 * `= x`, `!= x`), else the text: contained in a text column's values, equal to a number's, a time's or a boolean's.
 */
export function parseColumnFilter(column: string, text: string, kind: ColumnKind): RowFilter | null {
  const t = text.trim();
  if (!t) return null;
  const lower = t.toLowerCase();
  if (lower === 'null' || lower === 'is null') return { column, op: 'is_null' };
  if (lower === '!null' || lower === 'not null' || lower === 'is not null') return { column, op: 'is_not_null' };
  for (const op of OPERATORS) {
    if (t.startsWith(op)) {
      const value = t.slice(op.length).trim();
      if (!value) return null; // still being typed
      return { column, op: op === '<>' ? '!=' : op, value };
    }
  }
  return { column, op: kind === 'text' || kind === 'nested' ? 'contains' : '=', value: t };
}

/** The query parameters of a view (none for the result as the query gave it). */
export function viewParams(view: GridView, kinds: Record<string, ColumnKind>): { order_by?: string; filter?: string; search?: string } {
  const filters = Object.entries(view.filters)
    .map(([column, text]) => parseColumnFilter(column, text, kinds[column] ?? 'text'))
    .filter((f): f is RowFilter => f !== null);
  const search = view.search.trim();
  return {
    ...(view.sort ? { order_by: JSON.stringify([{ column: view.sort.column, dir: view.sort.dir }]) } : {}),
    ...(filters.length ? { filter: JSON.stringify(filters) } : {}),
    ...(search ? { search } : {}),
  };
}

/** The export URL of a result in `format`, in the view shown (a plain link: the browser downloads it as it streams). */
export function exportUrl(queryId: string, format: 'csv' | 'parquet' | 'json', params: Record<string, string | undefined>): string {
  return withQuery(pathOf('GET /api/queries/{query_id}/export', { query_id: queryId }), { format, ...params });
}
