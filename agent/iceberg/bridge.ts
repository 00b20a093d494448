// The Iceberg bridge of one query. DuckDB's iceberg and httpfs extensions are not available, so the agent does the
// Iceberg work itself and lets DuckDB run the user's statement unchanged:
//  - every attached catalog becomes an in-memory DuckDB database of the same name holding one schema per
//    namespace; the default catalog is made current, so `schema.table` and `catalog.schema.table` both resolve;
//  - before each statement, every Iceberg table it reads becomes a view over `read_parquet` of locally cached data
//    files (pruned, fetched over S3 in Node with the credentials vended for this query) with field-id column
//    mapping; a table it writes becomes a real DuckDB table (empty for INSERT, loaded for UPDATE/DELETE/MERGE: with
//    merge-on-read only the rows the statement can touch, when its WHERE or its MERGE keys tell which);
//  - after the statement, what changed in DuckDB is turned into Iceberg: new data files and a snapshot, a new
//    schema, a created or dropped table or namespace. A row-level change (UPDATE, DELETE, MERGE) of a v2 table is
//    merge-on-read by default: a position delete file for the rows deleted or updated and a data file for the
//    updated and inserted ones; copy-on-write (the table property `write.<op>.mode`, or a v1 table) rewrites the
//    files whose rows changed. Views and loaded tables apply the delete files of what they read.
// Credentials and the catalog token live in this object only and die with the query.
import type { DuckDBConnection } from '@duckdb/node-api';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { duckdbToIceberg, icebergToDuckdb } from '../../iceberg/duckdbTypes.ts';
import { currentSchema, defaultSpec, type NestedField, type Schema, type TableMetadata } from '../../iceberg/metadata.ts';
import { defaultAttachment, type IcebergAttachment } from './attachments.ts';
import { CatalogHttpError, IcebergCatalogClient, type LoadedTable } from './catalog.ts';
import { commitCreate, commitSchema, commitSnapshot, type AddedDeleteFile, type TableHandle } from './commit.ts';
import { LinkedFiles, type DataFileCache } from '../dataCache.ts';
import { BridgeError, catalogError, unsupported } from './errors.ts';
import { RESULT_COLUMNS, runProcedure } from './maintenance.ts';
import { planScan, type PlannedFile } from './scan.ts';
import { liveRowsFilter, touchedRowsFilter, writePositionDeletes, type DeletedRow, type LocalDeletes } from './deletes.ts';
import { mergeRows } from './mergeRows.ts';
import { rowLevelMode, type RowLevelMode } from '../../iceberg/positionDeletes.ts';
import { analyzeStatement, snapshotSuffix, type StatementInfo, type TableRef } from './statements.ts';
import { splitStatements } from '../../sqltext/scan.ts';
import { TableStorage } from './storage.ts';
import { quoteIdent, quoteLiteral, writeDataFiles } from './write.ts';
import type { Logger } from '../logger.ts';

export interface BridgeOptions {
  readonly attachments: readonly IcebergAttachment[];
  readonly connection: DuckDBConnection;
  /** The query's scratch directory (inside DuckDB's allowed directories): data files are written here first. */
  readonly workDir: string;
  readonly cache: DataFileCache;
  /** Where cached files are linked for DuckDB to read (default: `<workDir>/files`, this query's own). A SQL session
   *  passes the one its statements share: its earlier statements' views still read their links. */
  readonly links?: LinkedFiles;
  readonly logger: Logger;
  /** Called between uploading a write's files and committing it (tests abort a commit here). */
  readonly beforeCommit?: () => Promise<void>;
  /** Make the default catalog current (`USE`). A SQL session's statement carries its session's current catalog
   *  (the api follows the session's `USE`) as the default, so it is made current before every statement. */
  readonly useDefault?: boolean;
  /** A SQL session inside BEGIN … COMMIT: an Iceberg commit cannot be rolled back, so a statement that would change
   *  a catalog (a table's rows or definition, a schema, a maintenance procedure) is refused with this reason. */
  readonly inTransaction?: boolean;
  /** A one-shot query on a connection that holds none of the catalogs (a new instance or an emptied slot, proven
   *  empty), not a session, whose later statements expect the catalogs and what they left in them:
   *  - when no statement needs the catalogs (a read naming no table, `SELECT 42`), none is attached. Attaching, USE
   *    and the slot's DETACH after cost a trivial query ~0.75 ms of the agent's CPU, a third of its own work; only
   *    current_database() tells;
   *  - the first statement's views go into catalogs attached just now, so nothing is under their names to drop
   *    (asking DuckDB costs a warm scan ~1 ms). */
  readonly oneShot?: boolean;
}

export interface BridgeStats {
  tablesLoaded: number;
  filesScanned: number;
  filesSkipped: number;
  manifestsSkipped: number;
  commits: number;
  commitAttempts: number;
}

interface Attached {
  readonly attachment: IcebergAttachment;
  readonly client: IcebergCatalogClient;
  /** Namespace by lower-case name (DuckDB compares identifiers case-insensitively). */
  readonly namespaces: Map<string, string>;
}

interface Resolved {
  att: Attached;
  namespace: string;
  /** Table name in the catalog (suffix removed). */
  table: string;
  /** The name as written in SQL (DuckDB object name). */
  sqlName: string;
  snapshotId?: bigint;
  /** read the snapshot current at this instant (epoch ms) */
  asOfMs?: number;
}

interface TargetState {
  kind: StatementInfo['kind'];
  resolved: Resolved;
  handle: TableHandle | null;
  /** Files loaded into the DuckDB table, with their rowid ranges; `positioned`: the rows' positions in the file are
   *  in `__eider_pos_<tag>` (rows were left out: deleted ones, or ones the statement cannot touch), else row k of
   *  the range is at position k. */
  ranges: Array<{ planned: PlannedFile; lo: number; hi: number; positioned: boolean }>;
  /** UPDATE/DELETE/MERGE: how the change is written. */
  mode?: RowLevelMode;
  baseRows: number;
  /** ALTER: the columns before the statement. */
  columnsBefore?: Array<{ name: string; type: string }>;
  existed: boolean;
  tag: string;
  /** Temporary tables of the statement's own to drop once it is done (a MERGE's source read once). */
  temporary: string[];
}

// DuckDB's own catalogs cannot be shadowed by an attachment.
const RESERVED_CATALOGS = new Set(['memory', 'system', 'temp', 'main']);
// Schemas DuckDB answers itself in every catalog (a read of its metadata): not loaded early from the catalog service.
const DUCKDB_SCHEMAS = new Set(['information_schema', 'pg_catalog']);
const DOWNLOAD_CONCURRENCY = 8;

/** A table of an attached catalog, names as the catalog service is asked for them. */
const loadKey = (att: Attached, namespace: string, table: string) => `${att.attachment.name}\u0000${namespace}\u0000${table}`;

