import { describe, expect, it } from 'vitest';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionTokenStore } from './sessionTokenStore.ts';

describe('SessionTokenStore', () => {
  it('writes the token with mode 0600, reads it back and clears it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eider-token-'));
    try {
      const store = new SessionTokenStore(join(dir, 'agent'));
      expect(await store.read()).toBeNull();
      await store.write('s3cret');
      expect(await store.read()).toBe('s3cret');
      expect((await stat(store.path)).mode & 0o777).toBe(0o600);
      await store.clear();
      expect(await store.read()).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
