// Schema browsing for PostgreSQL clients: psql's \dt and \d, JDBC DatabaseMetaData and SQLAlchemy reflection query
// pg_catalog and information_schema. The agent's DuckDB cannot answer them (its Iceberg tables are bound per
// statement), so the endpoint answers them here, from the catalog data the api has: an in-memory DuckDB per
// connection holding the schemas and empty tables of the session's catalog that the caller may read (scoped grants
// applied), whose own pg_catalog and information_schema views then answer, with the PostgreSQL functions DuckDB
// lacks added as macros. It holds no table data and reaches nothing outside itself (external access off,
// configuration locked); only reads run in it.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { AppContext } from '../http/context.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import type { Principal } from '../domain/identity.ts';
import { resolveAttachedCatalog, warehouseName } from '../domain/catalogs.ts';
import { scopeOf } from '../domain/catalogGrants.ts';
import { icebergToDuckdb } from '../iceberg/duckdbTypes.ts';
import { currentSchema, type TableMetadata } from '../iceberg/metadata.ts';
import { SERVER_VERSION_TEXT } from './version.ts';
import { WireError } from './errors.ts';

// What sends a statement here: the system catalogs, or a PostgreSQL system function drivers call on connect.
const CATALOG_PATTERN =
  /\b(pg_catalog|information_schema|pg_class|pg_namespace|pg_attribute|pg_type|pg_proc|pg_index|pg_constraint|pg_database|pg_settings|pg_roles|pg_user|pg_description|pg_am|pg_inherits|pg_tables|pg_views|pg_enum|pg_range|pg_extension|pg_stat_\w+|current_schema|current_schemas|current_database|current_user|session_user|version\s*\(\s*\)|txid_current|has_\w+_privilege|pg_backend_pid|pg_is_in_recovery|pg_postmaster_start_time|obj_description|col_description|format_type|::\s*regclass|::\s*regtype|::\s*oid)\b/i;

export const isCatalogQuery = (sql: string) => CATALOG_PATTERN.test(sql.replace(/'(?:[^']|'')*'/g, "''"));

const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** PostgreSQL spellings DuckDB does not read, rewritten (outside literals is enough: they never occur inside). */
function rewrite(sql: string): string {
  return sql
    .replace(/OPERATOR\s*\(\s*pg_catalog\.([~!<>=*]+)\s*\)/gi, ' $1 ')
    .replace(/COLLATE\s+pg_catalog\."?default"?/gi, '')
    .replace(/COLLATE\s+"C"/gi, '')
    .replace(/::\s*(?:pg_catalog\.)?reg(?:class|type|proc|namespace)\b/gi, '::VARCHAR')
    .replace(/::\s*(?:pg_catalog\.)?(?:oid|name|regclass)\b/gi, (m) => (/oid/i.test(m) ? '::BIGINT' : '::VARCHAR'))
    .replace(/::\s*(?:pg_catalog\.)?(?:_text|text\[\])/gi, '::VARCHAR[]')
    .replace(/\bpg_catalog\.(pg_get_userbyid|pg_table_is_visible|format_type|pg_get_expr|obj_description|col_description|shobj_description|pg_encoding_to_char|has_\w+_privilege|pg_get_indexdef|pg_get_constraintdef|pg_relation_is_publishable|pg_get_partkeydef|array_to_string|current_schemas|current_schema|version|pg_backend_pid|pg_is_in_recovery|generate_series|quote_ident|pg_get_viewdef|pg_total_relation_size|pg_relation_size|pg_get_statisticsobjdef_columns|pg_function_is_visible|pg_type_is_visible|row_number|pg_get_function_identity_arguments|array_length|unnest|lower|upper|concat|left|pg_get_serial_sequence|current_setting)\s*\(/gi, '$1(')
    .replace(/\b(?:pg_catalog\.)?current_database\s*\(\s*\)/gi, 'eider_current_database()')
    .replace(/\b(?:pg_catalog\.)?version\s*\(\s*\)/gi, 'eider_version()')
    .replace(/\b(current_user|session_user)\b(?!\s*\()/gi, 'eider_$1()');
}

const MACROS = [
  `CREATE OR REPLACE TEMP MACRO pg_get_userbyid(id) AS 'eider'`,
  `CREATE OR REPLACE TEMP MACRO pg_encoding_to_char(id) AS 'UTF8'`,
  `CREATE OR REPLACE TEMP MACRO pg_get_expr(e, r, p) AS NULL::VARCHAR`,
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
    const text = rewrite(sql);
    const extracted = await conn.extractStatements(text).catch((e: unknown) => {
      throw new WireError('42601', (e as Error).message);
    });
    if (extracted.count !== 1) throw new WireError('0A000', 'a catalog query is one statement');
    let prepared;
    try {
      prepared = await extracted.prepare(0);
    } catch (e) {
      throw new WireError(/does not exist/i.test((e as Error).message) ? '42883' : '42601', `catalog query not supported: ${(e as Error).message}`);
    }
    // StatementType.SELECT: only reads run here.
    if (prepared.statementType !== 1) throw new WireError('0A000', 'only reads of the system catalogs are answered');
    params.forEach((v, i) => (v === null ? prepared.bindNull(i + 1) : prepared.bindVarchar(i + 1, v)));
    const reader = await prepared.runAndReadAll();
    // PostgreSQL names an unaliased function call's column after the function (`version`, not `version()`).
    const columns = reader.columnNames().map((name, i) => ({ name: /^[A-Za-z_][A-Za-z0-9_.]*\(.*\)$/s.test(name) ? name.slice(0, name.indexOf('(')).replace(/^.*\./, '').replace(/^eider_/, '') : name, type: reader.columnType(i).toString() }));
    return { columns, rows: reader.getRowsJson() as unknown[][] };
  }

  async #build(): Promise<DuckDBConnection> {
    const inst = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '256MB' });
    this.#instance = inst;
    const conn = await inst.connect();
    for (const m of MACROS) await conn.run(m);
    await conn.run(`CREATE OR REPLACE TEMP MACRO eider_version() AS ${lit(SERVER_VERSION_TEXT)}`);
    await conn.run(`CREATE OR REPLACE TEMP MACRO eider_current_database() AS ${lit(this.#database)}`);
    await conn.run(`CREATE OR REPLACE TEMP MACRO eider_current_user() AS ${lit(this.#user)}`);
    await conn.run(`CREATE OR REPLACE TEMP MACRO eider_session_user() AS ${lit(this.#user)}`);
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
