// Schema browsing for PostgreSQL clients: psql's \dt and \d, JDBC DatabaseMetaData and SQLAlchemy reflection query
// pg_catalog and information_schema. The agent's DuckDB cannot answer them (its Iceberg tables are bound per
// statement), so the endpoint answers them here, from the catalog data the api has: an in-memory DuckDB per
// connection holding the schemas and empty tables of the session's catalog that the caller may read (scoped grants
// applied), whose own pg_catalog and information_schema views then answer, with the PostgreSQL functions DuckDB
// lacks added as macros. It holds no table data and reaches nothing outside itself (external access off,
// configuration locked); only reads run in it.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { AppContext } from '../usecases/context.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import type { Principal } from '../domain/identity.ts';
import { resolveAttachedCatalog } from '../domain/catalogs/attachments.ts';
import { warehouseName } from '../domain/catalogs/warehouses.ts';
import { scopeOf } from '../domain/catalogGrants.ts';
import { icebergToDuckdb } from '../iceberg/duckdbTypes.ts';
import { currentSchema, type TableMetadata } from '../iceberg/metadata.ts';
import { SERVER_VERSION_TEXT } from './version.ts';
import { WireError } from './errors.ts';

// What sends a statement here: the system catalogs, or a PostgreSQL system function drivers call on connect.
const CATALOG_PATTERN = new RegExp(
  [
    String.raw`\b(?:pg_catalog|information_schema|pg_class|pg_namespace|pg_attribute|pg_attrdef|pg_type|pg_proc|pg_index|pg_constraint|pg_database|pg_settings|pg_roles|pg_user|pg_auth_members|pg_description|pg_am|pg_inherits|pg_tables|pg_views|pg_enum|pg_range|pg_extension|pg_collation|pg_stat_\w+|current_user|session_user)\b`,
    String.raw`\b(?:current_schema|current_schemas|current_database|version|txid_current|has_\w+_privilege|pg_backend_pid|pg_is_in_recovery|pg_postmaster_start_time|obj_description|col_description|format_type|pg_get_\w+|pg_table_is_visible)\s*\(`,
    String.raw`::\s*reg(?:class|type|proc)\b`,
  ].join('|'),
  'i',
);

export const isCatalogQuery = (sql: string) => CATALOG_PATTERN.test(sql.replace(/'(?:[^']|'')*'/g, "''"));

const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** PostgreSQL spellings DuckDB does not read, rewritten (outside literals is enough: they never occur inside). */
// Catalog relations psql, JDBC and SQLAlchemy read that DuckDB's pg_catalog lacks (or lacks columns of): views and
// empty tables in schema pg_eider (clients hide `pg_*` schemas from listings), which the rewrite points them at.
/** A DuckDB column type (as duckdb_columns() spells it) as the PostgreSQL type OID the wire gives it (types.ts). */
const PG_OID_OF = (col: string) =>
  `CASE WHEN ${col} LIKE 'DECIMAL(%' THEN 1700 WHEN ${col} LIKE '%[]' OR ${col} SIMILAR TO '(STRUCT|MAP|UNION)\\(.*' THEN 114 ELSE ` +
  `CASE ${col} ${Object.entries({ BOOLEAN: 16, TINYINT: 21, SMALLINT: 21, UTINYINT: 21, INTEGER: 23, USMALLINT: 23, BIGINT: 20, UINTEGER: 20, UBIGINT: 1700, HUGEINT: 1700, UHUGEINT: 1700, FLOAT: 700, DOUBLE: 701, DATE: 1082, TIME: 1083, 'TIME WITH TIME ZONE': 1266, TIMESTAMP: 1114, TIMESTAMP_S: 1114, TIMESTAMP_MS: 1114, TIMESTAMP_NS: 1114, 'TIMESTAMP WITH TIME ZONE': 1184, UUID: 2950, BLOB: 17, JSON: 114 })
    .map(([k, v]) => `WHEN '${k}' THEN ${v}`)
    .join(' ')} ELSE 25 END END`;

