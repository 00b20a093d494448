import { describe, it, expect } from 'vitest';
import {
  writeManifest,
  readManifest,
  writeManifestList,
  readManifestList,
  readAvroFile,
  encodeBound,
  decodeBound,
  inheritFromManifest,
  type ManifestEntry,
} from './avro.ts';
import { BIG, sampleTable } from '../tests/support/icebergTable.ts';

describe('manifest and manifest list Avro', () => {
  it('round-trips a manifest with partition values, bounds and int64 ids', () => {
    const m = sampleTable();
    const entry: ManifestEntry = {
      status: 1,
      snapshot_id: BIG,
      sequence_number: null,
      file_sequence_number: null,
      data_file: {
        content: 0,
        file_path: 's3://warehouse/ns/t/data/ts_day=2017-11-16/a.parquet',
        file_format: 'PARQUET',
        partition: { ts_day: 17486 },
        record_count: 3n,
        file_size_in_bytes: 1234n,
        value_counts: [{ key: 1, value: 3n }],
        null_value_counts: [{ key: 1, value: 0n }],
        lower_bounds: [{ key: 1, value: encodeBound('long', 1n) }],
        upper_bounds: [{ key: 1, value: encodeBound('long', BIG) }],
      },
    };
    const bytes = writeManifest({ schema: m.schemas[0], spec: m['partition-specs'][0], content: 'data', entries: [entry] });
    const raw = readAvroFile(bytes);
    expect(raw.metadata['avro.codec']).toBe('deflate');
    expect(raw.metadata['format-version']).toBe('2');
    expect(raw.metadata['partition-spec-id']).toBe('0');
    expect(JSON.parse(raw.metadata['partition-spec'])[0]['field-id']).toBe(1000);
    expect(JSON.parse(raw.metadata['avro.schema']).fields[4].type.fields[3].type.fields[0]['field-id']).toBe(1000);
    const back = readManifest(bytes);
    expect(back.schema?.fields.length).toBe(3);
    expect(back.entries).toHaveLength(1);
    const e = back.entries[0];
    expect(e.snapshot_id).toBe(BIG);
    expect(e.data_file.partition).toEqual({ ts_day: 17486 });
    expect(e.data_file.record_count).toBe(3n);
    expect(decodeBound('long', e.data_file.upper_bounds![0].value)).toBe(BIG);

    const list = writeManifestList({
      snapshotId: BIG,
      parentSnapshotId: null,
      sequenceNumber: 1n,
      manifests: [{
        manifest_path: 's3://warehouse/ns/t/metadata/m0.avro',
        manifest_length: BigInt(bytes.length),
        partition_spec_id: 0,
        content: 0,
        sequence_number: 1n,
        min_sequence_number: 1n,
        added_snapshot_id: BIG,
        added_files_count: 1,
        existing_files_count: 0,
        deleted_files_count: 0,
        added_rows_count: 3n,
        existing_rows_count: 0n,
        deleted_rows_count: 0n,
        partitions: [{ contains_null: false, contains_nan: false, lower_bound: encodeBound('date', 17486), upper_bound: encodeBound('date', 17486) }],
      }],
    });
    const parsed = readManifestList(list);
    expect(parsed.metadata['snapshot-id']).toBe(BIG.toString());
    expect(parsed.metadata['parent-snapshot-id']).toBe('null');
    expect(parsed.manifests[0].added_snapshot_id).toBe(BIG);
    expect(decodeBound('date', parsed.manifests[0].partitions![0].lower_bound!)).toBe(17486);
    expect(inheritFromManifest(e, parsed.manifests[0]).sequence_number).toBe(1n);
  });

  it('encodes bounds per Appendix D', () => {
    expect(Buffer.from(encodeBound('int', 1)).toString('hex')).toBe('01000000');
    expect(Buffer.from(encodeBound('decimal(9,2)', -1n)).toString('hex')).toBe('ff');
    expect(Buffer.from(encodeBound('decimal(9,2)', 128n)).toString('hex')).toBe('0080');
    expect(decodeBound('decimal(9,2)', encodeBound('decimal(9,2)', -12345n))).toBe(-12345n);
    expect(decodeBound('string', encodeBound('string', 'héllo'))).toBe('héllo');
    expect(decodeBound('uuid', encodeBound('uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'))).toBe('f79c3e09-677c-4bbd-a479-3f349cb785e7');
  });
});

