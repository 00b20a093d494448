// What is inside an attached catalog: schemas, tables, snapshots, stats and sample rows. Every answer comes from
// the catalog service over HTTP (I3); the database adds only the table_metadata sidecar. In a scoped attachment
// the attachment's grants decide what is listed and reachable (I10), with the same 403 not_granted as queries.
import { Schema } from 'effect';
import { Limit, route } from '../route.ts';
import type { AppContext } from '../../usecases/context.ts';
import { AppError, conflict, notFound, unprocessable } from '../../domain/errors.ts';
import { HealthOutSchema, tableHealth } from '../../domain/maintenance/store.ts';
import * as warehouses from '../../domain/catalogs/warehouses.ts';
import * as attachments from '../../domain/catalogs/attachments.ts';
import { assertCatalogsWritable } from '../../domain/storageMigrations/records.ts';
import { notGranted, scopeOf, type AttachmentScope } from '../../domain/catalogGrants.ts';
import * as sidecar from '../../domain/tableMetadata.ts';
import type { WorkspaceAccess } from '../../domain/workspaces.ts';
import { schemaFromColumns, icebergToDuckdb, TypeMappingError } from '../../iceberg/duckdbTypes.ts';
import { currentSchema, type TableMetadata } from '../../iceberg/metadata.ts';
import { catalogClientOf, viaCatalog } from '../catalogService.ts';
import { sampleTable } from '../../usecases/tableSample.ts';
import { COLUMN_STATS_MAX_MANIFESTS, ColumnStatsOutSchema, tableColumnStats } from '../../domain/tableColumnStats.ts';
import { markTableDropped } from '../../domain/semantic/models.ts';
import { dropTableLineage } from '../../domain/lineage/graph.ts';

/** Names the api creates: plain SQL identifiers, so they need no quoting anywhere they are typed. */
export const NameSchema = Schema.String.check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/));
// Names in paths are whatever the catalog holds (tables made by SQL may have any name).
const PathName = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255));

const ColumnOut = Schema.Struct({ name: Schema.String, type: Schema.String, nullable: Schema.Boolean });
const LastWrite = Schema.Struct({
  at: Schema.String,
  user_id: Schema.NullOr(Schema.String),
  query_id: Schema.NullOr(Schema.String),
  operation: Schema.NullOr(Schema.String),
});
const TableOut = Schema.Struct({
  name: Schema.String,
  schema: Schema.String,
  catalog: Schema.String,
  columns: Schema.Array(ColumnOut),
  location: Schema.String,
  current_snapshot_id: Schema.NullOr(Schema.String),
  row_count: Schema.NullOr(Schema.Finite),
  size_bytes: Schema.NullOr(Schema.Finite),
  last_write: Schema.NullOr(LastWrite),
  owner_id: Schema.NullOr(Schema.String),
  format_version: Schema.Finite,
  /** the default partition spec: each field's source column (its name), transform and partition field name */
  partition_spec: Schema.Array(Schema.Struct({ name: Schema.String, source_column: Schema.NullOr(Schema.String), transform: Schema.String })),
  /** the default sort order; empty when the table is unsorted */
  sort_order: Schema.Array(
    Schema.Struct({ source_column: Schema.NullOr(Schema.String), transform: Schema.String, direction: Schema.String, null_order: Schema.String }),
  ),
  properties: Schema.Record(Schema.String, Schema.String),
});
const SnapshotOut = Schema.Struct({
  snapshot_id: Schema.String,
  parent_snapshot_id: Schema.NullOr(Schema.String),
  sequence_number: Schema.NullOr(Schema.Finite),
  committed_at: Schema.String,
  operation: Schema.NullOr(Schema.String),
  schema_id: Schema.NullOr(Schema.Finite),
  is_current: Schema.Boolean,
  summary: Schema.Record(Schema.String, Schema.String),
});
const RefreshReport = Schema.Struct({
  catalog: Schema.String,
  tables_scanned: Schema.Finite,
  tables_updated: Schema.Finite,
  tables_without_totals: Schema.Array(Schema.Struct({ schema: Schema.String, table: Schema.String })),
  removed: Schema.Finite,
  failed: Schema.Array(Schema.Struct({ schema: Schema.String, table: Schema.String, error: Schema.String })),
  refreshed_at: Schema.String,
});
const SampleOut = Schema.Struct({
  query_id: Schema.String,
  rows: Schema.Array(Schema.Record(Schema.String, Schema.Unknown)),
  columns: Schema.Array(Schema.String),
  column_schema: Schema.NullOr(Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String }))),
});

