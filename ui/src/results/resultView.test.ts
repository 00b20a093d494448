// The grid's column filters as typed, and the parameters the api is asked for.
import { describe, expect, it } from 'vitest';
import { exportUrl, parseColumnFilter, viewParams } from './resultView.ts';

describe('column filters as typed', () => {
  it('reads null, comparisons, and plain text by the column kind', () => {
    expect(parseColumnFilter('s', 'airp', 'text')).toEqual({ column: 's', op: 'contains', value: 'airp' });
    expect(parseColumnFilter('n', ' 42 ', 'number')).toEqual({ column: 'n', op: '=', value: '42' });
    expect(parseColumnFilter('n', '>= 10', 'number')).toEqual({ column: 'n', op: '>=', value: '10' });
    expect(parseColumnFilter('n', '<>3', 'number')).toEqual({ column: 'n', op: '!=', value: '3' });
    expect(parseColumnFilter('d', '< 2024-01-01', 'time')).toEqual({ column: 'd', op: '<', value: '2024-01-01' });
    expect(parseColumnFilter('s', 'NULL', 'text')).toEqual({ column: 's', op: 'is_null' });
    expect(parseColumnFilter('s', '!null', 'text')).toEqual({ column: 's', op: 'is_not_null' });
    expect(parseColumnFilter('s', '>', 'number')).toBeNull(); // still being typed
    expect(parseColumnFilter('s', '  ', 'text')).toBeNull();
  });

  it('asks for the sort, the filters and the search, and nothing for the query as it came', () => {
    expect(viewParams({ sort: null, filters: { a: '' }, search: ' ' }, {})).toEqual({});
    expect(viewParams({ sort: { column: 'a', dir: 'desc' }, filters: { b: '>1' }, search: 'x' }, { b: 'number' })).toEqual({
      order_by: '[{"column":"a","dir":"desc"}]',
      filter: '[{"column":"b","op":">","value":"1"}]',
      search: 'x',
    });
    expect(exportUrl('q 1', 'csv', { order_by: '[{"column":"a","dir":"asc"}]', filter: undefined })).toBe(
      '/api/queries/q%201/export?format=csv&order_by=%5B%7B%22column%22%3A%22a%22%2C%22dir%22%3A%22asc%22%7D%5D',
    );
  });
});
