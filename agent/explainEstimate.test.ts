import { describe, expect, it } from 'vitest';
import { estimatePeakBytesFromExplain } from './explainEstimate.ts';

describe('estimatePeakBytesFromExplain', () => {
  it('prices materializing operators and the build side of joins', () => {
    const scan = (rows: number) => ({ name: 'SEQ_SCAN', children: [], extra_info: { 'Estimated Cardinality': String(rows), Projections: ['a', 'b'] } });
    const join = { name: 'HASH_JOIN', children: [scan(1_000_000), scan(1000)], extra_info: { 'Estimated Cardinality': '1000000' } };
    const agg = { name: 'HASH_GROUP_BY', children: [join], extra_info: { Groups: ['#0'], Aggregates: ['count_star()'], 'Estimated Cardinality': '10' } };
    const joinBytes = 1000 * (2 * 16 + 48);
    const aggBytes = 10 * (2 * 16 + 48);
    expect(estimatePeakBytesFromExplain(JSON.stringify([agg]))).toBe(joinBytes + aggBytes);
    expect(estimatePeakBytesFromExplain(JSON.stringify([scan(1e9)]))).toBe(0);
    expect(estimatePeakBytesFromExplain('not json')).toBeNull();
    expect(estimatePeakBytesFromExplain('[]')).toBeNull();
  });
});
