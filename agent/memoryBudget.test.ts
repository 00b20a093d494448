import { describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerMemoryLimitBytes, memoryBudget } from './memoryBudget.ts';

describe('memory budget', () => {
  it('reads the cgroup v2 / v1 limit and treats "max" or a huge value as no limit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eider-cgroup-'));
    try {
      const host = 16 * 2 ** 30;
      const write = async (name: string, text: string) => {
        await writeFile(join(dir, name), text);
        return join(dir, name);
      };
      expect(containerMemoryLimitBytes([await write('v2', '2147483648\n')], host)).toBe(2 ** 31);
      expect(containerMemoryLimitBytes([await write('max', 'max\n')], host)).toBeNull();
      expect(containerMemoryLimitBytes([join(dir, 'missing'), await write('v1', '9223372036854771712')], host)).toBeNull();
      expect(containerMemoryLimitBytes([join(dir, 'missing'), await write('v1b', '1073741824')], host)).toBe(2 ** 30);
      expect(containerMemoryLimitBytes([join(dir, 'missing')], host)).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('holds back the headroom fraction', () => {
    const b = memoryBudget(0.25);
    expect(b.budgetBytes).toBe(Math.floor(b.sourceBytes * 0.75));
  });
});
