// Scoped attachments (I10): when a workspace attaches a catalog with access_mode=scoped, its members reach only
// what the attachment's grants name, at catalog, schema or table level, for reading or also writing. The api
// enforces this itself, for REST browsing and for every table the statement parser extracts from a query; the
// catalog service's own checks are defence in depth. Names compare case-insensitively, as DuckDB resolves them.
import { Schema } from 'effect';
import { DbError, type Queryable } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { AppError, notFound, unprocessable } from './errors.ts';
import { isUuid, type Principal } from './identity.ts';
import { mayManageCatalog } from './catalogs/catalogs.ts';
import { type AccessMode, type AttachedCatalog } from './catalogs/attachments.ts';
import type { SchemaRef, TableRef } from './statementPolicy/policy.ts';

const PrivilegeSchema = Schema.Literals(['read', 'write']);
export type Privilege = typeof PrivilegeSchema.Type;

// Row shapes at the database boundary.
const TargetRow = Schema.Struct({ schema_name: Schema.NullOr(Schema.String), table_name: Schema.NullOr(Schema.String), privilege: PrivilegeSchema });
const GrantRowSchema = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  catalog_id: Schema.String,
  ...TargetRow.fields,
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date,
});
export type GrantRow = typeof GrantRowSchema.Type;

/** A grant of a scoped attachment as the api answers it: its level is the narrowest name it carries. */
export const GrantOutSchema = Schema.Struct({
  id: Schema.String,
  catalog: Schema.String,
  level: Schema.Literals(['catalog', 'schema', 'table']),
  schema: Schema.NullOr(Schema.String),
  table: Schema.NullOr(Schema.String),
  privilege: PrivilegeSchema,
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
});
export type GrantOut = typeof GrantOutSchema.Type;

export interface GrantTarget {
  schema?: string | null;
  table?: string | null;
  privilege: Privilege;
}

const GRANT_COLS = sql`id, workspace_id, catalog_id, schema_name, table_name, privilege, created_by, created_at, updated_at`;

const toGrantOut = (g: GrantRow, catalogSlug: string): GrantOut => ({
  id: g.id,
  catalog: catalogSlug,
  level: g.table_name !== null ? 'table' : g.schema_name !== null ? 'schema' : 'catalog',
  schema: g.schema_name,
  table: g.table_name,
  privilege: g.privilege,
  created_by: g.created_by,
  created_at: g.created_at.toISOString(),
  updated_at: g.updated_at.toISOString(),
});

/** Not allowed by a scoped attachment's grants. The same code for REST and for queries. */
export const notGranted = (what: string, privilege: Privilege) =>
  new AppError(403, 'not_granted', `${what} is not granted ${privilege === 'write' ? 'for writing ' : ''}to this workspace (scoped catalog attachment)`);

/**
 * PUT semantics: one grant per target (catalog, schema or table), replaced in place (200) or created (201).
 * Granting shapes what a workspace may reach, so it takes a catalog manager, as attaching does.
 */
export async function putGrant(db: Queryable, p: Principal, workspaceId: string, c: AttachedCatalog, target: GrantTarget): Promise<{ created: boolean; grant: GrantOut }> {
  if (!mayManageCatalog(p, c)) {
    throw new AppError(403, 'forbidden', `granting on catalog ${c.slug} needs the catalogs permission or being its creator`);
  }
  const schema = target.schema ?? null;
  const table = target.table ?? null;
  if (table !== null && schema === null) {
    throw unprocessable('a table grant names its schema too', 'unprocessable_content', { fields: [{ field: 'schema', in: 'body', message: 'required with table' }] });
  }
  // One statement, so concurrent PUTs of one target cannot both insert; xmax = 0 marks a freshly inserted row.
  let row: GrantRow & { inserted: boolean };
  try {
    [row] = await rows(
      db,
      Schema.Struct({ ...GrantRowSchema.fields, inserted: Schema.Boolean }),
      sql`insert into catalog_grants (workspace_id, catalog_id, schema_name, table_name, privilege, created_by)
          values (${workspaceId}, ${c.id}, ${schema}, ${table}, ${target.privilege}, ${p.user.id})
          on conflict (workspace_id, catalog_id, coalesce(schema_name, ''), coalesce(table_name, ''))
          do update set privilege = excluded.privilege, updated_at = now()
          returning ${GRANT_COLS}, (xmax = 0) as inserted`,
    );
  } catch (e) {
    // the attachment was removed meanwhile
    if (e instanceof DbError && e.code === '23503') throw notFound('catalog');
    throw e;
  }
  return { created: row.inserted, grant: toGrantOut(row, c.slug) };
}