const CatalogParams = Schema.Struct({ workspace: Schema.String, catalog: Schema.String });
const SchemaParams = Schema.Struct({ workspace: Schema.String, catalog: Schema.String, schema: PathName });
const TableParams = Schema.Struct({ workspace: Schema.String, catalog: Schema.String, schema: PathName, table: PathName });

const BASE = '/api/workspaces/:workspace/catalogs/:catalog';

/** The same, for a change: 409 catalog_read_only while a storage migration of the catalog is active. */
async function attachedForWrite(ctx: AppContext, ws: WorkspaceAccess | undefined, ref: string): Promise<{ c: attachments.AttachedCatalog; scope: AttachmentScope }> {
  const found = await attached(ctx, ws, ref);
  await assertCatalogsWritable(ctx.db, [found.c.id]);
  return found;
}

/** The attached catalog with what the workspace may reach in it; 404 when the catalog is not attached. */
async function attached(ctx: AppContext, ws: WorkspaceAccess | undefined, ref: string): Promise<{ c: attachments.AttachedCatalog; scope: AttachmentScope }> {
  const c = await attachments.resolveAttachedCatalog(ctx.db, ws!.workspace.id, ref);
  return { c, scope: await scopeOf(ctx.db, ws!.workspace.id, c) };
}

const ts = (ms: number | bigint) => new Date(Number(ms)).toISOString();
const idText = (v: number | bigint | null | undefined) => (v === null || v === undefined || BigInt(v) === -1n ? null : String(v));

function columnsOf(m: TableMetadata) {
  return currentSchema(m).fields.map((f) => ({ name: f.name, type: icebergToDuckdb(f.type), nullable: !f.required }));
}

/** A field id of the current schema as its column's name (dotted inside structs); null for a dropped column. */
function columnNames(m: TableMetadata): (id: number) => string | null {
  const names = new Map<number, string>();
  const walk = (fields: readonly { id: number; name: string; type: unknown }[], prefix: string) => {
    for (const f of fields) {
      names.set(f.id, prefix + f.name);
      const t = f.type as { type?: string; fields?: { id: number; name: string; type: unknown }[] };
      if (typeof t === 'object' && t.type === 'struct' && t.fields) walk(t.fields, `${prefix}${f.name}.`);
    }
  };
  walk(currentSchema(m).fields, '');
  return (id) => names.get(id) ?? null;
}

/** How the table is laid out: its default partition spec and sort order, and its properties. */
function layoutOf(m: TableMetadata) {
  const name = columnNames(m);
  const spec = m['partition-specs']?.find((s) => s['spec-id'] === m['default-spec-id']);
  const order = m['sort-orders']?.find((o) => o['order-id'] === m['default-sort-order-id']);
  return {
    format_version: m['format-version'],
    partition_spec: (spec?.fields ?? []).map((f) => ({ name: f.name, source_column: name(f['source-id']), transform: f.transform })),
    sort_order: (order?.fields ?? []).map((f) => ({ source_column: name(f['source-id']), transform: f.transform, direction: f.direction, null_order: f['null-order'] })),
    properties: { ...(m.properties ?? {}) },
  };
}

