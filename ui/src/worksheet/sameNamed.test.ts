import { describe, expect, it } from 'vitest';
import { firstLine, sameNamedDetails } from './sameNamed.ts';

const w = (id: string, title: string, sql: string, created_at = '2026-11-29T10:00:00Z', owner_name: string | null = null) => ({ id, title, sql, created_at, owner_name });
const iso = (s: string) => s;

describe('same-named worksheets', () => {
  it('a unique name gets no detail', () => {
    expect(sameNamedDetails([w('1', 'A', 'select 1'), w('2', 'B', 'select 1')], iso).size).toBe(0);
  });

  it('the same name: each gets the first line of its SQL that is not a comment', () => {
    const d = sameNamedDetails([w('1', 'Daily', '-- revenue\nselect sum(x) from t'), w('2', 'Daily', '\n  select count(*) from u  '), w('3', 'Other', 'x')], iso);
    expect(d.get('1')).toBe('select sum(x) from t');
    expect(d.get('2')).toBe('select count(*) from u');
    expect(d.has('3')).toBe(false);
  });

  it('the same first line too: when each was made; another owner: by whom', () => {
    const d = sameNamedDetails([w('1', 'W', 'select 1', 'T1', 'Ann'), w('2', 'W', 'select 1', 'T2', 'Bob'), w('3', 'W', 'select 2', 'T3', 'Ann'), w('4', 'W', 'select 1', 'T4', 'Ann')], iso);
    expect(d.get('1')).toBe('by Ann · select 1 · made T1');
    expect(d.get('2')).toBe('by Bob · select 1');
    expect(d.get('3')).toBe('by Ann · select 2');
    expect(d.get('4')).toBe('by Ann · select 1 · made T4');
  });

  it('made within the same second: the start of the id', () => {
    const d = sameNamedDetails([w('aaaaaaaa-1', 'W', 'select 1', 'T1'), w('bbbbbbbb-2', 'W', 'select 1', 'T1'), w('cccccccc-3', 'W', 'select 1', 'T2')], iso);
    expect(d.get('aaaaaaaa-1')).toBe('select 1 · made T1 · id aaaaaaaa');
    expect(d.get('bbbbbbbb-2')).toBe('select 1 · made T1 · id bbbbbbbb');
    expect(d.get('cccccccc-3')).toBe('select 1 · made T2');
  });

  it('long and empty SQL', () => {
    expect(firstLine('')).toBe('empty');
    expect(firstLine('select ' + 'x'.repeat(100), 20)).toHaveLength(20);
  });
});
