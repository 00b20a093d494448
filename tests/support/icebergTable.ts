// The Iceberg table the format tests build on: a new table's metadata with a required long, a timestamptz
// partitioned by day, a list of strings (its element a nested field id) and a sort order, created at 1000 ms.
import { newTableMetadata, type TableMetadata } from '../../iceberg/metadata.ts';

/** A snapshot id above 2^53, which a JSON number would round. */
export const BIG = 8744736658442914487n;

export function sampleTable(): TableMetadata {
  return newTableMetadata({
    location: 's3://warehouse/ns/t/',
    schema: {
      type: 'struct',
      fields: [
        { id: 10, name: 'id', required: true, type: 'long' },
        { id: 20, name: 'ts', required: false, type: 'timestamptz' },
        { id: 30, name: 'tags', required: false, type: { type: 'list', 'element-id': 31, element: 'string', 'element-required': false } },
      ],
    },
    partitionSpec: { fields: [{ 'source-id': 20, name: 'ts_day', transform: 'day' }] },
    sortOrder: { fields: [{ 'source-id': 10, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] },
    nowMs: 1000,
  });
}
