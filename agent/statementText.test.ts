import { describe, expect, it } from 'vitest';
import { statementBody, uniqueColumnNames } from './statementText.ts';

describe('statement text', () => {
  it('strips trailing semicolons and comments but not inside literals', () => {
    expect(statementBody('SELECT 1;')).toBe('SELECT 1');
    expect(statementBody('SELECT 1 ; -- done\n/* more */ ;  ')).toBe('SELECT 1');
    expect(statementBody(`SELECT ';' AS "x;--"`)).toBe(`SELECT ';' AS "x;--"`);
    expect(statementBody(`SELECT 'it''s;' -- c`)).toBe(`SELECT 'it''s;'`);
    expect(statementBody('SELECT $$a;$$;')).toBe('SELECT $$a;$$');
  });

  it('makes names unique case-insensitively', () => {
    expect(uniqueColumnNames(['a', 'a', 'a', 'b', 'A'])).toEqual(['a', 'a_1', 'a_2', 'b', 'A_3']);
  });
});
