// Column lineage of a write (docs/api-decisions.md "Lineage"): for CTAS and INSERT … SELECT, which source columns each
// target column is computed from. The statement is parsed by polyglot, the parser the statement policy uses, and
// its AST walked scope by scope: CTEs, subqueries, joins (USING and NATURAL merge their columns), `*` / `t.*`
// (EXCLUDE, REPLACE) expanded against the source tables' current schemas, select-list aliases and lambdas.
// A column contributes when the projection expression that computes a target column references it (CASE
// conditions, function arguments, window partitions and correlated scalar subqueries' projections included);
// join keys, WHERE, GROUP BY and ORDER BY filter or arrange rows but carry no values, so they do not.
// Pure and synchronous once the parser is loaded: anything the walk cannot establish is `unsupported` with the
// reason, never a guess. Also reads renames (`ALTER TABLE … RENAME TO`), which lineage follows.
import { Dialect, init, parse } from '@polyglot-sql/sdk';

type Obj = Record<string, unknown>;

export interface TableRef {
  catalog: string | null;
  schema: string | null;
  name: string;
}

/** A source column: the node key of its table (`catalog.schema.table`) and its name as the table's schema spells it. */
export interface SourceColumn {
  table: string;
  column: string;
}

export interface ColumnEnv {
  /** A table as written in the statement → its node key (resolved as DuckDB resolves names). */
  resolveTable: (ref: TableRef) => string;
  /** Current column names of tables by node key; the target's too when known (it names CTAS columns). */
  tables: ReadonlyMap<string, readonly string[]>;
}

export type ColumnLineage =
  | { state: 'derived'; target: TableRef; columns: Array<{ target_column: string; sources: SourceColumn[] }> }
  | { state: 'unsupported'; target: TableRef | null; reason: string; parseFailed?: boolean }
  /** not a CTAS or INSERT … SELECT: column lineage is not tried */
  | { state: 'unknown' };

export const qualified = (c: SourceColumn) => `${c.table}.${c.column}`;
// Code-point order: the same on every machine, whatever its locale.
const byQualified = (a: SourceColumn, b: SourceColumn) => (qualified(a) < qualified(b) ? -1 : qualified(a) > qualified(b) ? 1 : 0);

let ready: Promise<void> | null = null;

/** Loads the parser (WebAssembly) once; every other function here is synchronous after it. */
export async function loadParser(): Promise<void> {
  ready ??= init();
  await ready;
}

/** The column lineage of one statement; parser loaded. */
export function deriveColumnLineage(sql: string, env: ColumnEnv): ColumnLineage {
  let parsed: { success: boolean; ast?: unknown; error?: string };
  try {
    parsed = parse(sql, Dialect.DuckDB) as typeof parsed;
  } catch (e) {
    return { state: 'unsupported', target: null, reason: `the statement could not be parsed: ${(e as Error).message}`, parseFailed: true };
  }
  if (!parsed.success || !Array.isArray(parsed.ast) || parsed.ast.length !== 1) {
    return { state: 'unsupported', target: null, reason: `the statement could not be parsed: ${parsed.error ?? 'not one statement'}`, parseFailed: true };
  }
  return columnLineageOfAst(parsed.ast[0], env);
}

/** `ALTER TABLE t RENAME TO [s.]u`: the table as written and its new name; null for any other statement. Parser loaded. */
export function parseRename(sql: string): { from: TableRef; to: { schema: string | null; name: string } } | null {
  let parsed: { success: boolean; ast?: unknown };
  try {
    parsed = parse(sql, Dialect.DuckDB) as typeof parsed;
  } catch {
    return null;
  }
  const top = parsed.success && Array.isArray(parsed.ast) && parsed.ast.length === 1 ? single(parsed.ast[0]) : null;
  if (!top || top[0] !== 'alter_table' || !Array.isArray(top[1].actions) || top[1].actions.length !== 1) return null;
  const action = single(top[1].actions[0]);
  const from = tableRefOf(top[1].name);
  const name = action?.[0] === 'RenameTable' ? identName(action[1].name) : null;
  return from && name ? { from, to: { schema: identName(action![1].schema), name } } : null;
}

