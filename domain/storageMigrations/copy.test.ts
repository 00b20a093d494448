import { describe, expect, it } from 'vitest';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { deletePathBoundsMapped, PathMap, rewriteMetadata, rewritePositionDeletes } from './copy.ts';
import { positionDeleteDataFile } from '../../iceberg/positionDeletes.ts';
import { readAvroFile, readManifestList, rewriteAvroFile, writeManifestList, type ManifestFile } from '../../iceberg/avro.ts';
import type { TableMetadata } from '../../iceberg/metadata.ts';

const map = new PathMap('s3://warehouse/cat/', 's3://lake2/far/cat/');

describe('moving a table to another root', () => {
  it('maps paths under the source root onto the target root, keeps target paths, and places foreign files under the table', () => {
    expect(map.map('s3://warehouse/cat/s/t/data/a.parquet', 's3://lake2/far/cat/s/t')).toBe('s3://lake2/far/cat/s/t/data/a.parquet');
    expect(map.map('s3a://warehouse/cat/s/t/metadata/x.avro', 's3://lake2/far/cat/s/t')).toBe('s3://lake2/far/cat/s/t/metadata/x.avro');
    expect(map.map('s3://lake2/far/cat/s/t/data/b.parquet', 's3://lake2/far/cat/s/t')).toBe('s3://lake2/far/cat/s/t/data/b.parquet');
    expect(map.map('s3://elsewhere/import/c.parquet', 's3://lake2/far/cat/s/t')).toMatch(/^s3:\/\/lake2\/far\/cat\/s\/t\/external\/[0-9a-f]{16}-c\.parquet$/);
    expect(map.location('s3://warehouse/cat/s/t')).toBe('s3://lake2/far/cat/s/t');
  });

  it('rewrites a manifest list keeping its header metadata and writer schema; only the paths and lengths change', () => {
    const m: ManifestFile = {
      manifest_path: 's3://warehouse/cat/s/t/metadata/m1.avro',
      manifest_length: 1234n,
      partition_spec_id: 0,
      content: 0,
      sequence_number: 1n,
      min_sequence_number: 1n,
      added_snapshot_id: 8744736658442914487n,
      added_files_count: 1,
      existing_files_count: 0,
      deleted_files_count: 0,
      added_rows_count: 10n,
      existing_rows_count: 0n,
      deleted_rows_count: 0n,
      partitions: [],
      key_metadata: null,
    };
    const bytes = writeManifestList({ snapshotId: 8744736658442914487n, parentSnapshotId: null, sequenceNumber: 1n, manifests: [m] });
    const out = rewriteAvroFile<ManifestFile>(bytes, (r) => ({ ...r, manifest_path: map.map(r.manifest_path, ''), manifest_length: 99n }));
    const before = readAvroFile(bytes);
    const after = readAvroFile(out);
    expect(after.metadata).toEqual(before.metadata);
    const [moved] = readManifestList(out).manifests;
    expect(moved).toMatchObject({ manifest_path: 's3://lake2/far/cat/s/t/metadata/m1.avro', manifest_length: 99n, added_snapshot_id: 8744736658442914487n, added_rows_count: 10n });
  });

  it('rewrites a position delete file: data-file paths mapped, positions and field ids kept', async () => {
    const schema = [
      { name: 'root', num_children: 2 },
      { name: 'file_path', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED', field_id: 2147483546 },
      { name: 'pos', type: 'INT64', repetition_type: 'REQUIRED', field_id: 2147483545 },
    ] as const;
    const src = parquetWriteBuffer({
      schema: schema as never,
      columnData: [
        { name: 'file_path', data: ['s3://warehouse/cat/s/t/data/a.parquet', 's3://warehouse/cat/s/t/data/a.parquet'] },
        { name: 'pos', data: [3n, 7n] },
      ],
    });
    const out = await rewritePositionDeletes(new Uint8Array(src), (p) => map.map(p, 's3://lake2/far/cat/s/t'));
    const buffer = out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) as ArrayBuffer;
    expect(await parquetReadObjects({ file: buffer })).toEqual([
      { file_path: 's3://lake2/far/cat/s/t/data/a.parquet', pos: 3n },
      { file_path: 's3://lake2/far/cat/s/t/data/a.parquet', pos: 7n },
    ]);
    expect(parquetMetadata(buffer).schema.slice(1).map((e) => [e.name, e.field_id, e.repetition_type])).toEqual([
      ['file_path', 2147483546, 'REQUIRED'],
      ['pos', 2147483545, 'REQUIRED'],
    ]);
  });

  it("maps a position delete file's file_path bounds with its rows (positions' bounds kept); a data file's are left alone", () => {
    const t = 's3://lake2/far/cat/s/t';
    const del = positionDeleteDataFile('s3://warehouse/cat/s/t/data/d.parquet', 10, {}, [
      { path: 's3://warehouse/cat/s/t/data/a.parquet', pos: 1n },
      { path: 's3://warehouse/cat/s/t/data/b.parquet', pos: 5n },
    ]);
    const out = deletePathBoundsMapped(del, (p) => map.map(p, t));
    const text = (kv: { key: number; value: Uint8Array }) => [kv.key, kv.key === 2147483546 ? Buffer.from(kv.value).toString('utf8') : Buffer.from(kv.value).readBigInt64LE(0)];
    expect(out.lower_bounds?.map(text)).toEqual([[2147483546, `${t}/data/a.parquet`], [2147483545, 1n]]);
    expect(out.upper_bounds?.map(text)).toEqual([[2147483546, `${t}/data/b.parquet`], [2147483545, 5n]]);
    expect(deletePathBoundsMapped({ ...del, content: 0 }, (p) => map.map(p, t))).toEqual({});
  });

  it('rewrites the metadata JSON: location, manifest lists, the log (only files kept), statistics and path properties', () => {
    const m = {
      location: 's3://warehouse/cat/s/t',
      properties: { 'write.data.path': 's3://warehouse/cat/s/t/data', owner: 'x' },
      snapshots: [{ 'snapshot-id': 1n, 'manifest-list': 's3://warehouse/cat/s/t/metadata/snap-1.avro' }],
      'metadata-log': [
        { 'metadata-file': 's3://warehouse/cat/s/t/metadata/00000-a.metadata.json', 'timestamp-ms': 1 },
        { 'metadata-file': 's3://warehouse/cat/s/t/metadata/00001-gone.metadata.json', 'timestamp-ms': 2 },
      ],
      statistics: [{ 'snapshot-id': 1n, 'statistics-path': 's3://warehouse/cat/s/t/metadata/1.stats', 'file-size-in-bytes': 10 }],
    } as unknown as TableMetadata;
    const keep = new Set(['s3://warehouse/cat/s/t/metadata/00000-a.metadata.json']);
    const out = rewriteMetadata(m, (p) => map.map(p, 's3://lake2/far/cat/s/t'), 's3://lake2/far/cat/s/t', keep);
    expect(out).toMatchObject({
      location: 's3://lake2/far/cat/s/t',
      properties: { 'write.data.path': 's3://lake2/far/cat/s/t/data', owner: 'x' },
      snapshots: [{ 'manifest-list': 's3://lake2/far/cat/s/t/metadata/snap-1.avro' }],
      'metadata-log': [{ 'metadata-file': 's3://lake2/far/cat/s/t/metadata/00000-a.metadata.json' }],
      statistics: [{ 'statistics-path': 's3://lake2/far/cat/s/t/metadata/1.stats' }],
    });
    expect(out['metadata-log']).toHaveLength(1);
  });
});
