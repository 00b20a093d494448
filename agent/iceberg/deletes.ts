// Merge-on-read on the agent: reading a data file without the rows its position delete files remove, and writing
// the position delete files of a row-level statement. DuckDB gives each row's position in its file as the
// `file_row_number` virtual column of read_parquet, so a delete is an anti-join on it.
import { randomUUID } from 'node:crypto';
import { positionDeleteDataFile, positionDeleteParquet } from '../../iceberg/positionDeletes.ts';
import type { Schema } from '../../iceberg/metadata.ts';
import { bindPredicates, type Predicate } from '../../iceberg/predicates.ts';
import type { AddedDeleteFile } from './commit.ts';
import { unsupported } from './errors.ts';
import type { TableStorage } from './storage.ts';

const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** The delete files (local copies) that apply to one data file, and the data file's path as they name it. */
export interface LocalDeletes {
  /** The data file's path in the table metadata (what the delete files' file_path holds). */
  path: string;
  files: readonly string[];
}

/** SQL listing the positions of one data file that its delete files remove. */
export function deletedPositionsSql(d: LocalDeletes): string {
  return `SELECT pos FROM read_parquet([${d.files.map(quoteLiteral).join(', ')}]) WHERE file_path = ${quoteLiteral(d.path)}`;
}

/**
 * The filter keeping a data file's live rows. A table column named `file_row_number` would hide DuckDB's virtual
 * column of that name (a real column wins), and the filter would silently compare the wrong values: refused.
 */
export function liveRowsFilter(schema: Schema, d: LocalDeletes): string {
  if (schema.fields.some((f) => f.name.toLowerCase() === 'file_row_number')) {
    throw unsupported('this table has delete files and a column named file_row_number, which hides the row position the deletes are applied by');
  }
  return `file_row_number NOT IN (${deletedPositionsSql(d)})`;
}

/**
 * A filter keeping only the rows a row-level statement can touch: the conjuncts of its WHERE that compare a column
 * of the table with a number, string or boolean literal (`iceberg/predicates.ts` finds them), rendered as written
 * with the column's current name. Each holds for every row the statement changes, so a table loaded with them holds
 * every such row; a conjunct not rendered (dates and timestamps, whose literal types DuckDB binds in ways that are
 * not worth copying) only lets more rows in. Null: no conjunct applies.
 */
export function touchedRowsFilter(predicates: readonly Predicate[], schema: Schema, qualifiers: readonly string[]): string | null {
  const parts: string[] = [];
  for (const p of predicates) {
    const [bound] = bindPredicates([p], schema, qualifiers);
    if (!bound || !p.values.every((v) => v.kind === 'number' || v.kind === 'string' || v.kind === 'boolean')) continue;
    if (p.values.some((v) => v.kind === 'number' && !/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v.text))) continue;
    const values = p.values.map((v) => (v.kind === 'string' ? quoteLiteral(v.text) : v.kind === 'boolean' ? (v.text.toLowerCase() === 'true' ? 'TRUE' : 'FALSE') : v.text));
    const col = `"${bound.field.name.replace(/"/g, '""')}"`;
    parts.push(p.op === 'in' ? `${col} IN (${values.join(', ')})` : `${col} ${p.op} ${values[0]}`);
  }
  return parts.length ? parts.join(' AND ') : null;
}

export interface DeletedRow {
  /** The data file the row is in (its path in the table metadata). */
  path: string;
  pos: bigint;
  /** The data file's partition spec and values: its delete file carries the same. */
  specId: number;
  partition: Record<string, unknown>;
}

/**
 * Writes the position delete files for `rows` (one per partition of the data files they are in, so that a reader
 * applies each only within its partition), uploads them under the table's data folder and returns them for the
 * commit. Nothing references them until the commit lands.
 */
export async function writePositionDeletes(storage: TableStorage, location: string, rows: readonly DeletedRow[]): Promise<AddedDeleteFile[]> {
  const groups = new Map<string, DeletedRow[]>();
  for (const r of rows) {
    const key = `${r.specId}:${JSON.stringify(r.partition, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  const out: AddedDeleteFile[] = [];
  for (const group of groups.values()) {
    const pairs = group.map((r) => ({ path: r.path, pos: r.pos }));
    const bytes = positionDeleteParquet(pairs);
    const uri = `${location}/data/${randomUUID()}-deletes.parquet`;
    await storage.put(uri, bytes);
    out.push({ file: positionDeleteDataFile(uri, bytes.byteLength, group[0].partition, pairs), specId: group[0].specId });
  }
  return out;
}
