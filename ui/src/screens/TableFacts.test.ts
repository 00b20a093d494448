import { describe, expect, it } from 'vitest';
import { summaryEntries } from './TableFacts.tsx';

describe('a snapshot summary as a list', () => {
  it('names the known keys in reading order, formats their numbers, and keeps the others as written, sorted', () => {
    const entries = summaryEntries({
      'total-files-size': '2048',
      'added-records': '1000',
      operation: 'append',
      'spark.app.id': 'local-1',
      'engine-name': 'eider',
      'total-records': 'n/a',
    });
    expect(entries.map((e) => [e.label, e.value])).toEqual([
      ['Operation', 'append'],
      ['Rows added', (1000).toLocaleString()],
      ['Total rows', 'n/a'],
      ['Total size', '2.0 KiB'],
      ['engine-name', 'eider'],
      ['spark.app.id', 'local-1'],
    ]);
  });
});
