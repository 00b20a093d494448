// Column summaries of a result, computed in the browser from rows already read: per column its nulls, distinct
// values, least and greatest value, and for numeric columns a histogram of equal-width bins. The caller says how many
// of the result's rows these are (the whole result up to HELD_LIMIT rows, else its first HELD_LIMIT).
import type { ColumnSchema } from '../api/types.ts';
import { columnKind, formatCell, type ColumnKind } from './cells.ts';
import type { Row } from './rowSource.ts';

export interface ColumnSummary {
  kind: ColumnKind;
  rows: number;
  nulls: number;
  distinct: number;
  /** the least and greatest value, as the grid shows them (none for nested values, or when every value is null) */
  min: string | null;
  max: string | null;
  /** numeric columns: counts of equal-width bins from the least to the greatest value */
  histogram: number[] | null;
}

const BINS = 12;

const asNumber = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' || typeof v === 'bigint' ? Number(v) : NaN);

export function summarize(rows: Row[], columns: ColumnSchema[]): ColumnSummary[] {
  return columns.map((c) => {
    const kind = columnKind(c.type);
    const seen = new Set<unknown>();
    let nulls = 0;
    let lo: unknown = undefined;
    let hi: unknown = undefined;
    let nLo = Infinity;
    let nHi = -Infinity;
    const numbers: number[] = [];
    for (const r of rows) {
      const v = r[c.name];
      if (v === null || v === undefined) {
        nulls++;
        continue;
      }
      seen.add(typeof v === 'object' ? JSON.stringify(v) : v);
      if (kind === 'nested') continue;
      if (kind === 'number') {
        const n = asNumber(v);
        if (Number.isNaN(n)) continue;
        numbers.push(n);
        if (n < nLo) {
          nLo = n;
          lo = v;
        }
        if (n > nHi) {
          nHi = n;
          hi = v;
        }
      } else {
        const s = String(v);
        if (lo === undefined || s < String(lo)) lo = v;
        if (hi === undefined || s > String(hi)) hi = v;
      }
    }
    let histogram: number[] | null = null;
    if (kind === 'number' && numbers.length) {
      const bins = nHi > nLo ? BINS : 1;
      histogram = new Array<number>(bins).fill(0);
      const width = (nHi - nLo) / bins;
      for (const n of numbers) histogram[Math.min(bins - 1, width ? Math.floor((n - nLo) / width) : 0)]++;
    }
    return {
      kind,
      rows: rows.length,
      nulls,
      distinct: seen.size,
      min: lo === undefined ? null : formatCell(lo, kind),
      max: hi === undefined ? null : formatCell(hi, kind),
      histogram,
    };
  });
}