const objectPath = (catalog: string, schema: string, name: string) => `${quoteIdent(catalog)}.${quoteIdent(schema)}.${quoteIdent(name)}`;

async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  });
  await Promise.all(workers);
  return out;
}

/**
 * `SELECT` over data files with field-id column mapping; an empty table is a typed empty relation. A table whose
 * schema never changed (`evolved` false) has every file written with the current names and types, so it is read
 * by name: field-id mapping costs DuckDB about a fifth more on a full scan. `deletes[i]` (when given and not null)
 * are the position delete files of `paths[i]`: that file is read on its own without the rows they remove.
 */
function scanSql(schema: Schema, paths: readonly string[], evolved = true, deletes?: ReadonlyArray<LocalDeletes | null>): string {
  if (deletes?.some((d) => d !== null)) {
    // The row position is a virtual column of read_parquet itself: the filter goes on each file's own scan.
    const plain = paths.filter((_, i) => !deletes[i]);
    const parts = paths.flatMap((p, i) => (deletes[i] ? [readSql(schema, [p], evolved, ` WHERE ${liveRowsFilter(schema, deletes[i]!)}`)] : []));
    if (plain.length) parts.unshift(readSql(schema, plain, evolved, ''));
    return parts.join(' UNION ALL ');
  }
  if (paths.length === 0) {
    const cols = schema.fields.map((f) => `CAST(NULL AS ${icebergToDuckdb(f.type)}) AS ${quoteIdent(f.name)}`);
    return `SELECT ${cols.join(', ')} LIMIT 0`;
  }
  return readSql(schema, paths, evolved, '');
}

/** `select` (default: the schema's columns) from the files, read by name or by field id, with `where` appended. */
function readSql(schema: Schema, paths: readonly string[], evolved: boolean, where: string, select?: string): string {
  const columns = select ?? schema.fields.map((f) => quoteIdent(f.name)).join(', ');
  if (!evolved) return `SELECT ${columns} FROM read_parquet([${paths.map(quoteLiteral).join(', ')}])${where}`;
  const map = schema.fields
    .map((f) => `${f.id}: {name: ${quoteLiteral(f.name)}, type: ${quoteLiteral(icebergToDuckdb(f.type))}, default_value: NULL}`)
    .join(', ');
  return `SELECT ${columns} FROM read_parquet([${paths.map(quoteLiteral).join(', ')}], schema = MAP {${map}})${where}`;
}

function columnDefs(schema: Schema): string {
  return schema.fields.map((f) => `${quoteIdent(f.name)} ${icebergToDuckdb(f.type)}`).join(', ');
}

const inTransaction = () =>
  unsupported('a change to a catalog table or schema commits at once and cannot be rolled back, so it is not allowed inside a transaction: COMMIT or ROLLBACK first (temporary tables are transactional)');

export class IcebergBridge {
  readonly #o: BridgeOptions;
  readonly #attached = new Map<string, Attached>();
  readonly #default: Attached | undefined;
  readonly #statements: StatementInfo[];
  readonly #prepared = new Set<number>();
  readonly #targets = new Map<number, TargetState | null>();
  readonly #pinned: string[] = [];
  readonly #storages: TableStorage[] = [];
  readonly #links: LinkedFiles;
  /** The first statement's reads, loaded while the namespaces are listed (#loadEarly), by #loadKey. */
  readonly #early = new Map<string, Promise<LoadedTable | null>>();
  /** A one-shot query's schemas and USE (#attach), run with the first statement of the bridge's own (#run). */
  #pending = '';
  #attachedOnConnection: string[] = [];
  readonly stats: BridgeStats = { tablesLoaded: 0, filesScanned: 0, filesSkipped: 0, manifestsSkipped: 0, commits: 0, commitAttempts: 0 };

  private constructor(options: BridgeOptions, statements: StatementInfo[]) {
    this.#o = options;
    this.#statements = statements;
    this.#links = options.links ?? new LinkedFiles(join(options.workDir, 'files'));
    for (const a of options.attachments) {
      this.#attached.set(a.name.toLowerCase(), { attachment: a, client: new IcebergCatalogClient(a), namespaces: new Map() });
    }
    const d = defaultAttachment(options.attachments);
    this.#default = d ? this.#attached.get(d.name.toLowerCase()) : undefined;
  }

  /** Attaches every catalog (namespaces as DuckDB schemas) and analyzes the statements of `sql`. */
  static async open(options: BridgeOptions, sql: string): Promise<IcebergBridge> {
    const statements = splitStatements(sql).map(analyzeStatement);
    // Past the parser's nesting guard the statement's tables cannot be read: run without them, it failed with a
    // misleading "Table … does not exist"; refused here, it says why.
    const tooDeep = statements.find((s) => s.parseError?.includes('E_GUARD_'));
    if (tooDeep) throw new Error(`Parser Error: the statement nests too deeply for its tables to be read (${tooDeep.parseError}); simplify it`);
    const bridge = new IcebergBridge(options, statements);
    await bridge.#attach();
    return bridge;
  }

  /** The SQL DuckDB runs: the user's statements, with only `PARTITIONED BY (…)` clauses removed. */
  get sql(): string {
    return this.#statements.map((s) => s.sql).join(';\n');
  }

  /** The catalogs this bridge attached on the connection (none when no statement needed them). */
  get attachedCatalogs(): string[] {
    return this.#attachedOnConnection;
  }

  /** Whether `name` is one of the catalogs this bridge attached. */
  attaches(name: string): boolean {
    return this.#attached.has(name.toLowerCase());
  }

  get statementCount(): number {
    return this.#statements.length;
  }

