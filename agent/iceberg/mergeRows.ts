// The target rows a MERGE can touch, for merge-on-read: a MERGE whose every WHEN clause acts on matched rows or
// inserts unmatched source rows (MergeShape) touches only target rows whose key columns equal a source row's, so the
// bridge loads those rows alone (the files whose column bounds can hold the source's key values, and in them the rows
// with those values) instead of the whole table. Whether a source row matches is unchanged: every target row it can
// match is loaded. A subquery source is read once, into a temporary table the statement then reads in its place, so
// the keys and the MERGE see the same rows (a subquery may not give the same rows twice: random(), a LIMIT).
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Schema } from '../../iceberg/metadata.ts';
import type { Literal, Predicate } from '../../iceberg/predicates.ts';
import { touchedRowsFilter } from './deletes.ts';
import type { MergeShape } from './statements.ts';
import { quoteIdent, quoteLiteral } from './write.ts';

/** Past this many distinct values of one key, the target is loaded whole (the MERGE touches that much of it). */
const MERGE_KEY_LIMIT = 10_000;

const INTEGER_TYPES = new Set(['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'UHUGEINT']);

export interface MergeRows {
  /** For scan planning: the files that can hold a row the MERGE touches. */
  predicates: Predicate[];
  /** The rows of those files it can touch (a filter for their load). */
  filter: string;
  /** The statement to run instead: its subquery source replaced by the temporary table holding its rows. */
  sql: string | null;
  /** Temporary tables to drop once the statement is done. */
  temporary: string[];
}

/**
 * The rows MERGE `sql` (of shape `shape`) can touch in a target of schema `schema`, or null when they cannot be told
 * here (then every row can): a key column that is not an integer or a string, a source key of another type (its
 * equality may cast in ways an IN list would not copy), more than MERGE_KEY_LIMIT values, or a subquery source that
 * cannot be put in a temporary table or may not be replaced (`rewrite` false: the statement text was already taken).
 */
export async function mergeRows(c: DuckDBConnection, sql: string, shape: MergeShape, schema: Schema, tag: string, rewrite: boolean): Promise<MergeRows | null> {
  const temporary: string[] = [];
  let relation = sql.slice(shape.source.start, shape.source.end).trim();
  let replaced: string | null = null;
  const drop = async () => {
    for (const t of temporary) await c.run(`DROP TABLE IF EXISTS ${t}`);
  };
  try {
    if (!shape.sourceIsTable && shape.keys.length) {
      if (!rewrite) return null;
      const table = `temp.main.__eider_src_${tag}`;
      await c.run(`CREATE TEMP TABLE __eider_src_${tag} AS SELECT * FROM ${relation}`);
      temporary.push(table);
      relation = `${table} AS ${quoteIdent(shape.sourceQualifier)}`;
      replaced = `${sql.slice(0, shape.source.start)} ${relation} ${sql.slice(shape.source.end)}`;
    }
    const predicates: Predicate[] = [...shape.targetPredicates];
    const filters: string[] = [];
    for (const key of shape.keys) {
      const field = schema.fields.find((f) => f.name === key.column) ?? schema.fields.find((f) => f.name.toLowerCase() === key.column.toLowerCase());
      const integer = field?.type === 'int' || field?.type === 'long';
      if (!field || !(integer || field.type === 'string')) return await drop().then(() => null);
      const source = `${quoteIdent(shape.sourceQualifier)}.${quoteIdent(key.sourceColumn)}`;
      const found = await c.runAndReadAll(
        `SELECT DISTINCT CAST(${source} AS VARCHAR), typeof(${source}) FROM ${relation} WHERE ${source} IS NOT NULL LIMIT ${MERGE_KEY_LIMIT + 1}`,
      );
      const rows = found.getRows().map((r) => ({ text: String(r[0]), type: String(r[1]) }));
      if (rows.length > MERGE_KEY_LIMIT) return await drop().then(() => null);
      if (rows.some((r) => (integer ? !INTEGER_TYPES.has(r.type) || !/^-?\d+$/.test(r.text) : r.type !== 'VARCHAR'))) return await drop().then(() => null);
      const values: Literal[] = rows.map((r) => ({ kind: integer ? 'number' : 'string', text: r.text }));
      predicates.push({ column: field.name, qualifier: null, op: 'in', values });
      // A NULL key matches no row: with no source values, no target row can match.
      filters.push(values.length ? `${quoteIdent(field.name)} IN (${values.map((v) => (integer ? v.text : quoteLiteral(v.text))).join(', ')})` : 'FALSE');
    }
    const onTarget = touchedRowsFilter(shape.targetPredicates, schema, shape.targetQualifiers);
    if (onTarget) filters.push(onTarget);
    if (!filters.length) return await drop().then(() => null);
    return { predicates, filter: filters.join(' AND '), sql: replaced, temporary };
  } catch {
    // Not bounded, not failed: the statement runs on the whole target and reports its own errors (a source that
    // does not bind, a key column it does not have).
    await drop().catch(() => undefined);
    return null;
  }
}