class Unsupported extends Error {}
const unsupported = (reason: string): never => {
  throw new Unsupported(reason);
};

/** The column lineage of one parsed statement (polyglot's AST). */
function columnLineageOfAst(root: unknown, env: ColumnEnv): ColumnLineage {
  const top = single(root);
  if (!top) return { state: 'unknown' };
  const [kind, v] = top;
  let target: TableRef | null = null;
  try {
    if (kind === 'create_table') {
      if (v.as_select == null) return { state: 'unknown' };
      if (v.temporary === true) return { state: 'unknown' };
      target = tableRefOf(v.name);
      if (!target) unsupported('the target table could not be read');
      const ctes = withCtes(v.with_cte, new Map(), env);
      const out = queryOutput(v.as_select, ctes, null, env);
      const known = env.tables.get(env.resolveTable(target!));
      const names = known ?? out.map((c, i) => c.name ?? unsupported(`target column ${i + 1} has no name`));
      if (names.length !== out.length) unsupported(`the target has ${names.length} columns, the query ${out.length}`);
      return derived(target!, names, out);
    }
    if (kind === 'insert') {
      if (v.query == null) return { state: 'unknown' };
      target = tableRefOf(v.table);
      if (!target) unsupported('the target table could not be read');
      if (v.on_conflict != null || v.replace_where != null || v.overwrite === true) unsupported('INSERT with a conflict clause');
      const ctes = withCtes(v.with, new Map(), env);
      const out = queryOutput(v.query, ctes, null, env);
      const schema = env.tables.get(env.resolveTable(target!));
      const spell = (n: string) => schema?.find((c) => c.toLowerCase() === n.toLowerCase()) ?? n;
      let names: string[];
      if (v.by_name === true) {
        names = out.map((c, i) => (c.name === null ? unsupported(`column ${i + 1} of the query has no name to insert by`) : spell(c.name)));
      } else if (Array.isArray(v.columns) && v.columns.length) {
        names = v.columns.map((c) => spell(identName(c) ?? unsupported('an INSERT column could not be read')));
      } else {
        names = schema ? [...schema] : unsupported('the target table’s columns are not known');
      }
      if (names.length !== out.length) unsupported(`the insert names ${names.length} columns, the query yields ${out.length}`);
      return derived(target!, names, out);
    }
    return { state: 'unknown' };
  } catch (e) {
    // An AST shape the walk did not expect is no reason to lose the table edges: the columns are just not established.
    return { state: 'unsupported', target, reason: e instanceof Unsupported ? e.message : `the walk failed: ${(e as Error).message}` };
  }
}

function derived(target: TableRef, names: readonly string[], out: readonly Col[]): ColumnLineage {
  const byName = new Map<string, { target_column: string; sources: Map<string, SourceColumn> }>();
  names.forEach((name, i) => {
    const entry = byName.get(name.toLowerCase()) ?? { target_column: name, sources: new Map() };
    for (const s of out[i].sources.values()) entry.sources.set(srcId(s), s);
    byName.set(name.toLowerCase(), entry);
  });
  return {
    state: 'derived',
    target,
    columns: [...byName.values()].map((e) => ({ target_column: e.target_column, sources: [...e.sources.values()].sort(byQualified) })),
  };
}

// ---- the walk ------------------------------------------------------------------------------------------------

type Sources = Map<string, SourceColumn>;

/** An output column of a query or a column of a FROM item; name null when DuckDB would invent one. */
interface Col {
  name: string | null;
  sources: Sources;
}

