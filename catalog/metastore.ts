// SQL over the catalog metastore (schema `catalog`, migrations/catalog/). Functions take a Queryable so that
// callers choose the transaction; they translate constraint violations into the REST exceptions.
import { isUniqueViolation, DbError, type Queryable } from '../runtime/db.ts';
import { alreadyExists, namespaceNotEmpty, noSuchNamespace, noSuchWarehouse, CatalogError } from './errors.ts';
import type { VendingMode } from '../iceberg/vendedStorage.ts';

/** Namespace levels travel joined by U+001F in REST paths; the metastore keys them the same way. */
export const NS_SEP = '\u001f';
export const nsKey = (ns: readonly string[]) => ns.join(NS_SEP);
export const nsLevels = (key: string) => key.split(NS_SEP);

export type WarehouseKind = 'object_store' | 's3' | 'azure';

export interface Warehouse {
  name: string;
  rootUri: string;
  kind: WarehouseKind;
  endpoint: string | null;
  region: string;
  accessKeyId: string;
  /** As stored: sealed with SECRET_KEY when the service has one (WarehouseStorage.secretOf opens it). */
  secretAccessKey: string;
  pathStyle: boolean;
  vending: VendingMode;
  /** sts vending: the IAM role AssumeRole assumes (AWS requires one); null: none sent (MinIO-like stores). */
  roleArn: string | null;
  /** A storage migration is copying the warehouse: commits are refused. */
  readOnly: boolean;
  credentialEpoch: number;
  createdAt: string;
}

const warehouseColumns = `name, root_uri, kind, endpoint, region, access_key_id, secret_access_key, path_style, vending, role_arn, read_only, credential_epoch, created_at`;

function toWarehouse(r: any): Warehouse {
  return {
    name: r.name,
    rootUri: r.root_uri,
    kind: r.kind,
    endpoint: r.endpoint,
    region: r.region,
    accessKeyId: r.access_key_id,
    secretAccessKey: r.secret_access_key,
    pathStyle: r.path_style,
    vending: r.vending,
    roleArn: r.role_arn ?? null,
    readOnly: r.read_only === true,
    credentialEpoch: Number(r.credential_epoch),
    createdAt: new Date(r.created_at).toISOString(),
  };
}

export type WarehouseInput = Omit<Warehouse, 'credentialEpoch' | 'createdAt' | 'readOnly'>;

export async function insertWarehouse(q: Queryable, w: WarehouseInput): Promise<Warehouse> {
  try {
    const rows = await q.query(
      `insert into catalog.warehouses (name, root_uri, kind, endpoint, region, access_key_id, secret_access_key, path_style, vending, role_arn)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning ${warehouseColumns}`,
      [w.name, w.rootUri, w.kind, w.endpoint, w.region, w.accessKeyId, w.secretAccessKey, w.pathStyle, w.vending, w.roleArn],
    );
    return toWarehouse(rows[0]);
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(`Warehouse ${w.name}`);
    throw e;
  }
}

export async function findWarehouse(q: Queryable, name: string, forUpdate = false): Promise<Warehouse | undefined> {
  const rows = await q.query(`select ${warehouseColumns} from catalog.warehouses where name = $1${forUpdate ? ' for update' : ''}`, [name]);
  return rows[0] ? toWarehouse(rows[0]) : undefined;
}

export async function getWarehouse(q: Queryable, name: string, forUpdate = false): Promise<Warehouse> {
  const w = await findWarehouse(q, name, forUpdate);
  if (!w) throw noSuchWarehouse(name);
  return w;
}

export async function listWarehouses(q: Queryable): Promise<Warehouse[]> {
  return (await q.query(`select ${warehouseColumns} from catalog.warehouses order by name`)).map(toWarehouse);
}