  async #attach(): Promise<void> {
    const c = this.#o.connection;
    const attachments = [...this.#attached.values()];
    for (const att of attachments) {
      const name = att.attachment.name;
      if (RESERVED_CATALOGS.has(name.toLowerCase())) throw catalogError(`a catalog cannot be named ${name} on the agent (reserved by DuckDB)`);
    }
    // A read that names no table (`SELECT 42`) needs nothing from the catalog service: no round trip, and no
    // failure when it is unreachable. The listing and DuckDB's ATTACH go on at once (neither needs the other), with
    // the early loads of a one-shot read's tables (#loadEarly); the schemas and USE follow in one round trip to
    // DuckDB (each costs a hop through its thread), a one-shot query's in the round trip of its first view (#run).
    const used = this.#statements.some((st) => st.kind !== 'select' || st.refs.length > 0);
    if (!used && this.#o.oneShot) return;
    if (used) this.#loadEarly();
    const listing = used
      ? Promise.all(
          attachments.map(async (att) => {
            for (const ns of await att.client.listNamespaces()) att.namespaces.set(ns.toLowerCase(), ns);
          }),
        )
      : Promise.resolve();
    // IF NOT EXISTS: a session's connection keeps what its earlier statements attached.
    this.#attachedOnConnection = attachments.map((att) => att.attachment.name);
    const attaching = attachments.length
      ? c.run(attachments.map((att) => `ATTACH IF NOT EXISTS ':memory:' AS ${quoteIdent(att.attachment.name)}`).join(';\n'))
      : Promise.resolve();
    // Both settle before a failure is passed on: the connection must not close under a running ATTACH.
    for (const r of await Promise.allSettled([listing, attaching])) if (r.status === 'rejected') throw r.reason;
    // A scoped attachment lists only what its grants show: SQL's catalog metadata (information_schema,
    // duckdb_schemas(), SHOW) sees no other namespace. A table reference outside them was refused by the api.
    const shown = (att: Attached, ns: string) => att.attachment.schemas === undefined || att.attachment.schemas.includes(ns.toLowerCase());
    const then = attachments.flatMap((att) =>
      [...att.namespaces.values()]
        .filter((ns) => ns.toLowerCase() !== 'main' && shown(att, ns))
        .map((ns) => `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(att.attachment.name)}.${quoteIdent(ns)}`),
    );
    if (this.#default && this.#o.useDefault !== false) then.push(`USE ${quoteIdent(this.#default.attachment.name)}`);
    // A one-shot query's first read sends them with its view, in one round trip to DuckDB instead of two (#run).
    if (then.length && this.#o.oneShot) this.#pending = then.join(';\n');
    else if (then.length) await c.run(then.join(';\n'));
  }

  /**
   * A one-shot query whose first statement only reads starts loading its tables alongside the namespace listing
   * instead of after it: the load was the next round trip to the catalog service on the way to the statement. Each
   * reference is resolved as #resolve will once the namespaces are known, taking the name as written; #load takes an
   * early load only when the reference resolved to that same catalog, namespace and table, and asks again
   * otherwise (a name written in another case, a schema that is also a catalog's name). Nothing is kept past the
   * query: both answers are as fresh as the listing, asked at the same moment for the same query. (Not a session's:
   * its statements name temporary tables too, which would be asked of the catalog service for nothing.)
   */
  #loadEarly(): void {
    const first = this.#statements[0];
    if (!this.#o.oneShot || !first || first.kind !== 'select' || first.call) return;
    for (const ref of first.refs) {
      if (ref.schema !== null && DUCKDB_SCHEMAS.has(ref.schema.toLowerCase())) continue;
      let att: Attached | undefined;
      let ns: string;
      if (ref.catalog !== null) {
        att = this.#byName(ref.catalog);
        ns = ref.schema ?? 'main';
      } else if (ref.schema !== null) {
        // A catalog's name or a namespace of the default one: the listing tells.
        if (this.#byName(ref.schema)) continue;
        att = this.#default;
        ns = ref.schema;
      } else {
        att = this.#default;
        ns = 'main';
      }
      if (!att) continue;
      const table = snapshotSuffix(ref.name)?.base ?? ref.name;
      const key = loadKey(att, ns, table);
      if (this.#early.has(key)) continue;
      const loading = att.client.loadTable(ns, table);
      // Passed on only if #load takes it; an unused one's failure is no failure of the query.
      loading.catch(() => undefined);
      this.#early.set(key, loading);
    }
  }

  #byName(name: string | null): Attached | undefined {
    return name === null ? undefined : this.#attached.get(name.toLowerCase());
  }

  #resolve(ref: TableRef): Resolved | null {
    let att: Attached | undefined;
    let ns: string;
    if (ref.catalog !== null) {
      att = this.#byName(ref.catalog);
      ns = ref.schema ?? 'main';
    } else if (ref.schema !== null) {
      if (this.#default?.namespaces.has(ref.schema.toLowerCase())) att = this.#default;
      else if (this.#byName(ref.schema)) return this.#resolve({ catalog: ref.schema, schema: 'main', name: ref.name });
      else att = this.#default;
      ns = ref.schema;
    } else {
      att = this.#default;
      ns = 'main';
    }
    if (!att) return null;
    const namespace = att.namespaces.get(ns.toLowerCase()) ?? ns;
    const travel = snapshotSuffix(ref.name);
    return {
      att,
      namespace,
      table: travel?.base ?? ref.name,
      sqlName: ref.name,
      ...(travel && 'snapshotId' in travel ? { snapshotId: travel.snapshotId } : {}),
      ...(travel && 'asOfMs' in travel ? { asOfMs: travel.asOfMs } : {}),
    };
  }

  #path(r: Resolved): string {
    return objectPath(r.att.attachment.name, r.namespace, r.sqlName);
  }

  async #load(r: Resolved): Promise<TableHandle | null> {
    if (!r.att.namespaces.has(r.namespace.toLowerCase())) return null;
    let name = r.table;
    const key = loadKey(r.att, r.namespace, name);
    const early = this.#early.get(key);
    this.#early.delete(key);
    let loaded: LoadedTable | null = await (early ?? r.att.client.loadTable(r.namespace, name));
    if (!loaded) {
      // DuckDB resolves names case-insensitively; Iceberg names are exact.
      const match = (await r.att.client.listTables(r.namespace)).find((t) => t.toLowerCase() === r.table.toLowerCase());
      if (!match) return null;
      name = match;
      loaded = await r.att.client.loadTable(r.namespace, name);
      if (!loaded) return null;
    }
    const storage = new TableStorage(`${r.att.attachment.name}.${r.namespace}.${name}`, loaded.storage);
    this.#storages.push(storage);
    this.stats.tablesLoaded++;
    return { client: r.att.client, namespace: r.namespace, name, loaded, storage };
  }

  /** The data files and the delete files that apply to them, cached and linked where DuckDB reads them. */
  async #fetchWithDeletes(handle: TableHandle, files: readonly PlannedFile[]): Promise<{ paths: string[]; deletes: Array<LocalDeletes | null> }> {
    const deleteFiles = [...new Map(files.flatMap((f) => f.deletes.map((d) => [d.file.file_path, d.file] as const))).values()];
    const all = [...files.map((f) => f.file), ...deleteFiles];
    const cached = await pool(all, DOWNLOAD_CONCURRENCY, (f) =>
      this.#o.cache.acquire(f.file_path, Number(f.file_size_in_bytes), (path) => handle.storage.download(f.file_path, path)),
    );
    this.#pinned.push(...cached);
    const linked = await Promise.all(cached.map((path) => this.#links.link(path)));
    const localDelete = new Map(deleteFiles.map((d, i) => [d.file_path, linked[files.length + i]]));
    return {
      paths: linked.slice(0, files.length),
      deletes: files.map((f) => (f.deletes.length ? { path: f.file.file_path, files: f.deletes.map((d) => localDelete.get(d.file.file_path)!) } : null)),
    };
  }

  /** Prepares statement `index`: views for the tables it reads, a DuckDB table for the one it writes. Idempotent. */
  async before(index: number): Promise<void> {
    await this.#prepare(index);
    await this.#run('');
  }

  /** Runs `sql` on the connection after what #attach left pending, in the same round trip; '' runs only that. */
  async #run(sql: string): Promise<void> {
    const pending = this.#pending;
    this.#pending = '';
    const both = [pending, sql].filter(Boolean).join(';\n');
    if (both) await this.#o.connection.run(both);
  }

  async #prepare(index: number): Promise<void> {
    if (this.#prepared.has(index)) return;
    this.#prepared.add(index);
    const info = this.#statements[index];
    if (!info) return;
    const c = this.#o.connection;
    // Only a read's views (#prepareReads) carry what is pending: anything else runs after it.
    if (info.kind !== 'select' || info.call) await this.#run('');
    if (info.call) {
      // The procedure runs once the query is admitted (run()); until then its result is an empty typed table,
      // which the statement DuckDB runs (and EXPLAIN) binds against.
      const cols = RESULT_COLUMNS[info.call.procedure].map((name) => `${quoteIdent(name)} BIGINT`);
      await c.run(`CREATE TEMP TABLE temp.main.${info.call.resultTable} (${cols.join(', ')})`);
      return;
    }
    if (this.#o.inTransaction && (info.call || this.#changesSchema(info) || (await this.#writesTable(info)))) throw inTransaction();
    const keyOf = (r: Resolved) => `${r.att.attachment.name}.${r.namespace}.${r.sqlName}`.toLowerCase();
    // A MERGE's source is read before its target is loaded: the source's keys tell which target rows to load.
    if (info.kind === 'merge') {
      const written = info.target && !info.temporary ? this.#resolve(info.target) : null;
      await this.#prepareReads(index, info, written ? keyOf(written) : null);
      await this.#prepareTarget(index, info);
      return;
    }
    const target = await this.#prepareTarget(index, info);
    await this.#prepareReads(index, info, target ? keyOf(target.resolved) : null);
  }

  /** Views for the Iceberg tables statement `index` reads, but the one it writes (`targetKey`). */
  async #prepareReads(index: number, info: StatementInfo, targetKey: string | null): Promise<void> {
    const seen = new Set<string>();
    const icebergRefs = info.refs.map((ref) => ({ ref, resolved: this.#resolve(ref) })).filter((x) => x.resolved !== null) as Array<{ ref: TableRef; resolved: Resolved }>;
    for (const { resolved } of icebergRefs) {
      const key = `${resolved.att.attachment.name}.${resolved.namespace}.${resolved.sqlName}`.toLowerCase();
      if (key === targetKey || seen.has(key)) continue;
      seen.add(key);
      const handle = await this.#load(resolved);
      if (!handle) continue;
      // Predicates prune only when this is the statement's one table reference (a join's WHERE may name columns of
      // several tables, and a self-join reads the table twice).
      const single = icebergRefs.length === 1 && info.refs.length === 1;
      const snapshotId = resolved.asOfMs !== undefined ? snapshotAsOf(handle.loaded.metadata, resolved.asOfMs) : resolved.snapshotId;
      const plan = await planScan(handle.loaded.metadata, handle.storage, {
        ...(snapshotId !== undefined ? { snapshotId } : {}),
        predicates: single ? info.predicates : [],
        qualifiers: [resolved.sqlName.toLowerCase(), ...(info.targetAlias ? [info.targetAlias.toLowerCase()] : [])],
      });
      this.#count(plan);
      const { paths, deletes } = await this.#fetchWithDeletes(handle, plan.files);
      if (!(this.#o.oneShot && index === 0)) await this.#clearObject(resolved);
      await this.#run(`CREATE VIEW ${this.#path(resolved)} AS ${scanSql(plan.schema, paths, handle.loaded.metadata.schemas.length > 1, deletes)}`);
    }
  }

  /** Whether the statement writes an Iceberg table (decided before anything is written to DuckDB's catalogs). */
  async #writesTable(info: StatementInfo): Promise<boolean> {
    const writes = ['insert', 'update', 'delete', 'merge', 'create_table', 'alter_table', 'drop_table'];
    if (!writes.includes(info.kind) || !info.target || info.temporary) return false;
    const resolved = this.#resolve(info.target);
    if (!resolved) return false;
    return info.kind === 'create_table' || (await this.#load(resolved)) !== null;
  }

  /** CREATE/DROP SCHEMA in an attached catalog (what #afterCreateSchema / #afterDropSchema would carry out). */
  #changesSchema(info: StatementInfo): boolean {
    if ((info.kind !== 'create_schema' && info.kind !== 'drop_schema') || !info.target) return false;
    return (info.target.catalog !== null ? this.#byName(info.target.catalog) : this.#default) !== undefined;
  }

  #count(plan: { files: unknown[]; filesSkipped: number; manifestsSkipped: number }): void {
    this.stats.filesScanned += plan.files.length;
    this.stats.filesSkipped += plan.filesSkipped;
    this.stats.manifestsSkipped += plan.manifestsSkipped;
  }

  async #prepareTarget(index: number, info: StatementInfo): Promise<TargetState | null> {
    const writes = ['insert', 'update', 'delete', 'merge', 'create_table', 'alter_table', 'drop_table'];
    if (!writes.includes(info.kind) || !info.target || info.temporary) {
      this.#targets.set(index, null);
      return null;
    }
    const resolved = this.#resolve(info.target);
    if (!resolved) {
      this.#targets.set(index, null);
      return null;
    }
    if (resolved.snapshotId !== undefined || resolved.asOfMs !== undefined) {
      throw unsupported(`${info.target.name} is a snapshot of a table: snapshots are read-only`);
    }
    const c = this.#o.connection;
    const handle = await this.#load(resolved);
    const state: TargetState = { kind: info.kind, resolved, handle, ranges: [], baseRows: 0, existed: handle !== null, tag: randomUUID().replace(/-/g, ''), temporary: [] };
    if (handle && (info.kind === 'update' || info.kind === 'delete' || info.kind === 'merge')) state.mode = rowLevelMode(handle.loaded.metadata, info.kind);
    this.#targets.set(index, state);
    if (resolved.att.namespaces.has(resolved.namespace.toLowerCase())) await this.#clearObject(resolved);
    if (info.kind === 'create_table') {
      // An existing table is present in DuckDB too, so IF NOT EXISTS / OR REPLACE / "already exists" behave as usual.
      if (handle) await c.run(`CREATE TABLE ${this.#path(resolved)} (${columnDefs(currentSchema(handle.loaded.metadata))})`);
      else if (resolved.namespace.toLowerCase() === 'main' && !resolved.att.namespaces.has('main')) {
        // `main` is DuckDB's default schema: a table created there lands in the catalog's namespace `main`.
        await resolved.att.client.createNamespace('main').catch((e) => {
          if (!(e instanceof CatalogHttpError && e.status === 409)) throw e;
        });
        resolved.att.namespaces.set('main', 'main');
      }
      return state;
    }
    if (!handle) return state; // DuckDB reports the missing table in its own words
    const metadata = handle.loaded.metadata;
    const schema = currentSchema(metadata);
    const path = this.#path(resolved);
    await c.run(`CREATE TABLE ${path} (${columnDefs(schema)})`);
    if (info.kind === 'alter_table') {
      state.columnsBefore = await this.#columns(resolved);
      return state;
    }
    if (info.kind === 'drop_table') return state;
    const selfRead = info.refs.filter((r) => {
      const x = this.#resolve(r);
      return x && x.att === resolved.att && x.namespace.toLowerCase() === resolved.namespace.toLowerCase() && x.sqlName.toLowerCase() === resolved.sqlName.toLowerCase();
    }).length;
    // INSERT only appends: the table's rows are needed only when the statement also reads the table.
    if (info.kind === 'insert' && selfRead <= 1) return state;
    const prune = (info.kind === 'update' || info.kind === 'delete') && selfRead === 1;
    const qualifiers = [resolved.sqlName.toLowerCase(), ...(info.targetAlias ? [info.targetAlias.toLowerCase()] : [])];
    // Merge-on-read leaves the rows a statement does not touch where they are, so an UPDATE or DELETE of the table
    // alone loads only the rows its WHERE can match, and a MERGE only the rows whose keys a source row has (its
    // source read first: mergeRows.ts): 10 rows cost 10 rows, not the table (COW rewrites whole files). (Not when a
    // column is named file_row_number: it would hide the virtual column the positions are read from.)
    const hidesPosition = schema.fields.some((f) => f.name.toLowerCase() === 'file_row_number');
    let predicates = prune ? info.predicates : [];
    let touched = state.mode === 'merge-on-read' && prune && !hidesPosition ? touchedRowsFilter(info.predicates, schema, qualifiers) : null;
    if (info.kind === 'merge' && state.mode === 'merge-on-read' && selfRead === 1 && info.merge && !hidesPosition) {
      // Only the first statement's text may change: DuckDB takes the script's text once it is prepared.
      const bound = await mergeRows(c, info.sql, info.merge, schema, state.tag, index === 0);
      if (bound) {
        predicates = bound.predicates;
        touched = bound.filter;
        if (bound.sql !== null) info.sql = bound.sql;
        state.temporary.push(...bound.temporary);
      }
    }
    const plan = await planScan(metadata, handle.storage, { predicates, qualifiers });
    this.#count(plan);
    const { paths, deletes } = await this.#fetchWithDeletes(handle, plan.files);
    if (state.mode === 'merge-on-read') await c.run(`CREATE TEMP TABLE __eider_pos_${state.tag} (rid BIGINT, pos BIGINT)`);
    let lo = 0;
    for (let i = 0; i < paths.length; i++) {
      // One INSERT per file: DuckDB numbers the rows of one append contiguously, so each file is a rowid range, and
      // keeps the file's order (preserve_insertion_order, locked on): the k-th row of a range is the k-th row the same
      // filtered scan gives, whose position merge-on-read records.
      const filters = [deletes[i] ? liveRowsFilter(schema, deletes[i]!) : null, touched].filter((f): f is string => f !== null);
      const where = filters.length ? ` WHERE ${filters.join(' AND ')}` : '';
      const res = await c.run(`INSERT INTO ${path} ${readSql(schema, [paths[i]], true, where)}`);
      const n = Number(res.rowsChanged);
      const positioned = state.mode === 'merge-on-read' && filters.length > 0;
      if (positioned) {
        const pos = await c.run(
          `INSERT INTO __eider_pos_${state.tag} SELECT ${lo} + row_number() OVER (ORDER BY file_row_number) - 1, file_row_number FROM (${readSql(schema, [paths[i]], true, where, 'file_row_number')})`,
        );
        if (Number(pos.rowsChanged) !== n) throw new Error('internal: the positions of the loaded rows do not match them');
      }
      state.ranges.push({ planned: plan.files[i], lo, hi: lo + n, positioned });
      lo += n;
    }
    state.baseRows = lo;
    const check = await c.runAndReadAll(`SELECT count(*), coalesce(max(rowid), -1) FROM ${path}`);
    const [count, maxRowid] = check.getRows()[0] as [bigint, bigint];
    if (Number(count) !== lo || Number(maxRowid) !== lo - 1) throw new Error('internal: loaded rows are not numbered contiguously');
    if (state.mode === 'merge-on-read') {
      // A DELETE only removes rows (their rowids go missing); an UPDATE or MERGE may change a row in place, found by
      // its hash.
      if (info.kind !== 'delete') await c.run(`CREATE TEMP TABLE __eider_rows_${state.tag} AS SELECT rowid AS rid, hash(__eider_row) AS h FROM ${path} AS __eider_row`);
      return state;
    }
    if (state.ranges.length) {
      const values = state.ranges.map((r, i) => `(${i}, ${r.lo}, ${r.hi})`).join(', ');
      await c.run(`CREATE TEMP TABLE __eider_ranges_${state.tag} AS SELECT * FROM (VALUES ${values}) AS r(idx, lo, hi)`);
      await c.run(`CREATE TEMP TABLE __eider_before_${state.tag} AS ${this.#digestSql(path, state.tag)}`);
    }
    return state;
  }

  // Per loaded file: row count and a sum of row hashes. A file whose digest changed had a row updated or deleted.
  #digestSql(path: string, tag: string): string {
    return `SELECT r.idx, count(*) AS n, sum(hash(__eider_row)::HUGEINT) AS h FROM ${path} AS __eider_row JOIN __eider_ranges_${tag} AS r ON __eider_row.rowid >= r.lo AND __eider_row.rowid < r.hi GROUP BY r.idx`;
  }

  /** Drops what an earlier statement of the script left under this name (a view or a loaded table). */
  async #clearObject(r: Resolved): Promise<void> {
    const where = `database_name = ${quoteLiteral(r.att.attachment.name)} AND schema_name = ${quoteLiteral(r.namespace)} AND lower(${'%'}) = ${quoteLiteral(r.sqlName.toLowerCase())}`;
    const c = this.#o.connection;
    // Both counts in one round trip to DuckDB: nothing is there to drop, but for a session's earlier statement.
    const found = await c.runAndReadAll(
      `SELECT (SELECT count(*) FROM duckdb_tables() WHERE ${where.replace('%', 'table_name')}), (SELECT count(*) FROM duckdb_views() WHERE ${where.replace('%', 'view_name')})`,
    );
    const [tables, views] = found.getRows()[0].map(Number);
    if (tables > 0) await c.run(`DROP TABLE ${this.#path(r)}`);
    if (views > 0) await c.run(`DROP VIEW ${this.#path(r)}`);
  }

  async #columns(r: Resolved): Promise<Array<{ name: string; type: string }>> {
    const rows = await this.#o.connection.runAndReadAll(
      `SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ${quoteLiteral(r.att.attachment.name)} AND schema_name = ${quoteLiteral(r.namespace)} AND table_name = ${quoteLiteral(r.sqlName)} ORDER BY column_index`,
    );
    return rows.getRows().map((row) => ({ name: String(row[0]), type: String(row[1]) }));
  }

  async #exists(r: Resolved): Promise<boolean> {
    const rows = await this.#o.connection.runAndReadAll(
      `SELECT count(*) FROM duckdb_tables() WHERE database_name = ${quoteLiteral(r.att.attachment.name)} AND schema_name = ${quoteLiteral(r.namespace)} AND lower(table_name) = ${quoteLiteral(r.sqlName.toLowerCase())}`,
    );
    return Number(rows.getRows()[0][0]) > 0;
  }

