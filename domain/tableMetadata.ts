// The table_metadata sidecar (I3): what the control plane knows about a table beyond its structure, keyed by
// catalog id, schema and table name: who owns it, the last write (who, which query, when) and row/size stats
// recounted from the Iceberg snapshot summaries. The structure itself is only ever read from the catalog service.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import type { CatalogClient } from '../runtime/catalogClient.ts';
import { warehouseName } from './catalogs/warehouses.ts';
import { type AttachedCatalog } from './catalogs/attachments.ts';
import type { AttachmentScope } from './catalogGrants.ts';

// The row shape at the database boundary. The bigint counts are read as text (the api's form for 64-bit values).
const SidecarRowSchema = Schema.Struct({
  owner_id: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  last_write_at: Schema.NullOr(Schema.Date),
  last_write_by: Schema.NullOr(Schema.String),
  last_write_query_id: Schema.NullOr(Schema.String),
  last_write_operation: Schema.NullOr(Schema.String),
  row_count: Schema.NullOr(Schema.String),
  size_bytes: Schema.NullOr(Schema.String),
  file_count: Schema.NullOr(Schema.String),
  stats_snapshot_id: Schema.NullOr(Schema.String),
  stats_refreshed_at: Schema.NullOr(Schema.Date),
});
export type SidecarRow = typeof SidecarRowSchema.Type;

export interface TableStats {
  rowCount: number;
  sizeBytes: number;
  fileCount: number | null;
}

/** The slice of Iceberg table metadata the sidecar reads (the whole model lives in iceberg/, off limits here). */
export interface SnapshotSummaryView {
  'current-snapshot-id': number | bigint | null;
  snapshots?: Array<{ 'snapshot-id': number | bigint; 'timestamp-ms': number | bigint; summary?: Record<string, string> }>;
}

export async function getSidecar(q: Queryable, catalogId: string, schema: string, table: string): Promise<SidecarRow | undefined> {
  const [row] = await rows(
    q,
    SidecarRowSchema,
    sql`select owner_id, created_at, last_write_at, last_write_by, last_write_query_id, last_write_operation,
               row_count::text as row_count, size_bytes::text as size_bytes, file_count::text as file_count, stats_snapshot_id, stats_refreshed_at
          from table_metadata where catalog_id = ${catalogId} and schema_name = ${schema} and table_name = ${table}`,
  );
  return row;
}

/** A table made through the api: the caller owns it and its creation is its first write. */
export async function recordTableCreated(q: Queryable, t: { catalogId: string; schema: string; table: string; ownerId: string }): Promise<void> {
  await exec(
    q,
    sql`insert into table_metadata (catalog_id, schema_name, table_name, owner_id, last_write_at, last_write_by, last_write_operation,
                                    row_count, size_bytes, file_count)
        values (${t.catalogId}, ${t.schema}, ${t.table}, ${t.ownerId}, now(), ${t.ownerId}, 'create', 0, 0, 0)
        on conflict (catalog_id, schema_name, table_name) do update
          set owner_id = excluded.owner_id, created_at = now(), last_write_at = now(), last_write_by = excluded.owner_id,
              last_write_query_id = null, last_write_operation = 'create', row_count = 0, size_bytes = 0, file_count = 0,
              stats_snapshot_id = null, stats_refreshed_at = null`,
  );
}

/**
 * Last-write provenance, for the query path once a writing statement lands: who, which query, what kind of write.
 * A table first written by SQL (CREATE TABLE through an agent) gets its row here, owned by the writer.
 */
export async function recordTableWrite(
  q: Queryable,
  w: { catalogId: string; schema: string; table: string; userId: string | null; queryId: string | null; operation: string; at?: Date },
): Promise<void> {
  await exec(
    q,
    sql`insert into table_metadata (catalog_id, schema_name, table_name, owner_id, last_write_at, last_write_by, last_write_query_id, last_write_operation)
        values (${w.catalogId}, ${w.schema}, ${w.table}, ${w.userId}, ${(w.at ?? new Date()).toISOString()}, ${w.userId}, ${w.queryId}, ${w.operation})
        on conflict (catalog_id, schema_name, table_name) do update
          set last_write_at = excluded.last_write_at, last_write_by = excluded.last_write_by,
              last_write_query_id = excluded.last_write_query_id, last_write_operation = excluded.last_write_operation`,
  );
}

export async function forgetTable(q: Queryable, catalogId: string, schema: string, table: string): Promise<void> {
  await exec(q, sql`delete from table_metadata where catalog_id = ${catalogId} and schema_name = ${schema} and table_name = ${table}`);
}

