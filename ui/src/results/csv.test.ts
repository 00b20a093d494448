import { describe, expect, it } from 'vitest';
import { csvField, exportCsv } from './csv.ts';
import type { RowsPage } from '../api/types.ts';

/** A result of `total` rows served page by page with opaque cursors, as the rows endpoint does. */
function resultSource(total: number, make: (i: number) => Record<string, unknown>, columns: string[]) {
  const calls: Array<{ cursor: string | null; limit: number }> = [];
  const fetchPage = async (cursor: string | null, limit: number): Promise<RowsPage> => {
    calls.push({ cursor, limit });
    const start = cursor ? Number(atob(cursor)) : 0;
    const end = Math.min(total, start + limit);
    const rows = [];
    for (let i = start; i < end; i++) rows.push(make(i));
    return { rows, columns, column_schema: null, cursor: end < total ? btoa(String(end)) : null, total };
  };
  return { fetchPage, calls };
}

describe('CSV export', () => {
  it('escapes commas, quotes, newlines, edge spaces, nulls and nested values', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line1\nline2')).toBe('"line1\nline2"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField(12.5)).toBe('12.5');
    expect(csvField(false)).toBe('false');
    expect(csvField({ a: [1, 'x,y'] })).toBe('"{""a"":[1,""x,y""]}"');
  });

  it('pages through the whole result by cursor, in order, header first', async () => {
    const src = resultSource(2_503, (i) => ({ id: i, name: `n,${i}` }), ['id', 'name']);
    const progress: number[] = [];
    const chunks = await exportCsv(src.fetchPage, { pageSize: 1000, onProgress: (p) => progress.push(p.rows) });
    const lines = chunks.join('').split('\r\n');
    expect(lines[0]).toBe('id,name');
    expect(lines.length).toBe(1 + 2_503 + 1); // trailing CRLF leaves one empty element
    expect(lines[1]).toBe('0,"n,0"');
    expect(lines[2_503]).toBe('2502,"n,2502"');
    expect(src.calls.map((c) => c.cursor)).toEqual([null, btoa('1000'), btoa('2000')]);
    expect(progress).toEqual([1000, 2000, 2503]);
  });

  it('an empty result is a header only', async () => {
    const src = resultSource(0, () => ({}), ['a', 'b']);
    expect((await exportCsv(src.fetchPage)).join('')).toBe('a,b\r\n');
  });

  it('stops when cancelled', async () => {
    const src = resultSource(10_000, (i) => ({ id: i }), ['id']);
    const ctl = new AbortController();
    await expect(
      exportCsv(src.fetchPage, { pageSize: 100, signal: ctl.signal, onProgress: (p) => p.rows >= 300 && ctl.abort() }),
    ).rejects.toThrow('cancelled');
    expect(src.calls.length).toBe(3);
  });
});
