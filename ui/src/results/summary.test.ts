import { describe, expect, it } from 'vitest';
import { summarize } from './summary.ts';

describe('column summaries', () => {
  it('counts nulls and distinct values, finds the least and greatest, and bins numbers', () => {
    const rows = [
      { n: 1, d: '10.50', s: 'b', t: '2025-01-02T00:00:00', j: { a: 1 } },
      { n: 2, d: '3.25', s: 'a', t: '2025-01-01T00:00:00', j: { a: 1 } },
      { n: null, d: '100.00', s: 'b', t: null, j: null },
      { n: 13, d: null, s: null, t: '2025-03-01T12:00:00', j: { a: 2 } },
    ];
    const [n, d, s, t, j] = summarize(rows, [
      { name: 'n', type: 'BIGINT' },
      { name: 'd', type: 'DECIMAL(10,2)' },
      { name: 's', type: 'VARCHAR' },
      { name: 't', type: 'TIMESTAMP' },
      { name: 'j', type: 'STRUCT(a INTEGER)' },
    ]);
    expect(n).toMatchObject({ nulls: 1, distinct: 3, min: '1', max: '13' });
    expect(n.histogram).toHaveLength(12);
    expect(n.histogram!.reduce((a, b) => a + b, 0)).toBe(3);
    expect(n.histogram!.slice(0, 2)).toEqual([1, 1]); // 1 and 2 in bins of width 1 from 1 to 13
    expect(n.histogram![11]).toBe(1);
    expect(d).toMatchObject({ nulls: 1, distinct: 3, min: '3.25', max: '100.00' }); // numerically, not as text
    expect(s).toMatchObject({ nulls: 1, distinct: 2, min: 'a', max: 'b', histogram: null });
    expect(t).toMatchObject({ min: '2025-01-01 00:00:00', max: '2025-03-01 12:00:00' });
    expect(j).toMatchObject({ nulls: 1, distinct: 2, min: null, max: null });
  });

  it('one bin when every value is the same', () => {
    expect(summarize([{ x: 5 }, { x: 5 }], [{ name: 'x', type: 'INTEGER' }])[0].histogram).toEqual([2]);
  });
});
