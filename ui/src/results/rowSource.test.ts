// Sorting a result held in the browser: by the column's type (numbers by value, even beyond a double's digits;
// text in natural order), NULLs last either way, equal values in the query's order.
import { describe, expect, it } from 'vitest';
import { filterRows, sortRows } from './rowSource.ts';

const cols = [
  { name: 'n', type: 'HUGEINT' },
  { name: 's', type: 'VARCHAR' },
  { name: 'd', type: 'DECIMAL(10,2)' },
];

describe('sorting rows', () => {
  it('orders numbers by value, text naturally, NULLs last, ties stable', () => {
    const rows = [
      { n: '170141183460469231731687303715884105727', s: 'row 10', d: '2.50', i: 0 },
      { n: 5, s: 'row 9', d: null, i: 1 },
      { n: null, s: null, d: '10.00', i: 2 },
      { n: '170141183460469231731687303715884105726', s: 'Row 9', d: '2.50', i: 3 },
    ];
    expect(sortRows(rows, { column: 'n', dir: 'asc' }, cols).map((r) => r.i)).toEqual([1, 3, 0, 2]);
    expect(sortRows(rows, { column: 'n', dir: 'desc' }, cols).map((r) => r.i)).toEqual([0, 3, 1, 2]);
    expect(sortRows(rows, { column: 's', dir: 'asc' }, cols).map((r) => r.i)).toEqual([1, 3, 0, 2]);
    expect(sortRows(rows, { column: 'd', dir: 'desc' }, cols).map((r) => r.i)).toEqual([2, 0, 3, 1]);
  });
});

describe('filtering rows', () => {
  it('keeps the rows with the text in any column, as shown or as sent, in their order', () => {
    const rows = [
      { n: 1234567, s: 'Harbor', d: '2.50', i: 0 },
      { n: 5, s: 'airport', d: null, i: 1 },
      { n: null, s: 'AIRPORT west', d: '10.00', i: 2 },
    ];
    expect(filterRows(rows, 'airp', cols).map((r) => r.i)).toEqual([1, 2]);
    expect(filterRows(rows, '1,234', cols).map((r) => r.i)).toEqual([0]); // as the grid groups it
    expect(filterRows(rows, '1234', cols).map((r) => r.i)).toEqual([0]); // as typed
    expect(filterRows(rows, 'null', cols).map((r) => r.i)).toEqual([1, 2]); // a NULL reads NULL
    expect(filterRows(rows, 'nothing', cols)).toEqual([]);
  });
});
