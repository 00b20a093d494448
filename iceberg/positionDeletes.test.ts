import { describe, it, expect } from 'vitest';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import type { DataFile } from './avro.ts';
import {
  DELETE_FILE_PATH_ID,
  DELETE_POS_ID,
  deletePathBounds,
  positionDeleteDataFile,
  positionDeleteParquet,
  positionDeletesApply,
  rowLevelMode,
  type ScanEntry,
} from './positionDeletes.ts';

describe('rowLevelMode', () => {
  it('is merge-on-read on a v2 table unless the operation asks for copy-on-write; always copy-on-write on v1', () => {
    expect(rowLevelMode({ 'format-version': 2, properties: {} }, 'delete')).toBe('merge-on-read');
    expect(rowLevelMode({ 'format-version': 2, properties: { 'write.update.mode': 'copy-on-write' } }, 'update')).toBe('copy-on-write');
    expect(rowLevelMode({ 'format-version': 2, properties: { 'write.update.mode': 'copy-on-write' } }, 'merge')).toBe('merge-on-read');
    expect(rowLevelMode({ 'format-version': 2, properties: { 'write.merge.mode': ' Copy-On-Write ' } }, 'merge')).toBe('copy-on-write');
    expect(rowLevelMode({ 'format-version': 2, properties: { 'write.delete.mode': 'merge-on-read' } }, 'delete')).toBe('merge-on-read');
    expect(rowLevelMode({ 'format-version': 1, properties: { 'write.delete.mode': 'merge-on-read' } }, 'delete')).toBe('copy-on-write');
  });
});

describe('a position delete file', () => {
  const rows = [
    { path: 's3://b/t/data/b.parquet', pos: 7n },
    { path: 's3://b/t/data/a.parquet', pos: 3n },
    { path: 's3://b/t/data/b.parquet', pos: 2n },
  ];

  it('is Parquet with REQUIRED file_path and pos under the reserved field ids, sorted by path then position', async () => {
    const bytes = positionDeleteParquet(rows);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const meta = parquetMetadata(buffer);
    const cols = meta.schema.slice(1).map((e) => [e.name, e.repetition_type, Number(e.field_id)]);
    expect(cols).toEqual([
      ['file_path', 'REQUIRED', DELETE_FILE_PATH_ID],
      ['pos', 'REQUIRED', DELETE_POS_ID],
    ]);
    const read = await parquetReadObjects({ file: buffer });
    expect(read).toEqual([
      { file_path: 's3://b/t/data/a.parquet', pos: 3n },
      { file_path: 's3://b/t/data/b.parquet', pos: 2n },
      { file_path: 's3://b/t/data/b.parquet', pos: 7n },
    ]);
  });

  it('records its count and its file_path bounds', () => {
    const f = positionDeleteDataFile('s3://b/t/data/x-deletes.parquet', 100, { p: 1 }, rows);
    expect(f).toMatchObject({ content: 1, record_count: 3n, file_size_in_bytes: 100n, partition: { p: 1 } });
    expect(deletePathBounds(f)).toEqual({ lower: 's3://b/t/data/a.parquet', upper: 's3://b/t/data/b.parquet' });
  });
});

describe('positionDeletesApply', () => {
  const dataFile = (path: string, partition: Record<string, unknown> = { p: 1 }): DataFile => ({
    content: 0, file_path: path, file_format: 'PARQUET', partition, record_count: 10n, file_size_in_bytes: 1n,
  });
  const entry = (file: DataFile, sequenceNumber: bigint, specId = 0): ScanEntry => ({ file, sequenceNumber, specId });
  const del = (paths: string[], partition: Record<string, unknown> = { p: 1 }) =>
    positionDeleteDataFile('s3://b/t/data/d.parquet', 1, partition, paths.map((path) => ({ path, pos: 0n })));
  const none = new Set<number>();

  it('applies to an older or same-sequence data file of the same partition within its path bounds', () => {
    const d = entry(del(['s3://b/t/data/a.parquet']), 5n);
    expect(positionDeletesApply(entry(dataFile('s3://b/t/data/a.parquet'), 3n), d, none)).toBe(true);
    expect(positionDeletesApply(entry(dataFile('s3://b/t/data/a.parquet'), 5n), d, none)).toBe(true);
  });

  it('does not apply to a newer data file, another partition or spec, or a path outside its bounds', () => {
    const d = entry(del(['s3://b/t/data/a.parquet']), 5n);
    expect(positionDeletesApply(entry(dataFile('s3://b/t/data/a.parquet'), 6n), d, none)).toBe(false);
    expect(positionDeletesApply(entry(dataFile('s3://b/t/data/a.parquet', { p: 2 }), 3n), d, none)).toBe(false);
    expect(positionDeletesApply(entry(dataFile('s3://b/t/data/a.parquet'), 3n, 1), d, none)).toBe(false);
    expect(positionDeletesApply(entry(dataFile('s3://b/t/data/c.parquet'), 3n), d, none)).toBe(false);
  });

  it('applies across partitions when its spec is unpartitioned, and an equality delete file never applies here', () => {
    const d = entry(del(['s3://b/t/data/a.parquet'], {}), 5n, 3);
    expect(positionDeletesApply(entry(dataFile('s3://b/t/data/a.parquet', { p: 9 }), 3n, 0), d, new Set([3]))).toBe(true);
    const eq = entry({ ...del(['s3://b/t/data/a.parquet']), content: 2 }, 5n);
    expect(positionDeletesApply(entry(dataFile('s3://b/t/data/a.parquet'), 3n), eq, none)).toBe(false);
  });
});