interface Relation {
  /** qualifiers that name it (`r`, or `t`, `s.t`, `c.s.t`), lower case */
  qualifiers: string[];
  /** null: a table function or the like whose columns are not known */
  columns: Col[] | null;
  /** columns left out of `*` (the right side of USING / NATURAL, SEMI and ANTI joins) */
  hidden: Set<number>;
}

interface Scope {
  relations: Relation[];
  /** USING / NATURAL columns: an unqualified reference reads both sides */
  merged: Map<string, Sources>;
  /** select-list aliases defined so far (DuckDB lets later items and clauses use them) */
  aliases: Map<string, Sources>;
  /** lambda parameters in force */
  bound: Set<string>;
  ctes: Ctes;
  parent: Scope | null;
}

type Ctes = ReadonlyMap<string, Col[]>;

const srcId = (s: SourceColumn) => `${s.table}\u0000${s.column}`;
const union = (into: Sources, from: Sources) => {
  for (const [k, s] of from) into.set(k, s);
  return into;
};

function single(node: unknown): [string, Obj] | null {
  if (!isObj(node)) return null;
  const keys = Object.keys(node);
  if (keys.length !== 1) return null;
  const v = node[keys[0]];
  return isObj(v) ? [keys[0], v] : null;
}

function withCtes(w: unknown, outer: Ctes, env: ColumnEnv): Ctes {
  if (!isObj(w) || !Array.isArray(w.ctes) || !w.ctes.length) return outer;
  if (w.recursive === true) unsupported('a recursive CTE');
  const ctes = new Map(outer);
  for (const c of w.ctes) {
    if (!isObj(c)) unsupported('a CTE could not be read');
    const name = isObj(c.alias) ? identName(c.alias) : null;
    if (!name) return unsupported('a CTE has no name');
    const cols = renamed(queryOutput(c.this, ctes, null, env), c.columns);
    ctes.set(name.toLowerCase(), cols);
  }
  return ctes;
}

/** Column aliases (`AS t(a, b)`) rename the first columns. */
function renamed(cols: Col[], aliases: unknown): Col[] {
  if (!Array.isArray(aliases) || !aliases.length) return cols;
  if (aliases.length > cols.length) unsupported('more column aliases than columns');
  return cols.map((c, i) => (i < aliases.length ? { name: identName(aliases[i]) ?? unsupported('a column alias could not be read'), sources: c.sources } : c));
}

/** The output columns of a query node (select, set operation, VALUES, parenthesized query). */
function queryOutput(node: unknown, ctes: Ctes, outer: Scope | null, env: ColumnEnv): Col[] {
  const s = single(node);
  if (!s) return unsupported('a query could not be read');
  const [kind, v] = s;
  switch (kind) {
    case 'select':
      return selectOutput(v, ctes, outer, env);
    case 'union':
    case 'intersect':
    case 'except': {
      if (v.by_name === true || v.corresponding === true) unsupported(`${kind.toUpperCase()} BY NAME`);
      const inner = withCtes(v.with, ctes, env);
      const left = queryOutput(v.left, inner, outer, env);
      const right = queryOutput(v.right, inner, outer, env);
      if (left.length !== right.length) unsupported(`${kind.toUpperCase()} of ${left.length} and ${right.length} columns`);
      // EXCEPT and INTERSECT return left rows only: the right side filters, it carries no values.
      return left.map((c, i) => ({ name: c.name, sources: kind === 'union' ? union(new Map(c.sources), right[i].sources) : c.sources }));
    }
    case 'subquery':
    case 'paren':
      return renamed(queryOutput(v.this, withCtes(v.with, ctes, env), outer, env), v.column_aliases);
    case 'values': {
      const rows = Array.isArray(v.expressions) ? v.expressions : [];
      const first = rows[0];
      const width = isObj(first) && Array.isArray(first.expressions) ? first.expressions.length : 0;
      if (!width) unsupported('VALUES could not be read');
      return Array.from({ length: width }, (_, i) => ({ name: `col${i}`, sources: new Map() }));
    }
    default:
      return unsupported(`${kind} as a query`);
  }
}

