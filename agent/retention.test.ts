import { describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sweepResults } from './retention.ts';

describe('retention sweep', () => {
  it('deletes result and partial files older than the retention, keeps newer ones', async () => {
    const sweepDir = await mkdtemp(join(tmpdir(), 'eider-sweep-'));
    try {
      const old = new Date(Date.now() - 3 * 3_600_000);
      for (const name of ['old.parquet', 'old.parquet.partial', 'other.txt']) {
        await writeFile(join(sweepDir, name), 'x');
        await utimes(join(sweepDir, name), old, old);
      }
      await writeFile(join(sweepDir, 'new.parquet'), 'x');
      expect(await sweepResults(sweepDir, 2 * 3_600_000)).toBe(2);
      expect((await readdir(sweepDir)).sort()).toEqual(['new.parquet', 'other.txt']);
    } finally {
      await rm(sweepDir, { recursive: true, force: true });
    }
  });
});