  /**
   * Carries out a maintenance procedure (`CALL system.…`) on its table and leaves its one result row where the
   * statement DuckDB runs reads it. Null for every other statement.
   */
  async run(index: number): Promise<{ statementType: 'other'; wrote: true } | null> {
    const call = this.#statements[index]?.call;
    if (!call) return null;
    const resolved = this.#resolve(call.table);
    if (!resolved) throw unsupported(`CALL system.${call.procedure}: no attached catalog for table ${call.tableText}`);
    if (resolved.snapshotId !== undefined || resolved.asOfMs !== undefined) {
      throw unsupported(`CALL system.${call.procedure}: ${call.tableText} is a snapshot of a table; maintenance applies to the table`);
    }
    const handle = await this.#load(resolved);
    if (!handle) throw new BridgeError('sql_error', `Catalog Error: Table with name ${call.tableText} does not exist!`);
    const row = await runProcedure(call, handle, {
      connection: this.#o.connection,
      workDir: this.#o.workDir,
      cache: this.#o.cache,
      pinned: this.#pinned,
      logger: this.#o.logger,
      scan: async (h, files) => {
        const { paths, deletes } = await this.#fetchWithDeletes(h, files);
        return { sql: scanSql(currentSchema(h.loaded.metadata), paths, h.loaded.metadata.schemas.length > 1, deletes), deletes };
      },
      ...(this.#o.beforeCommit ? { beforeCommit: this.#o.beforeCommit } : {}),
    });
    const columns = RESULT_COLUMNS[call.procedure];
    await this.#o.connection.run(`INSERT INTO temp.main.${call.resultTable} VALUES (${columns.map((c) => String(Math.trunc(row[c] ?? 0))).join(', ')})`);
    this.#o.logger.info({ table: `${handle.namespace}.${handle.name}`, procedure: call.procedure, ...row }, 'iceberg maintenance');
    return { statementType: 'other', wrote: true };
  }

  /** Applies statement `index`'s effect to Iceberg. Returns the row count to report, or null to keep DuckDB's. */
  async after(index: number, rowsChanged: number): Promise<number | null> {
    const info = this.#statements[index];
    if (!info) return null;
    switch (info.kind) {
      case 'create_schema':
        await this.#afterCreateSchema(info);
        return null;
      case 'drop_schema':
        await this.#afterDropSchema(info);
        return null;
    }
    const state = this.#targets.get(index);
    if (!state) return null;
    switch (state.kind) {
      case 'insert':
      case 'update':
      case 'delete':
      case 'merge':
        if (state.handle) await this.#afterDml(state);
        return rowsChanged;
      case 'create_table':
        return this.#afterCreateTable(info, state);
      case 'alter_table':
        if (state.handle) await this.#afterAlter(info, state);
        return null;
      case 'drop_table':
        if (state.handle && !(await this.#exists(state.resolved))) {
          await state.handle.client.dropTable(state.handle.namespace, state.handle.name, true);
        }
        return null;
    }
    return null;
  }

  async #afterDml(state: TargetState): Promise<void> {
    if (state.mode === 'merge-on-read') return this.#afterRowDelta(state);
    const c = this.#o.connection;
    const handle = state.handle!;
    const path = this.#path(state.resolved);
    const affected: number[] = [];
    if (state.ranges.length) {
      const rows = await c.runAndReadAll(
        `SELECT b.idx FROM __eider_before_${state.tag} AS b LEFT JOIN (${this.#digestSql(path, state.tag)}) AS a ON a.idx = b.idx WHERE a.idx IS NULL OR a.n <> b.n OR a.h <> b.h`,
      );
      for (const row of rows.getRows()) affected.push(Number(row[0]));
    }
    const added = await c.runAndReadAll(`SELECT count(*) FROM ${path} WHERE rowid >= ${state.baseRows}`);
    const newRows = Number(added.getRows()[0][0]);
    if (affected.length === 0 && newRows === 0) return;
    const metadata = handle.loaded.metadata;
    const schema = currentSchema(metadata);
    let source = `SELECT * FROM ${path} WHERE rowid >= ${state.baseRows}`;
    if (affected.length) {
      await c.run(`CREATE TEMP TABLE __eider_affected_${state.tag} AS SELECT * FROM __eider_ranges_${state.tag} WHERE idx IN (${affected.join(', ')})`);
      source += ` UNION ALL SELECT __eider_row.* FROM ${path} AS __eider_row JOIN __eider_affected_${state.tag} AS r ON __eider_row.rowid >= r.lo AND __eider_row.rowid < r.hi`;
    }
    const written = await writeDataFiles(c, source, { schema, spec: defaultSpec(metadata), location: metadata.location.replace(/\/+$/, '') }, handle.storage, this.#o.workDir, this.#o.cache, this.#pinned);
    const removed = new Map(affected.map((i) => [state.ranges[i].planned.file.file_path, state.ranges[i].planned.manifestPath]));
    await this.#commit(handle, written.files, removed);
  }

  /**
   * Merge-on-read: the loaded rows that are gone or changed (by rowid, each a file's k-th live row) become position
   * deletes of their data files; the changed rows still there and the rows added go into new data files.
   */
  async #afterRowDelta(state: TargetState): Promise<void> {
    try {
      await this.#writeRowDelta(state);
    } finally {
      // The per-row hashes are as many rows as the table: a SQL session's connection must not keep them.
      await this.#o.connection.run(
        [`__eider_rows_${state.tag}`, `__eider_changed_${state.tag}`, `__eider_pos_${state.tag}`, ...state.temporary].map((t) => `DROP TABLE IF EXISTS ${t}`).join('; '),
      );
    }
  }