function selectOutput(sel: Obj, ctes0: Ctes, outer: Scope | null, env: ColumnEnv): Col[] {
  const ctes = withCtes(sel.with, ctes0, env);
  if (Array.isArray(sel.lateral_views) && sel.lateral_views.length) unsupported('LATERAL VIEW');
  if (sel.connect != null) unsupported('CONNECT BY');
  const scope: Scope = { relations: [], merged: new Map(), aliases: new Map(), bound: new Set(), ctes, parent: outer };
  const from = isObj(sel.from) && Array.isArray(sel.from.expressions) ? sel.from.expressions : [];
  for (const item of from) addRelation(scope, item, outer, env);
  if (Array.isArray(sel.joins)) for (const j of sel.joins) addJoin(scope, j, outer, env);
  const items = Array.isArray(sel.expressions) && sel.expressions.length ? sel.expressions : [{ star: {} }];
  const out: Col[] = [];
  for (const item of items) {
    const s = single(item);
    if (s && s[0] === 'star') {
      out.push(...expandStar(scope, s[1], env));
      continue;
    }
    if (s && s[0] === 'alias') {
      const name = identName(s[1].alias) ?? unsupported('an alias could not be read');
      const col = { name, sources: exprSources(s[1].this, scope, env) };
      out.push(col);
      if (!scope.aliases.has(name.toLowerCase())) scope.aliases.set(name.toLowerCase(), col.sources);
      continue;
    }
    out.push({ name: outputName(item, scope), sources: exprSources(item, scope, env) });
  }
  return out;
}

/** DuckDB names a bare column after the column it reads (the schema's spelling) and a struct field after the field. */
function outputName(item: unknown, scope: Scope): string | null {
  const parts = nameParts(item);
  if (!parts) return null;
  if (isObj(item) && 'dot' in item) return parts.at(-1)!;
  const found = lookup(scope, parts);
  return found?.name ?? parts.at(-1)!;
}

function expandStar(scope: Scope, star: Obj, env: ColumnEnv): Col[] {
  if (Array.isArray(star.rename) && star.rename.length) unsupported('* RENAME');
  let cols: Col[] = [];
  if (star.table != null) {
    const q = identName(star.table)?.toLowerCase();
    const rel = scope.relations.find((r) => q !== undefined && r.qualifiers.includes(q));
    if (!rel) return unsupported(`${q}.* names no table in scope`);
    if (!rel.columns) return unsupported(`${q}.* over a source whose columns are not known`);
    cols = rel.columns.map((c) => ({ name: c.name, sources: new Map(c.sources) }));
  } else {
    if (!scope.relations.length) unsupported('* without a FROM');
    for (const rel of scope.relations) {
      if (!rel.columns) return unsupported('* over a source whose columns are not known');
      rel.columns.forEach((c, i) => {
        if (rel.hidden.has(i)) return;
        const merged = c.name ? scope.merged.get(c.name.toLowerCase()) : undefined;
        cols.push({ name: c.name, sources: new Map(merged ?? c.sources) });
      });
    }
  }
  if (Array.isArray(star.except) && star.except.length) {
    const drop = new Set(star.except.map((e) => identName(e)?.toLowerCase()));
    cols = cols.filter((c) => !(c.name && drop.has(c.name.toLowerCase())));
  }
  if (Array.isArray(star.replace)) {
    for (const r of star.replace) {
      const name = isObj(r) ? identName(r.alias) : null;
      if (!isObj(r) || !name) return unsupported('* REPLACE could not be read');
      const at = cols.findIndex((c) => c.name?.toLowerCase() === name.toLowerCase());
      if (at < 0) unsupported(`* REPLACE names no column ${name}`);
      cols[at] = { name: cols[at].name, sources: exprSources(r.this, scope, env) };
    }
  }
  return cols;
}

