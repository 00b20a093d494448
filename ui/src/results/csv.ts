// CSV export of a whole result: pages through the rows endpoint by cursor and builds the file from chunks, so a
// large result is never held as one string. RFC 4180 quoting.
import type { ColumnSchema, RowsPage } from '../api/types.ts';

export type FetchRowsPage = (cursor: string | null, limit: number) => Promise<RowsPage>;

/** One CSV field: quoted when it holds a comma, quote, CR or LF, or edge whitespace; quotes doubled. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(values: unknown[]): string {
  return values.map(csvField).join(',') + '\r\n';
}

export interface CsvProgress {
  rows: number;
  total: number;
}

/**
 * Reads every page and returns the CSV as chunks (header first). `signal` stops it between pages.
 */
export async function exportCsv(
  fetchPage: FetchRowsPage,
  opts: { pageSize?: number; signal?: AbortSignal; onProgress?: (p: CsvProgress) => void } = {},
): Promise<string[]> {
  const pageSize = opts.pageSize ?? 1000;
  const chunks: string[] = [];
  let cursor: string | null = null;
  let columns: string[] | null = null;
  let rows = 0;
  for (;;) {
    if (opts.signal?.aborted) throw new DOMException('export cancelled', 'AbortError');
    const page = await fetchPage(cursor, pageSize);
    if (!columns) {
      columns = page.columns;
      chunks.push(csvLine(columns));
    }
    let text = '';
    for (const row of page.rows) text += csvLine(columns.map((c) => row[c]));
    if (text) chunks.push(text);
    rows += page.rows.length;
    opts.onProgress?.({ rows, total: page.total });
    if (!page.cursor || page.rows.length === 0) break;
    cursor = page.cursor;
  }
  return chunks;
}

/** Column header text: the name and its engine type. */
export const columnLabel = (c: ColumnSchema) => `${c.name} ${c.type}`;