  async #writeRowDelta(state: TargetState): Promise<void> {
    const c = this.#o.connection;
    const handle = state.handle!;
    const path = this.#path(state.resolved);
    const changed = `__eider_changed_${state.tag}`;
    const gone =
      state.kind === 'delete'
        ? `SELECT r.range AS rid FROM range(0, ${state.baseRows}) AS r ANTI JOIN (SELECT rowid AS rid FROM ${path}) AS a ON a.rid = r.range`
        : `SELECT b.rid FROM __eider_rows_${state.tag} AS b LEFT JOIN (SELECT rowid AS rid, hash(__eider_row) AS h FROM ${path} AS __eider_row) AS a ON a.rid = b.rid WHERE a.rid IS NULL OR a.h <> b.h`;
    await c.run(`CREATE TEMP TABLE ${changed} AS ${gone}`);
    const rids = (await c.runAndReadAll(`SELECT rid FROM ${changed} ORDER BY rid`)).getRows().map((r) => Number(r[0] as bigint));
    const added = await c.runAndReadAll(`SELECT count(*) FROM ${path} WHERE rowid >= ${state.baseRows}`);
    const newRows = Number(added.getRows()[0][0]);
    if (rids.length === 0 && newRows === 0) return;
    // rowid → (range, k): ranges are in rowid order.
    const byRange = new Map<number, number[]>();
    let r = 0;
    for (const rid of rids) {
      while (state.ranges[r].hi <= rid) r++;
      const ks = byRange.get(r);
      if (ks) ks.push(rid - state.ranges[r].lo);
      else byRange.set(r, [rid - state.ranges[r].lo]);
    }
    const deleted: DeletedRow[] = [];
    const recorded = new Map<number, bigint>();
    if (state.ranges.some((x) => x.positioned) && rids.length) {
      const found = await c.runAndReadAll(`SELECT p.rid, p.pos FROM __eider_pos_${state.tag} AS p SEMI JOIN ${changed} AS x ON x.rid = p.rid`);
      for (const row of found.getRows()) recorded.set(Number(row[0] as bigint), row[1] as bigint);
    }
    for (const [i, ks] of byRange) {
      const range = state.ranges[i];
      const at = { path: range.planned.file.file_path, specId: range.planned.specId, partition: range.planned.file.partition };
      for (const k of ks) {
        const pos = range.positioned ? recorded.get(range.lo + k) : BigInt(k);
        if (pos === undefined) throw new Error('internal: a changed row has no position in its data file');
        deleted.push({ ...at, pos });
      }
    }
    const metadata = handle.loaded.metadata;
    const location = metadata.location.replace(/\/+$/, '');
    const source = `SELECT * FROM ${path} WHERE rowid >= ${state.baseRows} UNION ALL SELECT * FROM ${path} WHERE rowid IN (SELECT rid FROM ${changed})`;
    const written = await writeDataFiles(c, source, { schema: currentSchema(metadata), spec: defaultSpec(metadata), location }, handle.storage, this.#o.workDir, this.#o.cache, this.#pinned);
    const deletes = deleted.length ? await writePositionDeletes(handle.storage, location, deleted) : [];
    await this.#commit(handle, written.files, new Map(), deletes, new Set(deleted.map((d) => d.path)));
  }