export async function listGrants(q: Queryable, workspaceId: string, c: AttachedCatalog): Promise<GrantOut[]> {
  const grants = await rows(
    q,
    GrantRowSchema,
    sql`select ${GRANT_COLS} from catalog_grants where workspace_id = ${workspaceId} and catalog_id = ${c.id}
         order by schema_name nulls first, table_name nulls first`,
  );
  return grants.map((g) => toGrantOut(g, c.slug));
}

export async function deleteGrant(q: Queryable, p: Principal, workspaceId: string, c: AttachedCatalog, grantId: string): Promise<void> {
  if (!mayManageCatalog(p, c)) {
    throw new AppError(403, 'forbidden', `revoking on catalog ${c.slug} needs the catalogs permission or being its creator`);
  }
  const deleted = isUuid(grantId)
    ? await exec(q, sql`delete from catalog_grants where id = ${grantId} and workspace_id = ${workspaceId} and catalog_id = ${c.id} returning id`)
    : [];
  if (!deleted.length) throw notFound('grant');
}

// ---- the scope of an attachment -------------------------------------------------------------------------------

const fold = (s: string) => s.toLowerCase();
const covers = (have: Privilege, need: Privilege) => have === 'write' || need === 'read';

/** What one attachment lets a workspace reach. A full attachment reaches everything. */
export class AttachmentScope {
  readonly mode: AccessMode;
  private readonly catalogGrant: Privilege | undefined;
  private readonly schemas = new Map<string, Privilege>();
  private readonly tables = new Map<string, Privilege>();
  private readonly schemasWithTables = new Set<string>();

  constructor(mode: AccessMode, grants: ReadonlyArray<Pick<GrantRow, 'schema_name' | 'table_name' | 'privilege'>>) {
    this.mode = mode;
    let catalogGrant: Privilege | undefined;
    for (const g of grants) {
      if (g.schema_name === null) catalogGrant = g.privilege;
      else if (g.table_name === null) this.schemas.set(fold(g.schema_name), g.privilege);
      else {
        this.tables.set(`${fold(g.schema_name)}\u0000${fold(g.table_name)}`, g.privilege);
        this.schemasWithTables.add(fold(g.schema_name));
      }
    }
    this.catalogGrant = catalogGrant;
  }

  get isFull(): boolean {
    return this.mode === 'full';
  }

  /** Creating or dropping schemas, refreshing stats of the whole catalog. */
  catalog(need: Privilege): boolean {
    return this.isFull || (this.catalogGrant !== undefined && covers(this.catalogGrant, need));
  }

  /** The schema as a whole: its every table, creating tables in it, dropping it. */
  schema(schema: string, need: Privilege): boolean {
    if (this.catalog(need)) return true;
    const g = this.schemas.get(fold(schema));
    return g !== undefined && covers(g, need);
  }

  /** The schemas listings show (folded), or null when every schema shows (full access, a catalog grant). */
  visibleSchemas(): string[] | null {
    if (this.catalog('read')) return null;
    return [...new Set([...this.schemas.keys(), ...this.schemasWithTables])].sort();
  }

  /** Whether the schema shows in listings: anything in it is granted. */
  seesSchema(schema: string): boolean {
    return this.schema(schema, 'read') || this.schemasWithTables.has(fold(schema));
  }

