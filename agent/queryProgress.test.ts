import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgentFrame } from '../protocol/index.ts';
import { progressPayload, reportProgress, type EngineProgress } from './queryProgress.ts';

const QID = '3f2b8c1e-4a5d-4e6f-8a9b-0c1d2e3f4a5b';
const reading = (percentage: number, rows: number, total: number): EngineProgress => ({ percentage, rows_processed: BigInt(rows), total_rows_to_process: BigInt(total) });

describe('progressPayload', () => {
  it('is null while DuckDB reports no progress for the plan (-1), or none made yet (0% of nothing read)', () => {
    expect(progressPayload(QID, reading(-1, 0, 0))).toBeNull();
    expect(progressPayload(QID, reading(Number.NaN, 0, 0))).toBeNull();
    // What a range() source reports until it ends.
    expect(progressPayload(QID, reading(0, 0, 100_000_000_002))).toBeNull();
  });

  it('keeps one decimal of the percentage, at most 100, and an unknown total as null', () => {
    expect(progressPayload(QID, reading(12.3456, 250_000, 2_000_002))).toEqual({ query_id: QID, percent: 12.3, rows_processed: 250_000, rows_total: 2_000_002 });
    expect(progressPayload(QID, reading(100.04, 10, 10))?.percent).toBe(100);
    expect(progressPayload(QID, reading(0.01, 3, 0))).toEqual({ query_id: QID, percent: 0, rows_processed: 3, rows_total: null });
  });
});

describe('reportProgress', () => {
  afterEach(() => vi.useRealTimers());

  it('sends nothing in the first second, then what changed once a second, and nothing after the stop', () => {
    vi.useFakeTimers();
    const readings = [reading(10, 100, 1000), reading(10, 100, 1000), reading(-1, 0, 0), reading(20, 200, 1000)];
    let i = 0;
    const sent: AgentFrame[] = [];
    const stop = reportProgress({ queryId: QID, read: () => readings[Math.min(i++, readings.length - 1)], send: (f) => sent.push(f) });
    vi.advanceTimersByTime(999);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([{ type: 'query_progress', payload: { query_id: QID, percent: 10, rows_processed: 100, rows_total: 1000 } }]);
    vi.advanceTimersByTime(2_000); // the same reading, then none
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(1_000);
    expect(sent.map((f) => (f.type === 'query_progress' ? f.payload.percent : null))).toEqual([10, 20]);
    stop();
    vi.advanceTimersByTime(5_000);
    expect(sent).toHaveLength(2);
  });

  it('sends nothing when the engine is gone (a closed engine reads null)', () => {
    vi.useFakeTimers();
    const sent: AgentFrame[] = [];
    const stop = reportProgress({ queryId: QID, read: () => null, send: (f) => sent.push(f) });
    vi.advanceTimersByTime(3_000);
    stop();
    expect(sent).toEqual([]);
  });
});
