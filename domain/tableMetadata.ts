// The table_metadata sidecar (I3): what the control plane knows about a table beyond its structure, keyed by
// catalog id, schema and table name: who owns it, the last write (who, which query, when) and row/size stats
// recounted from the Iceberg snapshot summaries. The structure itself is only ever read from the catalog service.
import type { Queryable } from '../runtime/db.ts';
import type { CatalogClient } from '../runtime/catalogClient.ts';
import { warehouseName, type AttachedCatalog } from './catalogs.ts';
import type { AttachmentScope } from './catalogGrants.ts';

export interface SidecarRow {
  owner_id: string | null;
  created_at: Date;
  last_write_at: Date | null;
  last_write_by: string | null;
  last_write_query_id: string | null;
  last_write_operation: string | null;
  row_count: string | null;
  size_bytes: string | null;
  file_count: string | null;
  stats_snapshot_id: string | null;
  stats_refreshed_at: Date | null;
}

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
  return (await q.query<SidecarRow>(
    `select owner_id, created_at, last_write_at, last_write_by, last_write_query_id, last_write_operation,
            row_count, size_bytes, file_count, stats_snapshot_id, stats_refreshed_at
       from table_metadata where catalog_id = $1 and schema_name = $2 and table_name = $3`,
    [catalogId, schema, table],
  ))[0];
}

/** A table made through the api: the caller owns it and its creation is its first write. */
export async function recordTableCreated(q: Queryable, t: { catalogId: string; schema: string; table: string; ownerId: string }): Promise<void> {
  await q.query(
    `insert into table_metadata (catalog_id, schema_name, table_name, owner_id, last_write_at, last_write_by, last_write_operation,
                                 row_count, size_bytes, file_count)
     values ($1, $2, $3, $4, now(), $4, 'create', 0, 0, 0)
     on conflict (catalog_id, schema_name, table_name) do update
       set owner_id = excluded.owner_id, created_at = now(), last_write_at = now(), last_write_by = excluded.owner_id,
           last_write_query_id = null, last_write_operation = 'create', row_count = 0, size_bytes = 0, file_count = 0,
           stats_snapshot_id = null, stats_refreshed_at = null`,
    [t.catalogId, t.schema, t.table, t.ownerId],
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
  await q.query(
    `insert into table_metadata (catalog_id, schema_name, table_name, owner_id, last_write_at, last_write_by, last_write_query_id, last_write_operation)
     values ($1, $2, $3, $4, $5, $4, $6, $7)
     on conflict (catalog_id, schema_name, table_name) do update
       set last_write_at = excluded.last_write_at, last_write_by = excluded.last_write_by,
           last_write_query_id = excluded.last_write_query_id, last_write_operation = excluded.last_write_operation`,
    [w.catalogId, w.schema, w.table, w.userId, (w.at ?? new Date()).toISOString(), w.queryId, w.operation],
  );
}

export async function forgetTable(q: Queryable, catalogId: string, schema: string, table: string): Promise<void> {
  await q.query(`delete from table_metadata where catalog_id = $1 and schema_name = $2 and table_name = $3`, [catalogId, schema, table]);
}

export async function forgetSchema(q: Queryable, catalogId: string, schema: string): Promise<void> {
  await q.query(`delete from table_metadata where catalog_id = $1 and schema_name = $2`, [catalogId, schema]);
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
        await q.query(
          `insert into table_metadata (catalog_id, schema_name, table_name, row_count, size_bytes, file_count, stats_snapshot_id, stats_refreshed_at)
           values ($1, $2, $3, $4, $5, $6, $7, now())
           on conflict (catalog_id, schema_name, table_name) do update
             set row_count = excluded.row_count, size_bytes = excluded.size_bytes, file_count = excluded.file_count,
                 stats_snapshot_id = excluded.stats_snapshot_id, stats_refreshed_at = excluded.stats_refreshed_at`,
          [c.id, schema, table, stats.rowCount, stats.sizeBytes, stats.fileCount, stats.snapshotId],
        );
        report.tables_updated++;
      } catch (e) {
        report.failed.push({ schema, table, error: e instanceof Error ? e.message : String(e) });
      }
    }
  }
  const known = await q.query<{ schema_name: string; table_name: string }>(
    `select schema_name, table_name from table_metadata where catalog_id = $1`,
    [c.id],
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
