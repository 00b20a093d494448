import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtemp, rm, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataFileCache } from './dataCache.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'eider-cache-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const filler = (n: number) => async (path: string) => writeFile(path, Buffer.alloc(n, 1));

describe('DataFileCache', () => {
  it('fetches once per path and size, shares concurrent fetches', async () => {
    const cache = new DataFileCache(join(dir, 'c'), 1000);
    let calls = 0;
    const fetch = async (p: string) => {
      calls++;
      await filler(10)(p);
    };
    const [a, b] = await Promise.all([cache.acquire('s3://b/x', 10, fetch), cache.acquire('s3://b/x', 10, fetch)]);
    expect(a).toBe(b);
    await cache.acquire('s3://b/x', 10, fetch);
    expect(calls).toBe(1);
    expect(cache.stats).toMatchObject({ fetches: 1, hits: 2, bytes: 10, files: 1 });
  });

  it('evicts least recently used unpinned files beyond its bound, never pinned ones', async () => {
    const cache = new DataFileCache(join(dir, 'c'), 25);
    const a = await cache.acquire('s3://b/a', 10, filler(10));
    const b = await cache.acquire('s3://b/b', 10, filler(10));
    cache.release([a]);
    await cache.acquire('s3://b/c', 10, filler(10)); // 30 > 25: a (unpinned) goes, b (pinned) stays
    const names = await readdir(join(dir, 'c'));
    expect(names).toHaveLength(2);
    expect(names).toContain(b.slice(b.lastIndexOf('/') + 1));
    expect(cache.stats.bytes).toBe(20);
  });

  it('refuses a download whose size differs from the manifest', async () => {
    const cache = new DataFileCache(join(dir, 'c'), 100);
    await expect(cache.acquire('s3://b/x', 11, filler(10))).rejects.toThrow(/10 bytes, the manifest says 11/);
    expect(cache.stats.files).toBe(0);
  });
});
