import { describe, expect, it } from 'vitest';
import { barData, COUNT, MAX_BARS, MAX_POINTS, MAX_SERIES, pointData, seriesData } from './QuickChart.tsx';

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
  it('colour by a column: a series per value, the most frequent first, each in x order; the rest counted', () => {
    const many = Array.from({ length: 120 }, (_, i) => ({ x: i, y: i * 2, k: i < 20 ? 'big' : `k${i % 10}` }));
    const s = seriesData(many, { name: 'x', type: 'INTEGER' }, 'y', { name: 'k', type: 'VARCHAR' });
    expect(s.values).toBe(11);
    expect(s.series).toHaveLength(MAX_SERIES);
    expect(s.series[0].name).toBe('big');
    expect(s.series[0].points).toHaveLength(20);
    for (const one of s.series) expect(one.points.map((p) => p[0])).toEqual([...one.points.map((p) => p[0])].sort((a, b) => a - b));
    expect(s.total).toBe(120);
    const nulls = seriesData([{ x: 1, y: 1, k: null }], { name: 'x', type: 'INTEGER' }, 'y', { name: 'k', type: 'VARCHAR' });
    expect(nulls.series.map((x) => x.name)).toEqual(['(null)']);
  });
  it('thins every series alike so all of them keep to the point limit', () => {
    const rows = Array.from({ length: MAX_POINTS * 3 }, (_, i) => ({ x: i, y: i, k: i % 2 ? 'odd' : 'even' }));
    const s = seriesData(rows, { name: 'x', type: 'INTEGER' }, 'y', { name: 'k', type: 'VARCHAR' });
    expect(s.shown).toBeLessThanOrEqual(MAX_POINTS);
    expect(s.series[0].points.length).toBe(s.series[1].points.length);
  });
});
