// Writing rows as Iceberg data files: DuckDB computes each row's partition tuple (identity, year, month, day,
// hour, truncate in SQL; bucket through iceberg/transforms.ts over the distinct source values) and per-file column
// statistics, writes one Parquet file per partition with `COPY … (FORMAT parquet, FIELD_IDS {…})` (and the table
// schema in the footer's `iceberg.schema`, as Java writers add it) into the query's
// scratch directory, and Node uploads each file under the table location. Values computed here are in Iceberg's
// representation (dates as days, timestamps as microseconds since the epoch, UTC).
import type { DuckDBConnection } from '@duckdb/node-api';
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeBound, type DataFile } from '../../iceberg/avro.ts';
import { icebergToDuckdb } from '../../iceberg/duckdbTypes.ts';
import { findField, type IcebergType, type PartitionSpec, type Schema } from '../../iceberg/metadata.ts';
import { bucketOf, parseTransform, transformResultType } from '../../iceberg/transforms.ts';
import type { DataFileCache } from '../dataCache.ts';
import { unsupported } from './errors.ts';
import type { TableStorage } from './storage.ts';

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;

const MICROS_PER_DAY = 86_400_000_000n;
const MICROS_PER_HOUR = 3_600_000_000n;
const floorDiv = (x: string, n: bigint) => `((${x} - (((${x} % ${n}) + ${n}) % ${n})) // ${n})`;

/** SQL giving a column's value in Iceberg's representation (for partition values and bounds), or null. */
function icebergValueSql(type: IcebergType, col: string): string | null {
  if (typeof type !== 'string') return null;
  switch (type) {
    case 'boolean':
    case 'float':
    case 'double':
    case 'string':
      return col;
    case 'int':
      return `CAST(${col} AS INTEGER)`;
    case 'long':
      return `CAST(${col} AS BIGINT)`;
    case 'date':
      return `CAST(${col} - DATE '1970-01-01' AS INTEGER)`;
    case 'timestamp':
    case 'timestamptz':
      return `epoch_us(${col})`;
    case 'uuid':
      return `CAST(${col} AS VARCHAR)`;
  }
  return null;
}

/** SQL for a partition transform's result (Iceberg representation); null for bucket (computed in JS). */
export function transformSql(transform: string, sourceType: string, col: string): string | null {
  const t = parseTransform(transform);
  // Temporal transforms work on UTC microseconds (or days for a date).
  const micros = sourceType === 'date' ? `(CAST(${col} - DATE '1970-01-01' AS BIGINT) * ${MICROS_PER_DAY})` : `epoch_us(${col})`;
  const utc = `make_timestamp(${micros})`;
  switch (t.kind) {
    case 'identity': {
      const v = icebergValueSql(sourceType, col);
      if (v === null) throw unsupported(`identity partitioning on a ${sourceType} column is not supported`);
      return v;
    }
    case 'void':
      return 'CAST(NULL AS INTEGER)';
    case 'year':
      return `CAST(year(${utc}) - 1970 AS INTEGER)`;
    case 'month':
      return `CAST((year(${utc}) - 1970) * 12 + month(${utc}) - 1 AS INTEGER)`;
    case 'day':
      return sourceType === 'date' ? `CAST(${col} - DATE '1970-01-01' AS INTEGER)` : `CAST(${floorDiv(micros, MICROS_PER_DAY)} AS INTEGER)`;
    case 'hour':
      return `CAST(${floorDiv(micros, MICROS_PER_HOUR)} AS INTEGER)`;
    case 'truncate':
      if (sourceType === 'int' || sourceType === 'long') {
        const w = BigInt(t.width);
        return `(${col} - (((${col} % ${w}) + ${w}) % ${w}))`;
      }
      if (sourceType === 'string') return `substring(${col}, 1, ${t.width})`;
      throw unsupported(`truncate partitioning on a ${sourceType} column is not supported`);
    case 'bucket':
      return null;
  }
}

/** `FIELD_IDS {…}` for DuckDB's Parquet writer, nested types included. */
function fieldIdsSql(schema: Schema): string {
  const nested = (type: IcebergType, id: number): string => {
    if (typeof type === 'string') return String(id);
    if (type.type === 'struct') {
      return `{__duckdb_field_id: ${id}, ${type.fields.map((f) => `${quoteIdent(f.name)}: ${nested(f.type, f.id)}`).join(', ')}}`;
    }
    if (type.type === 'list') return `{__duckdb_field_id: ${id}, element: ${nested(type.element, type['element-id'])}}`;
    return `{__duckdb_field_id: ${id}, key: ${nested(type.key, type['key-id'])}, value: ${nested(type.value, type['value-id'])}}`;
  };
  return `{${schema.fields.map((f) => `${quoteIdent(f.name)}: ${nested(f.type, f.id)}`).join(', ')}}`;
}

function toJsValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  return v;
}

const BOUND_TYPES = new Set(['boolean', 'int', 'long', 'float', 'double', 'date', 'timestamp', 'timestamptz', 'string']);

export interface WriteTarget {
  schema: Schema;
  spec: PartitionSpec;
  /** Table location (s3://…), without a trailing slash. */
  location: string;
}

export interface WrittenFiles {
  files: DataFile[];
  rows: number;
}

/**
 * Writes the rows of `source` (a SELECT or table name whose columns carry the schema's names) as data files of
 * the table and uploads them. `workDir` must be inside DuckDB's allowed directories.
 */
export async function writeDataFiles(
  connection: DuckDBConnection,
  source: string,
  target: WriteTarget,
  storage: TableStorage,
  workDir: string,
  cache: DataFileCache,
  pinned: string[],
): Promise<WrittenFiles> {
  const { schema, spec } = target;
  const stage = `__eider_stage_${randomUUID().replace(/-/g, '')}`;
  const projection = schema.fields.map((f) => `CAST(${quoteIdent(f.name)} AS ${icebergToDuckdb(f.type)}) AS ${quoteIdent(f.name)}`);
  const partCols: string[] = [];
  const bucketJobs: Array<{ index: number; col: string; type: string; n: number }> = [];
  spec.fields.forEach((pf, i) => {
    const source = findField(schema, pf['source-id']);
    if (!source || typeof source.type !== 'string') throw unsupported(`partition field ${pf.name} has no primitive source column`);
    const col = quoteIdent(source.name);
    const sql = transformSql(pf.transform, source.type, col);
    const t = parseTransform(pf.transform);
    if (sql === null && t.kind === 'bucket') {
      const rep = icebergValueSql(source.type, col);
      if (rep === null) throw unsupported(`bucket partitioning on a ${source.type} column is not supported`);
      bucketJobs.push({ index: i, col: rep, type: source.type, n: t.n });
      partCols.push(`CAST(NULL AS INTEGER) AS __p${i}`);
    } else partCols.push(`${sql} AS __p${i}`);
  });
  await connection.run(
    `CREATE TEMP TABLE ${stage} AS SELECT ${[...projection, ...partCols].join(', ')} FROM (${source}) AS __eider_src`,
  );
  try {
    // Buckets: Murmur3 over the distinct source values, joined back.
    for (const job of bucketJobs) {
      const distinct = await connection.runAndReadAll(`SELECT DISTINCT ${job.col} FROM ${stage} WHERE ${job.col} IS NOT NULL`);
      const pairs = distinct.getRows().map((r) => [r[0], bucketOf(job.type, r[0], job.n)] as const);
      if (pairs.length === 0) continue;
      const map = `${stage}_b${job.index}`;
      const valueType = job.type === 'long' || job.type.startsWith('timestamp') ? 'BIGINT' : job.type === 'string' || job.type === 'uuid' ? 'VARCHAR' : 'INTEGER';
      await connection.run(`CREATE TEMP TABLE ${map} (v ${valueType}, b INTEGER)`);
      const appender = await connection.createAppender(map, 'main', 'temp');
      for (const [v, b] of pairs) {
        if (valueType === 'BIGINT') appender.appendBigInt(BigInt(v as bigint));
        else if (valueType === 'VARCHAR') appender.appendVarchar(String(v));
        else appender.appendInteger(Number(v));
        appender.appendInteger(b);
        appender.endRow();
      }
      appender.closeSync();
      await connection.run(`UPDATE ${stage} SET __p${job.index} = ${map}.b FROM ${map} WHERE ${map}.v = ${job.col}`);
      await connection.run(`DROP TABLE ${map}`);
    }

    const pcols = spec.fields.map((_, i) => `__p${i}`);
    const statCols: string[] = ['count(*)'];
    const statFields = schema.fields.filter((f) => typeof f.type === 'string' && BOUND_TYPES.has(f.type as string));
    for (const f of statFields) {
      const rep = icebergValueSql(f.type, quoteIdent(f.name))!;
      statCols.push(`min(${rep})`, `max(${rep})`, `count(${quoteIdent(f.name)})`);
    }
    const nonStat = schema.fields.filter((f) => !statFields.includes(f));
    for (const f of nonStat) statCols.push(`count(${quoteIdent(f.name)})`);
    const groups = await connection.runAndReadAll(
      `SELECT ${[...pcols, ...statCols].join(', ')} FROM ${stage}${pcols.length ? ` GROUP BY ${pcols.join(', ')}` : ''}`,
    );
    const files: DataFile[] = [];
    let rows = 0;
    const fieldIds = fieldIdsSql(schema);
    // The table schema the file was written with, as Java writers put it in the footer: readers that match columns
    // by name (icebird and others) learn from it which name each field id had here, so a later rename or drop of a
    // column still reads this file right.
    const icebergSchema = quoteLiteral(JSON.stringify(schema));
    const resultTypes = spec.fields.map((pf) => transformResultType(parseTransform(pf.transform), findField(schema, pf['source-id'])!.type as string));
    for (const row of groups.getRows()) {
      const partValues = row.slice(0, pcols.length).map(toJsValue);
      const stats = row.slice(pcols.length);
      const count = Number(stats[0] as bigint);
      if (count === 0) continue;
      rows += count;
      const where = pcols.length
        ? ` WHERE ${pcols.map((c, i) => (partValues[i] === null ? `${c} IS NULL` : `${c} = ${sqlValue(partValues[i], resultTypes[i])}`)).join(' AND ')}`
        : '';
      const name = `${randomUUID()}.parquet`;
      const local = join(workDir, name);
      await connection.run(
        `COPY (SELECT ${schema.fields.map((f) => quoteIdent(f.name)).join(', ')} FROM ${stage}${where}) TO ${quoteLiteral(local)} (FORMAT parquet, FIELD_IDS ${fieldIds}, KV_METADATA {'iceberg.schema': ${icebergSchema}})`,
      );
      const size = (await stat(local)).size;
      const partition: Record<string, unknown> = {};
      spec.fields.forEach((pf, i) => {
        partition[pf.name] = normalizePartitionValue(partValues[i], resultTypes[i]);
      });
      const dir = spec.fields.length
        ? `${spec.fields.map((pf, i) => `${encodeURIComponent(pf.name)}=${encodeURIComponent(String(partValues[i] ?? 'null'))}`).join('/')}/`
        : '';
      const uri = `${target.location}/data/${dir}${name}`;
      await storage.putFile(uri, local);
      pinned.push(await cache.adopt(uri, local, size));
      const lower: Array<{ key: number; value: Uint8Array }> = [];
      const upper: Array<{ key: number; value: Uint8Array }> = [];
      const valueCounts: Array<{ key: number; value: bigint }> = [];
      const nullCounts: Array<{ key: number; value: bigint }> = [];
      statFields.forEach((f, i) => {
        const min = stats[1 + i * 3];
        const max = stats[2 + i * 3];
        const nonNull = Number(stats[3 + i * 3] as bigint);
        valueCounts.push({ key: f.id, value: BigInt(count) });
        nullCounts.push({ key: f.id, value: BigInt(count - nonNull) });
        const bound = (v: unknown) => {
          if (v === null || v === undefined) return null;
          if (typeof v === 'number' && Number.isNaN(v)) return null;
          if (f.type === 'string' && String(v).length > 64) return null;
          return encodeBound(f.type, f.type === 'long' || String(f.type).startsWith('timestamp') ? BigInt(v as bigint) : v);
        };
        const lo = bound(min);
        const hi = bound(max);
        if (lo && hi) {
          lower.push({ key: f.id, value: lo });
          upper.push({ key: f.id, value: hi });
        }
      });
      nonStat.forEach((f, i) => {
        const nonNull = Number(stats[1 + statFields.length * 3 + i] as bigint);
        valueCounts.push({ key: f.id, value: BigInt(count) });
        nullCounts.push({ key: f.id, value: BigInt(count - nonNull) });
      });
      files.push({
        content: 0,
        file_path: uri,
        file_format: 'PARQUET',
        partition,
        record_count: BigInt(count),
        file_size_in_bytes: BigInt(size),
        value_counts: valueCounts,
        null_value_counts: nullCounts,
        lower_bounds: lower,
        upper_bounds: upper,
        sort_order_id: 0,
      });
    }
    return { files, rows };
  } finally {
    await connection.run(`DROP TABLE IF EXISTS ${stage}`);
  }
}

function sqlValue(v: unknown, type: string): string {
  if (typeof v === 'string') return quoteLiteral(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  void type;
  return String(v);
}

function normalizePartitionValue(v: unknown, type: string): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'long' || type === 'time' || type.startsWith('timestamp')) return BigInt(v as bigint);
  if (type === 'int' || type === 'date') return Number(v);
  return v;
}
