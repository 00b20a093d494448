// Lineage (decisions.md "Lineage"), table level: where a table's data comes from and what it feeds. Execution
// lineage comes from the write statements the service ran (CTAS, CREATE VIEW, INSERT … SELECT, MERGE, UPDATE …
// FROM): one edge from each table the statement read to the table it wrote, provider `execution`. Other producers
// import theirs. Edges carry per-provider provenance; an edge is stale when every producer's claim is older than
// LINEAGE_STALE_AFTER_DAYS (marked, never removed).
import type { Db, Queryable } from '../runtime/db.ts';
import { AppError, unprocessable } from './errors.ts';

export const EXECUTION = 'execution';
export const MAX_NODES = 500;

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
  const text = sql.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ').trim();
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

async function upsertEdge(
  q: Queryable,
  workspaceId: string,
  e: { source: string; target: string; provider: string; at: string; columns?: unknown[]; columnLineage?: string; queryId?: string | null },
): Promise<boolean> {
  const [row] = await q.query<{ inserted: boolean }>(
    `insert into lineage_edges as l (workspace_id, source_key, target_key, provider, first_seen_at, last_seen_at, columns, column_lineage, last_query_id)
     values ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz, $6::jsonb, $7, $8)
     on conflict (workspace_id, source_key, target_key, provider) do update set
       last_seen_at = greatest(l.last_seen_at, excluded.last_seen_at), first_seen_at = least(l.first_seen_at, excluded.first_seen_at),
       observation_count = l.observation_count + 1, columns = excluded.columns, column_lineage = excluded.column_lineage,
       last_query_id = coalesce(excluded.last_query_id, l.last_query_id)
     returning (xmax = 0) as inserted`,
    [workspaceId, e.source, e.target, e.provider, e.at, JSON.stringify(e.columns ?? []), e.columnLineage ?? 'unknown', e.queryId ?? null],
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

/** Records a finished query's execution lineage (best effort by the caller: a parse miss records nothing). */
export async function recordExecutionLineage(q: Queryable, queryId: string, row: FinishedRun): Promise<number> {
  const attached = await q.query<{ slug: string }>(
    `select c.slug from workspace_catalogs wc join catalogs c on c.id = wc.catalog_id where wc.workspace_id = $1`,
    [row.workspace_id],
  );
  const edges = executionEdges(row.sql, row.tables ?? [], row.catalog, new Set(attached.map((a) => a.slug.toLowerCase())));
  const at = (row.finished_at ?? new Date()).toISOString();
  for (const e of edges) await upsertEdge(q, row.workspace_id, { source: tableKey(e.source), target: tableKey(e.target), provider: EXECUTION, at, queryId });
  return edges.length;
}

/** A table was dropped: its edges go (a new table of the same name starts without history). */
export async function dropTableLineage(q: Queryable, end: TableEnd): Promise<void> {
  const k = tableKey(end);
  await q.query(`delete from lineage_edges where source_key = $1 or target_key = $1`, [k]);
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

/** Imports a producer's canonical edges (idempotent: a repeat re-observes them). */
export async function importEdges(db: Db, workspaceId: string, attachedCatalogs: readonly string[], provider: string, edges: readonly ImportEdge[]) {
  if (provider.toLowerCase() === EXECUTION) {
    throw unprocessable('the provider name execution is reserved for lineage from SQL this service ran', 'unprocessable_content', {
      fields: [{ field: 'provider', in: 'body', message: 'reserved' }],
    });
  }
  const attached = new Set(attachedCatalogs.map((c) => c.toLowerCase()));
  const skipped: Array<{ index: number; reason: string }> = [];
  let created = 0;
  let updated = 0;
  await db.tx(async (q) => {
    for (const [index, e] of edges.entries()) {
      if (e.column_lineage !== undefined && !['derived', 'unsupported', 'unknown'].includes(e.column_lineage)) {
        throw unprocessable(`edges[${index}].column_lineage must be derived, unsupported or unknown`, 'unprocessable_content', {
          fields: [{ field: `edges.${index}.column_lineage`, in: 'body', message: 'derived, unsupported or unknown' }],
        });
      }
      const s = endKey(e.source, attached);
      const t = endKey(e.target, attached);
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
      if (await upsertEdge(q, workspaceId, { source: s.key, target: t.key, provider, at, columns: e.columns ? [...e.columns] : [], columnLineage })) created++;
      else updated++;
    }
  });
  return { provider, created, updated, skipped };
}

export async function purgeProvider(q: Queryable, workspaceId: string, provider: string): Promise<{ provider: string; deleted: number }> {
  if (provider.toLowerCase() === EXECUTION) throw new AppError(422, 'unprocessable_content', 'execution lineage cannot be purged');
  const rows = await q.query(`delete from lineage_edges where workspace_id = $1 and provider = $2 returning 1`, [workspaceId, provider]);
  return { provider, deleted: rows.length };
}

// ---- reading -------------------------------------------------------------------------------------------------

export interface LineageNode {
  key: string;
  kind: 'table' | 'external' | 'redacted';
  catalog: string | null;
  schema: string | null;
  table: string | null;
  column_count: number;
}

export interface ProviderEntry {
  provider: string;
  first_seen_at: string;
  last_seen_at: string;
  observation_count: number;
  stale: boolean;
  column_lineage: string;
}

export interface LineageEdge {
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

interface EdgeRow {
  source_key: string;
  target_key: string;
  provider: string;
  first_seen_at: Date;
  last_seen_at: Date;
  observation_count: string | number;
  columns: Array<{ source_column: string; target_column: string }>;
  column_lineage: string;
}

/**
 * The graph around `start`, `depth` hops (1-5) upstream, downstream or both, optionally one provider's edges.
 * Ends in catalogs no longer attached are dropped (`hidden`); ends the caller may not see (`canSee` false, scoped
 * grants) become redacted nodes without names. At most MAX_NODES nodes (`truncated`).
 */
export async function readGraph(
  q: Queryable,
  workspaceId: string,
  start: TableEnd,
  opts: { direction: 'upstream' | 'downstream' | 'both'; depth: number; provider?: string; staleAfterDays: number; attached: ReadonlySet<string>; canSee: (e: TableEnd) => boolean },
): Promise<LineageGraph> {
  const startKey = tableKey(start);
  const visited = new Set<string>([startKey]);
  const edges = new Map<string, EdgeRow[]>();
  let frontier = [startKey];
  let truncated = false;
  let hidden = false;
  for (let hop = 0; hop < opts.depth && frontier.length && !truncated; hop++) {
    const rows = await q.query<EdgeRow>(
      `select source_key, target_key, provider, first_seen_at, last_seen_at, observation_count, columns, column_lineage from lineage_edges
        where workspace_id = $1 and ($3::text is null or provider = $3)
          and (($4 and target_key = any($2::text[])) or ($5 and source_key = any($2::text[])))`,
      [workspaceId, frontier, opts.provider ?? null, opts.direction !== 'downstream', opts.direction !== 'upstream'],
    );
    const next: string[] = [];
    for (const r of rows) {
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
  const nodeOf = (k: string): LineageNode => {
    if (k.startsWith('external:')) return { key: k, kind: 'external', catalog: null, schema: null, table: null, column_count: 0 };
    const [catalog, schema, ...rest] = k.split('.');
    const end = { catalog, schema, table: rest.join('.') };
    if (!opts.canSee(end)) {
      if (!redacted.has(k)) redacted.set(k, `redacted:${redacted.size + 1}`);
      return { key: redacted.get(k)!, kind: 'redacted', catalog: null, schema: null, table: null, column_count: 0 };
    }
    return { key: k, kind: 'table', ...end, column_count: 0 };
  };
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
        observation_count: Number(r.observation_count),
        stale: isStale(r.last_seen_at),
        column_lineage: r.column_lineage,
      }))
      .sort((a, b) => a.provider.localeCompare(b.provider));
    const src = nodeOf(list[0].source_key);
    const tgt = nodeOf(list[0].target_key);
    const showColumns = src.kind !== 'redacted' && tgt.kind !== 'redacted';
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
  outEdges.sort((a, b) => (a.source + a.target).localeCompare(b.source + b.target));
  return { nodes: [...nodes.values()].sort((a, b) => a.key.localeCompare(b.key)), edges: outEdges, truncated, hidden, columns_truncated: false };
}
