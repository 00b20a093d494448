// The agent's Iceberg data-file cache: `<data dir>/cache/`, bounded in bytes, least recently used first out.
// Iceberg data files are immutable, so a file is cached by its path and size and never revalidated. Files a running
// query uses are pinned (a query's DuckDB views read them lazily) and never evicted under it. Concurrent fetches of
// one file share one download.
import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';

interface Entry {
  size: number;
  lastUsed: number;
  pins: number;
}

export interface CacheStats {
  /** Files downloaded from storage since start. */
  readonly fetches: number;
  readonly fetchedBytes: number;
  readonly hits: number;
  readonly bytes: number;
  readonly files: number;
}

const DEFAULT_CACHE_MAX_BYTES = 10 * 2 ** 30;

export class DataFileCache {
  readonly dir: string;
  readonly maxBytes: number;
  readonly #entries = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<void>>();
  #bytes = 0;
  #ready: Promise<void> | null = null;
  #fetches = 0;
  #fetchedBytes = 0;
  #hits = 0;

  constructor(dir: string, maxBytes: number = DEFAULT_CACHE_MAX_BYTES) {
    this.dir = dir;
    this.maxBytes = maxBytes;
  }

  get stats(): CacheStats {
    return { fetches: this.#fetches, fetchedBytes: this.#fetchedBytes, hits: this.#hits, bytes: this.#bytes, files: this.#entries.size };
  }

  /** Picks up files cached by an earlier run (their mtime is their last use). */
  async #init(): Promise<void> {
    this.#ready ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      for (const name of await readdir(this.dir)) {
        if (name.endsWith('.partial')) {
          await rm(join(this.dir, name), { force: true });
          continue;
        }
        const s = await stat(join(this.dir, name)).catch(() => null);
        if (!s?.isFile()) continue;
        this.#entries.set(name, { size: s.size, lastUsed: s.mtimeMs, pins: 0 });
        this.#bytes += s.size;
      }
    })();
    return this.#ready;
  }

  static fileName(uri: string, size: number): string {
    return `${createHash('sha256').update(uri).digest('hex').slice(0, 40)}-${size}.parquet`;
  }

  /**
   * The local path of `uri` (of `size` bytes), fetched with `fetch(path)` when missing. The file is pinned until
   * `release` is called with the returned path.
   */
  async acquire(uri: string, size: number, fetch: (path: string) => Promise<void>): Promise<string> {
    await this.#init();
    const name = DataFileCache.fileName(uri, size);
    const path = join(this.dir, name);
    for (;;) {
      const entry = this.#entries.get(name);
      if (entry) {
        entry.pins++;
        entry.lastUsed = Date.now();
        this.#hits++;
        return path;
      }
      const pending = this.#inflight.get(name);
      if (pending) {
        await pending;
        continue;
      }
      const download = (async () => {
        await fetch(path);
        const s = await stat(path);
        if (s.size !== size) {
          await rm(path, { force: true });
          throw new Error(`${uri} has ${s.size} bytes, the manifest says ${size}`);
        }
        this.#fetches++;
        this.#fetchedBytes += size;
        this.#entries.set(name, { size, lastUsed: Date.now(), pins: 1 });
        this.#bytes += size;
      })();
      this.#inflight.set(name, download);
      try {
        await download;
      } finally {
        this.#inflight.delete(name);
      }
      await this.#evict();
      return path;
    }
  }

  /** Moves a file this agent just wrote and uploaded into the cache (pinned, like acquire). */
  async adopt(uri: string, localPath: string, size: number): Promise<string> {
    await this.#init();
    const name = DataFileCache.fileName(uri, size);
    const path = join(this.dir, name);
    const existing = this.#entries.get(name);
    if (existing) {
      existing.pins++;
      await rm(localPath, { force: true });
      return path;
    }
    await rename(localPath, path);
    this.#entries.set(name, { size, lastUsed: Date.now(), pins: 1 });
    this.#bytes += size;
    await this.#evict();
    return path;
  }

  release(paths: Iterable<string>): void {
    const now = Date.now();
    for (const p of paths) {
      const name = p.slice(this.dir.length + 1);
      const entry = this.#entries.get(name);
      if (!entry) continue;
      entry.pins = Math.max(0, entry.pins - 1);
      entry.lastUsed = now;
      // Recorded on disk so a restarted agent evicts in the same order.
      void utimes(p, now / 1000, now / 1000).catch(() => undefined);
    }
    void this.#evict();
  }

  async #evict(): Promise<void> {
    if (this.#bytes <= this.maxBytes) return;
    const victims = [...this.#entries.entries()].filter(([, e]) => e.pins === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [name, e] of victims) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(name);
      this.#bytes -= e.size;
      await rm(join(this.dir, name), { force: true });
    }
  }
}

/**
 * Cached files as one sandbox sees them: DuckDB may read only its own scratch directory, never the agent-wide cache
 * (which holds every workspace's files), so each cached file is hard-linked into `dir` under a neutral name, and
 * neither view SQL nor current_query() shows where the cache is or what else it holds. A SQL session's statements
 * share one of these (its views outlive the statement that made them), so a file read again is linked once and its
 * link reused: cache files are immutable (named by uri and size), so the link stays the same file.
 */
export class LinkedFiles {
  readonly dir: string;
  readonly #links = new Map<string, Promise<string>>();
  #next = 0;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The path under `dir` of the cache file at `cachePath`, linked on first use (copied across filesystems). */
  link(cachePath: string): Promise<string> {
    let linked = this.#links.get(cachePath);
    if (!linked) {
      const at = join(this.dir, `${this.#next++}.parquet`);
      linked = (async () => {
        await mkdir(this.dir, { recursive: true });
        await link(cachePath, at).catch(async (e: NodeJS.ErrnoException) => {
          if (e.code !== 'EXDEV') throw e;
          await copyFile(cachePath, at); // cache on another filesystem
        });
        return at;
      })();
      // A failed link is tried again by the next caller, under a new name.
      linked.catch(() => this.#links.delete(cachePath));
      this.#links.set(cachePath, linked);
    }
    return linked;
  }
}
