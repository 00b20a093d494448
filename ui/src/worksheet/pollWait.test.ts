import { describe, expect, it } from 'vitest';
import { pollWaitS } from './pollWait.ts';

const t0 = Date.parse('2026-11-29T10:00:00.000Z');
const running = { status: 'running' as const, running_at: '2026-11-29T10:00:00.000Z' };

describe('pollWaitS', () => {
  it('asks every second while the engine reports progress', () => {
    expect(pollWaitS({ ...running, progress: { percent: 1, rows_processed: 1, rows_total: null } }, t0 + 60_000)).toBe(1);
  });

  it('every second in a run’s first ten seconds without progress, then every ten', () => {
    expect(pollWaitS(running, t0 + 500)).toBe(1);
    expect(pollWaitS(running, t0 + 9_999)).toBe(1);
    expect(pollWaitS(running, t0 + 10_000)).toBe(10);
  });

  it('every second while queued: the long poll answers only at the end, so the start is read by asking again', () => {
    expect(pollWaitS({ status: 'queued', running_at: null }, t0)).toBe(1);
  });
});
