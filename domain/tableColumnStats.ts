// A table's column statistics as its Iceberg metadata keeps them (docs/catalogs.md "Column statistics"): every live
// data file of the current snapshot carries, per column, its value count, null count, NaN count, size and lower and
// upper bounds; the table's figures are their sums, and the least and greatest bounds. Read from the manifest list
// and manifests with vended, short-lived credentials, as the maintenance scan reads them: never a data file.
import { Schema } from 'effect';
import type { CatalogClient } from '../runtime/catalogClient.ts';
import { currentSnapshot, currentSchema, isStruct, type IcebergType, type NestedField, type TableMetadata } from '../iceberg/metadata.ts';
import { decodeBound, readManifest, readManifestList, type KeyValue } from '../iceberg/avro.ts';
import { blobStoreForVended } from '../iceberg/vendedStorage.ts';
import { icebergToDuckdb } from '../iceberg/duckdbTypes.ts';
import { AppError } from './errors.ts';

/** Manifests read at most per request: a page answer, not a scan. Beyond them the figures say they are partial. */
export const COLUMN_STATS_MAX_MANIFESTS = 200;

export const ColumnStatsOutSchema = Schema.Struct({
  snapshot_id: Schema.NullOr(Schema.String),
  /** data files of the current snapshot, and how many of them the figures cover (fewer past the manifest cap) */
  data_files: Schema.Finite,
  files_read: Schema.Finite,
  /** delete files (row-level deletes): the counts are then those of the data files, before the deletes apply */
  delete_files: Schema.Finite,
  columns: Schema.Array(
    Schema.Struct({
      field_id: Schema.Finite,
      name: Schema.String,
      type: Schema.String,
      /** null: some file read did not record it */
      value_count: Schema.NullOr(Schema.Finite),
      null_count: Schema.NullOr(Schema.Finite),
      nan_count: Schema.NullOr(Schema.Finite),
      size_bytes: Schema.NullOr(Schema.Finite),
      /** the least lower and greatest upper bound as text; null when a file with values recorded none */
      lower_bound: Schema.NullOr(Schema.String),
      upper_bound: Schema.NullOr(Schema.String),
    }),
  ),
});
type ColumnStatsOut = typeof ColumnStatsOutSchema.Type;

/** Primitive columns by field id, nested struct fields named by their path (`address.city`). */
function leafColumns(fields: readonly NestedField[], prefix = ''): Array<{ id: number; name: string; type: IcebergType }> {
  return fields.flatMap((f) => {
    const name = `${prefix}${f.name}`;
    if (isStruct(f.type)) return leafColumns(f.type.fields, `${name}.`);
    return typeof f.type === 'string' ? [{ id: f.id, name, type: f.type }] : [];
  });
}

type Bound = number | bigint | string | boolean;

