// Position delete files (format/spec.md, "Position Delete Files", "Scan Planning", "Row-level delete"): which
// row-level write mode a table asks for, the Parquet a position delete file is, and which delete files apply to
// which data file. A position delete file lists (file_path, pos) pairs, sorted by path then position, each naming a
// row (0-based position in the data file) that no longer exists as of the delete file's data sequence number.
import { parquetWriteBuffer } from 'hyparquet-writer';
import { encodeBound, type DataFile, type KeyValue } from './avro.ts';
import type { TableMetadata } from './metadata.ts';

/** Reserved field ids of a position delete file's columns (spec: "Reserved Field IDs"). */
export const DELETE_FILE_PATH_ID = 2147483546;
export const DELETE_POS_ID = 2147483545;

type RowLevelOperation = 'delete' | 'update' | 'merge';
export type RowLevelMode = 'merge-on-read' | 'copy-on-write';

/**
 * How a row-level statement writes: the table property `write.delete.mode` / `write.update.mode` /
 * `write.merge.mode` when set to one of the two modes. Unset, merge-on-read: a statement touching a few rows then
 * writes a delete file of those rows instead of rewriting every data file they are in (Spark's own default is
 * copy-on-write; ours is not, so that such a statement costs the rows, not the table). A v1 table has no delete
 * files: always copy-on-write.
 */
export function rowLevelMode(metadata: Pick<TableMetadata, 'format-version' | 'properties'>, operation: RowLevelOperation): RowLevelMode {
  if (metadata['format-version'] < 2) return 'copy-on-write';
  const set = metadata.properties?.[`write.${operation}.mode`]?.trim().toLowerCase();
  return set === 'copy-on-write' ? 'copy-on-write' : 'merge-on-read';
}

/** A position delete file's bytes: REQUIRED columns with the reserved field ids, rows in (file_path, pos) order. */
export function positionDeleteParquet(rows: ReadonlyArray<{ path: string; pos: bigint }>): Uint8Array {
  const sorted = [...rows].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : 0));
  const buf = parquetWriteBuffer({
    columnData: [
      { name: 'file_path', data: sorted.map((r) => r.path) },
      { name: 'pos', data: BigInt64Array.from(sorted.map((r) => r.pos)) },
    ],
    schema: [
      { name: 'root', num_children: 2 },
      { name: 'file_path', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED', field_id: DELETE_FILE_PATH_ID },
      { name: 'pos', type: 'INT64', repetition_type: 'REQUIRED', field_id: DELETE_POS_ID },
    ],
  });
  return new Uint8Array(buf);
}

/**
 * The manifest entry's file of a position delete file: record count, value and null counts and bounds of both
 * columns. The file_path bounds let a reader (and our scan planning) skip the delete file for every data file
 * outside them: a file written for one data file has equal bounds.
 */
export function positionDeleteDataFile(
  uri: string,
  sizeBytes: number,
  partition: Record<string, unknown>,
  rows: ReadonlyArray<{ path: string; pos: bigint }>,
): DataFile {
  let lowPath = rows[0].path;
  let highPath = rows[0].path;
  let lowPos = rows[0].pos;
  let highPos = rows[0].pos;
  for (const r of rows) {
    if (r.path < lowPath) lowPath = r.path;
    if (r.path > highPath) highPath = r.path;
    if (r.pos < lowPos) lowPos = r.pos;
    if (r.pos > highPos) highPos = r.pos;
  }
  const count = BigInt(rows.length);
  const both = (v: bigint): KeyValue<bigint>[] => [
    { key: DELETE_FILE_PATH_ID, value: v },
    { key: DELETE_POS_ID, value: v },
  ];
  return {
    content: 1,
    file_path: uri,
    file_format: 'PARQUET',
    partition,
    record_count: count,
    file_size_in_bytes: BigInt(sizeBytes),
    value_counts: both(count),
    null_value_counts: both(0n),
    lower_bounds: [
      { key: DELETE_FILE_PATH_ID, value: encodeBound('string', lowPath) },
      { key: DELETE_POS_ID, value: encodeBound('long', lowPos) },
    ],
    upper_bounds: [
      { key: DELETE_FILE_PATH_ID, value: encodeBound('string', highPath) },
      { key: DELETE_POS_ID, value: encodeBound('long', highPos) },
    ],
  };
}

/** The file_path bounds of a delete file, when it records them. */
export function deletePathBounds(file: DataFile): { lower: string; upper: string } | null {
  const lo = file.lower_bounds?.find((kv) => kv.key === DELETE_FILE_PATH_ID)?.value;
  const hi = file.upper_bounds?.find((kv) => kv.key === DELETE_FILE_PATH_ID)?.value;
  if (!lo || !hi) return null;
  return { lower: Buffer.from(lo).toString('utf8'), upper: Buffer.from(hi).toString('utf8') };
}

export interface ScanEntry {
  file: DataFile;
  /** The entry's data sequence number (inherited). */
  sequenceNumber: bigint;
  specId: number;
}

/**
 * Whether position delete file `del` must be applied to data file `data` (spec, "Scan Planning"): the data file's
 * data sequence number is at most the delete file's, and the partitions match (same spec and values) or the delete
 * file's spec is unpartitioned; its file_path bounds, when recorded, must include the data file's path. A bound
 * may be truncated (a prefix): a lower bound that is a prefix still orders before, an upper bound that is a prefix
 * of the path is taken as including it.
 */
export function positionDeletesApply(data: ScanEntry, del: ScanEntry, unpartitionedSpecs: ReadonlySet<number>): boolean {
  if (del.file.content !== 1) return false;
  if (data.sequenceNumber > del.sequenceNumber) return false;
  if (!unpartitionedSpecs.has(del.specId)) {
    if (del.specId !== data.specId) return false;
    if (canonical(del.file.partition) !== canonical(data.file.partition)) return false;
  }
  const bounds = deletePathBounds(del.file);
  if (bounds) {
    const path = data.file.file_path;
    if (path < bounds.lower) return false;
    if (path > bounds.upper && !path.startsWith(bounds.upper)) return false;
  }
  return true;
}

function canonical(partition: Record<string, unknown>): string {
  return JSON.stringify(Object.keys(partition).sort().map((k) => [k, partition[k]]), (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
}