export async function updateWarehouseConnection(
  q: Queryable,
  name: string,
  patch: Partial<Pick<Warehouse, 'endpoint' | 'region' | 'accessKeyId' | 'secretAccessKey' | 'pathStyle' | 'rootUri' | 'kind' | 'vending' | 'roleArn'>>,
  opts: { relocating?: boolean } = {},
): Promise<Warehouse> {
  const current = await getWarehouse(q, name, true);
  const next = { ...current, ...patch };
  if (next.rootUri !== current.rootUri && !opts.relocating) {
    const [{ n }] = await q.query<{ n: string }>(`select count(*) as n from catalog.tables where warehouse = $1`, [name]);
    if (Number(n) > 0) {
      throw new CatalogError(409, 'WarehouseNotEmptyException', `Warehouse ${name} has tables: its root_uri changes only through a storage migration`);
    }
  }
  const rows = await q.query(
    `update catalog.warehouses set root_uri = $2, kind = $3, endpoint = $4, region = $5, access_key_id = $6,
       secret_access_key = $7, path_style = $8, vending = $9, role_arn = $10, credential_epoch = credential_epoch + 1
     where name = $1 returning ${warehouseColumns}`,
    [name, next.rootUri, next.kind, next.endpoint, next.region, next.accessKeyId, next.secretAccessKey, next.pathStyle, next.vending, next.kind === 'azure' ? null : next.roleArn],
  );
  return toWarehouse(rows[0]);
}

/**
 * Refuses a change while a storage migration copies the warehouse. FOR SHARE: a commit holding it finishes before
 * the migration's `setWarehouseReadOnly` (an UPDATE of the row) can land, so nothing commits after the copy read.
 */
export async function assertWritable(q: Queryable, name: string): Promise<void> {
  const rows = await q.query<{ read_only: boolean }>(`select read_only from catalog.warehouses where name = $1 for share`, [name]);
  if (rows[0]?.read_only) throw readOnlyWarehouse(name);
}

export const readOnlyWarehouse = (name: string) =>
  new CatalogError(403, 'ForbiddenException', `Warehouse ${name} is read-only while a storage migration copies it; writes resume after the cutover`);

/** Sets or clears the storage migration's read-only mark (commits refused while it is set). */
export async function setWarehouseReadOnly(q: Queryable, name: string, readOnly: boolean): Promise<Warehouse> {
  const rows = await q.query(`update catalog.warehouses set read_only = $2 where name = $1 returning ${warehouseColumns}`, [name, readOnly]);
  if (!rows.length) throw noSuchWarehouse(name);
  return toWarehouse(rows[0]);
}

/** Rows whose secret predates sealing (no sealing prefix): sealed in place at start by the service. */
export async function resealWarehouseSecrets(q: Queryable, seal: (stored: string) => string | null): Promise<number> {
  const rows = await q.query<{ name: string; secret_access_key: string }>(`select name, secret_access_key from catalog.warehouses`);
  let n = 0;
  for (const r of rows) {
    const sealed = seal(r.secret_access_key);
    if (sealed === null) continue;
    await q.query(`update catalog.warehouses set secret_access_key = $2 where name = $1 and secret_access_key = $3`, [r.name, sealed, r.secret_access_key]);
    n++;
  }
  return n;
}

/** The warehouse's tables, locked (a relocation checks and moves them all in its transaction). */
export async function lockWarehouseTables(q: Queryable, warehouse: string): Promise<Array<{ namespace: string[]; name: string; metadataLocation: string }>> {
  const rows = await q.query<{ namespace: string; name: string; metadata_location: string }>(
    `select namespace, name, metadata_location from catalog.tables where warehouse = $1 order by namespace, name for update`,
    [warehouse],
  );
  return rows.map((r) => ({ namespace: nsLevels(r.namespace), name: r.name, metadataLocation: r.metadata_location }));
}

/** Points a table at its metadata file under a new root (a storage migration's cutover; the old file is not its history). */
export async function relocateTable(q: Queryable, warehouse: string, ns: readonly string[], name: string, metadataLocation: string, metadataJson: string): Promise<void> {
  await q.query(
    `update catalog.tables set metadata_location = $4, previous_metadata_location = null, metadata_json = $5, updated_at = now()
      where warehouse = $1 and namespace = $2 and name = $3`,
    [warehouse, nsKey(ns), name, metadataLocation, metadataJson],
  );
}

export async function deleteWarehouse(q: Queryable, name: string): Promise<void> {
  const [{ n }] = await q.query<{ n: string }>(`select count(*) as n from catalog.namespaces where warehouse = $1`, [name]);
  if (Number(n) > 0) throw new CatalogError(409, 'WarehouseNotEmptyException', `Warehouse ${name} still has namespaces`);
  const rows = await q.query(`delete from catalog.warehouses where name = $1 returning name`, [name]);
  if (!rows.length) throw noSuchWarehouse(name);
}

