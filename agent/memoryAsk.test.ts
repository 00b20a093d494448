import { describe, expect, it } from 'vitest';
import { agentConfigFromEnv } from './config.ts';
import { MemoryAsk } from './memoryAsk.ts';

const MiB = 2 ** 20;
const config = agentConfigFromEnv({ CONTROL_PLANE_URL: 'ws://x/agents/connect', BOOTSTRAP_TOKEN: 't', ESTIMATE_CACHE_MAX_ENTRIES: '2' });

describe('MemoryAsk', () => {
  const budget = 1024 * MiB;
  it('clamps estimates to [floor, ceiling × budget] after the safety multiplier', () => {
    const ask = new MemoryAsk(config, budget);
    expect(ask.fromEstimate(100 * MiB)).toEqual({ bytes: 150 * MiB, source: 'estimate' });
    expect(ask.fromEstimate(1)).toEqual({ bytes: 64 * MiB, source: 'estimate' });
    expect(ask.fromEstimate(10_000 * MiB).bytes).toBe(budget);
    expect(ask.fromEstimate(null)).toEqual({ bytes: budget / 8, source: 'fallback' });
  });

  it('sizes by the largest remembered peak and forgets after a write', () => {
    const ask = new MemoryAsk(config, budget);
    ask.rememberPeak('SELECT  1', 100 * MiB);
    ask.rememberPeak('SELECT 1', 80 * MiB);
    expect(ask.fromFeedback(' SELECT 1 ')).toEqual({ bytes: 150 * MiB, source: 'feedback' });
    ask.clearAfterWrite();
    expect(ask.fromFeedback('SELECT 1')).toBeNull();
    const off = new MemoryAsk({ ...config, grantFeedbackEnabled: false }, budget);
    off.rememberPeak('SELECT 1', 100 * MiB);
    expect(off.fromFeedback('SELECT 1')).toBeNull();
  });

  it('asks by feedback, else the cached or fresh EXPLAIN estimate, else the bucket; learns from what ran', async () => {
    const ask = new MemoryAsk(config, budget);
    let explains = 0;
    const explain = (bytes: number | null) => async () => {
      explains++;
      return bytes;
    };
    expect(await ask.askFor('SELECT a', explain(100 * MiB))).toEqual({ bytes: 150 * MiB, source: 'estimate' });
    expect(await ask.askFor('SELECT  a', explain(1))).toEqual({ bytes: 150 * MiB, source: 'estimate' }); // cached
    expect(await ask.askFor('SELECT b', explain(null))).toEqual({ bytes: budget / 8, source: 'fallback' });
    expect(explains).toBe(2);
    // A stop during EXPLAIN (it throws) caches nothing.
    await expect(ask.askFor('SELECT c', async () => Promise.reject(new Error('stopped')))).rejects.toThrow('stopped');
    expect(ask.cachedEstimate('SELECT c')).toBeUndefined();
    ask.learn('SELECT a', { wrote: false, peakBytes: 200 * MiB });
    expect(await ask.askFor('SELECT a', explain(1))).toEqual({ bytes: 300 * MiB, source: 'feedback' });
    ask.learn('INSERT INTO t VALUES (1)', { wrote: true, peakBytes: 1 });
    expect(ask.fromFeedback('SELECT a')).toBeNull();
    expect(explains).toBe(2);
  });

  it('caches estimates with a TTL and a size bound', () => {
    const ask = new MemoryAsk(config, budget);
    ask.rememberEstimate('a', 1, 0);
    ask.rememberEstimate('b', null, 0);
    expect(ask.cachedEstimate('b', 1)).toBeNull();
    expect(ask.cachedEstimate('a', 1)).toBe(1);
    ask.rememberEstimate('c', 3, 2); // evicts b, the least recently used
    expect(ask.cachedEstimate('b', 3)).toBeUndefined();
    expect(ask.cachedEstimate('a', 3)).toBe(1);
    expect(ask.cachedEstimate('a', 3 + config.estimateCacheTtlS * 1000 + 1)).toBeUndefined();
  });
});