export async function forgetSchema(q: Queryable, catalogId: string, schema: string): Promise<void> {
  await exec(q, sql`delete from table_metadata where catalog_id = ${catalogId} and schema_name = ${schema}`);
}

const count = (v: string | undefined): number | null => {
  if (v === undefined || !/^\d+$/.test(v)) return null;
  return Number(v);
};

/**
 * Row and size stats of the current snapshot from its summary (`total-records`, `total-files-size`,
 * `total-data-files`, which every Iceberg writer maintains). A table with no snapshot is empty; a summary without
 * the totals gives null (unknown), never a guess.
 */
export function statsOf(m: SnapshotSummaryView): (TableStats & { snapshotId: string | null }) | null {
  const current = m['current-snapshot-id'];
  if (current === null || current === undefined || BigInt(current) === -1n) return { rowCount: 0, sizeBytes: 0, fileCount: 0, snapshotId: null };
  const snap = (m.snapshots ?? []).find((s) => BigInt(s['snapshot-id']) === BigInt(current));
  const rows = count(snap?.summary?.['total-records']);
  const size = count(snap?.summary?.['total-files-size']);
  if (rows === null || size === null) return null;
  return { rowCount: rows, sizeBytes: size, fileCount: count(snap?.summary?.['total-data-files']), snapshotId: String(current) };
}

export interface RefreshReport {
  catalog: string;
  tables_scanned: number;
  tables_updated: number;
  /** tables whose current snapshot carries no totals: their stats are left unknown */
  tables_without_totals: Array<{ schema: string; table: string }>;
  /** sidecar rows of tables that no longer exist, removed */
  removed: number;
  failed: Array<{ schema: string; table: string; error: string }>;
  refreshed_at: string;
}

/**
 * Recounts every reachable table's stats from its metadata into the sidecar. In a scoped attachment only the
 * tables the workspace may read are counted (the report names them), and stale rows are pruned only for schemas
 * the workspace sees in full.
 */
export async function refreshStats(q: Queryable, client: CatalogClient, c: AttachedCatalog, scope: AttachmentScope): Promise<RefreshReport> {
  const wh = warehouseName(c);
  const report: RefreshReport = {
    catalog: c.slug,
    tables_scanned: 0,
    tables_updated: 0,
    tables_without_totals: [],
    removed: 0,
    failed: [],
    refreshed_at: new Date().toISOString(),
  };
  const live = new Set<string>();
  const fullySeenSchemas = new Set<string>();
  for (const ns of await client.listNamespaces(wh)) {
    const schema = ns.join('.');
    if (!scope.seesSchema(schema)) continue;
    if (scope.schema(schema, 'read')) fullySeenSchemas.add(schema);
    for (const table of await client.listTables(wh, ns)) {
      if (!scope.table(schema, table, 'read')) continue;
      live.add(`${schema}\u0000${table}`);
      report.tables_scanned++;
      try {
        const { metadata } = await client.loadTable<SnapshotSummaryView>(wh, ns, table);
        const stats = statsOf(metadata);
        if (!stats) {
          report.tables_without_totals.push({ schema, table });
          continue;
        }
        await exec(
          q,
          sql`insert into table_metadata (catalog_id, schema_name, table_name, row_count, size_bytes, file_count, stats_snapshot_id, stats_refreshed_at)
              values (${c.id}, ${schema}, ${table}, ${stats.rowCount}, ${stats.sizeBytes}, ${stats.fileCount}, ${stats.snapshotId}, now())
              on conflict (catalog_id, schema_name, table_name) do update
                set row_count = excluded.row_count, size_bytes = excluded.size_bytes, file_count = excluded.file_count,
                    stats_snapshot_id = excluded.stats_snapshot_id, stats_refreshed_at = excluded.stats_refreshed_at`,
        );
        report.tables_updated++;
      } catch (e) {
        report.failed.push({ schema, table, error: e instanceof Error ? e.message : String(e) });
      }
    }
  }
  const known = await rows(
    q,
    Schema.Struct({ schema_name: Schema.String, table_name: Schema.String }),
    sql`select schema_name, table_name from table_metadata where catalog_id = ${c.id}`,
  );
  for (const k of known) {
    const schemaInView = scope.isFull || fullySeenSchemas.has(k.schema_name);
    if (schemaInView && !live.has(`${k.schema_name}\u0000${k.table_name}`)) {
      await forgetTable(q, c.id, k.schema_name, k.table_name);
      report.removed++;
    }
  }
  return report;
}
