import { describe, expect, it } from 'vitest';
import { barData, COUNT, MAX_BARS, pointData } from './QuickChart.tsx';

describe('quick chart data', () => {
  const rows = [
    { zone: 'b', fare: '2.50', at: '2025-01-02T00:00:00' },
    { zone: 'a', fare: '1.00', at: '2025-01-01T00:00:00' },
    { zone: 'b', fare: '4.00', at: null },
  ];
  it('bars sum a numeric column (or count rows) per category', () => {
    expect(barData(rows, { name: 'zone', type: 'VARCHAR' }, 'fare').bars).toEqual([
      { label: 'a', value: 1 },
      { label: 'b', value: 6.5 },
    ]);
    expect(barData(rows, { name: 'zone', type: 'VARCHAR' }, COUNT).bars.map((b) => b.value)).toEqual([1, 2]);
  });
  it('keeps the largest bars when there are too many categories', () => {
    const many = Array.from({ length: 100 }, (_, i) => ({ k: `k${i}`, v: i }));
    const { bars, categories } = barData(many, { name: 'k', type: 'VARCHAR' }, 'v');
    expect(categories).toBe(100);
    expect(bars).toHaveLength(MAX_BARS);
    expect(bars[0].value).toBe(99);
  });
  it('points in x order, times as positions, rows without both numbers left out', () => {
    const p = pointData(rows, { name: 'at', type: 'TIMESTAMP' }, 'fare');
    expect(p.time).toBe(true);
    expect(p.points.map((x) => x[1])).toEqual([1, 2.5]);
  });
});
