// SQL over the catalog metastore (schema `catalog`, migrations/catalog/), written as the api writes its own: `sql`
// templates whose values are bind parameters, rows decoded by a Schema at the boundary (runtime/sql.ts). Functions
// take a Queryable so that callers choose the transaction; they translate constraint violations into the REST
// exceptions.
import { Schema } from 'effect';
import { isUniqueViolation, DbError, type Queryable } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { alreadyExists, namespaceNotEmpty, noSuchNamespace, noSuchWarehouse, CatalogError } from './errors.ts';
import { VENDING_MODES, type VendingMode } from '../iceberg/vendedStorage.ts';

/** Namespace levels travel joined by U+001F in REST paths; the metastore keys them the same way. */
export const NS_SEP = '\u001f';
export const nsKey = (ns: readonly string[]) => ns.join(NS_SEP);
const nsLevels = (key: string) => key.split(NS_SEP);

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

const WAREHOUSE_COLUMNS = sql`name, root_uri, kind, endpoint, region, access_key_id, secret_access_key, path_style, vending, role_arn, read_only, credential_epoch, created_at`;

const WarehouseRow = Schema.Struct({
  name: Schema.String,
  root_uri: Schema.String,
  kind: Schema.Literals(['object_store', 's3', 'azure']),
  endpoint: Schema.NullOr(Schema.String),
  region: Schema.String,
  access_key_id: Schema.String,
  secret_access_key: Schema.String,
  path_style: Schema.Boolean,
  vending: Schema.Literals(VENDING_MODES),
  role_arn: Schema.NullOr(Schema.String),
  read_only: Schema.Boolean,
  credential_epoch: Schema.Finite,
  created_at: Schema.Date,
});

const warehouses = async (q: Queryable, statement: ReturnType<typeof sql>) => (await rows(q, WarehouseRow, statement)).map(toWarehouse);

function toWarehouse(r: typeof WarehouseRow.Type): Warehouse {
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
    roleArn: r.role_arn,
    readOnly: r.read_only,
    credentialEpoch: r.credential_epoch,
    createdAt: r.created_at.toISOString(),
  };
}

const Count = Schema.Struct({ n: Schema.Finite });
const ReadOnlyRow = Schema.Struct({ read_only: Schema.Boolean });

export type WarehouseInput = Omit<Warehouse, 'credentialEpoch' | 'createdAt' | 'readOnly'>;

export async function insertWarehouse(q: Queryable, w: WarehouseInput): Promise<Warehouse> {
  try {
    const [inserted] = await warehouses(
      q,
      sql`insert into catalog.warehouses (name, root_uri, kind, endpoint, region, access_key_id, secret_access_key, path_style, vending, role_arn)
          values (${w.name}, ${w.rootUri}, ${w.kind}, ${w.endpoint}, ${w.region}, ${w.accessKeyId}, ${w.secretAccessKey}, ${w.pathStyle}, ${w.vending}, ${w.roleArn})
          returning ${WAREHOUSE_COLUMNS}`,
    );
    return inserted;
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(`Warehouse ${w.name}`);
    throw e;
  }
}

export async function findWarehouse(q: Queryable, name: string, forUpdate = false): Promise<Warehouse | undefined> {
  return (await warehouses(q, sql`select ${WAREHOUSE_COLUMNS} from catalog.warehouses where name = ${name} ${forUpdate ? sql`for update` : sql``}`))[0];
}

export async function getWarehouse(q: Queryable, name: string, forUpdate = false): Promise<Warehouse> {
  const w = await findWarehouse(q, name, forUpdate);
  if (!w) throw noSuchWarehouse(name);
  return w;
}

export async function listWarehouses(q: Queryable): Promise<Warehouse[]> {
  return warehouses(q, sql`select ${WAREHOUSE_COLUMNS} from catalog.warehouses order by name`);
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
    const [{ n }] = await rows(q, Count, sql`select count(*)::int as n from catalog.tables where warehouse = ${name}`);
    if (n > 0) {
      throw new CatalogError(409, 'WarehouseNotEmptyException', `Warehouse ${name} has tables: its root_uri changes only through a storage migration`);
    }
  }
  const [updated] = await warehouses(
    q,
    sql`update catalog.warehouses set root_uri = ${next.rootUri}, kind = ${next.kind}, endpoint = ${next.endpoint}, region = ${next.region},
          access_key_id = ${next.accessKeyId}, secret_access_key = ${next.secretAccessKey}, path_style = ${next.pathStyle},
          vending = ${next.vending}, role_arn = ${next.kind === 'azure' ? null : next.roleArn}, credential_epoch = credential_epoch + 1
        where name = ${name} returning ${WAREHOUSE_COLUMNS}`,
  );
  return updated;
}

