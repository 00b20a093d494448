// The tables a statement reads, as completion sees them: FROM lists, joins, aliases (with and without AS), quoted
// names; subqueries and table functions name no table whose columns the api knows.
import { describe, expect, it } from 'vitest';
import { tablesInScope } from './completion.ts';

describe('tables in scope', () => {
  it('reads FROM lists, joins and aliases', () => {
    expect(tablesInScope('SELECT fa FROM samples.trips')).toEqual([{ parts: ['samples', 'trips'], alias: null }]);
    expect(tablesInScope('SELECT t. FROM samples.trips AS t JOIN warehouse.samples.zones z ON t.zone = z.zone WHERE 1')).toEqual([
      { parts: ['samples', 'trips'], alias: 't' },
      { parts: ['warehouse', 'samples', 'zones'], alias: 'z' },
    ]);
    expect(tablesInScope('select * from a x, "Odd ""Name""" y left outer join b on true')).toEqual([
      { parts: ['a'], alias: 'x' },
      { parts: ['Odd "Name"'], alias: 'y' },
      { parts: ['b'], alias: null },
    ]);
  });

  it('skips subqueries and table functions, and reads the tables inside a subquery', () => {
    expect(tablesInScope("SELECT * FROM (SELECT * FROM inner_t it) s, read_parquet('x.parquet') p JOIN outer_t o USING (id)")).toEqual([
      { parts: ['inner_t'], alias: 'it' },
      { parts: ['outer_t'], alias: 'o' },
    ]);
  });

  it('reads the targets of UPDATE and INSERT INTO, and ignores words in strings and comments', () => {
    expect(tablesInScope("UPDATE s.t SET a = 'from x' -- from y\nWHERE b IN (SELECT b FROM s.u)")).toEqual([
      { parts: ['s', 't'], alias: null },
      { parts: ['s', 'u'], alias: null },
    ]);
    expect(tablesInScope('INSERT INTO s.t SELECT * FROM s.v')).toEqual([
      { parts: ['s', 't'], alias: null },
      { parts: ['s', 'v'], alias: null },
    ]);
  });
});
