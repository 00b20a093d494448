// The shared SQL text scanner (sqltext/scan.ts) splits scripts where DuckDB does: each script's statement count is
// DuckDB's own extraction, so a rule of DuckDB's scanner the splitter misses fails here.
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { splitStatements } from '../sqltext/scan.ts';

const SCRIPTS = [
  "SELECT 'it''s;'; SELECT 2",
  "SELECT E'a\\';b'; SELECT 2",
  "SELECT e'a\\';b'; SELECT 2",
  'SELECT 1 AS "a"";b"; SELECT 2',
  'SELECT $$x;y$$; SELECT 2',
  'SELECT $a1$x;$$;y$a1$; SELECT 2',
  'SELECT $é$x;y$é$; SELECT 2',
  'SELECT $A$x;$a$; SELECT 2 $A$',
  'SELECT 1 AS a$$b; SELECT 2',
  'SELECT 1 --x\r; SELECT 2',
  "SELECT 1 -- it's\n; SELECT 2",
  'SELECT 1 /* a /* b */ ; c */; SELECT 2',
  "SELECT X'41;'; SELECT B'0;1'",
  'SELECT 1; /* only /* a */ comment */ ; SELECT 2',
];

describe('the SQL text scanner against DuckDB', () => {
  it('splits every script into as many statements as DuckDB extracts', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const connection = await db.connect();
    try {
      for (const sql of SCRIPTS) expect(splitStatements(sql).length, sql).toBe((await connection.extractStatements(sql)).count);
    } finally {
      connection.closeSync();
      db.closeSync();
    }
  });
});
