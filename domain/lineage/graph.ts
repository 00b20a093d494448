// Lineage (docs/api-decisions.md "Lineage"), table level: where a table's data comes from and what it feeds. Execution
// lineage comes from the write statements the service ran (CTAS, CREATE VIEW, INSERT … SELECT, MERGE, UPDATE …
// FROM): one edge from each table the statement read to the table it wrote, provider `execution`. Other producers
// import theirs. Edges carry per-provider provenance; an edge is stale when every producer's claim is older than
// LINEAGE_STALE_AFTER_DAYS (marked, never removed).
import { Schema } from 'effect';
import type { Db, Queryable } from '../../runtime/db.ts';
import { exec, rows, sql } from '../../runtime/sql.ts';
import type { CatalogClient } from '../../runtime/catalogClient.ts';
import { currentSchema, type TableMetadata } from '../../iceberg/metadata.ts';
import { AppError, unprocessable } from '../errors.ts';
import { BigCount } from '../rowSchemas.ts';
import { warehouseName } from '../catalogs/warehouses.ts';
import { deriveColumnLineage, loadParser, parseRename, type ColumnLineage } from './columns.ts';
import { withoutComments } from '../../sqltext/scan.ts';

export const EXECUTION = 'execution';
const MAX_NODES = 500;
/** Column entries in one lineage answer, over all its edges; past it `columns_truncated` is set. */
const MAX_COLUMNS = 2000;

export interface TableEnd {
  catalog: string;
  schema: string;
  table: string;
}

export const tableKey = (e: TableEnd) => `${e.catalog}.${e.schema}.${e.table}`.toLowerCase();

// An identifier as DuckDB reads it: quoted (with "" inside) or a bare word.
const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;
const NAME = String.raw`(${IDENT}(?:\s*\.\s*${IDENT}){0,2})`;
const TARGETS: Array<{ re: RegExp; needsSource: boolean }> = [
  { re: new RegExp(String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}[\s\S]*?\bAS\b`, 'i'), needsSource: false },
  { re: new RegExp(String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}`, 'i'), needsSource: false },
  { re: new RegExp(String.raw`^(?:WITH\b[\s\S]*?\)\s*)?INSERT\s+(?:OR\s+(?:REPLACE|IGNORE)\s+)?INTO\s+${NAME}`, 'i'), needsSource: false },
  { re: new RegExp(String.raw`^(?:WITH\b[\s\S]*?\)\s*)?MERGE\s+INTO\s+${NAME}`, 'i'), needsSource: false },
  { re: new RegExp(String.raw`^(?:WITH\b[\s\S]*?\)\s*)?UPDATE\s+${NAME}[\s\S]*\bFROM\b`, 'i'), needsSource: true },
];

const unquote = (part: string) => (part.startsWith('"') ? part.slice(1, -1).replace(/""/g, '"') : part.toLowerCase());