function toTableOut(c: attachments.AttachedCatalog, schema: string, name: string, m: TableMetadata, row: sidecar.SidecarRow | undefined) {
  const live = sidecar.statsOf(m);
  const current = m['current-snapshot-id'] === null ? undefined : m.snapshots.find((s) => BigInt(s['snapshot-id']) === BigInt(m['current-snapshot-id']!));
  // The sidecar knows who wrote through Eider; a newer snapshot means someone wrote by another road (any
  // Iceberg client of the catalog), and then it still tells when and how.
  const fromSidecar = row?.last_write_at
    ? { at: row.last_write_at.toISOString(), user_id: row.last_write_by, query_id: row.last_write_query_id, operation: row.last_write_operation }
    : null;
  const fromSnapshot = current
    ? { at: ts(current['timestamp-ms']), user_id: null, query_id: null, operation: current.summary?.operation ?? null }
    : null;
  const lastWrite =
    fromSidecar && fromSnapshot ? (Date.parse(fromSnapshot.at) > Date.parse(fromSidecar.at) ? fromSnapshot : fromSidecar) : (fromSidecar ?? fromSnapshot);
  const stored = (v: string | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return {
    name,
    schema,
    catalog: c.slug,
    columns: columnsOf(m),
    location: m.location,
    current_snapshot_id: idText(m['current-snapshot-id']),
    row_count: live ? live.rowCount : stored(row?.row_count),
    size_bytes: live ? live.sizeBytes : stored(row?.size_bytes),
    last_write: lastWrite,
    owner_id: row?.owner_id ?? null,
    ...layoutOf(m),
  };
}

function requireSchema(scope: AttachmentScope, schema: string, need: 'read' | 'write') {
  if (!scope.schema(schema, need)) throw notGranted(`schema ${schema}`, need);
}
function requireTable(scope: AttachmentScope, schema: string, table: string, need: 'read' | 'write') {
  if (!scope.table(schema, table, need)) throw notGranted(`table ${schema}.${table}`, need);
}

export const catalogTableRoutes = [
  route({
    method: 'GET',
    path: `${BASE}/schemas`,
    operationId: 'list_catalog_schemas',
    summary: 'Schemas of an attached catalog',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: CatalogParams,
    responses: { 200: Schema.Array(Schema.Struct({ name: Schema.String })), 404: null, 503: null },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attached(ctx, ws, params.catalog);
      const client = catalogClientOf(ctx);
      const namespaces = await viaCatalog('catalog', () => client.listNamespaces(warehouses.warehouseName(c)));
      const names = namespaces.map((ns) => ns.join('.')).filter((n) => scope.seesSchema(n));
      return { status: 200, body: names.sort().map((name) => ({ name })) };
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/schemas`,
    operationId: 'create_catalog_schema',
    summary: 'Create a schema (an Iceberg namespace); 409 when it exists',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'writer' },
    params: CatalogParams,
    body: Schema.Struct({ name: NameSchema }),
    responses: { 201: Schema.Struct({ name: Schema.String }), 403: null, 404: null, 409: null, 503: null },
    handler: async ({ ctx, ws, params, body }) => {
      const { c, scope } = await attachedForWrite(ctx, ws, params.catalog);
      if (!scope.catalog('write')) throw notGranted(`creating schemas in catalog ${c.slug}`, 'write');
      const client = catalogClientOf(ctx);
      await viaCatalog('catalog', () => client.createNamespace(warehouses.warehouseName(c), [body.name]));
      return { status: 201, body: { name: body.name } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/schemas/:schema`,
    operationId: 'delete_catalog_schema',
    summary: 'Drop an empty schema; 409 schema_not_empty while it holds tables',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'writer' },
    params: SchemaParams,
    responses: { 204: null, 403: null, 404: null, 409: null, 503: null },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attachedForWrite(ctx, ws, params.catalog);
      requireSchema(scope, params.schema, 'write');
      const client = catalogClientOf(ctx);
      try {
        await client.dropNamespace(warehouses.warehouseName(c), [params.schema]);
      } catch (e) {
        const err = warehouses.fromCatalogService(e, 'schema');
        if (err instanceof AppError && err.status === 409) throw conflict(`schema ${params.schema} is not empty`, 'schema_not_empty');
        throw err;
      }
      await sidecar.forgetSchema(ctx.db, c.id, params.schema);
      return { status: 204 };
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/schemas/:schema/tables`,
    operationId: 'list_catalog_tables',
    summary: 'Every table of a schema (unpaged)',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: SchemaParams,
    responses: { 200: Schema.Array(Schema.Struct({ name: Schema.String, table_type: Schema.String })), 403: null, 404: null, 503: null },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attached(ctx, ws, params.catalog);
      if (!scope.seesSchema(params.schema)) throw notGranted(`schema ${params.schema}`, 'read');
      const client = catalogClientOf(ctx);
      const names = await viaCatalog('schema', () => client.listTables(warehouses.warehouseName(c), [params.schema]));
      const visible = names.filter((t) => scope.table(params.schema, t, 'read')).sort();
      // The catalog service holds Iceberg tables only (no views).
      return { status: 200, body: visible.map((name) => ({ name, table_type: 'table' })) };
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/schemas/:schema/tables`,
    operationId: 'create_catalog_table',
    summary: 'Create an empty table from columns typed as DuckDB spells types; 409 when it exists',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'writer' },
    params: SchemaParams,
    body: Schema.Struct({
      name: NameSchema,
      columns: Schema.Array(
        Schema.Struct({
          name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)),
          type: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4096)),
          nullable: Schema.optionalKey(Schema.Boolean),
        }),
      ).check(Schema.isMinLength(1), Schema.isMaxLength(4000)),
    }),
    responses: { 201: TableOut, 403: null, 404: null, 409: null, 422: null, 503: null },
    handler: async ({ ctx, principal, ws, params, body }) => {
      const { c, scope } = await attachedForWrite(ctx, ws, params.catalog);
      requireSchema(scope, params.schema, 'write');
      const seen = new Set<string>();
      for (const [i, col] of body.columns.entries()) {
        const key = col.name.toLowerCase();
        if (seen.has(key)) throw unprocessable(`column ${col.name} appears twice`, 'unprocessable_content', { fields: [{ field: `columns.${i}.name`, in: 'body', message: 'duplicate' }] });
        seen.add(key);
      }
      let icebergSchema;
      try {
        icebergSchema = schemaFromColumns((body.columns as Array<{ name: string; type: string; nullable?: boolean }>).map((col) => ({ name: col.name, type: col.type, nullable: col.nullable ?? true })));
      } catch (e) {
        if (e instanceof TypeMappingError) throw unprocessable(e.message, 'unprocessable_content', { fields: [{ field: 'columns', in: 'body', message: e.message }] });
        throw e;
      }
      const client = catalogClientOf(ctx);
      const created = await viaCatalog('schema', () =>
        client.createTable<TableMetadata>(warehouses.warehouseName(c), [params.schema], { name: body.name, schema: { ...icebergSchema, 'schema-id': 0 } }),
      );
      await sidecar.recordTableCreated(ctx.db, { catalogId: c.id, schema: params.schema, table: body.name, ownerId: principal.user.id });
      const row = await sidecar.getSidecar(ctx.db, c.id, params.schema, body.name);
      return { status: 201, body: toTableOut(c, params.schema, body.name, created.metadata, row) };
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/schemas/:schema/tables/:table`,
    operationId: 'get_catalog_table',
    summary: 'A table: columns, location, current snapshot, row and size stats, last write',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: TableParams,
    responses: { 200: TableOut, 403: null, 404: null, 503: null },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attached(ctx, ws, params.catalog);
      requireTable(scope, params.schema, params.table, 'read');
      const client = catalogClientOf(ctx);
      const loaded = await viaCatalog('table', () => client.loadTable<TableMetadata>(warehouses.warehouseName(c), [params.schema], params.table));
      const row = await sidecar.getSidecar(ctx.db, c.id, params.schema, params.table);
      return { status: 200, body: toTableOut(c, params.schema, params.table, loaded.metadata, row) };
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/schemas/:schema/tables/:table/health`,
    operationId: 'get_catalog_table_health',
    summary: 'A table’s health from the last maintenance scan: score, grade, per-dimension scores (404 before a scan)',
    tags: ['catalogs', 'maintenance'],
    access: { kind: 'workspace', role: 'reader' },
    params: TableParams,
    responses: {
      200: HealthOutSchema,
      403: null,
      404: null,
    },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attached(ctx, ws, params.catalog);
      requireTable(scope, params.schema, params.table, 'read');
      const health = await tableHealth(ctx.db, { catalogId: c.id, schema: params.schema, table: params.table });
      if (!health) throw notFound('table health (the table has not been scanned yet)');
      return { status: 200, body: health };
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/schemas/:schema/tables/:table/column-stats`,
    operationId: 'get_catalog_table_column_stats',
    summary: 'Per-column value, null and NaN counts, sizes and lower/upper bounds of the current snapshot, from its manifests',
    description: `Summed over the live data files of the current snapshot as their manifests record them (no data file is read); at most ${COLUMN_STATS_MAX_MANIFESTS} manifests are read, and \`files_read\` < \`data_files\` says the figures are partial. Counts are before row-level deletes (\`delete_files\`).`,
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: TableParams,
    responses: { 200: ColumnStatsOutSchema, 403: null, 404: null, 502: null, 503: null },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attached(ctx, ws, params.catalog);
      requireTable(scope, params.schema, params.table, 'read');
      const client = catalogClientOf(ctx);
      return { status: 200, body: await viaCatalog('table', () => tableColumnStats(client, warehouses.warehouseName(c), params.schema, params.table)) };
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/schemas/:schema/tables/:table`,
    operationId: 'delete_catalog_table',
    summary: 'Drop a table and purge its files',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'writer' },
    params: TableParams,
    responses: { 204: null, 403: null, 404: null, 409: null, 503: null },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attachedForWrite(ctx, ws, params.catalog);
      requireTable(scope, params.schema, params.table, 'write');
      const client = catalogClientOf(ctx);
      await viaCatalog('table', () => client.dropTable(warehouses.warehouseName(c), [params.schema], params.table, { purge: true }));
      await sidecar.forgetTable(ctx.db, c.id, params.schema, params.table);
      await markTableDropped(ctx.db, c.slug, params.schema, params.table);
      await dropTableLineage(ctx.db, { catalog: c.slug, schema: params.schema, table: params.table });
      return { status: 204 };
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/schemas/:schema/tables/:table/snapshots`,
    operationId: 'list_catalog_table_snapshots',
    summary: 'Every snapshot of a table, newest first (ids are 64-bit: strings)',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: TableParams,
    responses: { 200: Schema.Array(SnapshotOut), 403: null, 404: null, 503: null },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attached(ctx, ws, params.catalog);
      requireTable(scope, params.schema, params.table, 'read');
      const client = catalogClientOf(ctx);
      const { metadata: m } = await viaCatalog('table', () => client.loadTable<TableMetadata>(warehouses.warehouseName(c), [params.schema], params.table));
      const current = idText(m['current-snapshot-id']);
      const out = m.snapshots
        .map((s) => ({
          snapshot_id: String(s['snapshot-id']),
          parent_snapshot_id: idText(s['parent-snapshot-id']),
          sequence_number: s['sequence-number'] === undefined ? null : Number(s['sequence-number']),
          committed_at: ts(s['timestamp-ms']),
          operation: s.summary?.operation ?? null,
          schema_id: s['schema-id'] ?? null,
          is_current: String(s['snapshot-id']) === current,
          summary: s.summary ?? {},
          order: BigInt(s['timestamp-ms']),
        }))
        .sort((a, b) => (a.order === b.order ? 0 : a.order > b.order ? -1 : 1))
        .map(({ order: _o, ...rest }) => rest);
      return { status: 200, body: out };
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/refresh-stats`,
    operationId: 'refresh_catalog_stats',
    summary: 'Recount row and size stats of every reachable table from its metadata into the sidecar (a report)',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'writer' },
    params: CatalogParams,
    responses: { 200: RefreshReport, 404: null, 503: null },
    handler: async ({ ctx, ws, params }) => {
      const { c, scope } = await attached(ctx, ws, params.catalog);
      const client = catalogClientOf(ctx);
      return { status: 200, body: await viaCatalog('catalog', () => sidecar.refreshStats(ctx.db, client, c, scope)) };
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/schemas/:schema/tables/:table/sample`,
    operationId: 'get_catalog_table_sample',
    summary: 'The first rows of a table, read by the agent named in agent_id (a hidden query of origin sample)',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: TableParams,
    query: Schema.Struct({
      agent_id: Schema.optionalKey(Schema.String),
      limit: Limit,
    }),
    responses: { 200: SampleOut, 403: null, 404: null, 422: null, 502: null, 503: null, 504: null },
    handler: async ({ ctx, principal, ws, params, query }) => {
      const { c, scope } = await attached(ctx, ws, params.catalog);
      requireTable(scope, params.schema, params.table, 'read');
      const body = await sampleTable(ctx, {
        principal,
        ws: ws!,
        catalog: c.slug,
        schema: params.schema,
        table: params.table,
        agentId: query.agent_id,
        limit: query.limit ?? 100,
        waitS: Math.max(1, Math.min(30, ctx.config.SQL_STATEMENT_MAX_WAIT_TIMEOUT_S)),
      });
      return { status: 200, body };
    },
  }),
];
