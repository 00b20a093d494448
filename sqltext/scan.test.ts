import { describe, expect, it } from 'vitest';
import { codeOnly, forEachCode, isBlank, leadingKeyword, runAt, splitStatements } from './scan.ts';

// The cases below were checked against DuckDB's own statement extraction (tests/sqlTextDuckdb.test.ts runs them there).
describe('the SQL text scanner', () => {
  it('reads strings with doubled quotes, and a semicolon inside as part of them', () => {
    expect(runAt(`'it''s;' x`, 0)).toEqual({ kind: 'string', end: 8, closed: true });
    expect(splitStatements(`SELECT 'it''s;'; SELECT 2`)).toEqual([`SELECT 'it''s;'`, ' SELECT 2']);
    // No backslash escape in a standard string: the quote after the backslash ends it.
    expect(runAt(`'a\\';b'`, 0)).toEqual({ kind: 'string', end: 4, closed: true });
  });

  it("reads E'' strings, where a backslash escapes, only when the E starts a word", () => {
    expect(runAt(`E'a\\';b' x`, 0)).toEqual({ kind: 'string', end: 8, closed: true });
    expect(splitStatements(`SELECT e'a\\';b'; SELECT 2`)).toEqual([`SELECT e'a\\';b'`, ' SELECT 2']);
    expect(runAt(`typE'x'`, 3)).toBeNull();
    expect(runAt(`E'it''s'`, 0)).toEqual({ kind: 'string', end: 8, closed: true });
  });

  it('reads quoted identifiers with doubled quotes', () => {
    expect(runAt(`"a"";b" x`, 0)).toEqual({ kind: 'quoted', end: 7, closed: true });
    expect(splitStatements(`SELECT 1 AS "a"";b"; SELECT 2`)).toEqual([`SELECT 1 AS "a"";b"`, ' SELECT 2']);
  });

  it('reads dollar quotes with and without tags; tags are case-sensitive and may hold digits after the first letter', () => {
    expect(splitStatements('SELECT $$x;y$$; SELECT 2')).toEqual(['SELECT $$x;y$$', ' SELECT 2']);
    expect(splitStatements('SELECT $a1$x;$$;y$a1$; SELECT 2')).toEqual(['SELECT $a1$x;$$;y$a1$', ' SELECT 2']);
    expect(splitStatements('SELECT $é$x;y$é$; SELECT 2')).toHaveLength(2);
    expect(splitStatements('SELECT $A$x;$a$; SELECT 2 $A$')).toEqual(['SELECT $A$x;$a$; SELECT 2 $A$']);
    // `$1` is a parameter, and a `$` after a name's character belongs to the name.
    expect(runAt('$1$x', 0)).toBeNull();
    expect(splitStatements('SELECT 1 AS a$$b; SELECT 2')).toEqual(['SELECT 1 AS a$$b', ' SELECT 2']);
  });

  it('reads line comments to a line feed or a bare carriage return', () => {
    expect(runAt('-- c;\nx', 0)).toEqual({ kind: 'line-comment', end: 5, closed: true });
    expect(splitStatements('SELECT 1 --x\r; SELECT 2')).toEqual(['SELECT 1 --x\r', ' SELECT 2']);
    expect(splitStatements("SELECT 1 -- it's\n; SELECT 2")).toEqual(["SELECT 1 -- it's\n", ' SELECT 2']);
  });

  it('reads block comments, which nest', () => {
    expect(runAt('/* a /* b */ ; c */ x', 0)).toEqual({ kind: 'block-comment', end: 19, closed: true });
    expect(splitStatements('SELECT 1 /* a /* b */ ; c */; SELECT 2')).toEqual(['SELECT 1 /* a /* b */ ; c */', ' SELECT 2']);
    expect(runAt('/* a /* b */', 0)).toEqual({ kind: 'block-comment', end: 12, closed: false });
  });

  it('runs an unclosed string, quoted name or dollar quote to the end of the text', () => {
    expect(runAt(`'abc; x`, 0)).toEqual({ kind: 'string', end: 7, closed: false });
    expect(runAt(`"abc; x`, 0)).toEqual({ kind: 'quoted', end: 7, closed: false });
    expect(runAt(`$t$abc; x`, 0)).toEqual({ kind: 'dollar', end: 9, closed: false });
    expect(splitStatements(`SELECT 'a; SELECT 2`)).toEqual([`SELECT 'a; SELECT 2`]);
  });

  it('drops statements with nothing but whitespace and comments', () => {
    expect(splitStatements(`SELECT ';' AS "a;b"; -- c;\nINSERT INTO t VALUES (1) /* ; */;  ; /* x /* y */ */ ;`)).toEqual([
      `SELECT ';' AS "a;b"`,
      ` -- c;\nINSERT INTO t VALUES (1) /* ; */`,
    ]);
    expect(isBlank(' -- a\n /* b /* c */ */ ')).toBe(true);
    expect(isBlank(" '--' ")).toBe(false);
  });

  it('blanks all but code, same length, keeping a string’s quotes', () => {
    const sql = `SELECT 'a;b', "c;d", $$e;f$$, E'\\'' -- g;\n/* h; */ $1`;
    const code = codeOnly(sql);
    expect(code).toHaveLength(sql.length);
    expect(code).toBe(`SELECT '   ',      ,        , '   '      \n         $1`);
  });

  it('visits code characters in order and stops when asked', () => {
    const seen: string[] = [];
    forEachCode(`a'b'c/*d*/e;f`, (i) => {
      seen.push(`a'b'c/*d*/e;f`[i]);
      return seen.length === 3;
    });
    expect(seen).toEqual(['a', 'c', 'e']);
  });

  it('finds the leading keyword past comments and parentheses', () => {
    expect(leadingKeyword(' /* a /* b */ */ -- c\n ((select 1))')).toBe('SELECT');
    expect(leadingKeyword('-- only a comment')).toBe('');
    expect(leadingKeyword("'x'")).toBe('');
  });
});
