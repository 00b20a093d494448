import { describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { boundParams } from './boundParams.ts';

describe('bound parameters', () => {
  it('binds text where no type was declared and the declared type where one was, in real DuckDB', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const run = async (sql: string, params: (string | null)[], types: ('BIGINT' | 'DOUBLE' | 'BOOLEAN' | null)[]) => {
        const p = await c.prepare(sql);
        const b = boundParams(params, types);
        b.values.forEach((v, i) => (v === null ? p.bindNull(i + 1) : p.bindValue(i + 1, v, b.types[i])));
        return (await p.runAndReadAll()).getRows()[0];
      };
      // Text alone: DuckDB cannot choose `+` for an integer and a string.
      await expect(run('SELECT 40 + $1', ['2'], [null])).rejects.toThrow(/Could not choose a best candidate/);
      expect(await run('SELECT 40 + $1, $2 * 2, NOT $3, $4', ['2', '1.25', 'f', 'text'], ['BIGINT', 'DOUBLE', 'BOOLEAN', null])).toEqual([42n, 2.5, true, 'text']);
      expect(await run('SELECT $1 + 1', ['9223372036854775806'], ['BIGINT'])).toEqual([9223372036854775807n]);
      expect(await run('SELECT $1 IS NULL', [null], ['BIGINT'])).toEqual([true]);
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });

  it('refuses a value its declared type cannot hold, saying which parameter', () => {
    expect(() => boundParams(['4.5'], ['BIGINT'])).toThrow('parameter $1 was declared BIGINT');
    expect(() => boundParams(['x', '9223372036854775808'], [null, 'BIGINT'])).toThrow('parameter $2 was declared BIGINT');
    expect(() => boundParams(['abc'], ['DOUBLE'])).toThrow(/\$1 was declared DOUBLE/);
    expect(() => boundParams(['maybe'], ['BOOLEAN'])).toThrow(/\$1 was declared BOOLEAN/);
    expect(boundParams(['NaN', '-Infinity', ' 7 ', 'on'], ['DOUBLE', 'DOUBLE', 'BIGINT', 'BOOLEAN']).values).toEqual([NaN, -Infinity, 7n, true]);
  });
});