/**
 * Refuses a change while a storage migration copies the warehouse. FOR SHARE: a commit holding it finishes before
 * the migration's `setWarehouseReadOnly` (an UPDATE of the row) can land, so nothing commits after the copy read.
 */
export async function assertWritable(q: Queryable, name: string): Promise<void> {
  const [row] = await rows(q, ReadOnlyRow, sql`select read_only from catalog.warehouses where name = ${name} for share`);
  if (row?.read_only) throw readOnlyWarehouse(name);
}

export const readOnlyWarehouse = (name: string) =>
  new CatalogError(403, 'ForbiddenException', `Warehouse ${name} is read-only while a storage migration copies it; writes resume after the cutover`);

/** Sets or clears the storage migration's read-only mark (commits refused while it is set). */
export async function setWarehouseReadOnly(q: Queryable, name: string, readOnly: boolean): Promise<Warehouse> {
  const [updated] = await warehouses(q, sql`update catalog.warehouses set read_only = ${readOnly} where name = ${name} returning ${WAREHOUSE_COLUMNS}`);
  if (!updated) throw noSuchWarehouse(name);
  return updated;
}

/** Rows whose secret predates sealing (no sealing prefix): sealed in place at start by the service. */
export async function resealWarehouseSecrets(q: Queryable, seal: (stored: string) => string | null): Promise<number> {
  const stored = await rows(q, Schema.Struct({ name: Schema.String, secret_access_key: Schema.String }), sql`select name, secret_access_key from catalog.warehouses`);
  let n = 0;
  for (const r of stored) {
    const sealed = seal(r.secret_access_key);
    if (sealed === null) continue;
    await exec(q, sql`update catalog.warehouses set secret_access_key = ${sealed} where name = ${r.name} and secret_access_key = ${r.secret_access_key}`);
    n++;
  }
  return n;
}

/** The warehouse's tables, locked (a relocation checks and moves them all in its transaction). */
export async function lockWarehouseTables(q: Queryable, warehouse: string): Promise<Array<{ namespace: string[]; name: string; metadataLocation: string }>> {
  const locked = await rows(
    q,
    Schema.Struct({ namespace: Schema.String, name: Schema.String, metadata_location: Schema.String }),
    sql`select namespace, name, metadata_location from catalog.tables where warehouse = ${warehouse} order by namespace, name for update`,
  );
  return locked.map((r) => ({ namespace: nsLevels(r.namespace), name: r.name, metadataLocation: r.metadata_location }));
}

/** Points a table at its metadata file under a new root (a storage migration's cutover; the old file is not its history). */
export async function relocateTable(q: Queryable, warehouse: string, ns: readonly string[], name: string, metadataLocation: string, metadataJson: string): Promise<void> {
  await exec(
    q,
    sql`update catalog.tables set metadata_location = ${metadataLocation}, previous_metadata_location = null, metadata_json = ${metadataJson}, updated_at = now()
         where warehouse = ${warehouse} and namespace = ${nsKey(ns)} and name = ${name}`,
  );
}

export async function deleteWarehouse(q: Queryable, name: string): Promise<void> {
  const [{ n }] = await rows(q, Count, sql`select count(*)::int as n from catalog.namespaces where warehouse = ${name}`);
  if (n > 0) throw new CatalogError(409, 'WarehouseNotEmptyException', `Warehouse ${name} still has namespaces`);
  if (!(await exec(q, sql`delete from catalog.warehouses where name = ${name} returning name`)).length) throw noSuchWarehouse(name);
}

export async function bumpCredentialEpoch(q: Queryable, name: string): Promise<number> {
  const [row] = await rows(
    q,
    Schema.Struct({ credential_epoch: Schema.Finite }),
    sql`update catalog.warehouses set credential_epoch = credential_epoch + 1 where name = ${name} returning credential_epoch`,
  );
  if (!row) throw noSuchWarehouse(name);
  return row.credential_epoch;
}

