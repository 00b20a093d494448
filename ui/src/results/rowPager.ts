// Holds the pages of one query result that the grid needs, fetched by cursor. The rows endpoint's cursor is opaque
// and forward-only, so reaching page k means knowing the cursor that page k-1 returned: the pager remembers every
// cursor it has seen (a few bytes a page) but keeps only a bounded number of pages of rows, evicting the ones
// farthest from what is on screen. A 1,000,000-row result is never held whole.
import type { RowsPage } from '../api/types.ts';

export type FetchRowsPage = (cursor: string | null, limit: number) => Promise<RowsPage>;

export interface RowPagerOptions {
  pageSize?: number;
  /** pages of rows kept in memory at most */
  maxPages?: number;
  /** the first page when the caller already has it (saves a request) */
  firstPage?: RowsPage;
}

export class RowPager {
  readonly pageSize: number;
  private readonly maxPages: number;
  private readonly fetchPage: FetchRowsPage;
  private readonly pages = new Map<number, RowsPage['rows']>();
  /** cursors[k] fetches page k; undefined = not known yet; page 0 needs no cursor */
  private readonly cursors: Array<string | null | undefined> = [null];
  private wanted: { first: number; last: number } = { first: 0, last: 0 };
  private pumping = false;
  private readonly listeners = new Set<() => void>();
  private disposed = false;
  total: number | null = null;
  columns: string[] = [];
  error: Error | null = null;
  /** every page index requested from the server, in order (what the grid's paging test reads) */
  readonly fetched: number[] = [];

  constructor(fetchPage: FetchRowsPage, opts: RowPagerOptions = {}) {
    this.fetchPage = fetchPage;
    this.pageSize = opts.pageSize ?? 500;
    this.maxPages = Math.max(4, opts.maxPages ?? 40);
    if (opts.firstPage) this.accept(0, opts.firstPage);
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The row at `index`, or undefined while its page is not loaded. */
  row(index: number): Record<string, unknown> | undefined {
    return this.pages.get(Math.floor(index / this.pageSize))?.[index % this.pageSize];
  }

  get loadedPages(): number[] {
    return [...this.pages.keys()].sort((a, b) => a - b);
  }

  /** Asks for rows first..last (inclusive) to be loaded; fetching happens in the background. */
  ensure(firstRow: number, lastRow: number): void {
    const first = Math.max(0, Math.floor(firstRow / this.pageSize));
    const last = Math.max(first, Math.floor(Math.max(firstRow, lastRow) / this.pageSize));
    this.wanted = { first, last };
    void this.pump();
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
  }

  private lastPageIndex(): number | null {
    return this.total === null ? null : Math.max(0, Math.ceil(this.total / this.pageSize) - 1);
  }

  /** The next page to fetch toward the wanted range, or null when nothing is missing. */
  private nextFetch(): number | null {
    const lastIndex = this.lastPageIndex();
    const last = lastIndex === null ? this.wanted.last : Math.min(this.wanted.last, lastIndex);
    for (let p = this.wanted.first; p <= last; p++) {
      if (this.pages.has(p)) continue;
      if (this.cursors[p] !== undefined) return this.cursors[p] === null && p > 0 ? null : p;
      // Walk forward from the nearest page whose cursor is known: each fetch reveals the next cursor.
      let k = p - 1;
      while (k > 0 && this.cursors[k] === undefined) k--;
      if (k > 0 && this.cursors[k] === null) return null; // the result ended before page p
      return k;
    }
    return null;
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (;;) {
        if (this.disposed) return;
        const p = this.nextFetch();
        if (p === null) return;
        const cursor = this.cursors[p];
        if (p > 0 && (cursor === undefined || cursor === null)) return;
        this.fetched.push(p);
        let page: RowsPage;
        try {
          page = await this.fetchPage(cursor ?? null, this.pageSize);
        } catch (e) {
          this.error = e as Error;
          this.emit();
          return;
        }
        this.accept(p, page);
        this.emit();
      }
    } finally {
      this.pumping = false;
    }
  }

  private accept(p: number, page: RowsPage): void {
    this.total = page.total;
    if (page.columns?.length || !this.columns.length) this.columns = page.columns ?? [];
    this.pages.set(p, page.rows);
    // null marks the end: there is no page p+1
    this.cursors[p + 1] = page.cursor ?? null;
    this.evict();
  }

  private evict(): void {
    if (this.pages.size <= this.maxPages) return;
    const mid = (this.wanted.first + this.wanted.last) / 2;
    const byDistance = [...this.pages.keys()].sort((a, b) => Math.abs(b - mid) - Math.abs(a - mid));
    for (const p of byDistance) {
      if (this.pages.size <= this.maxPages) break;
      if (p >= this.wanted.first && p <= this.wanted.last) continue;
      this.pages.delete(p);
    }
  }

  private emit(): void {
    for (const fn of this.listeners) fn();
  }
}