/** Adds a FROM item's relations (an unaliased parenthesized join adds its members) and returns them. */
function addRelation(scope: Scope, item: unknown, outer: Scope | null, env: ColumnEnv): Relation[] {
  const rels = relationOf(item, scope, outer, env);
  scope.relations.push(...rels);
  return rels;
}

function relationOf(item: unknown, scope: Scope, outer: Scope | null, env: ColumnEnv): Relation[] {
  const s = single(item);
  if (!s) return unsupported('a FROM item could not be read');
  const [kind, v] = s;
  const alias = identName(v.alias)?.toLowerCase() ?? null;
  if (kind === 'table') {
    const ref = tableRefOf(v);
    if (!ref) return unsupported('a table reference could not be read');
    const cte = ref.catalog === null && ref.schema === null ? scope.ctes.get(ref.name.toLowerCase()) : undefined;
    let cols: Col[];
    let quals: string[];
    if (cte) {
      cols = cte.map((c) => ({ name: c.name, sources: new Map(c.sources) }));
      quals = [ref.name.toLowerCase()];
    } else {
      const key = env.resolveTable(ref);
      const names = env.tables.get(key);
      if (!names) return unsupported(`the columns of ${key} are not known`);
      cols = names.map((n) => ({ name: n, sources: new Map([[srcId({ table: key, column: n }), { table: key, column: n }]]) }));
      const written = [ref.catalog, ref.schema, ref.name].filter((p): p is string => p !== null).map((p) => p.toLowerCase());
      quals = [written.slice(-1), written.slice(-2), written, key.split('.').slice(-2), key.split('.')].map((p) => p.join('.'));
    }
    return [{ qualifiers: alias ? [alias] : [...new Set(quals)], columns: renamed(cols, v.column_aliases), hidden: new Set() }];
  }
  if (kind === 'subquery') {
    // A derived table sees the enclosing query's scope (correlation), not its own siblings.
    const cols = renamed(queryOutput(v.this, scope.ctes, outer, env), v.column_aliases);
    return [{ qualifiers: alias ? [alias] : [], columns: cols, hidden: new Set() }];
  }
  if (kind === 'alias') {
    // `range(10) AS r(i)`, `unnest(…) AS u(x)`: a table function; its columns carry no table's values.
    const inner = single(v.this);
    if (!inner || !['function', 'unnest'].includes(inner[0])) return unsupported(`${inner?.[0] ?? 'this'} as a FROM item`);
    const names = Array.isArray(v.column_aliases) ? v.column_aliases.map((c) => identName(c)) : [];
    const cols = names.length && names.every((n) => n !== null) ? names.map((n) => ({ name: n, sources: new Map() })) : null;
    return [{ qualifiers: alias ? [alias] : [], columns: cols, hidden: new Set() }];
  }
  if (kind === 'function' || kind === 'unnest') {
    const name = typeof v.name === 'string' ? v.name.toLowerCase() : kind;
    return [{ qualifiers: [name], columns: null, hidden: new Set() }];
  }
  if (kind === 'joined_table') {
    // `(a JOIN b USING (k)) AS j`: the parenthesized join as one relation.
    const inner: Scope = { relations: [], merged: new Map(), aliases: new Map(), bound: new Set(), ctes: scope.ctes, parent: outer };
    addRelation(inner, v.left, outer, env);
    if (Array.isArray(v.joins)) for (const j of v.joins) addJoin(inner, j, outer, env);
    if (!alias) {
      // Unaliased, its members keep their own names.
      for (const [k, m] of inner.merged) scope.merged.set(k, m);
      return inner.relations;
    }
    const cols: Col[] = [];
    for (const r of inner.relations) {
      if (!r.columns) return unsupported('a joined source whose columns are not known');
      r.columns.forEach((c, i) => {
        if (!r.hidden.has(i)) cols.push({ name: c.name, sources: new Map((c.name && inner.merged.get(c.name.toLowerCase())) || c.sources) });
      });
    }
    return [{ qualifiers: [alias], columns: cols, hidden: new Set() }];
  }
  return unsupported(`${kind} as a FROM item`);
}

