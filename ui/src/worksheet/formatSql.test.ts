// The worksheet's Format: clauses a line each, a SELECT list an item a line, conditions a line each, subqueries
// indented; strings, quoted names, comments and function names kept as written.
import { describe, expect, it } from 'vitest';
import { formatSql } from './formatSql.ts';

describe('format SQL', () => {
  it('lays out a query by clause', () => {
    expect(formatSql("select trip_id, sum(fare) as total, 'a, b' from samples.trips t left join samples.zones z on t.zone = z.zone where fare > 10 and zone = 'x' group by all order by total desc limit 5")).toBe(
      [
        'SELECT',
        '  trip_id,',
        '  sum(fare) AS total,',
        "  'a, b'",
        'FROM samples.trips t',
        'LEFT JOIN samples.zones z ON t.zone = z.zone',
        'WHERE fare > 10',
        "  AND zone = 'x'",
        'GROUP BY ALL',
        'ORDER BY total DESC',
        'LIMIT 5',
      ].join('\n'),
    );
  });

  it('indents subqueries, keeps casts, lists, comments and BETWEEN … AND together, separates statements', () => {
    expect(formatSql('SELECT x::INTEGER, [1,2][1] FROM (select * from t where a between 1 and 2) s; -- done\nselect 1')).toBe(
      ['SELECT', '  x::INTEGER,', '  [1, 2][1]', 'FROM (', '    SELECT', '      *', '    FROM t', '    WHERE a BETWEEN 1 AND 2', '  ) s;', '', '-- done', 'SELECT', '  1'].join('\n'),
    );
  });

  it('changes nothing but whitespace and keyword case', () => {
    const sql = `WITH "Odd Name" AS (SELECT 'it''s' AS s, left('abc', 2) AS l, $x$ a;b $x$ AS d) SELECT * FROM "Odd Name" WHERE s ILIKE '%s'`;
    const squash = (s: string) => s.replace(/\s+/g, '').toLowerCase();
    expect(squash(formatSql(sql))).toBe(squash(sql));
    expect(formatSql(sql)).toContain("left('abc', 2)");
  });
});