export async function bumpCredentialEpoch(q: Queryable, name: string): Promise<number> {
  const rows = await q.query<{ credential_epoch: number }>(
    `update catalog.warehouses set credential_epoch = credential_epoch + 1 where name = $1 returning credential_epoch`,
    [name],
  );
  if (!rows.length) throw noSuchWarehouse(name);
  return Number(rows[0].credential_epoch);
}

export async function revokeCredential(q: Queryable, accessKeyId: string, warehouse: string, expiresAt: Date): Promise<void> {
  await q.query(
    `insert into catalog.revoked_credentials (access_key_id, warehouse, expires_at) values ($1, $2, $3)
     on conflict (access_key_id) do nothing`,
    [accessKeyId, warehouse, expiresAt.toISOString()],
  );
  await q.query(`delete from catalog.revoked_credentials where expires_at < now() - interval '1 day'`);
}

/** True when a vended key must be refused: warehouse gone, epoch bumped since issue, or key revoked. */
export async function isCredentialRevoked(q: Queryable, warehouse: string, epoch: number, accessKeyId: string): Promise<boolean> {
  const rows = await q.query<{ credential_epoch: number; revoked: boolean }>(
    `select w.credential_epoch,
            exists (select 1 from catalog.revoked_credentials r where r.access_key_id = $2) as revoked
       from catalog.warehouses w where w.name = $1`,
    [warehouse, accessKeyId],
  );
  const row = rows[0];
  return !row || Number(row.credential_epoch) !== epoch || row.revoked === true;
}

// ---------------------------------------------------------------------------------------------------------------
// Namespaces

export interface NamespaceRow {
  namespace: string[];
  properties: Record<string, string>;
}

export async function createNamespace(q: Queryable, warehouse: string, ns: readonly string[], properties: Record<string, string>): Promise<void> {
  if (ns.length > 1) {
    const parent = await q.query(`select 1 from catalog.namespaces where warehouse = $1 and namespace = $2`, [warehouse, nsKey(ns.slice(0, -1))]);
    if (!parent.length) throw noSuchNamespace(ns.slice(0, -1));
  }
  try {
    await q.query(`insert into catalog.namespaces (warehouse, namespace, depth, properties) values ($1, $2, $3, $4)`, [
      warehouse,
      nsKey(ns),
      ns.length,
      JSON.stringify(properties),
    ]);
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(`Namespace ${ns.join('.')}`);
    if (e instanceof DbError && e.code === '23503') throw noSuchWarehouse(warehouse);
    throw e;
  }
}

export async function findNamespace(q: Queryable, warehouse: string, ns: readonly string[], forUpdate = false): Promise<NamespaceRow | undefined> {
  const rows = await q.query<{ properties: string }>(
    `select properties from catalog.namespaces where warehouse = $1 and namespace = $2${forUpdate ? ' for update' : ''}`,
    [warehouse, nsKey(ns)],
  );
  return rows[0] ? { namespace: [...ns], properties: JSON.parse(rows[0].properties) } : undefined;
}

export async function getNamespace(q: Queryable, warehouse: string, ns: readonly string[], forUpdate = false): Promise<NamespaceRow> {
  const row = await findNamespace(q, warehouse, ns, forUpdate);
  if (!row) throw noSuchNamespace(ns);
  return row;
}

export async function setNamespaceProperties(q: Queryable, warehouse: string, ns: readonly string[], properties: Record<string, string>): Promise<void> {
  await q.query(`update catalog.namespaces set properties = $3 where warehouse = $1 and namespace = $2`, [
    warehouse,
    nsKey(ns),
    JSON.stringify(properties),
  ]);
}

/** Namespaces directly under `parent` (top level when empty), after `after` in key order. */
export async function listNamespaces(q: Queryable, warehouse: string, parent: readonly string[], after: string | undefined, limit: number): Promise<string[][]> {
  const prefix = parent.length ? nsKey(parent) + NS_SEP : '';
  const rows = await q.query<{ namespace: string }>(
    `select namespace from catalog.namespaces
      where warehouse = $1 and depth = $2 and starts_with(namespace, $3) and namespace > $4
      order by namespace limit $5`,
    [warehouse, parent.length + 1, prefix, after ?? '', limit],
  );
  return rows.map((r) => nsLevels(r.namespace));
}

