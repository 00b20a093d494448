// The transform provider of lineage imports: a dbt `manifest.json` becomes canonical table edges. Every model, seed
// and snapshot is a relation `database.schema.alias` (its `database` is the catalog, as dbt-duckdb names the
// attached Eider catalog); each entry of its `depends_on.nodes` that is a model, seed, snapshot or source is an
// edge into it. Ephemeral models have no relation: their parents feed their children directly. A source outside
// the workspace's catalogs is an external node (`external:database.schema.identifier`); a model outside them is
// skipped with the reason, as is a dependency the manifest does not declare. With `{manifest, catalog}` (catalog.json
// from `dbt docs generate`) each model's compiled SQL is walked for column lineage against the relations' columns
// in catalog.json, exactly as execution lineage walks a CTAS.
import { badArtifact } from '../semantic/importSet.ts';
import type { ImportEdge, ImportEnd } from './graph.ts';
import { deriveColumnLineage, type TableRef } from './columns.ts';

export const ARTIFACT_PROVIDERS = ['transform'] as const;
const DBT_LINEAGE_FORMAT =
  'a dbt manifest.json (a JSON object with nodes and sources, as dbt parse writes it), or {manifest, catalog} with the catalog.json of dbt docs generate for column detail';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** `v` when it is an object, else an empty one (a missing or malformed part reads as absent). */
const objOf = (v: unknown): Obj => (isObj(v) ? v : {});

/** Resource types that are relations in the warehouse. */
const RELATIONS = new Set(['model', 'seed', 'snapshot']);

interface Relation {
  database: string;
  schema: string;
  identifier: string;
}

interface Resolved {
  end: ImportEnd;
  /** `database.schema.identifier`, lower case: how compiled SQL and catalog.json name it */
  key: string;
}

export interface DbtLineage {
  /** one edge per dependency, with the dbt ids it came from (for skipped reasons) */
  edges: Array<{ edge: ImportEdge; item: string }>;
  skipped: Array<{ item: string; reason: string }>;
}

const str = (v: unknown) => (typeof v === 'string' && v.length ? v : null);