const SHIM = [
  `CREATE SCHEMA pg_eider`,
  // The shim's own relations and schema are hidden from what clients list.
  `CREATE VIEW pg_eider.pg_class AS SELECT c.*, false AS relforcerowsecurity FROM pg_catalog.pg_class c WHERE c.relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_eider')`,
  `CREATE VIEW pg_eider.pg_namespace AS SELECT * FROM pg_catalog.pg_namespace WHERE nspname <> 'pg_eider'`,
  // Every other catalog relation through pg_eider too: DuckDB binds `pg_catalog.x.column` only for its own schema.
  // DuckDB's pg_attribute gives its own type ids (BIGINT 14) and typmods (DECIMAL(12,2) 12002): clients join atttypid
  // to pg_type and read numeric precision from atttypmod, so they become PostgreSQL's (int8 20, ((12 << 16) | 2) + 4).
  `CREATE VIEW pg_eider.pg_attribute AS SELECT a.* REPLACE (coalesce(${PG_OID_OF('c.data_type')}, a.atttypid) AS atttypid, CASE WHEN c.data_type LIKE 'DECIMAL(%' THEN ((c.numeric_precision::INTEGER << 16) | c.numeric_scale::INTEGER) + 4 ELSE -1 END AS atttypmod) FROM pg_catalog.pg_attribute a LEFT JOIN duckdb_columns() c ON c.table_oid = a.attrelid AND c.column_index = a.attnum`,
  `CREATE VIEW pg_eider.pg_attrdef AS SELECT * FROM pg_catalog.pg_attrdef`,
  // With the types the wire gives that DuckDB's pg_type lacks (text: what VARCHAR columns are; json; oid).
  `CREATE VIEW pg_eider.pg_type AS SELECT * FROM pg_catalog.pg_type UNION ALL SELECT * REPLACE (25::BIGINT AS oid, 'text' AS typname, -1::BIGINT AS typlen) FROM pg_catalog.pg_type WHERE oid = 1043 UNION ALL SELECT * REPLACE (114::BIGINT AS oid, 'json' AS typname, -1::BIGINT AS typlen) FROM pg_catalog.pg_type WHERE oid = 1043 UNION ALL SELECT * REPLACE (26::BIGINT AS oid, 'oid' AS typname) FROM pg_catalog.pg_type WHERE oid = 23`,
  `CREATE VIEW pg_eider.pg_index AS SELECT * FROM pg_catalog.pg_index`,
  `CREATE VIEW pg_eider.pg_constraint AS SELECT * FROM pg_catalog.pg_constraint`,
  `CREATE VIEW pg_eider.pg_description AS SELECT * FROM pg_catalog.pg_description`,
  `CREATE VIEW pg_eider.pg_am AS SELECT * FROM pg_catalog.pg_am`,
  `CREATE TABLE pg_eider.pg_collation (oid BIGINT, collname VARCHAR, collnamespace BIGINT, collowner BIGINT, collprovider VARCHAR, collisdeterministic BOOLEAN, collencoding INTEGER, collcollate VARCHAR, collctype VARCHAR)`,
  `CREATE VIEW pg_eider.pg_depend AS SELECT * FROM pg_catalog.pg_depend`,
  `CREATE VIEW pg_eider.pg_enum AS SELECT * FROM pg_catalog.pg_enum`,
  `CREATE VIEW pg_eider.pg_proc AS SELECT * FROM pg_catalog.pg_proc`,
  `CREATE VIEW pg_eider.pg_sequence AS SELECT * FROM pg_catalog.pg_sequence`,
  `CREATE VIEW pg_eider.pg_sequences AS SELECT * FROM pg_catalog.pg_sequences`,
  `CREATE VIEW pg_eider.pg_settings AS SELECT * FROM pg_catalog.pg_settings`,
  `CREATE VIEW pg_eider.pg_tables AS SELECT * FROM pg_catalog.pg_tables`,
  `CREATE VIEW pg_eider.pg_views AS SELECT * FROM pg_catalog.pg_views`,
  `CREATE VIEW pg_eider.pg_indexes AS SELECT * FROM pg_catalog.pg_indexes`,
  `CREATE VIEW pg_eider.pg_tablespace AS SELECT * FROM pg_catalog.pg_tablespace`,
  `CREATE VIEW pg_eider.is_tables AS SELECT * FROM information_schema.tables WHERE table_schema <> 'pg_eider'`,
  `CREATE VIEW pg_eider.is_columns AS SELECT * FROM information_schema.columns WHERE table_schema <> 'pg_eider'`,
  `CREATE VIEW pg_eider.is_schemata AS SELECT * FROM information_schema.schemata WHERE schema_name <> 'pg_eider'`,
  `CREATE VIEW pg_eider.is_views AS SELECT * FROM information_schema.views WHERE table_schema <> 'pg_eider'`,
  `CREATE TABLE pg_eider.pg_policy (oid BIGINT, polname VARCHAR, polpermissive BOOLEAN, polroles BIGINT[], polqual VARCHAR, polwithcheck VARCHAR, polcmd VARCHAR, polrelid BIGINT)`,
  `CREATE TABLE pg_eider.pg_statistic_ext (oid BIGINT, stxrelid BIGINT, stxnamespace BIGINT, stxname VARCHAR, stxkind VARCHAR[], stxstattarget INTEGER, stxkeys SMALLINT[])`,
  `CREATE TABLE pg_eider.pg_publication (oid BIGINT, pubname VARCHAR, puballtables BOOLEAN, pubinsert BOOLEAN, pubupdate BOOLEAN, pubdelete BOOLEAN, pubtruncate BOOLEAN, pubviaroot BOOLEAN)`,
  `CREATE TABLE pg_eider.pg_publication_namespace (oid BIGINT, pnpubid BIGINT, pnnspid BIGINT)`,
  `CREATE TABLE pg_eider.pg_publication_rel (oid BIGINT, prpubid BIGINT, prrelid BIGINT, prqual VARCHAR, prattrs SMALLINT[])`,
  `CREATE TABLE pg_eider.pg_inherits (inhrelid BIGINT, inhparent BIGINT, inhseqno INTEGER, inhdetachpending BOOLEAN)`,
  `CREATE TABLE pg_eider.pg_trigger (oid BIGINT, tgrelid BIGINT, tgparentid BIGINT, tgname VARCHAR, tgfoid BIGINT, tgtype SMALLINT, tgenabled VARCHAR, tgisinternal BOOLEAN, tgconstraint BIGINT)`,
  `CREATE TABLE pg_eider.pg_rewrite (oid BIGINT, rulename VARCHAR, ev_class BIGINT, ev_type VARCHAR, ev_enabled VARCHAR, is_instead BOOLEAN)`,
  `CREATE TABLE pg_eider.pg_partitioned_table (partrelid BIGINT, partstrat VARCHAR, partnatts SMALLINT)`,
  `CREATE TABLE pg_eider.pg_foreign_table (ftrelid BIGINT, ftserver BIGINT, ftoptions VARCHAR[])`,
  `CREATE TABLE pg_eider.pg_extension (oid BIGINT, extname VARCHAR, extowner BIGINT, extnamespace BIGINT, extversion VARCHAR)`,
  `CREATE TABLE pg_eider.pg_event_trigger (oid BIGINT, evtname VARCHAR)`,
  `CREATE TABLE pg_eider.pg_auth_members (oid BIGINT, roleid BIGINT, member BIGINT, grantor BIGINT, admin_option BOOLEAN)`,
  `CREATE TABLE pg_eider.pg_matviews (schemaname VARCHAR, matviewname VARCHAR, matviewowner VARCHAR, definition VARCHAR)`,
];
const SHIMMED = 'pg_attribute|pg_attrdef|pg_type|pg_index|pg_constraint|pg_description|pg_am|pg_collation|pg_database|pg_depend|pg_enum|pg_proc|pg_sequence|pg_sequences|pg_settings|pg_tables|pg_views|pg_indexes|pg_tablespace|pg_class|pg_namespace|pg_policy|pg_statistic_ext|pg_publication|pg_publication_namespace|pg_publication_rel|pg_inherits|pg_trigger|pg_rewrite|pg_partitioned_table|pg_foreign_table|pg_extension|pg_event_trigger|pg_roles|pg_user|pg_matviews|pg_auth_members';

