// What the result grid reads rows from: the pager over the api (a page at a time, only what is on screen), or a
// whole result held in the browser and sorted there. Sorting a result needs all of it, so it is offered up to
// SORT_LIMIT rows; a larger one is sorted by the query (ORDER BY) instead.
import type { RowPager } from './rowPager.ts';
import { columnKind, formatCell, type ColumnKind } from './cells.ts';
import type { ColumnSchema } from '../api/types.ts';

export type Row = Record<string, unknown>;

export interface RowSource {
  readonly total: number | null;
  /** the row at `index`, or undefined while it is not loaded */
  row(index: number): Row | undefined;
  /** asks for rows first..last (inclusive) to be loaded */
  ensure(first: number, last: number): void;
  /** rows first..last (inclusive), loading what is missing (copying a range) */
  rows(first: number, last: number): Promise<Row[]>;
  subscribe(fn: () => void): () => void;
}

/** Results up to this many rows can be sorted in the browser (about 5 MB of rows for a few columns). */
export const SORT_LIMIT = 50_000;

export interface SortBy {
  column: string;
  dir: 'asc' | 'desc';
}

/** A whole result held in memory, in the order of a sort. */
export class ArraySource implements RowSource {
  private readonly data: Row[];
  constructor(data: Row[]) {
    this.data = data;
  }
  get total() {
    return this.data.length;
  }
  row(index: number) {
    return this.data[index];
  }
  ensure() {}
  async rows(first: number, last: number) {
    return this.data.slice(first, last + 1);
  }
  subscribe() {
    return () => {};
  }
}

/** Every row of the result behind `pager`, fetched 1,000 at a time, a few requests at once. */
export async function loadAll(fetchAt: (offset: number, limit: number) => Promise<{ rows: Row[] }>, total: number, signal?: AbortSignal): Promise<Row[]> {
  const PAGE = 1000;
  const pages: Row[][] = [];
  let next = 0;
  const worker = async () => {
    while (next * PAGE < total) {
      const p = next++;
      if (signal?.aborted) throw new DOMException('sort cancelled', 'AbortError');
      pages[p] = (await fetchAt(p * PAGE, PAGE)).rows;
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return pages.flat();
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function compareBy(kind: ColumnKind): (a: unknown, b: unknown) => number {
  if (kind === 'number')
    return (a, b) => {
      const x = typeof a === 'number' ? a : Number(a);
      const y = typeof b === 'number' ? b : Number(b);
      if (x !== y) return x < y ? -1 : 1;
      // beyond a double's precision (HUGEINT as text): compare the digits
      if (typeof a === 'string' && typeof b === 'string' && /^-?\d+$/.test(a) && /^-?\d+$/.test(b)) {
        const [p, q] = [BigInt(a), BigInt(b)];
        return p === q ? 0 : p < q ? -1 : 1;
      }
      return 0;
    };
  if (kind === 'time') return (a, b) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0);
  if (kind === 'nested') return (a, b) => collator.compare(JSON.stringify(a), JSON.stringify(b));
  return (a, b) => (typeof a === 'boolean' || typeof b === 'boolean' ? Number(a) - Number(b) : collator.compare(String(a), String(b)));
}

/** `rows` sorted by one column, NULLs last either way; a stable sort, so equal values keep the query's order. */
export function sortRows(rows: Row[], by: SortBy, columns: ColumnSchema[]): Row[] {
  const type = columns.find((c) => c.name === by.column)?.type ?? '';
  const cmp = compareBy(columnKind(type));
  const sign = by.dir === 'asc' ? 1 : -1;
  return [...rows].sort((r, s) => {
    const a = r[by.column];
    const b = s[by.column];
    if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1;
    if (b === null || b === undefined) return -1;
    return sign * cmp(a, b);
  });
}

/** The pager as a row source (it holds the pages on screen; a copied range is fetched apart). */
export function pagerSource(pager: RowPager, fetchAt: (offset: number, limit: number) => Promise<{ rows: Row[] }>): RowSource {
  return {
    get total() {
      return pager.total;
    },
    row: (i) => pager.row(i),
    ensure: (a, b) => pager.ensure(a, b),
    subscribe: (fn) => pager.subscribe(fn),
    async rows(first, last) {
      const out: Row[] = [];
      for (let i = first; i <= last; ) {
        const loaded = pager.row(i);
        if (loaded) {
          out.push(loaded);
          i++;
          continue;
        }
        const n = Math.min(1000, last - i + 1);
        out.push(...(await fetchAt(i, n)).rows);
        i += n;
      }
      return out;
    },
  };
}

/** The rows with `needle` (lower case) in the text any of their cells shows, in their order. */
export function filterRows(rows: Row[], needle: string, columns: ColumnSchema[]): Row[] {
  const cols = columns.map((c) => [c.name, columnKind(c.type)] as const);
  return rows.filter((r) => cols.some(([name, kind]) => {
    const v = r[name];
    // the raw value too, so digits match whether or not the grid groups them
    return formatCell(v, kind).toLowerCase().includes(needle) || (v !== null && typeof v !== 'object' && String(v).toLowerCase().includes(needle));
  }));
}
