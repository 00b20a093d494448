import { describe, it, expect } from 'vitest';
import { parseJson, stringifyJson } from './json.ts';
import { metadataFileLocation, currentSnapshot, type TableMetadata } from './metadata.ts';
import { applyUpdates, checkRequirements, RequirementFailed, InvalidUpdate, emptyMetadata, validateNewTable, withMetadataLog } from './updates.ts';
import { BIG, sampleTable } from '../tests/support/icebergTable.ts';

describe('table metadata and updates', () => {
  it('assigns fresh field ids and partition field ids from 1000', () => {
    const m = sampleTable();
    expect(m.location).toBe('s3://warehouse/ns/t');
    expect(m.schemas[0].fields.map((f) => f.id)).toEqual([1, 2, 3]);
    expect((m.schemas[0].fields[2].type as any)['element-id']).toBe(4);
    expect(m['last-column-id']).toBe(4);
    expect(m['partition-specs'][0].fields[0]).toEqual({ name: 'ts_day', transform: 'day', 'source-id': 2, 'field-id': 1000 });
    expect(m['last-partition-id']).toBe(1000);
    expect(m['default-sort-order-id']).toBe(1);
    expect(m['sort-orders'][1].fields[0]['source-id']).toBe(1);
    expect(metadataFileLocation(m.location, null)).toMatch(/^s3:\/\/warehouse\/ns\/t\/metadata\/00000-[0-9a-f-]+\.metadata\.json$/);
    expect(metadataFileLocation(m.location, 's3://x/metadata/00041-abc.metadata.json')).toMatch(/\/00042-/);
  });

  it('adds a snapshot with an int64 id, moves main and checks requirements', () => {
    const base = sampleTable();
    checkRequirements(base, [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }, { type: 'assert-table-uuid', uuid: base['table-uuid'] }]);
    const snapshot = { 'snapshot-id': BIG, 'sequence-number': 1, 'timestamp-ms': 2000, 'manifest-list': 's3://x/snap.avro', summary: { operation: 'append' }, 'schema-id': 0 };
    const next = applyUpdates(base, [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': BIG },
      { action: 'set-properties', updates: { owner: 'me' } },
    ], 3000);
    expect(base.snapshots).toEqual([]);
    expect(next['current-snapshot-id']).toBe(BIG);
    expect(currentSnapshot(next)?.['manifest-list']).toBe('s3://x/snap.avro');
    expect(next['snapshot-log']).toEqual([{ 'snapshot-id': BIG, 'timestamp-ms': 2000 }]);
    expect(next['last-sequence-number']).toBe(1);
    expect(next['last-updated-ms']).toBe(3000);
    expect(next.properties.owner).toBe('me');
    // The JSON file keeps the id exact.
    expect(parseJson<TableMetadata>(stringifyJson(next))['current-snapshot-id']).toBe(BIG);

    checkRequirements(next, [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': BIG }]);
    expect(() => checkRequirements(next, [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': BIG - 1n }])).toThrow(RequirementFailed);
    expect(() => checkRequirements(next, [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }])).toThrow(RequirementFailed);
    expect(() => checkRequirements(next, [{ type: 'assert-create' }])).toThrow(RequirementFailed);
    expect(() => checkRequirements(next, [{ type: 'assert-current-schema-id', 'current-schema-id': 1 }])).toThrow(RequirementFailed);
    expect(() => applyUpdates(next, [{ action: 'add-snapshot', snapshot }], 1)).toThrow(InvalidUpdate);
    expect(() => applyUpdates(next, [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 5 }], 1)).toThrow(InvalidUpdate);
    expect(() => applyUpdates(next, [{ action: 'frobnicate' }], 1)).toThrow(InvalidUpdate);

    const logged = withMetadataLog(next, { location: 's3://x/metadata/00000-a.metadata.json', lastUpdatedMs: 1000 });
    expect(logged['metadata-log']).toEqual([{ 'metadata-file': 's3://x/metadata/00000-a.metadata.json', 'timestamp-ms': 1000 }]);
  });

  it('evolves the schema and spec with -1 meaning the last added', () => {
    const base = sampleTable();
    const schema = { ...base.schemas[0], 'schema-id': 7, fields: [...base.schemas[0].fields, { id: 5, name: 'extra', required: false, type: 'int' }] };
    const next = applyUpdates(base, [
      { action: 'add-schema', schema },
      { action: 'set-current-schema', 'schema-id': -1 },
      { action: 'add-spec', spec: { fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'bucket[8]' }] } },
      { action: 'set-default-spec', 'spec-id': -1 },
    ], 5);
    expect(next['current-schema-id']).toBe(1);
    expect(next['last-column-id']).toBe(5);
    expect(next['default-spec-id']).toBe(1);
    expect(next['partition-specs'][1].fields[0]['field-id']).toBe(1001);
    expect(next['last-partition-id']).toBe(1001);
  });

  it('builds a table from updates (create transaction)', () => {
    const m = applyUpdates(emptyMetadata(1), [
      { action: 'assign-uuid', uuid: '9c12d441-03fe-4693-9a96-a0705ddf69c1' },
      { action: 'upgrade-format-version', 'format-version': 2 },
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'a', required: false, type: 'int' }] } },
      { action: 'set-current-schema', 'schema-id': -1 },
      { action: 'set-location', location: 's3://w/ns/t' },
    ], 2);
    validateNewTable(m);
    expect(m['table-uuid']).toBe('9c12d441-03fe-4693-9a96-a0705ddf69c1');
    expect(m['default-spec-id']).toBe(0);
    expect(m['last-column-id']).toBe(1);
  });
});