export async function revokeCredential(q: Queryable, accessKeyId: string, warehouse: string, expiresAt: Date): Promise<void> {
  await exec(
    q,
    sql`insert into catalog.revoked_credentials (access_key_id, warehouse, expires_at) values (${accessKeyId}, ${warehouse}, ${expiresAt.toISOString()})
        on conflict (access_key_id) do nothing`,
  );
  await exec(q, sql`delete from catalog.revoked_credentials where expires_at < now() - interval '1 day'`);
}

/** True when a vended key must be refused: warehouse gone, epoch bumped since issue, or key revoked. */
export async function isCredentialRevoked(q: Queryable, warehouse: string, epoch: number, accessKeyId: string): Promise<boolean> {
  const [row] = await rows(
    q,
    Schema.Struct({ credential_epoch: Schema.Finite, revoked: Schema.Boolean }),
    sql`select w.credential_epoch, exists (select 1 from catalog.revoked_credentials r where r.access_key_id = ${accessKeyId}) as revoked
          from catalog.warehouses w where w.name = ${warehouse}`,
  );
  return !row || row.credential_epoch !== epoch || row.revoked;
}

// ---------------------------------------------------------------------------------------------------------------
// Namespaces

export interface NamespaceRow {
  namespace: string[];
  properties: Record<string, string>;
}

export async function createNamespace(q: Queryable, warehouse: string, ns: readonly string[], properties: Record<string, string>): Promise<void> {
  if (ns.length > 1) {
    const parent = await exec(q, sql`select 1 from catalog.namespaces where warehouse = ${warehouse} and namespace = ${nsKey(ns.slice(0, -1))}`);
    if (!parent.length) throw noSuchNamespace(ns.slice(0, -1));
  }
  try {
    await exec(
      q,
      sql`insert into catalog.namespaces (warehouse, namespace, depth, properties) values (${warehouse}, ${nsKey(ns)}, ${ns.length}, ${JSON.stringify(properties)})`,
    );
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(`Namespace ${ns.join('.')}`);
    if (e instanceof DbError && e.code === '23503') throw noSuchWarehouse(warehouse);
    throw e;
  }
}

export async function findNamespace(q: Queryable, warehouse: string, ns: readonly string[], forUpdate = false): Promise<NamespaceRow | undefined> {
  const [row] = await rows(
    q,
    Schema.Struct({ properties: Schema.String }),
    sql`select properties from catalog.namespaces where warehouse = ${warehouse} and namespace = ${nsKey(ns)} ${forUpdate ? sql`for update` : sql``}`,
  );
  return row ? { namespace: [...ns], properties: JSON.parse(row.properties) } : undefined;
}

export async function getNamespace(q: Queryable, warehouse: string, ns: readonly string[], forUpdate = false): Promise<NamespaceRow> {
  const row = await findNamespace(q, warehouse, ns, forUpdate);
  if (!row) throw noSuchNamespace(ns);
  return row;
}

export async function setNamespaceProperties(q: Queryable, warehouse: string, ns: readonly string[], properties: Record<string, string>): Promise<void> {
  await exec(q, sql`update catalog.namespaces set properties = ${JSON.stringify(properties)} where warehouse = ${warehouse} and namespace = ${nsKey(ns)}`);
}

/** Namespaces directly under `parent` (top level when empty), after `after` in key order. */
export async function listNamespaces(q: Queryable, warehouse: string, parent: readonly string[], after: string | undefined, limit: number): Promise<string[][]> {
  const prefix = parent.length ? nsKey(parent) + NS_SEP : '';
  const found = await rows(
    q,
    Schema.Struct({ namespace: Schema.String }),
    sql`select namespace from catalog.namespaces
         where warehouse = ${warehouse} and depth = ${parent.length + 1} and starts_with(namespace, ${prefix}) and namespace > ${after ?? ''}
         order by namespace limit ${limit}`,
  );
  return found.map((r) => nsLevels(r.namespace));
}