/** A decoded bound as something that orders as Iceberg orders the type (binary as hex, which orders as its bytes). */
function comparable(type: string, bytes: Uint8Array): Bound | null {
  let v: unknown;
  try {
    v = decodeBound(type, bytes);
  } catch {
    return null; // a type with no single-value serialization we read (variant, geometry…): its bound is unknown
  }
  return v instanceof Uint8Array ? Buffer.from(v).toString('hex') : (v as Bound);
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A bound as people read it: dates and times in ISO 8601, decimals with their scale. */
function boundText(type: string, v: Bound): string {
  if (type === 'date') return iso(Number(v) * 86_400_000).slice(0, 10);
  if (type === 'timestamp' || type === 'timestamptz' || type === 'timestamp_ns' || type === 'timestamptz_ns') {
    const perMs = type.endsWith('_ns') ? 1_000_000n : 1000n;
    const n = BigInt(v as bigint);
    const text = iso(Number(n / perMs));
    const fraction = (((n % perMs) + perMs) % perMs).toString().padStart(type.endsWith('_ns') ? 6 : 3, '0');
    const withFraction = text.replace(/Z$/, '').replace(/(\.\d{3})$/, `$1${fraction}`);
    return type.startsWith('timestamptz') ? `${withFraction}Z` : withFraction;
  }
  if (type === 'time') {
    const us = BigInt(v as bigint);
    const s = Number(us / 1_000_000n);
    const pad = (x: number) => String(x).padStart(2, '0');
    return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}.${(us % 1_000_000n).toString().padStart(6, '0')}`;
  }
  const decimal = /^decimal\(\s*\d+\s*,\s*(\d+)\s*\)$/.exec(type);
  if (decimal) {
    const scale = Number(decimal[1]);
    const n = BigInt(v as bigint);
    const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, '0');
    const text = scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
    return n < 0n ? `-${text}` : text;
  }
  return String(v);
}

interface Acc {
  values: number | null;
  nulls: number | null;
  nans: number | null;
  bytes: number | null;
  lower: Bound | null | undefined;
  upper: Bound | null | undefined;
}

const byKey = <V>(list: KeyValue<V>[] | null | undefined) => (list ? new Map(list.map((kv) => [kv.key, kv.value])) : undefined);
const add = (sum: number | null, v: bigint | undefined) => (sum === null || v === undefined ? null : sum + Number(v));

export async function tableColumnStats(client: CatalogClient, warehouse: string, schema: string, table: string): Promise<ColumnStatsOut> {
  const loaded = await client.loadTable<TableMetadata>(warehouse, [schema], table, { vendedCredentials: true });
  const m = loaded.metadata;
  const columns = leafColumns(currentSchema(m).fields);
  const acc = new Map<number, Acc>(columns.map((c) => [c.id, { values: 0, nulls: 0, nans: 0, bytes: 0, lower: undefined, upper: undefined }]));
  const snapshot = currentSnapshot(m);
  let dataFiles = 0;
  let filesRead = 0;
  let deleteFiles = 0;
  if (snapshot) {
    const store = blobStoreForVended(loaded.config);
    try {
      const manifests = readManifestList(await store.get(snapshot['manifest-list'])).manifests;
      for (const mf of manifests) {
        const live = mf.added_files_count + mf.existing_files_count;
        if (mf.content === 0) dataFiles += live;
        else deleteFiles += live;
      }
      const dataManifests = manifests.filter((mf) => mf.content === 0);
      for (const mf of dataManifests.slice(0, COLUMN_STATS_MAX_MANIFESTS)) {
        for (const e of readManifest(await store.get(mf.manifest_path)).entries) {
          if (e.status === 2 || e.data_file.content !== 0) continue;
          filesRead++;
          const f = e.data_file;
          const [values, nulls, nans, sizes] = [f.value_counts, f.null_value_counts, f.nan_value_counts, f.column_sizes].map((l) => byKey(l));
          const [lowers, uppers] = [f.lower_bounds, f.upper_bounds].map((l) => byKey(l));
          for (const c of columns) {
            const a = acc.get(c.id)!;
            a.values = add(a.values, values?.get(c.id));
            a.nulls = add(a.nulls, nulls?.get(c.id));
            // NaN counts exist for floating-point columns only; a file without one for them recorded none
            a.nans = c.type === 'float' || c.type === 'double' ? add(a.nans, nans?.get(c.id)) : null;
            a.bytes = add(a.bytes, sizes?.get(c.id));
            const count = values?.get(c.id);
            const nonNull = count === undefined ? undefined : Number(count) - Number(nulls?.get(c.id) ?? 0n) - Number(nans?.get(c.id) ?? 0n);
            const lo = lowers?.get(c.id);
            const hi = uppers?.get(c.id);
            // A file holding values without a bound leaves the table's bound unknown; an all-null file has none to give.
            if (nonNull === 0 && lo === undefined && hi === undefined) continue;
            if (a.lower !== null) a.lower = lo === undefined ? null : least(a.lower, comparable(c.type as string, lo));
            if (a.upper !== null) a.upper = hi === undefined ? null : greatest(a.upper, comparable(c.type as string, hi));
          }
        }
      }
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw new AppError(502, 'storage_unreachable', `the table’s manifests could not be read: ${(e as Error).message}`);
    } finally {
      store.close();
    }
  }
  const read = filesRead > 0;
  return {
    snapshot_id: snapshot ? String(snapshot['snapshot-id']) : null,
    data_files: dataFiles,
    files_read: filesRead,
    delete_files: deleteFiles,
    columns: columns.map((c) => {
      const a = acc.get(c.id)!;
      const type = c.type as string;
      return {
        field_id: c.id,
        name: c.name,
        type: icebergToDuckdb(c.type),
        value_count: read ? a.values : null,
        null_count: read ? a.nulls : null,
        nan_count: read ? a.nans : null,
        size_bytes: read ? a.bytes : null,
        lower_bound: a.lower === null || a.lower === undefined ? null : boundText(type, a.lower),
        upper_bound: a.upper === null || a.upper === undefined ? null : boundText(type, a.upper),
      };
    }),
  };
}

// An unreadable bound (null) makes the table's unknown; undefined is "none seen yet".
const least = (a: Bound | undefined, b: Bound | null): Bound | null => (b === null ? null : a === undefined || b < a ? b : a);
const greatest = (a: Bound | undefined, b: Bound | null): Bound | null => (b === null ? null : a === undefined || b > a ? b : a);