  async #commit(
    handle: TableHandle,
    added: Parameters<typeof commitSnapshot>[1]['added'],
    removed: Map<string, string>,
    addedDeletes: AddedDeleteFile[] = [],
    referenced: ReadonlySet<string> = new Set(),
    create = false,
  ): Promise<void> {
    const result = await commitSnapshot(
      handle,
      { added, removed, addedDeletes, referenced },
      { ...(this.#o.beforeCommit ? { beforeCommit: this.#o.beforeCommit } : {}), ...(create ? { create } : {}) },
    );
    this.stats.commits++;
    this.stats.commitAttempts += result.attempts;
    handle.loaded.metadata = result.metadata;
    this.#o.logger.info(
      {
        table: `${handle.namespace}.${handle.name}`,
        snapshotId: String(result.snapshotId),
        attempts: result.attempts,
        addedFiles: added.length,
        removedFiles: removed.size,
        addedDeleteFiles: addedDeletes.length,
      },
      'iceberg commit',
    );
  }

  async #afterCreateTable(info: StatementInfo, state: TargetState): Promise<number | null> {
    const r = state.resolved;
    if (!(await this.#exists(r))) return null;
    if (state.existed && !info.orReplace) return null; // IF NOT EXISTS on an existing table
    if (state.existed && state.handle) await state.handle.client.dropTable(state.handle.namespace, state.handle.name, true);
    const columns = await this.#columns(r);
    let id = columns.length;
    const fields: NestedField[] = columns.map((col, i) => ({
      id: i + 1,
      name: col.name,
      // Every field is optional: DuckDB's Parquet writer marks all columns OPTIONAL, and a required Iceberg field
      // over an OPTIONAL Parquet column is flagged by strict readers (engineering notes).
      required: false,
      type: duckdbToIceberg(col.type, () => ++id),
    }));
    const schema = { type: 'struct' as const, fields };
    const spec = {
      fields: (info.partitionBy ?? []).map((p) => {
        const source = fields.find((f) => f.name === p.column) ?? fields.find((f) => f.name.toLowerCase() === p.column.toLowerCase());
        if (!source) throw unsupported(`partition column ${p.column} is not a column of the table`);
        const base = p.transform.replace(/\[.*$/, '');
        const suffix = base === 'identity' ? '' : `_${base}`;
        return { 'source-id': source.id, transform: p.transform, name: `${source.name}${suffix}` };
      }),
    };
    // CREATE TABLE … AS SELECT is staged: the table exists only once the commit that creates it holds its rows, so a
    // statement failed between (agent killed, catalog error, credentials revoked) leaves no empty table behind.
    const staged = info.asSelect;
    const loaded = await r.att.client.createTable(r.namespace, r.table, schema, spec, { stage: staged });
    const storage = new TableStorage(`${r.att.attachment.name}.${r.namespace}.${r.table}`, loaded.storage);
    this.#storages.push(storage);
    const handle: TableHandle = { client: r.att.client, namespace: r.namespace, name: r.table, loaded, storage };
    const metadata = loaded.metadata;
    const written = await writeDataFiles(
      this.#o.connection,
      `SELECT * FROM ${this.#path(r)}`,
      { schema: currentSchema(metadata), spec: defaultSpec(metadata), location: metadata.location.replace(/\/+$/, '') },
      storage,
      this.#o.workDir,
      this.#o.cache,
      this.#pinned,
    );
    if (written.files.length) await this.#commit(handle, written.files, new Map(), [], new Set(), staged);
    else if (staged) handle.loaded.metadata = await commitCreate(handle);
    return info.asSelect ? written.rows : null;
  }

  async #afterAlter(info: StatementInfo, state: TargetState): Promise<void> {
    const handle = state.handle!;
    if (info.renameTo) {
      const to = info.renameTo;
      const ns = to.schema ?? handle.namespace;
      if (to.catalog && to.catalog.toLowerCase() !== state.resolved.att.attachment.name.toLowerCase()) throw unsupported('a table cannot be renamed into another catalog');
      await handle.client.renameTable(handle.namespace, handle.name, ns, to.name);
      return;
    }
    const before = state.columnsBefore ?? [];
    const after = await this.#columns(state.resolved);
    const change = diffColumns(before, after);
    if (!change) return;
    await commitSchema(handle, (metadata) => evolveSchema(metadata, change));
  }

  async #afterCreateSchema(info: StatementInfo): Promise<void> {
    const t = info.target;
    if (!t) return;
    const att = t.catalog !== null ? this.#byName(t.catalog) : this.#default;
    if (!att || att.namespaces.has(t.name.toLowerCase())) return;
    await att.client.createNamespace(t.name);
    att.namespaces.set(t.name.toLowerCase(), t.name);
  }

  async #afterDropSchema(info: StatementInfo): Promise<void> {
    const t = info.target;
    if (!t) return;
    const att = t.catalog !== null ? this.#byName(t.catalog) : this.#default;
    const ns = att?.namespaces.get(t.name.toLowerCase());
    if (!att || ns === undefined) return;
    if (info.cascade) {
      for (const table of await att.client.listTables(ns)) await att.client.dropTable(ns, table, true);
    }
    try {
      await att.client.dropNamespace(ns);
    } catch (error) {
      if (error instanceof CatalogHttpError && error.status === 409) {
        throw catalogError(`schema ${att.attachment.name}.${ns} is not empty: drop its tables first or use DROP SCHEMA … CASCADE`);
      }
      throw error;
    }
    att.namespaces.delete(t.name.toLowerCase());
  }

  /** Unpins cached files (after DuckDB is closed) and drops storage clients. */
  close(): void {
    this.#o.cache.release(this.#pinned.splice(0));
    for (const s of this.#storages.splice(0)) s.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// ALTER TABLE → schema evolution. DuckDB applies one change per ALTER; comparing its columns before and after
// tells which one, and the change is then replayed by name on the Iceberg schema (also on a newer base after 409).

type ColumnChange =
  | { op: 'add'; name: string; duckType: string }
  | { op: 'drop'; name: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'retype'; name: string; duckType: string };

function diffColumns(before: ReadonlyArray<{ name: string; type: string }>, after: ReadonlyArray<{ name: string; type: string }>): ColumnChange | null {
  if (after.length === before.length + 1) {
    const added = after.find((a) => !before.some((b) => b.name === a.name));
    return added ? { op: 'add', name: added.name, duckType: added.type } : null;
  }
  if (after.length === before.length - 1) {
    const dropped = before.find((b) => !after.some((a) => a.name === b.name));
    return dropped ? { op: 'drop', name: dropped.name } : null;
  }
  if (after.length !== before.length) throw unsupported('this ALTER TABLE changes several columns at once');
  const diffs = before.map((b, i) => ({ b, a: after[i] })).filter(({ a, b }) => a.name !== b.name || a.type !== b.type);
  if (diffs.length === 0) return null;
  if (diffs.length > 1) throw unsupported('this ALTER TABLE changes several columns at once');
  const { a, b } = diffs[0];
  if (a.name !== b.name && a.type === b.type) return { op: 'rename', from: b.name, to: a.name };
  if (a.name === b.name) return { op: 'retype', name: a.name, duckType: a.type };
  throw unsupported('this ALTER TABLE changes several columns at once');
}

function widens(from: string, to: string): boolean {
  if (from === to) return true;
  if (from === 'int' && to === 'long') return true;
  if (from === 'float' && to === 'double') return true;
  const d1 = /^decimal\((\d+),\s*(\d+)\)$/.exec(from);
  const d2 = /^decimal\((\d+),\s*(\d+)\)$/.exec(to);
  return Boolean(d1 && d2 && d1[2] === d2[2] && Number(d2[1]) >= Number(d1[1]));
}

function evolveSchema(metadata: TableMetadata, change: ColumnChange): { schema: Schema; lastColumnId: number } {
  const schema = currentSchema(metadata);
  let last = metadata['last-column-id'];
  const find = (name: string) => {
    const f = schema.fields.find((x) => x.name === name) ?? schema.fields.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!f) throw new BridgeError('catalog_error', `column ${name} does not exist in the table's current schema`);
    return f;
  };
  const sourceIds = new Set(metadata['partition-specs'].flatMap((s) => s.fields.map((f) => f['source-id'])));
  let fields = schema.fields.map((f) => ({ ...f }));
  switch (change.op) {
    case 'add':
      if (schema.fields.some((f) => f.name.toLowerCase() === change.name.toLowerCase())) throw unsupported(`column ${change.name} already exists`);
      fields.push({ id: ++last, name: change.name, required: false, type: duckdbToIceberg(change.duckType, () => ++last) });
      break;
    case 'drop': {
      const f = find(change.name);
      if (sourceIds.has(f.id)) throw unsupported(`column ${f.name} is a partition source and cannot be dropped`);
      fields = fields.filter((x) => x.id !== f.id);
      break;
    }
    case 'rename': {
      const f = find(change.from);
      fields = fields.map((x) => (x.id === f.id ? { ...x, name: change.to } : x));
      break;
    }
    case 'retype': {
      const f = find(change.name);
      const to = duckdbToIceberg(change.duckType, () => ++last);
      if (typeof f.type !== 'string' || typeof to !== 'string' || !widens(f.type, to)) {
        throw unsupported(`column ${f.name} cannot change from ${typeof f.type === 'string' ? f.type : 'a nested type'} to ${typeof to === 'string' ? to : 'a nested type'}: Iceberg allows int→bigint, float→double and wider decimals`);
      }
      fields = fields.map((x) => (x.id === f.id ? { ...x, type: to } : x));
      break;
    }
  }
  const { 'schema-id': _id, ...rest } = schema;
  void _id;
  return { schema: { ...rest, 'schema-id': 0, fields } as Schema, lastColumnId: last };
}

/** The snapshot that was the table's current one at `asOfMs`: the last snapshot-log entry at or before it. */
function snapshotAsOf(metadata: { 'snapshot-log'?: Array<{ 'snapshot-id': unknown; 'timestamp-ms': unknown }> }, asOfMs: number): bigint {
  let found: bigint | undefined;
  for (const e of metadata['snapshot-log'] ?? []) {
    if (Number(e['timestamp-ms']) <= asOfMs) found = BigInt(e['snapshot-id'] as string | number | bigint);
  }
  if (found === undefined) throw catalogError(`the table has no snapshot at or before ${new Date(asOfMs).toISOString()}`);
  return found;
}
