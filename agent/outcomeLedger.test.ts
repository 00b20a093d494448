import { describe, expect, it } from 'vitest';
import { OutcomeLedger, type OutcomeFrame } from './outcomeLedger.ts';

const done = (id: string): OutcomeFrame => ({
  type: 'query_done',
  payload: { query_id: id, row_count: 1, duration_ms: 1, result_path: null, columns: [] },
} as unknown as OutcomeFrame);

describe('OutcomeLedger', () => {
  it('answers a repeated dispatch with the outcome it already reported', () => {
    const l = new OutcomeLedger({ maxEntries: 10, resendWindowMs: 60_000 });
    l.record(done('q1'));
    expect(l.outcomeOf('q1')?.payload.query_id).toBe('q1');
    expect(l.outcomeOf('q2')).toBeUndefined();
  });

  it('keeps at most maxEntries, dropping the oldest', () => {
    const l = new OutcomeLedger({ maxEntries: 2, resendWindowMs: 60_000 });
    for (const id of ['a', 'b', 'c']) l.record(done(id));
    expect(l.size).toBe(2);
    expect(l.outcomeOf('a')).toBeUndefined();
    expect(l.outcomeOf('c')).toBeDefined();
  });

  it('re-sends only the outcomes inside the window', () => {
    let now = 0;
    const l = new OutcomeLedger({ maxEntries: 10, resendWindowMs: 1_000, now: () => now });
    l.record(done('old'));
    now = 5_000;
    l.record(done('new'));
    expect(l.recent().map((f) => f.payload.query_id)).toEqual(['new']);
  });
});