/** `"db"."schema"."name"` (or unquoted, or backticks) into its parts. */
function splitRelationName(name: string): string[] {
  const parts: string[] = [];
  const re = /"((?:[^"]|"")*)"|`([^`]*)`|([^."`\s]+)/g;
  for (let m = re.exec(name); m; m = re.exec(name)) parts.push(m[1] !== undefined ? m[1].replace(/""/g, '"') : (m[2] ?? m[3]));
  return parts;
}

function relationOf(n: Obj, source: boolean): Relation | null {
  const relationName = str(n.relation_name);
  const fromName = relationName ? splitRelationName(relationName) : [];
  const database = str(n.database) ?? (fromName.length === 3 ? fromName[0] : null);
  const schema = str(n.schema) ?? (fromName.length >= 2 ? fromName.at(-2)! : null);
  const identifier = (source ? str(n.identifier) : str(n.alias)) ?? str(n.name) ?? fromName.at(-1) ?? null;
  return database && schema && identifier ? { database, schema, identifier } : null;
}

/** Reads the artifact: 422 naming the expected format when it is not one. */
export function parseDbtArtifact(body: unknown): { manifest: Obj; catalog: Obj | null } {
  let doc: unknown = body;
  if (typeof body === 'string') {
    try {
      doc = JSON.parse(body);
    } catch {
      throw badArtifact('transform', DBT_LINEAGE_FORMAT, 'the body is not JSON');
    }
  }
  if (!isObj(doc)) throw badArtifact('transform', DBT_LINEAGE_FORMAT, 'the body is not a JSON object');
  const wrapped = 'manifest' in doc;
  const manifest = wrapped ? doc.manifest : doc;
  const catalog = wrapped ? (doc.catalog ?? null) : null;
  if (!isObj(manifest) || !isObj(manifest.nodes)) throw badArtifact('transform', DBT_LINEAGE_FORMAT, wrapped ? 'manifest has no nodes object' : 'it has no nodes object');
  if (manifest.sources !== undefined && !isObj(manifest.sources)) throw badArtifact('transform', DBT_LINEAGE_FORMAT, 'sources is not an object');
  const version = String(objOf(manifest.metadata).dbt_schema_version ?? '');
  if (version && !/\/manifest\/v\d+\.json$/.test(version)) throw badArtifact('transform', DBT_LINEAGE_FORMAT, `its dbt_schema_version is ${version}, not a manifest`);
  if (catalog !== null && (!isObj(catalog) || !isObj(catalog.nodes))) throw badArtifact('transform', DBT_LINEAGE_FORMAT, 'catalog has no nodes object');
  return { manifest, catalog };
}

/**
 * The canonical edges a manifest declares. `attached`: the workspace's catalog slugs (lower case). Column lineage
 * needs the parser loaded (`loadParser`) when a catalog.json is given.
 */
export function dbtLineage(manifest: Obj, catalog: Obj | null, attached: ReadonlySet<string>): DbtLineage {
  const nodes: Record<string, unknown> = { ...objOf(manifest.sources), ...objOf(manifest.nodes) };
  const skipped: DbtLineage['skipped'] = [];
  const resolved = new Map<string, Resolved | null>();
  const resolve = (id: string): Resolved | null => {
    if (resolved.has(id)) return resolved.get(id)!;
    const n = objOf(nodes[id]);
    const source = n.resource_type === 'source';
    const rel = nodes[id] ? relationOf(n, source) : null;
    let out: Resolved | null = null;
    if (rel) {
      const key = `${rel.database}.${rel.schema}.${rel.identifier}`.toLowerCase();
      // A source outside the workspace's catalogs feeds it from elsewhere; a model there is no concern of ours.
      out = source && !attached.has(rel.database.toLowerCase()) ? { end: { external: key }, key } : { end: { catalog: rel.database, schema: rel.schema, table: rel.identifier }, key };
    }
    resolved.set(id, out);
    return out;
  };
  const ephemeral = (n: Obj) => objOf(n.config).materialized === 'ephemeral';
  const depsOf = (n: unknown): string[] => {
    const deps = objOf(objOf(n).depends_on).nodes;
    return Array.isArray(deps) ? deps.filter((d: unknown): d is string => typeof d === 'string') : [];
  };

  // An ephemeral model is inlined into its children: they read its parents.
  const parents = (id: string, seen: Set<string>): Array<{ id: string } | { missing: string }> => {
    const out: Array<{ id: string } | { missing: string }> = [];
    for (const d of depsOf(nodes[id])) {
      const raw = nodes[d];
      const p = objOf(raw);
      if (!raw) out.push({ missing: d });
      else if (p.resource_type === 'model' && ephemeral(p)) {
        if (!seen.has(d)) out.push(...parents(d, new Set([...seen, d])));
      } else if (RELATIONS.has(String(p.resource_type)) || p.resource_type === 'source') out.push({ id: d });
    }
    return out;
  };

  const columns = catalog ? catalogColumns(catalog) : null;
  const observed = str(objOf(manifest.metadata).generated_at);
  const edges: DbtLineage['edges'] = [];
  for (const id of Object.keys(objOf(manifest.nodes)).sort()) {
    const n = nodes[id];
    if (!isObj(n) || !RELATIONS.has(String(n.resource_type)) || ephemeral(n)) continue;
    const target = resolve(id);
    if (!target) {
      skipped.push({ item: id, reason: 'it names no relation (database, schema and alias, or relation_name)' });
      continue;
    }
    const ups = parents(id, new Set([id]));
    const col = columns ? columnPairs(n, target, columns) : null;
    const seen = new Set<string>();
    for (const p of ups) {
      if ('missing' in p) {
        skipped.push({ item: `${p.missing} -> ${id}`, reason: `it depends on ${p.missing}, which the manifest does not declare` });
        continue;
      }
      const source = resolve(p.id);
      if (!source) {
        skipped.push({ item: `${p.id} -> ${id}`, reason: `${p.id} names no relation` });
        continue;
      }
      if (seen.has(source.key)) continue;
      seen.add(source.key);
      const edge: ImportEdge = {
        source: source.end,
        target: target.end,
        ...(col === null ? {} : col.state === 'derived' ? { columns: col.pairs.get(source.key) ?? [], column_lineage: 'derived' } : { column_lineage: col.state }),
        ...(observed && !Number.isNaN(Date.parse(observed)) ? { observed_at: observed } : {}),
      };
      edges.push({ edge, item: `${p.id} -> ${id}` });
    }
  }
  return { edges, skipped };
}

/** catalog.json's columns per relation key, in column order. */
function catalogColumns(catalog: Obj): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const group of [catalog.nodes, catalog.sources]) {
    if (!isObj(group)) continue;
    for (const entry of Object.values(group)) {
      const m = isObj(entry) ? entry.metadata : null;
      if (!isObj(entry) || !isObj(m) || !str(m.database) || !str(m.schema) || !str(m.name) || !isObj(entry.columns)) continue;
      const cols = Object.values(entry.columns)
        .filter((c): c is Obj => isObj(c) && typeof c.name === 'string')
        .sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0))
        .map((c) => c.name as string);
      out.set(`${m.database}.${m.schema}.${m.name}`.toLowerCase(), cols);
    }
  }
  return out;
}

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** A model's column pairs per source relation key, from its compiled SQL read as the CTAS that builds it. */
function columnPairs(
  n: Obj,
  target: Resolved,
  tables: ReadonlyMap<string, string[]>,
): { state: 'derived'; pairs: Map<string, Array<{ source_column: string; target_column: string }>> } | { state: 'unsupported' | 'unknown' } {
  const sql = str(n.compiled_code) ?? str(n.compiled_sql);
  if (!sql || !tables.has(target.key)) return { state: 'unknown' };
  const rel = relationOf(n, false)!;
  // dbt qualifies relations fully; a shorter name is read in the model's own database and schema.
  const resolveTable = (r: TableRef) => `${r.catalog ?? rel.database}.${r.schema ?? rel.schema}.${r.name}`.toLowerCase();
  const ctas = `CREATE TABLE ${[rel.database, rel.schema, rel.identifier].map(quote).join('.')} AS ${sql.trim().replace(/;\s*$/, '')}`;
  const r = deriveColumnLineage(ctas, { resolveTable, tables });
  if (r.state !== 'derived') return { state: r.state === 'unknown' ? 'unknown' : 'unsupported' };
  const pairs = new Map<string, Array<{ source_column: string; target_column: string }>>();
  for (const c of r.columns) {
    for (const s of c.sources) pairs.set(s.table, [...(pairs.get(s.table) ?? []), { source_column: s.column, target_column: c.target_column }]);
  }
  return { state: 'derived', pairs };
}