  /**
   * What a name search may return, folded, for the catalog service to narrow its scan by (null: everything): the
   * schemas granted whole, the schemas that show in listings, the tables granted one by one.
   */
  searchNarrowing(): { schemas: string[]; visible_schemas: string[]; tables: Array<{ schema: string; table: string }> } | null {
    const visible = this.visibleSchemas();
    if (visible === null) return null;
    const tables = [...this.tables.keys()].map((k) => {
      const [schema, table] = k.split('\u0000');
      return { schema, table };
    });
    return { schemas: [...this.schemas.keys()].sort(), visible_schemas: visible, tables };
  }

  table(schema: string, table: string, need: Privilege): boolean {
    if (this.schema(schema, need)) return true;
    const g = this.tables.get(`${fold(schema)}\u0000${fold(table)}`);
    return g !== undefined && covers(g, need);
  }
}

export async function scopeOf(q: Queryable, workspaceId: string, c: Pick<AttachedCatalog, 'id' | 'access_mode'>): Promise<AttachmentScope> {
  if (c.access_mode === 'full') return new AttachmentScope('full', []);
  const grants = await rows(
    q,
    TargetRow,
    sql`select schema_name, table_name, privilege from catalog_grants where workspace_id = ${workspaceId} and catalog_id = ${c.id}`,
  );
  return new AttachmentScope('scoped', grants);
}

/** DuckDB's own databases on an agent: they hold no catalog data, so no grant applies to them. */
const ENGINE_CATALOGS = new Set(['memory', 'system', 'temp']);
/** The schema DuckDB uses when a name has none. */
const DEFAULT_SCHEMA = 'main';

/**
 * I10 for the query path: throws 403 unless every table the parser extracted is reachable from this workspace.
 * - A name whose catalog part is not a catalog attached to the workspace (nor one of DuckDB's own databases) is
 *   403 `catalog_not_attached`, whether or not such a catalog exists: a query has no resource to 404, and the
 *   answer says nothing about catalogs the workspace cannot see.
 * - In a scoped attachment the table needs a grant covering it (`not_granted`); `need` is `write` for a writing
 *   statement, and then every table it names must be writable (conservative: the parser does not tell targets
 *   from sources).
 * - Names resolve as DuckDB resolves them: `t` is default_catalog.main.t; `a.t` is schema `a` of the default
 *   catalog, or catalog `a`'s main schema when `a` is an attached catalog: both readings are checked.
 */
/** The table a time-travel name reads (`t__snapshot_<id>`, `t__at_<epoch ms>`, see docs/iceberg-bridge.md). */
const timeTravelBase = (name: string) => name.replace(/__(snapshot|at)_\d+$/, '');

/** The catalogs (folded) and schemas a table name can resolve to, as DuckDB and the agent's bridge resolve it. */
function tableReadings(ref: TableRef, fallback: string | null, isAttached: (slug: string) => boolean): Array<{ catalog: string; schema: string }> {
  if (ref.catalog !== null) return [{ catalog: fold(ref.catalog), schema: ref.schema ?? DEFAULT_SCHEMA }];
  if (ref.schema !== null) {
    const readings: Array<{ catalog: string; schema: string }> = [];
    if (fallback !== null) readings.push({ catalog: fallback, schema: ref.schema });
    if (isAttached(fold(ref.schema))) readings.push({ catalog: fold(ref.schema), schema: DEFAULT_SCHEMA });
    return readings;
  }
  return fallback === null ? [] : [{ catalog: fallback, schema: DEFAULT_SCHEMA }];
}

const schemaCatalog = (ref: SchemaRef, fallback: string | null) => (ref.catalog !== null ? fold(ref.catalog) : fallback);

/**
 * The attached catalogs a writing statement may write, by slug: every catalog any of its table names or schema
 * targets can resolve to (the readings checkScopedAccess checks for `write`), so the token a dispatch carries can
 * do what the statement was allowed to do and nothing the check did not cover. Sources are included, as the check
 * includes them (the parser does not tell targets from sources).
 */