/** The table a write statement writes, as written ([catalog.][schema.]table), or null when it writes none. */
export function writeTargetOf(sql: string): { catalog: string | null; schema: string | null; name: string } | null {
  const text = withoutComments(sql).trim();
  if (/^CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP|TEMPORARY)\b/i.test(text)) return null;
  for (const t of TARGETS) {
    const m = t.re.exec(text);
    if (!m) continue;
    const parts = m[1].split(/\s*\.\s*(?=(?:"|[A-Za-z_]))/).map(unquote);
    if (parts.length === 3) return { catalog: parts[0], schema: parts[1], name: parts[2] };
    if (parts.length === 2) return { catalog: null, schema: parts[0], name: parts[1] };
    return { catalog: null, schema: null, name: parts[0] };
  }
  return null;
}

// The table each kind of write statement writes (its first name), whatever it reads: CTAS, INSERT, MERGE, UPDATE,
// DELETE, ALTER, COPY … FROM, TRUNCATE.
const WRITTEN: RegExp[] = [
  new RegExp(String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}`, 'i'),
  new RegExp(String.raw`^(?:WITH\b[\s\S]*?\)\s*)?INSERT\s+(?:OR\s+(?:REPLACE|IGNORE)\s+)?INTO\s+${NAME}`, 'i'),
  new RegExp(String.raw`^(?:WITH\b[\s\S]*?\)\s*)?MERGE\s+INTO\s+${NAME}`, 'i'),
  new RegExp(String.raw`^(?:WITH\b[\s\S]*?\)\s*)?UPDATE\s+${NAME}`, 'i'),
  new RegExp(String.raw`^(?:WITH\b[\s\S]*?\)\s*)?DELETE\s+FROM\s+${NAME}`, 'i'),
  new RegExp(String.raw`^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?${NAME}`, 'i'),
  new RegExp(String.raw`^COPY\s+${NAME}\s+FROM\b`, 'i'),
  new RegExp(String.raw`^TRUNCATE\s+(?:TABLE\s+)?${NAME}`, 'i'),
];

/**
 * The table a write statement writes, resolved as DuckDB resolves it (a quoted name keeps its case), or null when its
 * text does not say. Only the written table gets a last write: the tables a CTAS or INSERT … SELECT reads were not.
 */
export function writtenTable(sql: string, defaultCatalog: string, catalogs: ReadonlySet<string>): TableEnd | null {
  const text = withoutComments(sql).trim();
  for (const re of WRITTEN) {
    const m = re.exec(text);
    if (!m) continue;
    const r = refOf(m[1]);
    return r.catalog === null && r.schema !== null && catalogs.has(r.schema.toLowerCase())
      ? { catalog: r.schema, schema: 'main', table: r.name }
      : { catalog: r.catalog ?? defaultCatalog, schema: r.schema ?? 'main', table: r.name };
  }
  return null;
}

const refOf = (name: string): Ref => {
  const parts = name.split(/\s*\.\s*(?=(?:"|[A-Za-z_]))/).map(unquote);
  if (parts.length === 3) return { catalog: parts[0], schema: parts[1], name: parts[2] };
  if (parts.length === 2) return { catalog: null, schema: parts[0], name: parts[1] };
  return { catalog: null, schema: null, name: parts[0] };
};

interface Ref {
  catalog: string | null;
  schema: string | null;
  name: string;
}

/** As DuckDB resolves a name: `a.t` is catalog `a`'s main schema when `a` is an attached catalog. */
const resolve = (r: Ref, defaultCatalog: string, catalogs: ReadonlySet<string>): TableEnd =>
  r.catalog === null && r.schema !== null && catalogs.has(r.schema.toLowerCase())
    ? { catalog: r.schema.toLowerCase(), schema: 'main', table: r.name.toLowerCase() }
    : { catalog: (r.catalog ?? defaultCatalog).toLowerCase(), schema: (r.schema ?? 'main').toLowerCase(), table: r.name.toLowerCase() };

/**
 * The execution edges of a finished write: from every table it read to the table it wrote. A statement that read
 * no other table (VALUES, a self-reference) yields none; so does one whose target cannot be read from its text.
 */
export function executionEdges(
  sql: string,
  tables: readonly Ref[],
  defaultCatalog: string | null,
  catalogs: ReadonlySet<string> = new Set(),
): Array<{ source: TableEnd; target: TableEnd }> {
  if (!defaultCatalog) return [];
  const target = writeTargetOf(sql);
  if (!target) return [];
  const t = resolve(target, defaultCatalog, catalogs);
  const seen = new Set<string>([tableKey(t)]);
  const out: Array<{ source: TableEnd; target: TableEnd }> = [];
  for (const r of tables) {
    const s = resolve(r, defaultCatalog, catalogs);
    const k = tableKey(s);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push({ source: s, target: t });
  }
  return out;
}

// Edges are kept per catalog, not per workspace: every workspace that attaches a catalog sees its tables' lineage.
async function upsertEdge(
  q: Queryable,
  e: {
    source: string;
    target: string;
    provider: string;
    at: string;
    columns?: unknown[];
    columnLineage?: string;
    queryId?: string | null;
    sourceUuid?: string | null;
    targetUuid?: string | null;
  },
): Promise<boolean> {
  const [row] = await rows(
    q,
    Schema.Struct({ inserted: Schema.Boolean }),
    sql`insert into lineage_edges as l (source_key, target_key, provider, first_seen_at, last_seen_at, columns, column_lineage, last_query_id,
                                        source_uuid, target_uuid)
        values (${e.source}, ${e.target}, ${e.provider}, ${e.at}::timestamptz, ${e.at}::timestamptz, ${JSON.stringify(e.columns ?? [])}::jsonb,
                ${e.columnLineage ?? 'unknown'}, ${e.queryId ?? null}, ${e.sourceUuid ?? null}::uuid, ${e.targetUuid ?? null}::uuid)
        on conflict (source_key, target_key, provider) do update set
          last_seen_at = greatest(l.last_seen_at, excluded.last_seen_at), first_seen_at = least(l.first_seen_at, excluded.first_seen_at),
          observation_count = l.observation_count + 1, columns = excluded.columns, column_lineage = excluded.column_lineage,
          last_query_id = coalesce(excluded.last_query_id, l.last_query_id),
          source_uuid = coalesce(excluded.source_uuid, l.source_uuid), target_uuid = coalesce(excluded.target_uuid, l.target_uuid)
        returning (xmax = 0) as inserted`,
  );
  return row.inserted;
}

/** What lineage needs of a finished query's row (the completion effect has just read it). */
export interface FinishedRun {
  sql: string;
  tables: Ref[] | null;
  catalog: string | null;
  workspace_id: string;
  finished_at: Date | null;
}

/** What recording lineage needs besides the database. */
export interface LineageEnv {
  /** Reads the tables' current schemas for column lineage; without it column lineage is not tried (`unknown`). */
  catalog?: Pick<CatalogClient, 'loadTable'>;
  /** Counts lineage that could not be read: the statement did not parse, or its columns were not established. */
  failed?: (stage: 'statement' | 'columns') => void;
}

type ColumnPair = { source_column: string; target_column: string };

/** One execution edge as a finished write yields it (node keys). */
export interface DerivedEdge {
  source: string;
  target: string;
  columns: ColumnPair[];
  columnLineage: 'derived' | 'unsupported' | 'unknown';
  sourceUuid: string | null;
  targetUuid: string | null;
  /** the catalog loaded both ends just now (false without a catalog) */
  current: boolean;
}

/**
 * A finished write's execution edges: from each table it read to the table it wrote, with the uuids of their
 * tables, and for CTAS and INSERT … SELECT the column pairs of each edge (`derived`, or `unsupported` when the walk
 * could not establish them). `catalogs`: the workspace's attached catalog slugs (lower case).
 */
export async function deriveExecutionLineage(row: FinishedRun, catalogs: ReadonlySet<string>, env: LineageEnv = {}): Promise<DerivedEdge[]> {
  const edges = executionEdges(row.sql, row.tables ?? [], row.catalog, catalogs);
  if (!edges.length || !row.catalog) return [];
  const defaultCatalog = row.catalog;
  const target = edges[0].target;
  // Every table the statement named (the target's columns name CTAS columns and INSERT positions).
  const ends = new Map<string, TableEnd>([[tableKey(target), target]]);
  for (const r of row.tables ?? []) ends.set(tableKey(resolve(r, defaultCatalog, catalogs)), resolve(r, defaultCatalog, catalogs));
  const loaded = env.catalog ? await loadTables(env.catalog, [...ends.values()].filter((e) => catalogs.has(e.catalog))) : null;
  const columns = loaded ? await columnLineageOf(row.sql, target, (r) => tableKey(resolve(r, defaultCatalog, catalogs)), loaded.columns, env) : { state: 'unknown' as const };
  return edges.map((e) => {
    const source = tableKey(e.source);
    const targetKey = tableKey(e.target);
    return {
      source,
      target: targetKey,
      ...(columns.state === 'derived' ? { columns: columns.pairs.get(source) ?? [], columnLineage: 'derived' as const } : { columns: [], columnLineage: columns.state }),
      sourceUuid: loaded?.uuids.get(source) ?? null,
      targetUuid: loaded?.uuids.get(targetKey) ?? null,
      current: !!loaded && loaded.columns.has(source) && loaded.columns.has(targetKey),
    };
  });
}

/** Records a finished query's execution lineage (best effort by the caller: a parse miss records nothing). */
export async function recordExecutionLineage(q: Queryable, queryId: string, row: FinishedRun, env: LineageEnv = {}): Promise<number> {
  const edges = await deriveExecutionLineage(row, await attachedSlugs(q, row.workspace_id), env);
  const at = (row.finished_at ?? new Date()).toISOString();
  for (const e of edges) await upsertEdge(q, { ...e, provider: EXECUTION, at, queryId });
  return edges.length;
}

export async function attachedSlugs(q: Queryable, workspaceId: string): Promise<Set<string>> {
  const attached = await rows(
    q,
    Schema.Struct({ slug: Schema.String }),
    sql`select c.slug from workspace_catalogs wc join catalogs c on c.id = wc.catalog_id where wc.workspace_id = ${workspaceId}`,
  );
  return new Set(attached.map((a) => a.slug.toLowerCase()));
}

/** The current columns and uuid of each table the catalog can load (by node key); the others are left out. */
async function loadTables(catalog: NonNullable<LineageEnv['catalog']>, ends: Iterable<TableEnd>) {
  const columns = new Map<string, string[]>();
  const uuids = new Map<string, string>();
  for (const end of ends) {
    try {
      const { metadata } = await catalog.loadTable<TableMetadata>(warehouseName({ slug: end.catalog }), [end.schema], end.table);
      columns.set(tableKey(end), currentSchema(metadata).fields.map((f) => f.name));
      if (metadata['table-uuid']) uuids.set(tableKey(end), metadata['table-uuid']);
    } catch {
      // A table that cannot be loaded leaves its columns unknown: the walk reports it unsupported if it needs them.
    }
  }
  return { columns, uuids };
}

/** The column pairs per source table key, or why there are none. */
async function columnLineageOf(
  sql: string,
  target: TableEnd,
  resolveTable: (r: Ref) => string,
  tables: ReadonlyMap<string, string[]>,
  env: LineageEnv,
): Promise<{ state: 'derived'; pairs: Map<string, ColumnPair[]> } | { state: 'unsupported' | 'unknown' }> {
  await loadParser();
  const result: ColumnLineage = deriveColumnLineage(sql, { resolveTable, tables });
  if (result.state === 'unknown') return result;
  if (result.state === 'unsupported' || resolveTable(result.target) !== tableKey(target)) {
    env.failed?.(result.state === 'unsupported' && result.parseFailed ? 'statement' : 'columns');
    return { state: 'unsupported' };
  }
  const pairs = new Map<string, ColumnPair[]>();
  for (const c of result.columns) {
    for (const s of c.sources) pairs.set(s.table, [...(pairs.get(s.table) ?? []), { source_column: s.column, target_column: c.target_column }]);
  }
  return { state: 'derived', pairs };
}

/**
 * A table was renamed (`from` → `to`, the same table, uuid `uuid` when the catalog could load it): its edges follow
 * it. Edges that recorded its uuid move wherever their key was; edges under the old name that
 * recorded no uuid (imports) move by name; edges under the old name with another uuid belonged to an earlier
 * table of that name and stay.
 */
async function renameTableLineage(db: Db, from: TableEnd, to: TableEnd, tableUuid: string | null): Promise<number> {
  const uuid = tableUuid?.toLowerCase() ?? null;
  const oldKey = tableKey(from);
  const newKey = tableKey(to);
  if (oldKey === newKey) return 0;
  return db.tx(async (q) => {
    // Moved whole: the columns go back as they were stored.
    const removed = await rows(
      q,
      Schema.Struct({
        ...EdgeRowSchema.fields,
        columns: Schema.Unknown,
        last_query_id: Schema.NullOr(Schema.String),
        source_uuid: Schema.NullOr(Schema.String),
        target_uuid: Schema.NullOr(Schema.String),
      }),
      uuid === null
        ? sql`delete from lineage_edges where source_key = ${oldKey} or target_key = ${oldKey} returning *`
        : sql`delete from lineage_edges
               where source_uuid = ${uuid}::uuid or target_uuid = ${uuid}::uuid
                  or (source_key = ${oldKey} and source_uuid is null) or (target_key = ${oldKey} and target_uuid is null)
              returning *`,
    );
    const moves = (key: string, recorded: string | null) => (uuid !== null && recorded === uuid) || (key === oldKey && (recorded === null || uuid === null));
    let moved = 0;
    for (const r of removed) {
      const source = moves(r.source_key, r.source_uuid) ? newKey : r.source_key;
      const target = moves(r.target_key, r.target_uuid) ? newKey : r.target_key;
      if (source === target) continue;
      // Merged into an edge the new name already has: the counts add up, the newer observation's columns win.
      await exec(
        q,
        sql`insert into lineage_edges as l (source_key, target_key, provider, first_seen_at, last_seen_at, observation_count, columns, column_lineage,
                                            last_query_id, source_uuid, target_uuid)
            values (${source}, ${target}, ${r.provider}, ${r.first_seen_at}, ${r.last_seen_at}, ${r.observation_count},
                    ${JSON.stringify(r.columns ?? [])}::jsonb, ${r.column_lineage}, ${r.last_query_id},
                    ${source === newKey ? (uuid ?? r.source_uuid) : r.source_uuid}::uuid, ${target === newKey ? (uuid ?? r.target_uuid) : r.target_uuid}::uuid)
            on conflict (source_key, target_key, provider) do update set
              first_seen_at = least(l.first_seen_at, excluded.first_seen_at), last_seen_at = greatest(l.last_seen_at, excluded.last_seen_at),
              observation_count = l.observation_count + excluded.observation_count,
              columns = case when excluded.last_seen_at >= l.last_seen_at then excluded.columns else l.columns end,
              column_lineage = case when excluded.last_seen_at >= l.last_seen_at then excluded.column_lineage else l.column_lineage end,
              source_uuid = coalesce(l.source_uuid, excluded.source_uuid), target_uuid = coalesce(l.target_uuid, excluded.target_uuid)`,
      );
      moved++;
    }
    return moved;
  });
}

/** A finished ALTER TABLE … RENAME TO: the renamed table's edges follow it (best effort by the caller). */
export async function recordRename(db: Db, row: FinishedRun, env: LineageEnv = {}): Promise<boolean> {
  if (!row.catalog) return false;
  await loadParser();
  const r = parseRename(row.sql);
  if (!r) return false;
  const catalogs = await attachedSlugs(db, row.workspace_id);
  const from = resolve(r.from, row.catalog, catalogs);
  // DuckDB renames within the table's catalog; the new name may name another schema.
  const to: TableEnd = { catalog: from.catalog, schema: (r.to.schema ?? from.schema).toLowerCase(), table: r.to.name.toLowerCase() };
  let uuid: string | null = null;
  if (env.catalog) uuid = (await loadTables(env.catalog, [to])).uuids.get(tableKey(to)) ?? null;
  await renameTableLineage(db, from, to, uuid);
  return true;
}

/** A table was dropped: its edges go (a new table of the same name starts without history). */
export async function dropTableLineage(q: Queryable, end: TableEnd): Promise<void> {
  const k = tableKey(end);
  await exec(q, sql`delete from lineage_edges where source_key = ${k} or target_key = ${k}`);
}

// ---- imports -------------------------------------------------------------------------------------------------

export type ImportEnd = { catalog: string; schema: string; table: string } | { external: string };

export interface ImportEdge {
  source: ImportEnd;
  target: ImportEnd;
  columns?: ReadonlyArray<{ source_column: string; target_column: string }>;
  column_lineage?: string;
  observed_at?: string;
}

const endKey = (e: ImportEnd, attached: ReadonlySet<string>): { key: string } | { reason: string } => {
  if ('external' in e) return { key: `external:${e.external}` };
  if (!attached.has(e.catalog.toLowerCase())) return { reason: `catalog ${e.catalog} is not attached to this workspace` };
  return { key: tableKey(e) };
};

/**
 * Imports a producer's canonical edges (idempotent: a repeat re-observes them). An edge whose table end does not
 * resolve (its catalog is not attached, or `exists` says the catalog has no such table) is skipped with the reason,
 * never recorded: lineage names tables that are there.
 */
export async function importEdges(
  db: Db,
  attachedCatalogs: readonly string[],
  provider: string,
  edges: readonly ImportEdge[],
  opts: {
    exists?: (e: TableEnd) => Promise<boolean>;
    /** Written in the import's own transaction once its counts are known (its audit row): both commit or neither. */
    record?: (q: Queryable, result: { provider: string; created: number; updated: number; skipped: number }) => Promise<unknown>;
  } = {},
) {
  if (provider.toLowerCase() === EXECUTION) {
    throw unprocessable('the provider name execution is reserved for lineage from SQL this service ran', 'unprocessable_content', {
      fields: [{ field: 'provider', in: 'body', message: 'reserved' }],
    });
  }
  const attached = new Set(attachedCatalogs.map((c) => c.toLowerCase()));
  const skipped: Array<{ index: number; reason: string }> = [];
  let created = 0;
  let updated = 0;
  for (const [index, e] of edges.entries()) {
    if (e.column_lineage !== undefined && !['derived', 'unsupported', 'unknown'].includes(e.column_lineage)) {
      throw unprocessable(`edges[${index}].column_lineage must be derived, unsupported or unknown`, 'unprocessable_content', {
        fields: [{ field: `edges.${index}.column_lineage`, in: 'body', message: 'derived, unsupported or unknown' }],
      });
    }
  }
  // Which table ends exist, asked once per table before the transaction (the catalog is another service).
  const missing = new Set<string>();
  if (opts.exists) {
    const ends = new Map<string, TableEnd>();
    for (const e of edges) {
      for (const end of [e.source, e.target]) if (!('external' in end) && attached.has(end.catalog.toLowerCase())) ends.set(tableKey(end), end);
    }
    const exists = opts.exists;
    await inBatches([...ends.entries()], 8, async ([key, end]) => {
      if (!(await exists(end))) missing.add(key);
    });
  }
  const resolved = (end: ImportEnd): { key: string } | { reason: string } => {
    const k = endKey(end, attached);
    if ('key' in k && !('external' in end) && missing.has(k.key)) return { reason: `table ${end.catalog}.${end.schema}.${end.table} does not exist` };
    return k;
  };
  await db.tx(async (q) => {
    for (const [index, e] of edges.entries()) {
      const s = resolved(e.source);
      const t = resolved(e.target);
      if ('reason' in s || 'reason' in t) {
        skipped.push({ index, reason: ('reason' in s ? s.reason : '') || ('reason' in t ? t.reason : '') });
        continue;
      }
      if (s.key === t.key) {
        skipped.push({ index, reason: 'an edge from a table to itself' });
        continue;
      }
      const at = e.observed_at && !Number.isNaN(Date.parse(e.observed_at)) ? new Date(e.observed_at).toISOString() : new Date().toISOString();
      const columnLineage = e.column_lineage ?? (e.columns?.length ? 'derived' : 'unknown');
      if (await upsertEdge(q, { source: s.key, target: t.key, provider, at, columns: e.columns ? [...e.columns] : [], columnLineage })) created++;
      else updated++;
    }
    await opts.record?.(q, { provider, created, updated, skipped: skipped.length });
  });
  return { provider, created, updated, skipped };
}

/**
 * Removes a retired producer's edges into the workspace's attached catalogs (an edge into an external node: from
 * them). Lineage belongs to the catalogs, so that is what a workspace owner may purge.
 */
export async function purgeProvider(q: Queryable, attachedCatalogs: readonly string[], provider: string): Promise<{ provider: string; deleted: number }> {
  if (provider.toLowerCase() === EXECUTION) throw new AppError(422, 'unprocessable_content', 'execution lineage cannot be purged');
  const slugs = attachedCatalogs.map((c) => c.toLowerCase());
  const deleted = await exec(
    q,
    sql`delete from lineage_edges
         where provider = ${provider}
           and (split_part(target_key, '.', 1) = any(${slugs}::text[])
                or (target_key like 'external:%' and split_part(source_key, '.', 1) = any(${slugs}::text[])))
        returning 1`,
  );
  return { provider, deleted: deleted.length };
}

/** Runs `f` over `items`, at most `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await f(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

// ---- reading -------------------------------------------------------------------------------------------------

interface LineageNode {
  key: string;
  kind: 'table' | 'external' | 'redacted';
  catalog: string | null;
  schema: string | null;
  table: string | null;
  column_count: number;
}

interface ProviderEntry {
  provider: string;
  first_seen_at: string;
  last_seen_at: string;
  observation_count: number;
  stale: boolean;
  column_lineage: string;
}

interface LineageEdge {
  source: string;
  target: string;
  providers: ProviderEntry[];
  observation_count: number;
  first_seen_at: string;
  last_seen_at: string;
  stale: boolean;
  columns: Array<{ source_column: string; target_column: string; providers: string[]; stale: boolean }>;
}

export interface LineageGraph {
  nodes: LineageNode[];
  edges: LineageEdge[];
  truncated: boolean;
  hidden: boolean;
  columns_truncated: boolean;
}

const EdgeRowSchema = Schema.Struct({
  source_key: Schema.String,
  target_key: Schema.String,
  provider: Schema.String,
  first_seen_at: Schema.Date,
  last_seen_at: Schema.Date,
  observation_count: BigCount,
  columns: Schema.Array(Schema.Struct({ source_column: Schema.String, target_column: Schema.String })),
  column_lineage: Schema.String,
});
type EdgeRow = typeof EdgeRowSchema.Type;

/**
 * The graph around `start`, `depth` hops (1-5) upstream, downstream or both, optionally some providers' edges.
 * Ends in catalogs no longer attached are dropped (`hidden`); ends the caller may not see (`canSee` false, scoped
 * grants) become redacted nodes without names. At most MAX_NODES nodes (`truncated`). Column detail is given only
 * for edges touching a node of `columnsFor` (none when not given), at most `maxColumns` entries
 * (`columns_truncated`). A table node's column_count is the table's column count (`columnCounts`; 0 when it cannot
 * be read), a redacted or external node's 0. Edges are the catalog's: the same for every workspace attaching it.
 */
export async function readGraph(
  q: Queryable,
  start: TableEnd,
  opts: {
    direction: 'upstream' | 'downstream' | 'both';
    depth: number;
    providers?: readonly string[];
    columnsFor?: readonly string[];
    maxColumns?: number;
    staleAfterDays: number;
    attached: ReadonlySet<string>;
    canSee: (e: TableEnd) => boolean;
    /** Column counts of many tables at once (a key per end, `tableKey`); an end left out counts 0. */
    columnCounts?: (ends: readonly TableEnd[]) => Promise<ReadonlyMap<string, number>>;
  },
): Promise<LineageGraph> {
  const startKey = tableKey(start);
  const visited = new Set<string>([startKey]);
  const edges = new Map<string, EdgeRow[]>();
  let frontier = [startKey];
  let truncated = false;
  let hidden = false;
  for (let hop = 0; hop < opts.depth && frontier.length && !truncated; hop++) {
    const ends = [
      ...(opts.direction !== 'downstream' ? [sql`target_key = any(${frontier}::text[])`] : []),
      ...(opts.direction !== 'upstream' ? [sql`source_key = any(${frontier}::text[])`] : []),
    ];
    const found = await rows(
      q,
      EdgeRowSchema,
      sql`select source_key, target_key, provider, first_seen_at, last_seen_at, observation_count, columns, column_lineage from lineage_edges
           where (${sql.join(ends, ' or ')}) ${opts.providers?.length ? sql`and provider = any(${opts.providers}::text[])` : sql``}`,
    );
    const next: string[] = [];
    for (const r of found) {
      const ends = [r.source_key, r.target_key];
      if (ends.some((k) => !k.startsWith('external:') && !opts.attached.has(k.split('.')[0]))) {
        hidden = true;
        continue;
      }
      const id = `${r.source_key}\u0000${r.target_key}`;
      const list = edges.get(id) ?? [];
      if (!list.some((x) => x.provider === r.provider)) list.push(r);
      edges.set(id, list);
      for (const k of ends) {
        if (visited.has(k)) continue;
        if (visited.size >= MAX_NODES) {
          truncated = true;
          continue;
        }
        visited.add(k);
        next.push(k);
      }
    }
    frontier = next;
  }
  const cutoff = opts.staleAfterDays > 0 ? Date.now() - opts.staleAfterDays * 86_400_000 : null;
  const isStale = (d: Date) => cutoff !== null && d.getTime() < cutoff;
  // Redaction: ends the caller may not see are numbered, never named.
  const redacted = new Map<string, string>();
  // Each end is looked at once (an end is on many edges: at the node cap about 3,000 lookups for 500 nodes).
  const seenNodes = new Map<string, LineageNode>();
  const nodeOf = (k: string): LineageNode => {
    let n = seenNodes.get(k);
    if (!n) seenNodes.set(k, (n = nodeOfKey(k)));
    return { ...n };
  };
  const nodeOfKey = (k: string): LineageNode => {
    if (k.startsWith('external:')) return { key: k, kind: 'external', catalog: null, schema: null, table: null, column_count: 0 };
    const [catalog, schema, ...rest] = k.split('.');
    const end = { catalog, schema, table: rest.join('.') };
    if (!opts.canSee(end)) {
      if (!redacted.has(k)) redacted.set(k, `redacted:${redacted.size + 1}`);
      return { key: redacted.get(k)!, kind: 'redacted', catalog: null, schema: null, table: null, column_count: 0 };
    }
    return { key: k, kind: 'table', ...end, column_count: 0 };
  };
  const columnsFor = new Set((opts.columnsFor ?? []).map((k) => (k.startsWith('external:') ? k : k.toLowerCase())));
  const nodes = new Map<string, LineageNode>();
  for (const k of visited) {
    if (edges.size === 0 && k !== startKey) continue;
    const n = nodeOf(k);
    nodes.set(n.key, n);
  }
  const outEdges: LineageEdge[] = [];
  for (const list of edges.values()) {
    const providers = list
      .map((r) => ({
        provider: r.provider,
        first_seen_at: r.first_seen_at.toISOString(),
        last_seen_at: r.last_seen_at.toISOString(),
        observation_count: r.observation_count,
        stale: isStale(r.last_seen_at),
        column_lineage: r.column_lineage,
      }))
      .sort((a, b) => a.provider.localeCompare(b.provider));
    const src = nodeOf(list[0].source_key);
    const tgt = nodeOf(list[0].target_key);
    // Column detail: only around the nodes asked about, never when an end is redacted.
    const showColumns = src.kind !== 'redacted' && tgt.kind !== 'redacted' && (columnsFor.has(src.key) || columnsFor.has(tgt.key));
    const columns = new Map<string, { source_column: string; target_column: string; providers: string[]; stale: boolean }>();
    if (showColumns) {
      for (const r of list) {
        for (const c of r.columns ?? []) {
          const id = `${c.source_column}\u0000${c.target_column}`;
          const entry = columns.get(id) ?? { source_column: c.source_column, target_column: c.target_column, providers: [], stale: true };
          entry.providers.push(r.provider);
          entry.stale = entry.stale && isStale(r.last_seen_at);
          columns.set(id, entry);
        }
      }
    }
    outEdges.push({
      source: src.key,
      target: tgt.key,
      providers,
      observation_count: providers.reduce((n, p) => n + p.observation_count, 0),
      first_seen_at: providers.map((p) => p.first_seen_at).sort()[0],
      last_seen_at: providers.map((p) => p.last_seen_at).sort().at(-1)!,
      stale: providers.every((p) => p.stale),
      columns: [...columns.values()],
    });
  }
  // The same order as localeCompare, with one collator for the whole sort (localeCompare sets one up per call).
  const collate = new Intl.Collator().compare;
  const sortKey = new Map(outEdges.map((e) => [e, e.source + e.target]));
  outEdges.sort((a, b) => collate(sortKey.get(a)!, sortKey.get(b)!));
  // The cap is spent in the answer's edge order, so a repeated read withholds the same entries.
  let budget = opts.maxColumns ?? MAX_COLUMNS;
  let columnsTruncated = false;
  for (const e of outEdges) {
    if (e.columns.length > budget) {
      e.columns = e.columns.slice(0, budget);
      columnsTruncated = true;
    }
    budget -= e.columns.length;
  }
  if (opts.columnCounts) {
    // One request for the graph's tables, not one each: a graph at its 500-node cap asked the catalog 500 times.
    const tables = [...nodes.values()].filter((n) => n.kind === 'table');
    const counts = await opts.columnCounts(tables.map((n) => ({ catalog: n.catalog!, schema: n.schema!, table: n.table! })));
    for (const n of tables) n.column_count = counts.get(tableKey({ catalog: n.catalog!, schema: n.schema!, table: n.table! })) ?? 0;
  }
  return { nodes: [...nodes.values()].sort((a, b) => collate(a.key, b.key)), edges: outEdges, truncated, hidden, columns_truncated: columnsTruncated };
}
