// What the result grid reads rows from: the pager over the api (a page at a time, only what is on screen), of the
// result or of a view of it (sorted and filtered by the agent: resultView.ts). Summaries and charts read the rows
// they need whole, up to HELD_LIMIT.
import type { RowPager } from './rowPager.ts';

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

/** Summaries and charts read up to this many rows into the browser (about 5 MB of rows for a few columns). */
export const HELD_LIMIT = 50_000;

/** Every row of the result behind `pager`, fetched 1,000 at a time, a few requests at once. */
export async function loadAll(fetchAt: (offset: number, limit: number) => Promise<{ rows: Row[] }>, total: number, signal?: AbortSignal): Promise<Row[]> {
  const PAGE = 1000;
  const pages: Row[][] = [];
  let next = 0;
  const worker = async () => {
    while (next * PAGE < total) {
      const p = next++;
      if (signal?.aborted) throw new DOMException('reading cancelled', 'AbortError');
      pages[p] = (await fetchAt(p * PAGE, PAGE)).rows;
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return pages.flat();
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