const EMPTY_RELATIONS = /\bpg_(policy|statistic_ext|publication\w*|inherits|trigger|rewrite|partitioned_table|foreign_table|event_trigger)\b/i;

function rewriteCatalogSql(sql: string): string {
  return sql
    .replace(/OPERATOR\s*\(\s*pg_catalog\.([~!<>=*]+)\s*\)/gi, ' $1 ')
    .replace(/COLLATE\s+pg_catalog\."?default"?/gi, '')
    .replace(/COLLATE\s+"C"/gi, '')
    .replace(/::\s*(?:pg_catalog\.)?reg(?:class|type|proc|procedure|namespace|role|oper)\b/gi, '::VARCHAR')
    .replace(/::\s*(?:pg_catalog\.)?oid\b/gi, '::BIGINT')
    .replace(/::\s*(?:pg_catalog\.)?name\b/gi, '::VARCHAR')
    .replace(/::\s*(?:pg_catalog\.)?_text\b/gi, '::VARCHAR[]')
    .replace(/::\s*pg_catalog\./gi, '::')
    .replace(/\bAS\s+(?:pg_catalog\.)?REG(?:CLASS|TYPE|PROC|NAMESPACE)\s*\)/gi, 'AS VARCHAR)')
    .replace(/\bAS\s+(?:pg_catalog\.)?OID\s*\)/gi, 'AS BIGINT)')
    .replace(/\bjson_build_object\s*\(/gi, 'json_object(')
    // A column qualified by schema and table (`pg_catalog.pg_class.oid`) is qualified by the table alone: DuckDB does
    // not bind the three-part name inside a subquery's join, and the FROM entry's name is the table's either way.
    .replace(new RegExp(String.raw`(?<![.\w])pg_catalog\.(${SHIMMED})\.(?=[A-Za-z_"])`, 'gi'), '$1.')
    .replace(new RegExp(String.raw`(?<![.\w])(?:pg_catalog\.)?(${SHIMMED})\b(?!\s*\(|\.)`, 'gi'), 'pg_eider.$1')
    .replace(/\binformation_schema\.(tables|columns|schemata|views)\b/gi, 'pg_eider.is_$1')
    .replace(/\bpg_catalog\.(?=[a-z_]+\s*\()/gi, '')
    .replace(/(?<![.\w])format_type\s*\(/gi, 'eider_format_type(')
    .replace(/\b(?:pg_catalog\.)?current_database\s*\(\s*\)/gi, 'eider_current_database()')
    .replace(/(?<![.\w])version\s*\(\s*\)/gi, 'eider_version()')
    .replace(/\b(current_user|session_user)\b(?!\s*\()/gi, 'eider_$1()');
}

const MACROS = [
  `CREATE OR REPLACE TEMP MACRO pg_collation_is_visible(o) AS true`,
  `CREATE OR REPLACE TEMP MACRO pg_opclass_is_visible(o) AS true`,
  `CREATE OR REPLACE TEMP MACRO to_regtype(n) AS (SELECT min(oid) FROM pg_catalog.pg_type WHERE typname = lower(split_part(n, '.', -1)))`,
  `CREATE OR REPLACE TEMP MACRO to_regclass(n) AS (SELECT min(oid) FROM pg_catalog.pg_class WHERE relname = split_part(n, '.', -1))`,
  `CREATE OR REPLACE TEMP MACRO to_regnamespace(n) AS (SELECT min(oid) FROM pg_catalog.pg_namespace WHERE nspname = n)`,
  // PostgreSQL's names for the types (DuckDB's pg_type says int8, varchar): what psql \d and reflection show.
  // (of PostgreSQL OIDs and typmods, as pg_eider.pg_attribute gives them).
  `CREATE OR REPLACE TEMP MACRO eider_format_type(t, m) AS CASE t::BIGINT WHEN 20 THEN 'bigint' WHEN 23 THEN 'integer' WHEN 21 THEN 'smallint' WHEN 701 THEN 'double precision' WHEN 700 THEN 'real' WHEN 25 THEN 'text' WHEN 1043 THEN 'character varying' WHEN 16 THEN 'boolean' WHEN 1114 THEN 'timestamp without time zone' WHEN 1184 THEN 'timestamp with time zone' WHEN 1083 THEN 'time without time zone' WHEN 1266 THEN 'time with time zone' WHEN 1082 THEN 'date' WHEN 17 THEN 'bytea' WHEN 114 THEN 'json' WHEN 2950 THEN 'uuid' WHEN 1186 THEN 'interval' WHEN 26 THEN 'oid' WHEN 19 THEN 'name' WHEN 1700 THEN CASE WHEN m > 4 THEN 'numeric(' || ((m - 4) >> 16) || ',' || ((m - 4) & 65535) || ')' ELSE 'numeric' END ELSE (SELECT min(typname) FROM pg_catalog.pg_type WHERE oid = t) END`,
  `CREATE OR REPLACE TEMP MACRO pg_get_statisticsobjdef_columns(o) AS NULL::VARCHAR`,
  `CREATE OR REPLACE TEMP MACRO array_upper(a, d) AS len(a)`,
  // Every table of the catalog's schemas counts as on the search path (Iceberg namespaces are browsed whole).
  `CREATE OR REPLACE TEMP MACRO pg_table_is_visible(o) AS true`,
  `CREATE OR REPLACE TEMP MACRO pg_encoding_to_char(id) AS 'UTF8'`,
  `CREATE OR REPLACE TEMP MACRO pg_get_expr(e, r) AS NULL::VARCHAR, (e, r, p) AS NULL::VARCHAR`,
  `CREATE OR REPLACE TEMP MACRO shobj_description(o, c) AS NULL::VARCHAR`,
  `CREATE OR REPLACE TEMP MACRO pg_get_indexdef(i, c := 0, p := false) AS NULL::VARCHAR`,
  `CREATE OR REPLACE TEMP MACRO pg_get_constraintdef(i, p := false) AS NULL::VARCHAR`,
  `CREATE OR REPLACE TEMP MACRO pg_relation_is_publishable(r) AS false`,
  `CREATE OR REPLACE TEMP MACRO pg_get_partkeydef(r) AS NULL::VARCHAR`,
  `CREATE OR REPLACE TEMP MACRO pg_get_viewdef(r, p := false) AS NULL::VARCHAR`,
  `CREATE OR REPLACE TEMP MACRO pg_total_relation_size(r) AS 0::BIGINT`,
  `CREATE OR REPLACE TEMP MACRO pg_relation_size(r) AS 0::BIGINT`,
  `CREATE OR REPLACE TEMP MACRO pg_backend_pid() AS 0`,
  `CREATE OR REPLACE TEMP MACRO pg_is_in_recovery() AS false`,
  `CREATE OR REPLACE TEMP MACRO pg_function_is_visible(f) AS true`,
  `CREATE OR REPLACE TEMP MACRO pg_type_is_visible(t) AS true`,
  `CREATE OR REPLACE TEMP MACRO pg_get_function_identity_arguments(f) AS ''`,
  `CREATE OR REPLACE TEMP MACRO pg_get_serial_sequence(t, c) AS NULL::VARCHAR`,
  `CREATE OR REPLACE TEMP MACRO txid_current() AS 1::BIGINT`,
  `CREATE OR REPLACE TEMP MACRO quote_ident(s) AS '"' || replace(s, '"', '""') || '"'`,
];

export class CatalogMirror {
  readonly #ctx: AppContext;
  readonly #ws: WorkspaceAccess;
  readonly #catalog: string | null;
  readonly #database: string;
  readonly #user: string;
  #instance: DuckDBInstance | null = null;
  #conn: Promise<DuckDBConnection> | null = null;

  constructor(ctx: AppContext, ws: WorkspaceAccess, catalog: string | null, database: string, principal: Principal) {
    this.#user = principal.user.email ?? principal.user.name;
    this.#ctx = ctx;
    this.#ws = ws;
    this.#catalog = catalog;
    this.#database = database;
  }

  /** Built again at the next catalog query (after DDL in the session: a table may have come or gone). */
  invalidate(): void {
    const old = this.#conn;
    const inst = this.#instance;
    this.#conn = null;
    this.#instance = null;
    void old?.then((c) => c.closeSync()).catch(() => undefined).finally(() => inst?.closeSync());
  }

  async close(): Promise<void> {
    this.invalidate();
  }

  async query(sql: string, params: (string | null)[]): Promise<{ columns: { name: string; type: string }[]; rows: unknown[][] }> {
    this.#conn ??= this.#build();
    const conn = await this.#conn;
    const text = rewriteCatalogSql(sql);
    const extracted = await conn.extractStatements(text).catch((e: unknown) => {
      throw new WireError('42601', (e as Error).message);
    });
    if (extracted.count !== 1) throw new WireError('0A000', 'a catalog query is one statement');
    let prepared;
    try {
      prepared = await extracted.prepare(0);
    } catch (e) {
      // A question about what Eider never has (policies, publications, inheritance, triggers, rules, extended
      // statistics) has no rows, however it is asked.
      if (EMPTY_RELATIONS.test(sql)) return { columns: [], rows: [] };
      this.#ctx.logger.debug({ err: (e as Error).message }, 'pgwire: catalog query not answered');
      throw new WireError(/does not exist/i.test((e as Error).message) ? '42883' : '42601', `catalog query not supported: ${(e as Error).message}`);
    }
    // StatementType.SELECT: only reads run here.
    if (prepared.statementType !== 1) throw new WireError('0A000', 'only reads of the system catalogs are answered');
    params.forEach((v, i) => (v === null ? prepared.bindNull(i + 1) : prepared.bindVarchar(i + 1, v)));
    const reader = await prepared.runAndReadAll().catch((e: unknown) => {
      throw new WireError('42000', `catalog query failed: ${(e as Error).message}`);
    });
    // PostgreSQL names an unaliased function call's column after the function (`version`, not `version()`).
    const columns = reader.columnNames().map((name, i) => ({ name: /^[A-Za-z_][A-Za-z0-9_.]*\(.*\)$/s.test(name) ? name.slice(0, name.indexOf('(')).replace(/^.*\./, '').replace(/^eider_/, '') : name, type: reader.columnType(i).toString() }));
    return { columns, rows: reader.getRowsJson() as unknown[][] };
  }

  async #build(): Promise<DuckDBConnection> {
    const inst = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '256MB' });
    this.#instance = inst;
    const conn = await inst.connect();
    for (const m of [...SHIM, ...MACROS]) await conn.run(m);
    await conn.run(`CREATE OR REPLACE TEMP MACRO eider_version() AS ${lit(SERVER_VERSION_TEXT)}`);
    await conn.run(`CREATE OR REPLACE TEMP MACRO eider_current_database() AS ${lit(this.#database)}`);
    await conn.run(`CREATE OR REPLACE TEMP MACRO eider_current_user() AS ${lit(this.#user)}`);
    await conn.run(`CREATE OR REPLACE TEMP MACRO eider_session_user() AS ${lit(this.#user)}`);
    // Every object is the connection's user's (Eider's own grants decide access, not owners).
    await conn.run(`CREATE OR REPLACE TEMP MACRO pg_get_userbyid(id) AS ${lit(this.#user)}`);
    // psql \l and \du: the database is the connection's workspace, the one role its user (the workspace role and
    // grants are Eider's, not PostgreSQL roles).
    await conn.run(
      `CREATE TABLE pg_eider.pg_database AS SELECT 16384::BIGINT AS oid, ${lit(this.#database)} AS datname, 10::BIGINT AS datdba, 6 AS encoding, 'c' AS datlocprovider, false AS datistemplate, true AS datallowconn, -1 AS datconnlimit, 'C.UTF-8' AS datcollate, 'C.UTF-8' AS datctype, NULL::VARCHAR AS daticulocale, NULL::VARCHAR AS datcollversion, NULL::VARCHAR[] AS datacl, 1663::BIGINT AS dattablespace`,
    );
    await conn.run(
      `CREATE TABLE pg_eider.pg_roles AS SELECT 10::BIGINT AS oid, ${lit(this.#user)} AS rolname, false AS rolsuper, true AS rolinherit, false AS rolcreaterole, false AS rolcreatedb, true AS rolcanlogin, false AS rolreplication, -1 AS rolconnlimit, '********' AS rolpassword, NULL::TIMESTAMPTZ AS rolvaliduntil, false AS rolbypassrls, NULL::VARCHAR[] AS rolconfig`,
    );
    await conn.run(`CREATE VIEW pg_eider.pg_user AS SELECT rolname AS usename, oid AS usesysid, false AS usesuper FROM pg_eider.pg_roles`);
    for (const ddl of await this.#tablesDdl()) {
      await conn.run(ddl).catch((e: unknown) => this.#ctx.logger.debug({ err: (e as Error).message }, 'pgwire mirror: table skipped'));
    }
    await conn.run(`SET enable_external_access = false`);
    await conn.run(`SET lock_configuration = true`);
    return conn;
  }

  /** CREATE SCHEMA / CREATE TABLE of what the caller may read in the session's catalog. */
  async #tablesDdl(): Promise<string[]> {
    const ctx = this.#ctx;
    if (!this.#catalog || !ctx.catalog) return [];
    const c = await resolveAttachedCatalog(ctx.db, this.#ws.workspace.id, this.#catalog);
    const scope = await scopeOf(ctx.db, this.#ws.workspace.id, c);
    const client = ctx.catalog;
    const wh = warehouseName(c);
    const out: string[] = [];
    for (const ns of await client.listNamespaces(wh)) {
      const schema = ns.join('.');
      if (!scope.seesSchema(schema)) continue;
      if (schema !== 'main') out.push(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
      const tables = (await client.listTables(wh, ns)).filter((t) => scope.table(schema, t, 'read'));
      const loaded = await Promise.all(tables.map((t) => client.loadTable<TableMetadata>(wh, ns, t).then((l) => ({ t, m: l.metadata }), () => null)));
      for (const x of loaded) {
        if (!x) continue;
        const cols = currentSchema(x.m).fields.map((f) => `${ident(f.name)} ${safeType(icebergToDuckdb(f.type))}${f.required ? ' NOT NULL' : ''}`);
        if (cols.length) out.push(`CREATE TABLE ${ident(schema)}.${ident(x.t)} (${cols.join(', ')})`);
      }
    }
    return out;
  }
}

/** A type the mirror's DuckDB creates (the spelling comes from our own Iceberg mapping). */
const safeType = (t: string) => (/^[A-Za-z0-9_ (),."[\]]+$/.test(t) ? t : 'VARCHAR');
