import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Schema } from 'effect';
import { compile, rows, RowShapeError, sql } from './sql.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';

describe('sql templates', () => {
  it('number parameters across nested fragments, in order', () => {
    const where = sql.join([sql`a = ${1}`, sql`b in (${sql.join([2, 3].map((v) => sql`${v}`))})`, sql`c = ${'x'}`], ' and ');
    expect(compile(sql`select * from t where ${where} order by ${sql.trusted('a desc')} limit ${10}`)).toEqual({
      text: 'select * from t where a = $1 and b in ($2, $3) and c = $4 order by a desc limit $5',
      params: [1, 2, 3, 'x', 10],
    });
    expect(compile(sql.join([]))).toEqual({ text: '', params: [] });
  });

  it('never splice a value into the text', () => {
    const evil = "x'; drop table users; --";
    expect(compile(sql`select ${evil}`)).toEqual({ text: 'select $1', params: [evil] });
  });
});

describe('rows', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase({ empty: true });
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('decode each row with its schema and refuse a row that does not match', async () => {
    const Row = Schema.Struct({ n: Schema.Finite, at: Schema.Date });
    const got = await rows(database.db, Row, sql`select ${41}::int + 1 as n, now() as at, 'dropped' as extra`);
    expect(got).toHaveLength(1);
    expect(got[0].n).toBe(42);
    expect(got[0].at).toBeInstanceOf(Date);
    expect(Object.keys(got[0]).sort()).toEqual(['at', 'n']);
    await expect(rows(database.db, Row, sql`select 'forty-two' as n, now() as at`)).rejects.toThrow(RowShapeError);
  });
});