export async function deleteNamespace(q: Queryable, warehouse: string, ns: readonly string[]): Promise<void> {
  const key = nsKey(ns);
  const busy = await exec(
    q,
    sql`select 1 from catalog.tables where warehouse = ${warehouse} and namespace = ${key}
        union all
        select 1 from catalog.namespaces where warehouse = ${warehouse} and starts_with(namespace, ${key + NS_SEP})
        limit 1`,
  );
  if (busy.length) throw namespaceNotEmpty(ns);
  if (!(await exec(q, sql`delete from catalog.namespaces where warehouse = ${warehouse} and namespace = ${key} returning namespace`)).length) {
    throw noSuchNamespace(ns);
  }
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

const TableRowSchema = Schema.Struct({
  warehouse: Schema.String,
  namespace: Schema.String,
  name: Schema.String,
  table_uuid: Schema.String,
  metadata_location: Schema.String,
  previous_metadata_location: Schema.NullOr(Schema.String),
  metadata_json: Schema.String,
});

const tableRows = async (q: Queryable, statement: ReturnType<typeof sql>) => (await rows(q, TableRowSchema, statement)).map(toTable);

function toTable(r: typeof TableRowSchema.Type): TableRow {
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

const TABLE_COLUMNS = sql`warehouse, namespace, name, table_uuid::text as table_uuid, metadata_location, previous_metadata_location, metadata_json`;

/** The table row; with `forUpdate` it stays locked until the transaction ends (commits serialize on it). */
export async function findTable(q: Queryable, warehouse: string, ns: readonly string[], name: string, forUpdate = false): Promise<TableRow | undefined> {
  return (
    await tableRows(
      q,
      sql`select ${TABLE_COLUMNS} from catalog.tables where warehouse = ${warehouse} and namespace = ${nsKey(ns)} and name = ${name} ${forUpdate ? sql`for update` : sql``}`,
    )
  )[0];
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
  const [row] = await rows(
    q,
    Schema.Struct({ metadata_location: Schema.String }),
    sql`select metadata_location from catalog.tables where warehouse = ${warehouse} and namespace = ${nsKey(ns)} and name = ${name}`,
  );
  return row?.metadata_location;
}

export async function insertTable(q: Queryable, t: Omit<TableRow, 'previousMetadataLocation'>): Promise<void> {
  try {
    await exec(
      q,
      sql`insert into catalog.tables (warehouse, namespace, name, table_uuid, metadata_location, metadata_json)
          values (${t.warehouse}, ${nsKey(t.namespace)}, ${t.name}, ${t.tableUuid}, ${t.metadataLocation}, ${t.metadataJson})`,
    );
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(`Table ${[...t.namespace, t.name].join('.')}`);
    if (e instanceof DbError && e.code === '23503') throw noSuchNamespace(t.namespace);
    throw e;
  }
}

export async function updateTableMetadata(q: Queryable, t: TableRow, metadataLocation: string, metadataJson: string): Promise<void> {
  await exec(
    q,
    sql`update catalog.tables set metadata_location = ${metadataLocation}, previous_metadata_location = ${t.metadataLocation}, metadata_json = ${metadataJson}, updated_at = now()
         where warehouse = ${t.warehouse} and namespace = ${nsKey(t.namespace)} and name = ${t.name}`,
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
  const [r] = await rows(
    q,
    Schema.Struct({ metadata_location: Schema.String, metadata_json: Schema.NullOr(Schema.String), read_only: Schema.Boolean }),
    sql`select t.metadata_location, case when t.metadata_location = ${known ?? ''} then null else t.metadata_json end as metadata_json, w.read_only
          from catalog.tables t join catalog.warehouses w on w.name = t.warehouse
         where t.warehouse = ${warehouse} and t.namespace = ${nsKey(ns)} and t.name = ${name}`,
  );
  return r ? { metadataLocation: r.metadata_location, metadataJson: r.metadata_json, readOnly: r.read_only } : undefined;
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
  const moved = await exec(
    q,
    sql`with writable as (select 1 from catalog.warehouses where name = ${warehouse} and not read_only for share)
        update catalog.tables set metadata_location = ${next}, previous_metadata_location = ${expected}, metadata_json = ${metadataJson}, updated_at = now()
         where warehouse = ${warehouse} and namespace = ${nsKey(ns)} and name = ${name} and metadata_location = ${expected} and exists (select 1 from writable)
        returning 1 as moved`,
  );
  return moved.length > 0;
}

export async function deleteTableRow(q: Queryable, warehouse: string, ns: readonly string[], name: string): Promise<TableRow | undefined> {
  return (await tableRows(q, sql`delete from catalog.tables where warehouse = ${warehouse} and namespace = ${nsKey(ns)} and name = ${name} returning ${TABLE_COLUMNS}`))[0];
}

export async function listTables(q: Queryable, warehouse: string, ns: readonly string[], after: string | undefined, limit: number): Promise<string[]> {
  const found = await rows(
    q,
    Schema.Struct({ name: Schema.String }),
    sql`select name from catalog.tables where warehouse = ${warehouse} and namespace = ${nsKey(ns)} and name > ${after ?? ''} order by name limit ${limit}`,
  );
  return found.map((r) => r.name);
}

/** True when a live table of the warehouse keeps its metadata under `location` (its files are that table's too). */
export async function locationInUse(q: Queryable, warehouse: string, location: string): Promise<boolean> {
  const used = await exec(q, sql`select 1 from catalog.tables where warehouse = ${warehouse} and starts_with(metadata_location, ${`${location}/metadata/`}) limit 1`);
  return used.length > 0;
}

export async function renameTable(
  q: Queryable,
  warehouse: string,
  from: { namespace: readonly string[]; name: string },
  to: { namespace: readonly string[]; name: string },
): Promise<boolean> {
  try {
    const renamed = await exec(
      q,
      sql`update catalog.tables set namespace = ${nsKey(to.namespace)}, name = ${to.name}, updated_at = now()
           where warehouse = ${warehouse} and namespace = ${nsKey(from.namespace)} and name = ${from.name} returning name`,
    );
    return renamed.length > 0;
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(`Table ${[...to.namespace, to.name].join('.')}`);
    if (e instanceof DbError && e.code === '23503') throw noSuchNamespace(to.namespace);
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Name search (migrations/catalog/005_name_search.sql: every name indexed at each word start, kept by triggers)

/** One match: a namespace (`name` null) or a table, with the term it matched by. */
export interface NameMatch {
  namespace: string[];
  name: string | null;
  /** the text matched from the name's start (ranked first), else from a later word start */
  whole: boolean;
  term: string;
}

/**
 * What a scoped attachment lets a search return, folded to lower case as the api folds grant names (schemas as their
 * levels joined by '.'): namespaces listed in `visibleSchemas`, tables in `schemas` or named in `tables`. Absent:
 * everything. A narrowing only: the api checks each match against the grants again.
 */
export interface NameSearchScope {
  schemas: string[];
  visibleSchemas: string[];
  tables: Array<{ schema: string; table: string }>;
}

const NameMatchRow = Schema.Struct({ whole: Schema.Boolean, term: Schema.String, namespace: Schema.String, name: Schema.String });

function scopeClause(scope: NameSearchScope | undefined) {
  if (!scope) return sql``;
  const ns = sql`lower(replace(namespace, chr(31), '.'))`;
  return sql`and case when name = '' then ${ns} = any(${scope.visibleSchemas}::text[])
                 else ${ns} = any(${scope.schemas}::text[])
                   or (${ns}, lower(name)) in (select * from unnest(${scope.tables.map((t) => t.schema)}::text[], ${scope.tables.map((t) => t.table)}::text[])) end`;
}

/**
 * Namespaces and tables of a warehouse with a word of their name starting with `text` (case-insensitive), whole-name
 * matches first, then by the matched term: two range scans of the index's key in its own order, each stopping at
 * `limit` rows, so the cost follows `limit`, not the warehouse's size or how many names match.
 */
export async function searchNames(q: Queryable, warehouse: string, text: string, limit: number, scope?: NameSearchScope): Promise<{ matches: NameMatch[]; hasMore: boolean }> {
  const part = (whole: boolean, n: number) => sql`(select whole, term, namespace, name from catalog.name_search
      where warehouse = ${warehouse} and whole = ${whole} and term >= lower(${text}::text) and term < lower(${text}::text) || chr(1114111) ${scopeClause(scope)}
      order by term, namespace, name limit ${n})`;
  // A table with two words that both match comes back twice from the second scan: ask again for more until
  // limit + 1 distinct names are in hand or the scan ran out, so has_more is exact.
  for (let fetch = limit + 1; ; fetch *= 2) {
    const found = await rows(q, NameMatchRow, sql`${part(true, fetch)} union all ${part(false, fetch)}`);
    const seen = new Set<string>();
    const matches: NameMatch[] = [];
    for (const r of found) {
      const key = `${r.namespace}${NS_SEP}${NS_SEP}${r.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      matches.push({ namespace: nsLevels(r.namespace), name: r.name === '' ? null : r.name, whole: r.whole, term: r.term });
    }
    const words = found.filter((r) => !r.whole).length;
    if (matches.length > limit || words < fetch) return { matches: matches.slice(0, limit), hasMore: matches.length > limit };
  }
}
