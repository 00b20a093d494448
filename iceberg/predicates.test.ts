import { describe, it, expect } from 'vitest';
import type { DataFile } from './avro.ts';
import { encodeBound } from './avro.ts';
import type { PartitionSpec, Schema } from './metadata.ts';
import { bucketOf } from './transforms.ts';
import { bindPredicates, fileMayMatch, literalValue, type Predicate } from './predicates.ts';

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: false, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamp' },
    { id: 3, name: 'region', required: false, type: 'string' },
  ],
};
const spec: PartitionSpec = {
  'spec-id': 0,
  fields: [
    { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
    { 'source-id': 1, 'field-id': 1001, name: 'id_bucket', transform: 'bucket[8]' },
  ],
};
const file = (partition: Record<string, unknown>, bounds: { id?: [bigint, bigint]; region?: [string, string] } = {}): DataFile => ({
  content: 0,
  file_path: 's3://b/f.parquet',
  file_format: 'PARQUET',
  partition,
  record_count: 1n,
  file_size_in_bytes: 1n,
  lower_bounds: [
    ...(bounds.id ? [{ key: 1, value: encodeBound('long', bounds.id[0]) }] : []),
    ...(bounds.region ? [{ key: 3, value: encodeBound('string', bounds.region[0]) }] : []),
  ],
  upper_bounds: [
    ...(bounds.id ? [{ key: 1, value: encodeBound('long', bounds.id[1]) }] : []),
    ...(bounds.region ? [{ key: 3, value: encodeBound('string', bounds.region[1]) }] : []),
  ],
});
const p = (column: string, op: Predicate['op'], ...values: Array<[Predicate['values'][0]['kind'], string]>): Predicate => ({
  column, qualifier: null, op, values: values.map(([kind, text]) => ({ kind, text })),
});
const may = (preds: Predicate[], f: DataFile) => fileMayMatch(bindPredicates(preds, schema, ['t']), spec, f);

describe('pruning', () => {
  it('converts literals to Iceberg values', () => {
    expect(literalValue('date', { kind: 'date', text: '1970-01-02' })).toBe(1);
    expect(literalValue('timestamp', { kind: 'string', text: '1970-01-01 00:00:01.5' })).toBe(1_500_000n);
    expect(literalValue('timestamp', { kind: 'timestamp', text: '1970-01-01 01:00:00+01:00' })).toBe(0n);
    expect(literalValue('int', { kind: 'number', text: '1.5' })).toBeUndefined();
  });

  it('prunes by day partitions with equality and ranges', () => {
    const day2 = file({ ts_day: 19724, id_bucket: 0 }); // 2024-01-02
    expect(may([p('ts', '=', ['timestamp', '2024-01-02 10:00:00'])], day2)).toBe(true);
    expect(may([p('ts', '=', ['timestamp', '2024-01-03 00:00:00'])], day2)).toBe(false);
    expect(may([p('ts', '<', ['timestamp', '2024-01-02 00:00:00'])], day2)).toBe(true); // same day, conservative
    expect(may([p('ts', '<', ['timestamp', '2024-01-01 23:59:59'])], day2)).toBe(false);
    expect(may([p('ts', '>=', ['timestamp', '2024-01-03'])], day2)).toBe(false);
    expect(may([p('ts', '=', ['timestamp', '2024-01-02'])], file({ ts_day: null, id_bucket: 0 }))).toBe(false);
  });

  it('prunes by bucket on equality and IN only', () => {
    const b = bucketOf('long', 7n, 8);
    expect(may([p('id', '=', ['number', '7'])], file({ ts_day: 1, id_bucket: b }))).toBe(true);
    expect(may([p('id', '=', ['number', '7'])], file({ ts_day: 1, id_bucket: (b + 1) % 8 }))).toBe(false);
    expect(may([p('id', '>', ['number', '7'])], file({ ts_day: 1, id_bucket: (b + 1) % 8 }))).toBe(true);
    expect(may([p('id', 'in', ['number', '7'], ['number', '8'])], file({ ts_day: 1, id_bucket: bucketOf('long', 8n, 8) }))).toBe(true);
  });

  it('prunes by column bounds, and ignores other tables and unusable literals', () => {
    const f = file({ ts_day: 1, id_bucket: bucketOf('long', 15n, 8) }, { id: [10n, 20n], region: ['eu', 'us'] });
    expect(may([p('region', '=', ['string', 'apac'])], f)).toBe(false);
    expect(may([p('region', '>', ['string', 'us'])], f)).toBe(false);
    expect(may([p('region', '<=', ['string', 'eu'])], f)).toBe(true);
    expect(may([{ ...p('region', '=', ['string', 'apac']), qualifier: 'other' }], f)).toBe(true);
    expect(may([p('region', '=', ['number', '3'])], f)).toBe(true);
  });
});