export async function deleteNamespace(q: Queryable, warehouse: string, ns: readonly string[]): Promise<void> {
  const key = nsKey(ns);
  const busy = await q.query(
    `select 1 from catalog.tables where warehouse = $1 and namespace = $2
     union all
     select 1 from catalog.namespaces where warehouse = $1 and starts_with(namespace, $3)
     limit 1`,
    [warehouse, key, key + NS_SEP],
  );
  if (busy.length) throw namespaceNotEmpty(ns);
  const rows = await q.query(`delete from catalog.namespaces where warehouse = $1 and namespace = $2 returning namespace`, [warehouse, key]);
  if (!rows.length) throw noSuchNamespace(ns);
}

// ---------------------------------------------------------------------------------------------------------------
// Tables

export interface TableRow {
  warehouse: string;
  namespace: string[];
  name: string;
  tableUuid: string;
  metadataLocation: string;
  previousMetadataLocation: string | null;
  metadataJson: string;
}

function toTable(r: any): TableRow {
  return {
    warehouse: r.warehouse,
    namespace: nsLevels(r.namespace),
    name: r.name,
    tableUuid: r.table_uuid,
    metadataLocation: r.metadata_location,
    previousMetadataLocation: r.previous_metadata_location,
    metadataJson: r.metadata_json,
  };
}

const tableColumns = `warehouse, namespace, name, table_uuid::text as table_uuid, metadata_location, previous_metadata_location, metadata_json`;

/** The table row; with `forUpdate` it stays locked until the transaction ends (commits serialize on it). */
export async function findTable(q: Queryable, warehouse: string, ns: readonly string[], name: string, forUpdate = false): Promise<TableRow | undefined> {
  const rows = await q.query(
    `select ${tableColumns} from catalog.tables where warehouse = $1 and namespace = $2 and name = $3${forUpdate ? ' for update' : ''}`,
    [warehouse, nsKey(ns), name],
  );
  return rows[0] ? toTable(rows[0]) : undefined;
}

/**
 * The column count of each named table's current schema, read from the stored metadata in one statement (PostgreSQL
 * parses the JSON: no snapshot id goes through a JavaScript number). Tables that do not exist are left out.
 */
export async function columnCounts(
  q: Queryable,
  warehouse: string,
  tables: ReadonlyArray<{ namespace: readonly string[]; name: string }>,
): Promise<Array<{ namespace: string[]; name: string; column_count: number }>> {
  if (tables.length === 0) return [];
  const rows = await q.query<{ namespace: string; name: string; n: number | null }>(
    `select t.namespace, t.name,
            (select jsonb_array_length(coalesce(
               (select s -> 'fields' from jsonb_array_elements(m -> 'schemas') s where s -> 'schema-id' = m -> 'current-schema-id' limit 1),
               m -> 'schema' -> 'fields'))) as n
       from catalog.tables t
       join unnest($2::text[], $3::text[]) w(namespace, name) on w.namespace = t.namespace and w.name = t.name,
            lateral (select t.metadata_json::jsonb as m) j
      where t.warehouse = $1`,
    [warehouse, tables.map((t) => nsKey(t.namespace)), tables.map((t) => t.name)],
  );
  return rows.map((r) => ({ namespace: r.namespace.split(NS_SEP), name: r.name, column_count: r.n ?? 0 }));
}

export async function findTableLocation(q: Queryable, warehouse: string, ns: readonly string[], name: string): Promise<string | undefined> {
  const rows = await q.query<{ metadata_location: string }>(
    `select metadata_location from catalog.tables where warehouse = $1 and namespace = $2 and name = $3`,
    [warehouse, nsKey(ns), name],
  );
  return rows[0]?.metadata_location;
}

export async function insertTable(q: Queryable, t: Omit<TableRow, 'previousMetadataLocation'>): Promise<void> {
  try {
    await q.query(
      `insert into catalog.tables (warehouse, namespace, name, table_uuid, metadata_location, metadata_json)
       values ($1, $2, $3, $4, $5, $6)`,
      [t.warehouse, nsKey(t.namespace), t.name, t.tableUuid, t.metadataLocation, t.metadataJson],
    );
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(`Table ${[...t.namespace, t.name].join('.')}`);
    if (e instanceof DbError && e.code === '23503') throw noSuchNamespace(t.namespace);
    throw e;
  }
}

