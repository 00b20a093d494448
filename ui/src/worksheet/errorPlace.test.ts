import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client.ts';
import { candidatesIn, errorPlace } from './errorPlace.ts';

describe('errorPlace', () => {
  it('moves a refusal\'s line and column by where the sent text starts in the editor', () => {
    const doc = 'SELECT 1;\n\n  INSTALL httpfs;';
    const from = doc.indexOf('INSTALL');
    const e = new ApiError(403, 'sql_not_allowed', 'Statement 1 (INSTALL) at line 1, column 1 is not allowed: extensions are managed');
    const p = errorPlace(doc, from, 'INSTALL httpfs'.length, e, null)!;
    expect([p.line, p.column]).toEqual([3, 3]);
    expect(p.message).toBe('Statement 1 (INSTALL) at line 3, column 3 is not allowed: extensions are managed');
    expect(doc.slice(p.span.from, p.span.to)).toBe('INSTALL');
  });

  it('finds the name an engine error quotes within the statement, and its candidates', () => {
    const doc = 'select farez from t;\nselect farez, x from t';
    const from = doc.indexOf('select farez, x');
    const p = errorPlace(doc, from, 22, null, 'Binder Error: Referenced column "farez" not found in FROM clause!\nCandidate bindings: "t.fare", "t.x"')!;
    expect([p.line, p.column]).toEqual([2, 8]);
    expect(p.candidates).toEqual(['fare', 'x']);
    expect(candidatesIn('Catalog Error: Table with name tripz does not exist!\nDid you mean "samples.trips"?')).toEqual(['samples.trips']);
  });

  it('reads the engine\'s LINE echo and caret when there is one', () => {
    const doc = '-- c\nselect a,\n  nope(1) from t';
    const msg = 'Catalog Error: Scalar Function with name nope does not exist!\n\nLINE 2:   nope(1) from t\n          ^';
    const p = errorPlace(doc, doc.indexOf('select'), 30, null, msg)!;
    expect([p.line, p.column]).toEqual([3, 3]);
  });

  it('says nothing about a place it cannot find', () => {
    expect(errorPlace('select 1', 0, 8, null, 'Out of Memory Error: no')).toBeNull();
  });
});