function addJoin(scope: Scope, join: unknown, outer: Scope | null, env: ColumnEnv): void {
  if (!isObj(join)) return unsupported('a join could not be read');
  const kind = typeof join.kind === 'string' ? join.kind : 'Inner';
  if (['CrossApply', 'OuterApply', 'Lateral', 'LeftLateral', 'Array', 'LeftArray'].includes(kind)) unsupported(`${kind} join`);
  const before = [...scope.relations];
  const added = addRelation(scope, join.this, outer, env);
  const rel = added[0];
  if (added.length !== 1) {
    if (/Semi|Anti|Natural/.test(kind) || (Array.isArray(join.using) && join.using.length)) unsupported(`${kind} join of a parenthesized join`);
    return;
  }
  const hideAll = /Semi|Anti/.test(kind);
  if (hideAll && rel.columns) rel.columns.forEach((_, i) => rel.hidden.add(i));
  const names = Array.isArray(join.using) && join.using.length ? join.using.map((u) => identName(u) ?? unsupported('a USING column could not be read')) : [];
  if (kind.startsWith('Natural')) {
    if (!rel.columns || before.some((r) => !r.columns)) unsupported('NATURAL join over a source whose columns are not known');
    const left = new Set(before.flatMap((r) => r.columns!.filter((_, i) => !r.hidden.has(i)).map((c) => c.name?.toLowerCase())));
    for (const c of rel.columns!) if (c.name && left.has(c.name.toLowerCase())) names.push(c.name);
  }
  for (const n of names) {
    const k = n.toLowerCase();
    const sources: Sources = new Map(scope.merged.get(k) ?? []);
    for (const r of before) {
      const i = r.columns?.findIndex((c) => c.name?.toLowerCase() === k) ?? -1;
      if (i >= 0 && !r.hidden.has(i)) union(sources, r.columns![i].sources);
    }
    const j = rel.columns?.findIndex((c) => c.name?.toLowerCase() === k) ?? -1;
    if (j < 0 && rel.columns) unsupported(`USING column ${n} is not in the joined source`);
    if (j >= 0) {
      union(sources, rel.columns![j].sources);
      rel.hidden.add(j);
    }
    scope.merged.set(k, sources);
  }
}

/** The columns an expression references, through nested queries (their projections) and lambdas. */
function exprSources(node: unknown, scope: Scope, env: ColumnEnv, depth = 0): Sources {
  const acc: Sources = new Map();
  if (depth > 2000) unsupported('the expression is nested too deeply');
  if (Array.isArray(node)) {
    for (const n of node) union(acc, exprSources(n, scope, env, depth + 1));
    return acc;
  }
  if (!isObj(node)) return acc;
  const s = single(node);
  if (s) {
    const [kind, v] = s;
    if (kind === 'column' || kind === 'dot') {
      const parts = nameParts(node);
      if (parts) return resolveColumn(scope, parts);
      if (kind === 'dot') return exprSources(v.this, scope, env, depth + 1);
      return unsupported('a column reference could not be read');
    }
    if (kind === 'star') return unsupported('* inside an expression');
    if (kind === 'function' && typeof v.name === 'string' && v.name.toLowerCase() === 'columns') return unsupported('COLUMNS(…)');
    if (kind === 'lambda') {
      const params = (Array.isArray(v.parameters) ? v.parameters : []).map((p) => identName(p)?.toLowerCase() ?? unsupported('a lambda parameter could not be read'));
      const inner: Scope = { ...scope, bound: new Set([...scope.bound, ...params]) };
      return exprSources(v.body, inner, env, depth + 1);
    }
    if (['select', 'union', 'intersect', 'except', 'values'].includes(kind)) {
      for (const c of queryOutput(node, scope.ctes, scope, env)) union(acc, c.sources);
      return acc;
    }
    if (kind === 'subquery' && v.this != null && single(v.this) && ['select', 'union', 'intersect', 'except', 'values', 'paren', 'subquery'].includes(single(v.this)![0])) {
      for (const c of queryOutput(v.this, scope.ctes, scope, env)) union(acc, c.sources);
      return acc;
    }
    if (kind === 'table' && isObj(v) && 'hints' in v) return unsupported('a table inside an expression');
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'span' || key === 'trailing_comments' || key === 'leading_comments' || key === 'inferred_type') continue;
    union(acc, exprSources(value, scope, env, depth + 1));
  }
  return acc;
}