export async function updateTableMetadata(q: Queryable, t: TableRow, metadataLocation: string, metadataJson: string): Promise<void> {
  await q.query(
    `update catalog.tables set metadata_location = $4, previous_metadata_location = $5, metadata_json = $6, updated_at = now()
     where warehouse = $1 and namespace = $2 and name = $3`,
    [t.warehouse, nsKey(t.namespace), t.name, metadataLocation, t.metadataLocation, metadataJson],
  );
}

/** A table's pointer as a commit starts from it, with its warehouse's read-only mark. */
export interface CommitBase {
  metadataLocation: string;
  /** Null when the pointer is still `known` (the caller holds that file parsed: its text need not travel). */
  metadataJson: string | null;
  readOnly: boolean;
}

export async function findCommitBase(q: Queryable, warehouse: string, ns: readonly string[], name: string, known: string | null): Promise<CommitBase | undefined> {
  const rows = await q.query<{ metadata_location: string; metadata_json: string | null; read_only: boolean }>(
    `select t.metadata_location, case when t.metadata_location = $4 then null else t.metadata_json end as metadata_json, w.read_only
       from catalog.tables t join catalog.warehouses w on w.name = t.warehouse
      where t.warehouse = $1 and t.namespace = $2 and t.name = $3`,
    [warehouse, nsKey(ns), name, known ?? ''],
  );
  const r = rows[0];
  return r ? { metadataLocation: r.metadata_location, metadataJson: r.metadata_json, readOnly: r.read_only === true } : undefined;
}

/**
 * Moves the pointer from `expected` to `next` only if it is still at `expected` and the warehouse is writable:
 * one statement, so one transaction and one round trip. FOR SHARE on the warehouse row, as `assertWritable`: a
 * storage migration's read-only mark waits for this commit, or this commit sees the mark and moves nothing.
 * False when nothing moved (the pointer moved on, the table is gone, or the warehouse is read-only).
 */
export async function swapTableMetadata(
  q: Queryable,
  warehouse: string,
  ns: readonly string[],
  name: string,
  expected: string,
  next: string,
  metadataJson: string,
): Promise<boolean> {
  const rows = await q.query(
    `with writable as (select 1 from catalog.warehouses where name = $1 and not read_only for share)
     update catalog.tables set metadata_location = $5, previous_metadata_location = $4, metadata_json = $6, updated_at = now()
      where warehouse = $1 and namespace = $2 and name = $3 and metadata_location = $4 and exists (select 1 from writable)
     returning 1 as moved`,
    [warehouse, nsKey(ns), name, expected, next, metadataJson],
  );
  return rows.length > 0;
}

export async function deleteTableRow(q: Queryable, warehouse: string, ns: readonly string[], name: string): Promise<TableRow | undefined> {
  const rows = await q.query(
    `delete from catalog.tables where warehouse = $1 and namespace = $2 and name = $3 returning ${tableColumns}`,
    [warehouse, nsKey(ns), name],
  );
  return rows[0] ? toTable(rows[0]) : undefined;
}

export async function listTables(q: Queryable, warehouse: string, ns: readonly string[], after: string | undefined, limit: number): Promise<string[]> {
  const rows = await q.query<{ name: string }>(
    `select name from catalog.tables where warehouse = $1 and namespace = $2 and name > $3 order by name limit $4`,
    [warehouse, nsKey(ns), after ?? '', limit],
  );
  return rows.map((r) => r.name);
}

export async function renameTable(
  q: Queryable,
  warehouse: string,
  from: { namespace: readonly string[]; name: string },
  to: { namespace: readonly string[]; name: string },
): Promise<boolean> {
  try {
    const rows = await q.query(
      `update catalog.tables set namespace = $4, name = $5, updated_at = now()
       where warehouse = $1 and namespace = $2 and name = $3 returning name`,
      [warehouse, nsKey(from.namespace), from.name, nsKey(to.namespace), to.name],
    );
    return rows.length > 0;
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(`Table ${[...to.namespace, to.name].join('.')}`);
    if (e instanceof DbError && e.code === '23503') throw noSuchNamespace(to.namespace);
    throw e;
  }
}
