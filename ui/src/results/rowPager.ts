// Holds the pages of one query result that the grid needs, each fetched by its row offset. The grid asks for the
// rows on screen; only the pages holding them are requested (the nearest first, a couple at a time), so jumping to
// the end of 200,000 rows is one or two requests, not the 399 sequential ones a forward-only cursor walk took
// (11.8 s). A bounded number of pages is kept, evicting the ones farthest from what is on screen: a 1,000,000-row
// result is never held whole.
import type { RowsPage } from '../api/types.ts';

/** Fetches `limit` rows starting at row `offset` (0-based). */
export type FetchRowsAt = (offset: number, limit: number) => Promise<RowsPage>;

export interface RowPagerOptions {
  pageSize?: number;
  /** pages of rows kept in memory at most */
  maxPages?: number;
  /** requests in flight at most */
  parallel?: number;
  /** the first page when the caller already has it (saves a request) */
  firstPage?: RowsPage;
}

export class RowPager {
  readonly pageSize: number;
  private readonly maxPages: number;
  private readonly parallel: number;
  private readonly fetchAt: FetchRowsAt;
  private readonly pages = new Map<number, RowsPage['rows']>();
  private readonly inFlight = new Set<number>();
  private wanted: { first: number; last: number } = { first: 0, last: 0 };
  private readonly listeners = new Set<() => void>();
  private disposed = false;
  total: number | null = null;
  columns: string[] = [];
  error: Error | null = null;
  /** every page index requested from the server, in order (what the grid's paging test reads) */
  readonly fetched: number[] = [];

  constructor(fetchAt: FetchRowsAt, opts: RowPagerOptions = {}) {
    this.fetchAt = fetchAt;
    this.pageSize = opts.pageSize ?? 500;
    this.maxPages = Math.max(4, opts.maxPages ?? 40);
    this.parallel = Math.max(1, opts.parallel ?? 2);
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

  /** Whether every row of first..last (inclusive) is loaded. */
  has(firstRow: number, lastRow: number): boolean {
    for (let p = Math.floor(firstRow / this.pageSize); p <= Math.floor(lastRow / this.pageSize); p++) if (!this.pages.has(p)) return false;
    return true;
  }

  get loadedPages(): number[] {
    return [...this.pages.keys()].sort((a, b) => a - b);
  }

  /** Asks for rows first..last (inclusive) to be loaded; fetching happens in the background. */
  ensure(firstRow: number, lastRow: number): void {
    const first = Math.max(0, Math.floor(firstRow / this.pageSize));
    const last = Math.max(first, Math.floor(Math.max(firstRow, lastRow) / this.pageSize));
    this.wanted = { first, last };
    this.pump();
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
  }

  private lastPageIndex(): number | null {
    return this.total === null ? null : Math.max(0, Math.ceil(this.total / this.pageSize) - 1);
  }

  /** The wanted pages not loaded nor being fetched, the middle of the screen first. */
  private missing(): number[] {
    const lastIndex = this.lastPageIndex();
    const last = lastIndex === null ? this.wanted.last : Math.min(this.wanted.last, lastIndex);
    const out: number[] = [];
    for (let p = this.wanted.first; p <= last; p++) if (!this.pages.has(p) && !this.inFlight.has(p)) out.push(p);
    const mid = (this.wanted.first + this.wanted.last) / 2;
    return out.sort((a, b) => Math.abs(a - mid) - Math.abs(b - mid));
  }

  private pump(): void {
    if (this.disposed || this.error) return;
    for (const p of this.missing()) {
      if (this.inFlight.size >= this.parallel) return;
      this.inFlight.add(p);
      this.fetched.push(p);
      this.fetchAt(p * this.pageSize, this.pageSize).then(
        (page) => {
          this.inFlight.delete(p);
          if (this.disposed) return;
          this.accept(p, page);
          this.emit();
          this.pump();
        },
        (e: unknown) => {
          this.inFlight.delete(p);
          if (this.disposed) return;
          this.error = e as Error;
          this.emit();
        },
      );
    }
  }

  private accept(p: number, page: RowsPage): void {
    this.total = page.total;
    if (page.columns?.length || !this.columns.length) this.columns = page.columns ?? [];
    this.pages.set(p, page.rows);
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
