import { describe, expect, it } from 'vitest';
import { splitStatements, statementAt } from './statementAt.ts';

const at = (sqlWithCursor: string) => {
  const pos = sqlWithCursor.indexOf('|');
  const sql = sqlWithCursor.replace('|', '');
  return statementAt(sql, pos)?.text ?? null;
};

describe('statement under the cursor', () => {
  it('picks the statement holding the cursor', () => {
    expect(at('select 1; sel|ect 2; select 3')).toBe('select 2');
    expect(at('|select 1; select 2')).toBe('select 1');
    expect(at('select 1; select 2; select |3')).toBe('select 3');
  });

  it('a cursor right after a semicolon belongs to the statement it closes', () => {
    expect(at('select 1;| select 2')).toBe('select 1');
    expect(at('select 1;\n\n|\nselect 2;')).toBe('select 1');
  });

  it('ignores semicolons inside strings, identifiers, dollar quotes and comments', () => {
    const sql = `select 'a;b', "c;d" from t -- x;y\nwhere e = $$f;g$$ /* h;i */; select 2`;
    expect(splitStatements(sql).map((s) => s.text)).toEqual([
      `select 'a;b', "c;d" from t -- x;y\nwhere e = $$f;g$$ /* h;i */`,
      'select 2',
    ]);
    expect(at(`select 'it''s;|here'; select 2`)).toBe(`select 'it''s;here'`);
  });

  it('drops blank and comment-only pieces and trims leading comments', () => {
    expect(splitStatements('  ;; -- only a comment\n; /* c */ select 1 ;').map((s) => s.text)).toEqual(['select 1']);
    expect(at('-- header\nselect |1')).toBe('select 1');
  });

  it('offsets point into the original text', () => {
    const sql = 'select 1;\n  select 2 ;';
    const s = statementAt(sql, sql.indexOf('2'))!;
    expect(sql.slice(s.from, s.to)).toBe('select 2');
  });

  it('empty text has no statement', () => {
    expect(statementAt('', 0)).toBeNull();
    expect(statementAt(' -- nothing\n', 3)).toBeNull();
  });
});
