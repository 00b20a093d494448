import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtemp, rm, writeFile, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataFileCache, LinkedFiles } from './dataCache.ts';

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

describe('LinkedFiles', () => {
  it('links each cached file once under a neutral name, and reuses the link when it is read again (a session reading a table twice)', async () => {
    const cache = new DataFileCache(join(dir, 'cache'), 1000);
    const a = await cache.acquire('s3://b/a', 3, async (p) => writeFile(p, 'aaa'));
    const b = await cache.acquire('s3://b/b', 3, async (p) => writeFile(p, 'bbb'));
    const links = new LinkedFiles(join(dir, 'session', 'files'));
    // Statement 1 reads a; statement 2 reads a and b; statement 3 reads b, a and a again (a self-join).
    const first = await links.link(a);
    const second = await Promise.all([links.link(a), links.link(b)]);
    const third = await Promise.all([links.link(b), links.link(a), links.link(a)]);
    expect(second[0]).toBe(first);
    expect(third).toEqual([second[1], first, first]);
    expect(second[1]).not.toBe(first);
    expect((await readdir(links.dir)).sort()).toEqual(['0.parquet', '1.parquet']);
    expect(first.startsWith(links.dir)).toBe(true);
    expect(first).not.toContain(cache.dir);
    expect(await readFile(first, 'utf8')).toBe('aaa');
    expect(await readFile(second[1], 'utf8')).toBe('bbb');
    // A hard link: the same file, no copy.
    expect((await stat(first)).ino).toBe((await stat(a)).ino);
  });

  it('a failed link is tried again under a new name', async () => {
    const links = new LinkedFiles(join(dir, 'files'));
    await expect(links.link(join(dir, 'missing.parquet'))).rejects.toThrow(/ENOENT/);
    await writeFile(join(dir, 'missing.parquet'), 'x');
    expect(await readFile(await links.link(join(dir, 'missing.parquet')), 'utf8')).toBe('x');
  });
});
