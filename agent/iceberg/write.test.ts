// The SQL forms of partition transforms agree with iceberg/transforms.ts (the spec's definitions) on real DuckDB.
import { describe, it, expect, afterAll } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { applyTransform, parseTransform } from '../../iceberg/transforms.ts';
import { transformSql } from './write.ts';

const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

async function one(sql: string): Promise<unknown> {
  return (await connection.runAndReadAll(sql)).getRows()[0][0];
}

describe('partition transforms in SQL', () => {
  const timestamps = ['1969-12-31 23:59:59.999999', '1970-01-01 00:00:00', '2024-02-29 13:45:00.5', '1900-03-01 00:00:00', '2038-01-19 03:14:08'];
  it.each(['year', 'month', 'day', 'hour'])('%s over timestamps and timestamptz', async (t) => {
    for (const ts of timestamps) {
      const micros = (await one(`SELECT epoch_us(TIMESTAMP '${ts}')`)) as bigint;
      const expected = applyTransform(parseTransform(t), 'timestamp', micros);
      expect(Number(await one(`SELECT ${transformSql(t, 'timestamp', `TIMESTAMP '${ts}'`)}`))).toBe(expected);
      expect(Number(await one(`SELECT ${transformSql(t, 'timestamptz', `TIMESTAMPTZ '${ts}+00'`)}`))).toBe(expected);
    }
  });

  it.each(['year', 'month', 'day'])('%s over dates', async (t) => {
    for (const d of ['1969-12-31', '1970-01-01', '2024-02-29', '1900-03-01']) {
      const days = Number(await one(`SELECT DATE '${d}' - DATE '1970-01-01'`));
      expect(Number(await one(`SELECT ${transformSql(t, 'date', `DATE '${d}'`)}`))).toBe(applyTransform(parseTransform(t), 'date', days));
    }
  });

  it('truncate over ints, longs and strings', async () => {
    for (const v of [-11, -10, -1, 0, 9, 10, 11]) {
      expect(Number(await one(`SELECT ${transformSql('truncate[10]', 'int', `${v}::INTEGER`)}`))).toBe(applyTransform(parseTransform('truncate[10]'), 'int', v));
      expect(BigInt(await one(`SELECT ${transformSql('truncate[10]', 'long', `${v}::BIGINT`)}`) as bigint)).toBe(applyTransform(parseTransform('truncate[10]'), 'long', BigInt(v)));
    }
    expect(await one(`SELECT ${transformSql('truncate[2]', 'string', `'héllo'`)}`)).toBe(applyTransform(parseTransform('truncate[2]'), 'string', 'héllo'));
  });
});