export function writeCatalogs(
  tables: readonly TableRef[],
  schemas: { create: readonly SchemaRef[]; drop: readonly SchemaRef[] },
  defaultCatalog: string | null,
  attached: readonly { slug: string }[],
): string[] {
  const bySlug = new Map(attached.map((a) => [fold(a.slug), a.slug]));
  const fallback = defaultCatalog === null ? null : fold(defaultCatalog);
  const named = new Set<string>();
  for (const ref of tables) for (const r of tableReadings(ref, fallback, (slug) => bySlug.has(slug))) named.add(r.catalog);
  for (const ref of [...schemas.create, ...schemas.drop]) {
    const c = schemaCatalog(ref, fallback);
    if (c !== null) named.add(c);
  }
  // A write naming nothing the parser reports still runs in the default catalog.
  if (named.size === 0 && fallback !== null) named.add(fallback);
  return [...named].flatMap((c) => (bySlug.has(c) ? [bySlug.get(c)!] : []));
}

export async function checkScopedAccess(
  db: Queryable,
  workspaceId: string,
  tables: readonly TableRef[],
  defaultCatalog: string | null,
  need: Privilege = 'read',
  schemas: { create: readonly SchemaRef[]; drop: readonly SchemaRef[] } = { create: [], drop: [] },
  known?: readonly Pick<AttachedCatalog, 'id' | 'slug' | 'access_mode'>[],
): Promise<void> {
  // `known`: the workspace's attachments as the caller already read them (query submission lists them for the
  // dispatch anyway), which saves a statement per submitted query.
  const attached =
    known ??
    (await rows(
      db,
      Schema.Struct({ id: Schema.String, slug: Schema.String, access_mode: Schema.Literals(['full', 'scoped']) }),
      sql`select c.id, c.slug, wc.access_mode from workspace_catalogs wc join catalogs c on c.id = wc.catalog_id where wc.workspace_id = ${workspaceId}`,
    ));
  const bySlug = new Map(attached.map((a) => [fold(a.slug), a]));
  const scopes = new Map<string, AttachmentScope>();
  const scopeFor = async (a: { id: string; access_mode: AccessMode }) => {
    let s = scopes.get(a.id);
    if (!s) scopes.set(a.id, (s = await scopeOf(db, workspaceId, a)));
    return s;
  };
  const fallback = defaultCatalog === null ? null : fold(defaultCatalog);

  for (const ref of tables) {
    const readings = tableReadings(ref, fallback, (slug) => bySlug.has(slug));
    for (const r of readings) {
      if (ENGINE_CATALOGS.has(r.catalog)) continue;
      const a = bySlug.get(r.catalog);
      if (!a) throw new AppError(403, 'catalog_not_attached', `catalog ${r.catalog} is not attached to this workspace`);
      const name = timeTravelBase(ref.name);
      if (!(await scopeFor(a)).table(r.schema, name, need)) throw notGranted(`table ${a.slug}.${r.schema}.${name}`, need);
    }
  }
  // CREATE SCHEMA / DROP SCHEMA in SQL need what the REST schema routes need: a catalog write grant to create, a
  // write grant on the schema to drop.
  for (const [kind, list] of [['create', schemas.create], ['drop', schemas.drop]] as const) {
    for (const ref of list) {
      const catalog = schemaCatalog(ref, fallback);
      if (catalog === null || ENGINE_CATALOGS.has(catalog)) continue;
      const a = bySlug.get(catalog);
      if (!a) throw new AppError(403, 'catalog_not_attached', `catalog ${catalog} is not attached to this workspace`);
      const scope = await scopeFor(a);
      if (kind === 'create' && !scope.catalog('write')) throw notGranted(`creating schemas in catalog ${a.slug}`, 'write');
      if (kind === 'drop' && !scope.schema(ref.name, 'write')) throw notGranted(`schema ${a.slug}.${ref.name}`, 'write');
    }
  }
}