/** Finds what a (possibly qualified) name reads in one scope, without looking outward. */
function lookup(scope: Scope, parts: string[]): Col | null {
  const lower = parts.map((p) => p.toLowerCase());
  // The longest qualifier first: `c.s.t.col`, `s.t.col`, `t.col`; what follows the column is struct fields.
  for (let k = Math.min(3, lower.length - 1); k >= 1; k--) {
    const q = lower.slice(0, k).join('.');
    const rels = scope.relations.filter((r) => r.qualifiers.includes(q));
    if (rels.length > 1) unsupported(`${q} names more than one source`);
    if (rels.length === 1) {
      const rel = rels[0];
      if (!rel.columns) return { name: parts[k], sources: new Map() };
      const c = rel.columns.find((x) => x.name?.toLowerCase() === lower[k]);
      if (!c) return unsupported(`${q}.${parts[k]} is not a column`);
      return c;
    }
  }
  const name = lower[0];
  const merged = scope.merged.get(name);
  if (merged) return { name: parts[0], sources: merged };
  const hits: Col[] = [];
  let opaque = 0;
  for (const r of scope.relations) {
    if (!r.columns) opaque++;
    const c = r.columns?.find((x) => x.name?.toLowerCase() === name);
    if (c) hits.push(c);
  }
  if (hits.length > 1) unsupported(`column ${parts[0]} is ambiguous`);
  if (hits.length === 1) return hits[0];
  const alias = scope.aliases.get(name);
  if (alias) return { name: parts[0], sources: alias };
  // A source whose columns are not known (a table function) may hold it: it carries no table's values.
  if (opaque === 1) return { name: parts[0], sources: new Map() };
  if (opaque > 1) unsupported(`column ${parts[0]} may come from more than one table function`);
  return null;
}

function resolveColumn(scope: Scope, parts: string[]): Sources {
  if (scope.bound.has(parts[0].toLowerCase())) return new Map();
  for (let s: Scope | null = scope; s; s = s.parent) {
    const c = lookup(s, parts);
    if (c) return new Map(c.sources);
  }
  return unsupported(`column ${parts.join('.')} could not be resolved`);
}

// ---- AST helpers ---------------------------------------------------------------------------------------------

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function identName(v: unknown): string | null {
  return isObj(v) && typeof v.name === 'string' ? v.name : null;
}

/** polyglot's table struct (FROM items and write targets). */
function tableRefOf(t: unknown): TableRef | null {
  if (!isObj(t)) return null;
  const name = identName(t.name);
  if (!name) return null;
  return { catalog: identName(t.catalog), schema: identName(t.schema), name };
}

// Flattens column / dot nodes into name parts (`a.b.c.d`).
function nameParts(node: unknown): string[] | null {
  if (!isObj(node)) return null;
  if (isObj(node.column)) {
    const name = identName(node.column.name);
    if (!name) return null;
    const table = node.column.table == null ? null : identName(node.column.table);
    return table ? [table, name] : [name];
  }
  if (isObj(node.dot)) {
    const head = nameParts(node.dot.this);
    const field = identName(node.dot.field);
    return head && field ? [...head, field] : null;
  }
  return null;
}
