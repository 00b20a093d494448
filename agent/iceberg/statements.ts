// Statement recognition for the Iceberg bridge. The bridge runs the user's statement unchanged in DuckDB (against
// tables and views it prepares under the attached catalog names) and only needs to know, per statement: its kind,
// its write target, every table it references (to prepare), and the simple predicates of its WHERE (for pruning).
// That comes from @polyglot-sql/sdk's DuckDB dialect (a sqlglot port: the statement kind is the first key of each
// AST node, tables are `{table: {catalog, schema, name}}` nodes). Two things it does not parse are done by hand:
// splitting a script into statement texts (sqltext/scan.ts), and the `PARTITIONED BY (...)` clause of CREATE TABLE, which DuckDB
// parses but refuses for its own tables, so the bridge strips it before DuckDB sees the statement.
import { parse, type ParseResult } from '@polyglot-sql/sdk';
import { randomUUID } from 'node:crypto';
import { extractPredicates, type Predicate } from '../../iceberg/predicates.ts';
import { forEachCode, leadingKeyword, runAt } from '../../sqltext/scan.ts';
import { unsupported } from './errors.ts';

export interface TableRef {
  catalog: string | null;
  schema: string | null;
  name: string;
}

type StatementKind =
  | 'select'
  | 'insert'
  | 'update'
  | 'delete'
  | 'merge'
  | 'create_table'
  | 'create_schema'
  | 'drop_table'
  | 'drop_schema'
  | 'alter_table'
  | 'maintenance'
  | 'other';

export interface PartitionItem {
  /** Iceberg transform text: identity, year, month, day, hour, bucket[N], truncate[W]. */
  transform: string;
  column: string;
}

export interface StatementInfo {
  /** The statement as DuckDB will run it (PARTITIONED BY removed). */
  sql: string;
  kind: StatementKind;
  /** Write target (INSERT/UPDATE/DELETE/MERGE/CREATE/ALTER/DROP TABLE), or the schema of CREATE/DROP SCHEMA. */
  target: TableRef | null;
  /** Every table reference except CTE names, the target included. */
  refs: TableRef[];
  /** Conjuncts of the statement's top WHERE, usable for pruning, with the qualifier each column was written with. */
  predicates: Predicate[];
  /** Alias the target or single FROM table was given (qualifier accepted in predicates). */
  targetAlias: string | null;
  ifExists: boolean;
  ifNotExists: boolean;
  orReplace: boolean;
  temporary: boolean;
  cascade: boolean;
  asSelect: boolean;
  partitionBy: PartitionItem[] | null;
  /** ALTER TABLE … RENAME TO: the new name. */
  renameTo: TableRef | null;
  /** Why polyglot could not parse it (the statement then runs without Iceberg preparation). */
  parseError: string | null;
  /** A maintenance procedure (`CALL system.…`): the bridge carries it out; `sql` then reads its result row. */
  call: ProcedureCall | null;
  /** MERGE: what tells which target rows it can touch (null: not known, every row can). */
  merge: MergeShape | null;
}

/**
 * The parts of a MERGE that bound the target rows it can touch. Every WHEN clause acts on target rows that match a
 * source row, or inserts source rows that match none (no WHEN NOT MATCHED BY SOURCE): a target row that matches no
 * source row is never touched, and whether a source row matches is decided by the target rows that can match it.
 */
export interface MergeShape {
  /** ON conjuncts `target.column = source.sourceColumn` (either order). */
  keys: Array<{ column: string; sourceColumn: string }>;
  /** ON conjuncts comparing a column of the target (qualified) with a literal. */
  targetPredicates: Predicate[];
  /** The name the source is referred to by: its alias, or its table's name. */
  sourceQualifier: string;
  /** The names the target is referred to by, lower case. */
  targetQualifiers: string[];
  /** Offsets of the source as written in `sql` (between USING and ON, its alias included). */
  source: { start: number; end: number };
  /** The source is a table (read as it is), not a subquery (which may not give the same rows twice). */
  sourceIsTable: boolean;
}

export type ProcedureName = 'rewrite_data_files' | 'expire_snapshots' | 'rewrite_manifests' | 'remove_orphan_files';

export interface ProcedureOptions {
  targetFileSizeBytes?: number;
  minInputFiles?: number;
  /** epoch milliseconds */
  olderThanMs?: number;
  retainLast?: number;
}

export interface ProcedureCall {
  procedure: ProcedureName;
  /** The table argument as a reference (a `CALL cat.system.…` catalog applies to a name without one). */
  table: TableRef;
  /** The table argument as written. */
  tableText: string;
  options: ProcedureOptions;
  /** The temporary DuckDB table the result row is left in (the statement DuckDB runs selects from it). */
  resultTable: string;
}

// polyglot's AST is JSON (a node is an object whose one key names its kind; a field is left out when empty or false),
// read here by key: every value is unknown until checked.
type Node = { readonly [key: string]: unknown };
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null;
/** The value at `path` below `v`, or undefined where a step is missing or not an object (as `v?.a?.b` reads it). */
function at(v: unknown, ...path: string[]): unknown {
  for (const key of path) {
    if (!isNode(v)) return undefined;
    v = v[key];
  }
  return v;
}
/** The string at `path` below `v` (a name: polyglot writes an identifier as `{name, quoted}`), or null. */
function textAt(v: unknown, ...path: string[]): string | null {
  const t = at(v, ...path);
  return typeof t === 'string' ? t : null;
}
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// ---------------------------------------------------------------------------------------------------------------
// Finding PARTITIONED BY outside strings and comments (scripts are split by sqltext/scan.ts)

/** Removes a `PARTITIONED BY (...)` clause (outside strings), returning the statement and the clause's inner text. */
export function stripPartitionedBy(sql: string): { sql: string; clause: string | null } {
  let found = -1;
  forEachCode(sql, (i) => {
    if (/^PARTITIONED\s+BY\s*\(/i.test(sql.slice(i, i + 40)) && (i === 0 || !/[A-Za-z0-9_]/.test(sql[i - 1]))) {
      found = i;
      return true;
    }
  });
  if (found < 0) return { sql, clause: null };
  const open = sql.indexOf('(', found);
  let depth = 0;
  let close = -1;
  for (let i = open; i < sql.length; i++) {
    if (sql[i] === '(') depth++;
    else if (sql[i] === ')' && --depth === 0) {
      close = i;
      break;
    }
  }
  if (close < 0) throw new Error('Parser Error: unterminated PARTITIONED BY clause');
  return { sql: sql.slice(0, found) + sql.slice(close + 1), clause: sql.slice(open + 1, close) };
}

const unquote = (s: string) => (s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1).replace(/""/g, '"') : s);

/**
 * Partition items: `col`, `identity(col)`, `year|years(col)`, `month|months(col)`, `day|days(col)`,
 * `hour|hours(col)`, `bucket(N, col)` or `bucket(col, N)`, `truncate(W, col)` or `truncate(col, W)`.
 */
export function parsePartitionClause(clause: string): PartitionItem[] {
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < clause.length; i++) {
    if (clause[i] === '(') depth++;
    else if (clause[i] === ')') depth--;
    else if (clause[i] === ',' && depth === 0) {
      items.push(clause.slice(start, i));
      start = i + 1;
    }
  }
  items.push(clause.slice(start));
  const ident = String.raw`("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)`;
  return items.map((raw) => {
    const item = raw.trim();
    let m = new RegExp(`^${ident}$`).exec(item);
    if (m) return { transform: 'identity', column: unquote(m[1]) };
    m = new RegExp(String.raw`^(identity|years?|months?|days?|hours?)\s*\(\s*${ident}\s*\)$`, 'i').exec(item);
    if (m) {
      const t = m[1].toLowerCase().replace(/s$/, '');
      return { transform: t, column: unquote(m[2]) };
    }
    m = new RegExp(String.raw`^(bucket|truncate)\s*\(\s*(?:(\d+)\s*,\s*${ident}|${ident}\s*,\s*(\d+))\s*\)$`, 'i').exec(item);
    if (m) {
      const n = Number(m[2] ?? m[5]);
      const column = unquote(m[3] ?? m[4]);
      return { transform: `${m[1].toLowerCase()}[${n}]`, column };
    }
    throw new Error(`Parser Error: unsupported partition item "${item}" (use col, year(col), month(col), day(col), hour(col), bucket(N, col) or truncate(W, col))`);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// AST

function tableRef(node: unknown): TableRef | null {
  if (!isNode(node) || !node.name) return null;
  const name = textAt(node.name, 'name');
  if (name === null) return null;
  return { catalog: textAt(node.catalog, 'name'), schema: textAt(node.schema, 'name'), name };
}

/** Every `{table: …}` node below `node`, and CTE names defined anywhere below it. */
function collectTables(node: unknown, tables: TableRef[], ctes: Set<string>, depth = 0): void {
  if (depth > 400 || !isNode(node)) return;
  if (Array.isArray(node)) {
    for (const x of list(node)) collectTables(x, tables, ctes, depth + 1);
    return;
  }
  const table = node.table;
  if (isNode(table) && isNode(table.name) && 'name' in table.name) {
    const ref = tableRef(table);
    if (ref) tables.push(ref);
  }
  for (const c of list(node.ctes)) {
    const name = at(c, 'alias', 'name');
    if (name) ctes.add(String(name).toLowerCase());
  }
  for (const [k, v] of Object.entries(node)) {
    if (k === 'span') continue;
    collectTables(v, tables, ctes, depth + 1);
  }
}

/** The table inside a (possibly aliased) node: `{table}` or `{alias: {this: {table}, alias}}`. */
function aliased(node: unknown): { ref: TableRef | null; alias: string | null } {
  if (!node) return { ref: null, alias: null };
  const table = at(node, 'table');
  if (table) return { ref: tableRef(table), alias: textAt(table, 'alias', 'name') };
  const inner = at(node, 'alias', 'this', 'table');
  if (inner) return { ref: tableRef(inner), alias: textAt(node, 'alias', 'alias', 'name') };
  if (at(node, 'name') && at(node, 'name', 'name') !== undefined) return { ref: tableRef(node), alias: textAt(node, 'alias', 'name') };
  return { ref: null, alias: null };
}

function emptyInfo(sql: string): StatementInfo {
  return {
    sql,
    kind: 'other',
    target: null,
    refs: [],
    predicates: [],
    targetAlias: null,
    ifExists: false,
    ifNotExists: false,
    orReplace: false,
    temporary: false,
    cascade: false,
    asSelect: false,
    partitionBy: null,
    renameTo: null,
    parseError: null,
    call: null,
    merge: null,
  };
}

// polyglot does not parse `DROP SCHEMA a.b`, nor `CREATE SCHEMA warehouse.x` (WAREHOUSE is a keyword of its own);
// both statements are simple enough to recognize directly.
const SCHEMA_NAME = String.raw`((?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)(?:\s*\.\s*(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*))?)`;
const DROP_SCHEMA = new RegExp(String.raw`^\s*DROP\s+SCHEMA\s+(IF\s+EXISTS\s+)?${SCHEMA_NAME}\s*(CASCADE|RESTRICT)?\s*$`, 'i');
const CREATE_SCHEMA = new RegExp(String.raw`^\s*CREATE\s+SCHEMA\s+(IF\s+NOT\s+EXISTS\s+)?${SCHEMA_NAME}\s*$`, 'i');

const schemaTarget = (name: string): TableRef => {
  const parts = splitName(name);
  return parts.length === 2 ? { catalog: parts[0], schema: null, name: parts[1] } : { catalog: null, schema: null, name: parts[0] };
};

function splitName(text: string): string[] {
  return text.split(/\s*\.\s*(?=(?:[^"]*"[^"]*")*[^"]*$)/).map((p) => unquote(p.trim()));
}

/**
 * Reads analyzed before, by their text (least recently used first out): a dashboard or a schedule sends the same
 * text again and again, and parsing it cost a warm scan about 0.6 ms of the agent's CPU. The analysis is a function
 * of the text alone, and each caller gets a copy of its own. Only reads are kept: a procedure call's result table is
 * named afresh for each query, and a write's statement may be rewritten on its way (a MERGE's).
 */
const knownReads = new Map<string, StatementInfo>();
const KNOWN_READS_MAX = 256;
const KNOWN_READ_CHARS_MAX = 16_384;

export function analyzeStatement(text: string): StatementInfo {
  const known = knownReads.get(text);
  if (known) {
    knownReads.delete(text);
    knownReads.set(text, known);
    return structuredClone(known);
  }
  const info = analyzeText(text);
  if (info.kind === 'select' && info.parseError === null && text.length <= KNOWN_READ_CHARS_MAX) {
    knownReads.set(text, structuredClone(info));
    if (knownReads.size > KNOWN_READS_MAX) knownReads.delete(knownReads.keys().next().value!);
  }
  return info;
}

function analyzeText(text: string): StatementInfo {
  const call = parseProcedureCall(text);
  if (call) {
    const info = emptyInfo(`SELECT * FROM temp.main.${call.resultTable}`);
    info.kind = 'maintenance';
    info.call = call;
    info.target = call.table;
    return info;
  }
  const stripped = stripPartitionedBy(text);
  const info = emptyInfo(stripped.sql);
  if (stripped.clause !== null) info.partitionBy = parsePartitionClause(stripped.clause);
  const code = stripped.sql.replace(/--[^\n]*/g, '');
  const dropSchema = DROP_SCHEMA.exec(code);
  if (dropSchema) {
    info.kind = 'drop_schema';
    info.target = schemaTarget(dropSchema[2]);
    info.ifExists = Boolean(dropSchema[1]);
    info.cascade = (dropSchema[3] ?? '').toUpperCase() === 'CASCADE';
    return info;
  }
  const createSchema = CREATE_SCHEMA.exec(code);
  if (createSchema) {
    info.kind = 'create_schema';
    info.target = schemaTarget(createSchema[2]);
    info.ifNotExists = Boolean(createSchema[1]);
    return info;
  }
  let result: ParseResult;
  try {
    result = parse(stripped.sql, 'duckdb' as never);
  } catch (error) {
    info.parseError = (error as Error).message;
    return info;
  }
  if (!result.success || !Array.isArray(result.ast) || result.ast.length !== 1) {
    info.parseError = String(result.error ?? 'not a single statement');
    return info;
  }
  const root: unknown = result.ast[0];
  const kind = isNode(root) ? (Object.keys(root)[0] ?? '') : '';
  const node = at(root, kind);
  const tables: TableRef[] = [];
  const ctes = new Set<string>();
  collectTables(node, tables, ctes);
  info.refs = tables.filter((t) => !(t.catalog === null && t.schema === null && ctes.has(t.name.toLowerCase())));
  switch (kind) {
    case 'select':
    case 'describe': {
      info.kind = 'select';
      const from = at(node, 'from', 'expressions');
      if (Array.isArray(from) && from.length === 1 && !at(node, 'joins', 'length')) {
        const a = aliased(from[0]);
        info.targetAlias = a.alias;
      }
      info.predicates = extractPredicates(at(node, 'where_clause', 'this'));
      break;
    }
    case 'insert':
      info.kind = 'insert';
      info.target = tableRef(at(node, 'table')) ?? aliased(at(node, 'this')).ref;
      break;
    case 'update':
    case 'delete': {
      info.kind = kind;
      const table = at(node, 'table');
      const a = aliased(table ? { table } : at(node, 'this'));
      info.target = a.ref;
      info.targetAlias = a.alias;
      info.predicates = extractPredicates(at(node, 'where_clause', 'this'));
      break;
    }
    case 'merge': {
      info.kind = 'merge';
      const a = aliased(at(node, 'this'));
      info.target = a.ref;
      info.targetAlias = a.alias;
      if (a.ref) info.merge = mergeShape(node, stripped.sql, a.ref, a.alias);
      break;
    }
    case 'create_table':
      info.kind = 'create_table';
      info.target = tableRef(at(node, 'name'));
      info.ifNotExists = Boolean(at(node, 'if_not_exists'));
      info.orReplace = Boolean(at(node, 'or_replace'));
      info.temporary = Boolean(at(node, 'temporary'));
      info.asSelect = Boolean(at(node, 'as_select'));
      break;
    case 'create_schema': {
      info.kind = 'create_schema';
      const name = at(node, 'name');
      const parts = (Array.isArray(name) ? list(name) : [name]).map((p) => String(at(p, 'name')));
      info.target = parts.length === 2 ? { catalog: parts[0], schema: null, name: parts[1] } : { catalog: null, schema: null, name: parts[0] };
      info.ifNotExists = Boolean(at(node, 'if_not_exists'));
      break;
    }
    case 'drop_schema': {
      info.kind = 'drop_schema';
      info.target = { catalog: null, schema: null, name: String(at(node, 'name', 'name')) };
      info.ifExists = Boolean(at(node, 'if_exists'));
      info.cascade = Boolean(at(node, 'cascade'));
      break;
    }
    case 'drop_table':
      info.kind = 'drop_table';
      if (list(at(node, 'names')).length > 1) info.parseError = 'DROP TABLE of several tables: drop them one at a time';
      info.target = tableRef(at(node, 'names', '0'));
      info.ifExists = Boolean(at(node, 'if_exists'));
      info.cascade = Boolean(at(node, 'cascade'));
      break;
    case 'alter_table': {
      info.kind = 'alter_table';
      info.target = tableRef(at(node, 'name'));
      const rename = at(list(at(node, 'actions')).find((a) => at(a, 'RenameTable')), 'RenameTable');
      if (rename) info.renameTo = tableRef(rename);
      break;
    }
    default:
      info.kind = 'other';
  }
  return info;
}

/** The start of `word` (a keyword) outside strings, comments and parentheses, at or after `from`; -1 if none. */
function topLevelKeyword(sql: string, word: string, from: number): number {
  let depth = 0;
  let found = -1;
  const re = new RegExp(`^${word}(?![A-Za-z0-9_$])`, 'i');
  forEachCode(sql, (i) => {
    const c = sql[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (i >= from && depth === 0 && (i === 0 || !/[A-Za-z0-9_$."]/.test(sql[i - 1])) && re.test(sql.slice(i, i + word.length + 1))) {
      found = i;
      return true;
    }
  });
  return found;
}

const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;
const TABLE_SOURCE = new RegExp(String.raw`^${IDENT}(?:\s*\.\s*${IDENT}){0,2}(?:\s+(?:AS\s+)?${IDENT})?$`, 'i');
const SUBQUERY_ALIAS = new RegExp(String.raw`^(?:AS\s+)?${IDENT}(?:\s*\([^()]*\))?$`, 'i');

/**
 * A MERGE's shape (MergeShape), or null when it is not one the target rows can be bounded by: a WHEN NOT MATCHED BY
 * SOURCE (or a clause not recognized), a WITH, `USING (columns)`, a source that is neither a table nor a
 * parenthesized subquery, an ON that names no target and source columns as equal.
 */
function mergeShape(node: unknown, sql: string, target: TableRef, targetAlias: string | null): MergeShape | null {
  const whens = list(at(node, 'whens', 'whens', 'expressions'));
  if (whens.length === 0) return null;
  // `matched` and `source` are `{boolean: {value}}` (value left out when false); `source` is absent unless written.
  const flag = (x: unknown, absent: boolean | null) => (x === null || x === undefined ? absent : at(x, 'boolean') ? at(x, 'boolean', 'value') === true : null);
  for (const w of whens) {
    const matched = flag(at(w, 'when', 'matched'), null);
    const bySource = flag(at(w, 'when', 'source'), false);
    if (matched === null || bySource === null || (matched === false && bySource === true)) return null;
  }
  if (at(node, 'with_') || at(node, 'using_cond') || !at(node, 'on')) return null;
  const u = at(node, 'using');
  let sourceQualifier: string | null = null;
  let sourceIsTable = false;
  if (at(u, 'table', 'name', 'name')) {
    sourceIsTable = true;
    sourceQualifier = textAt(u, 'table', 'alias', 'name') ?? textAt(u, 'table', 'name', 'name');
  } else if (at(u, 'alias', 'this', 'table', 'name', 'name')) {
    sourceIsTable = true;
    sourceQualifier = textAt(u, 'alias', 'alias', 'name');
  } else if (at(u, 'subquery')) {
    sourceQualifier = textAt(u, 'subquery', 'alias', 'name');
  }
  if (!sourceQualifier) return null;
  const targetQualifiers = [(targetAlias ?? target.name).toLowerCase()];
  if (targetQualifiers.includes(sourceQualifier.toLowerCase())) return null;
  // Where the source is written: between the MERGE's USING and its ON, both outside parentheses.
  const using = topLevelKeyword(sql, 'USING', 0);
  const on = using < 0 ? -1 : topLevelKeyword(sql, 'ON', using + 5);
  if (on < 0) return null;
  const text = sql.slice(using + 5, on).replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ').trim();
  if (sourceIsTable ? !TABLE_SOURCE.test(text) : !(text.startsWith('(') && closingParen(text) > 0 && SUBQUERY_ALIAS.test(text.slice(closingParen(text) + 1).trim()))) return null;
  const keys: MergeShape['keys'] = [];
  const targetPredicates: Predicate[] = [];
  const isTarget = (q: string | null) => q !== null && targetQualifiers.includes(q.toLowerCase());
  const isSource = (q: string | null) => q !== null && q.toLowerCase() === sourceQualifier!.toLowerCase();
  const col = (n: unknown) => (at(n, 'column', 'name') ? { name: String(at(n, 'column', 'name', 'name')), qualifier: textAt(n, 'column', 'table', 'name') } : null);
  const visit = (n: unknown) => {
    if (!isNode(n)) return;
    if (n.and) return void (visit(at(n.and, 'left')), visit(at(n.and, 'right')));
    if (n.paren) return visit(at(n.paren, 'this'));
    if (n.eq) {
      const l = col(at(n.eq, 'left'));
      const r = col(at(n.eq, 'right'));
      if (l && r && isTarget(l.qualifier) && isSource(r.qualifier)) keys.push({ column: l.name, sourceColumn: r.name });
      else if (l && r && isSource(l.qualifier) && isTarget(r.qualifier)) keys.push({ column: r.name, sourceColumn: l.name });
    }
  };
  visit(at(node, 'on'));
  for (const p of extractPredicates(at(node, 'on'))) if (isTarget(p.qualifier)) targetPredicates.push(p);
  if (keys.length === 0 && targetPredicates.length === 0) return null;
  return { keys, targetPredicates, sourceQualifier, targetQualifiers, source: { start: using + 5, end: on }, sourceIsTable };
}

/** The offset of the parenthesis closing the one `text` starts with (outside strings and comments), or -1. */
function closingParen(text: string): number {
  let depth = 0;
  let found = -1;
  forEachCode(text, (i) => {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) {
      found = i;
      return true;
    }
  });
  return found;
}

/** Table names ending `__snapshot_<id>` read that snapshot of the table (time travel). */
/**
 * Time travel by name: `t__snapshot_<snapshot id>` reads that snapshot; `t__at_<epoch milliseconds>` reads the
 * snapshot that was current at that instant (the last one of the snapshot log at or before it).
 */
export function snapshotSuffix(name: string): { base: string; snapshotId: bigint } | { base: string; asOfMs: number } | null {
  const id = /^(.+)__snapshot_(\d+)$/.exec(name);
  if (id) return { base: id[1], snapshotId: BigInt(id[2]) };
  const at = /^(.+)__at_(\d{1,16})$/.exec(name);
  return at ? { base: at[1], asOfMs: Number(at[2]) } : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Maintenance procedures, in Spark's Iceberg procedure syntax:
//   CALL [catalog.]system.<procedure>(table => 'cat.sch.tbl', name => value, …)   or positional arguments
// Values: 'string', integer, TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.fff][±hh:mm|Z]' (no offset: UTC), true/false and
// map('key', 'value', …). DuckDB has its own CALL (table functions): only these four names under `system` are taken.

type Token = { type: 'word' | 'quoted' | 'string' | 'number' | 'punct'; text: string };

function tokenize(sql: string): Token[] | null {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    const run = runAt(sql, i);
    if (/\s/.test(c)) i++;
    else if (run) {
      if (!run.closed) return null;
      if (run.kind === 'string' && c !== "'") out.push({ type: 'punct', text: sql.slice(i, run.end) }); // E'…': no argument value
      else if (run.kind === 'string' || run.kind === 'quoted') out.push({ type: c === "'" ? 'string' : 'quoted', text: sql.slice(i + 1, run.end - 1).replaceAll(c + c, c) });
      else if (run.kind === 'dollar') out.push({ type: 'punct', text: sql.slice(i, run.end) });
      i = run.end;
    } else if (sql.startsWith('=>', i)) {
      out.push({ type: 'punct', text: '=>' });
      i += 2;
    } else if ('().,;'.includes(c)) {
      out.push({ type: 'punct', text: c });
      i++;
    } else {
      const m = /^(?:[A-Za-z_][A-Za-z0-9_$]*|\d+)/.exec(sql.slice(i, i + 256));
      if (!m) out.push({ type: 'punct', text: c });
      else out.push({ type: /^\d/.test(m[0]) ? 'number' : 'word', text: m[0] });
      i += m ? m[0].length : 1;
    }
  }
  return out;
}

type ArgValue =
  | { kind: 'string'; text: string }
  | { kind: 'number'; text: string }
  | { kind: 'timestamp'; text: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'map'; entries: Array<[string, string]> };

const PROCEDURES: Record<ProcedureName, readonly string[]> = {
  // Positional order as Spark's; sort_order and where are recognized to be refused by name.
  rewrite_data_files: ['table', 'strategy', 'sort_order', 'options', 'where', 'target_file_size_bytes', 'min_input_files'],
  expire_snapshots: ['table', 'older_than', 'retain_last'],
  rewrite_manifests: ['table'],
  remove_orphan_files: ['table', 'older_than'],
};

const isName = (t: Token | undefined) => t !== undefined && (t.type === 'word' || t.type === 'quoted');

/** A CALL of one of the maintenance procedures, or null when `sql` is something else (DuckDB's own CALL too). */
export function parseProcedureCall(sql: string): ProcedureCall | null {
  if (leadingKeyword(sql) !== 'CALL') return null;
  const t = tokenize(sql);
  if (!t || t[0]?.type !== 'word' || t[0].text.toUpperCase() !== 'CALL') return null;
  // CALL [catalog .] system . name (
  const names: string[] = [];
  let i = 1;
  while (isName(t[i])) {
    names.push(t[i].text);
    i++;
    if (t[i]?.text !== '.') break;
    i++;
  }
  if (t[i]?.text !== '(' || names.length < 2 || names.length > 3) return null;
  const procedure = names[names.length - 1].toLowerCase();
  if (names[names.length - 2].toLowerCase() !== 'system' || !(procedure in PROCEDURES)) return null;
  const proc = procedure as ProcedureName;
  const catalog = names.length === 3 ? names[0] : null;
  i++;
  const args = new Map<string, ArgValue>();
  let positional = 0;
  const fail = (message: string): never => {
    throw unsupported(`CALL system.${proc}: ${message}`);
  };
  const value = (): ArgValue => {
    const v = t[i];
    if (!v) fail('the argument list is not closed');
    if (v.type === 'string') {
      i++;
      return { kind: 'string', text: v.text };
    }
    if (v.type === 'number') {
      i++;
      return { kind: 'number', text: v.text };
    }
    if (v.type === 'word' && /^(TIMESTAMP|TIMESTAMPTZ)$/i.test(v.text) && t[i + 1]?.type === 'string') {
      i += 2;
      return { kind: 'timestamp', text: t[i - 1].text };
    }
    if (v.type === 'word' && /^(TRUE|FALSE)$/i.test(v.text)) {
      i++;
      return { kind: 'boolean', value: v.text.toUpperCase() === 'TRUE' };
    }
    if (v.type === 'word' && v.text.toLowerCase() === 'map' && t[i + 1]?.text === '(') {
      i += 2;
      const items: string[] = [];
      while (t[i]?.text !== ')') {
        const item = t[i];
        if (!item || (item.type !== 'string' && item.type !== 'number')) fail("map(…) takes literal keys and values: map('key', 'value', …)");
        items.push(item.text);
        i++;
        if (t[i]?.text === ',') i++;
        else if (t[i]?.text !== ')') fail("map(…) takes literal keys and values: map('key', 'value', …)");
      }
      i++;
      if (items.length % 2) fail('map(…) needs a value for every key');
      const entries: Array<[string, string]> = [];
      for (let k = 0; k < items.length; k += 2) entries.push([items[k], items[k + 1]]);
      return { kind: 'map', entries };
    }
    return fail(`unsupported argument value ${v.text} (use a string, an integer, TIMESTAMP '…', true/false or map('key', 'value', …))`);
  };
  while (t[i]?.text !== ')') {
    if (!t[i]) fail('the argument list is not closed');
    let name: string;
    if (isName(t[i]) && t[i + 1]?.text === '=>') {
      name = t[i].text.toLowerCase();
      i += 2;
      if (!PROCEDURES[proc].includes(name)) fail(`unknown argument ${name} (arguments: ${PROCEDURES[proc].filter((a) => !['sort_order', 'where'].includes(a)).join(', ')})`);
    } else {
      if (args.size > positional) fail('positional arguments cannot follow named ones');
      name = PROCEDURES[proc][positional++] ?? fail('too many arguments');
    }
    if (args.has(name)) fail(`argument ${name} is given twice`);
    args.set(name, value());
    if (t[i]?.text === ',') i++;
    else if (t[i]?.text !== ')') fail(`unexpected ${t[i]?.text ?? 'end of statement'} in the argument list`);
  }
  i++;
  while (t[i]?.text === ';') i++;
  if (i < t.length) fail(`unexpected ${t[i].text} after the argument list`);

  const tableArg = args.get('table');
  if (!tableArg) fail("the table argument is required: table => 'catalog.schema.table'");
  if (tableArg!.kind !== 'string') fail("table must be a string literal: table => 'catalog.schema.table'");
  const tableText = (tableArg as { text: string }).text;
  const parts = splitName(tableText.trim());
  if (parts.some((p) => p === '') || parts.length < 1 || parts.length > (catalog ? 2 : 3)) fail(`table ${tableText} is not a table name (catalog.schema.table)`);
  const table: TableRef =
    parts.length === 3
      ? { catalog: parts[0], schema: parts[1], name: parts[2] }
      : parts.length === 2
        ? { catalog, schema: parts[0], name: parts[1] }
        : { catalog, schema: catalog ? 'main' : null, name: parts[0] };

  const options: ProcedureOptions = {};
  const positiveInt = (name: string, v: ArgValue | string, min: number): number => {
    const text = typeof v === 'string' ? v : v.kind === 'number' || v.kind === 'string' ? v.text : '';
    const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
    if (!Number.isSafeInteger(n) || n < min) fail(`${name} must be an integer of at least ${min}`);
    return n;
  };
  for (const [name, v] of args) {
    switch (name) {
      case 'table':
        break;
      case 'target_file_size_bytes':
        options.targetFileSizeBytes = positiveInt(name, v, 1);
        break;
      case 'min_input_files':
        options.minInputFiles = positiveInt(name, v, 1);
        break;
      case 'retain_last':
        options.retainLast = positiveInt(name, v, 1);
        break;
      case 'older_than':
        if (v.kind !== 'timestamp' && v.kind !== 'string') fail("older_than must be a timestamp: older_than => TIMESTAMP '2026-01-01 00:00:00'");
        options.olderThanMs = parseTimestampMs((v as { text: string }).text) ?? fail(`older_than ${(v as { text: string }).text} is not a timestamp (yyyy-mm-dd hh:mm:ss, UTC unless an offset is given)`);
        break;
      case 'strategy':
        if (v.kind !== 'string' || v.text.toLowerCase() !== 'binpack') fail("only strategy => 'binpack' is supported (sort and z-order are not)");
        break;
      case 'options':
        if (v.kind !== 'map') fail("options must be map('key', 'value', …)");
        for (const [key, val] of (v as { entries: Array<[string, string]> }).entries) {
          if (key === 'target-file-size-bytes') options.targetFileSizeBytes = positiveInt(key, val, 1);
          else if (key === 'min-input-files') options.minInputFiles = positiveInt(key, val, 1);
          else fail(`option ${key} is not supported (target-file-size-bytes, min-input-files)`);
        }
        break;
      default:
        fail(`argument ${name} is not supported`);
    }
  }
  return { procedure: proc, table, tableText, options, resultTable: `__eider_call_${randomUUID().replace(/-/g, '')}` };
}

/** `yyyy-mm-dd[ T]hh:mm[:ss[.fff…]][Z|±hh[:mm]]` or `yyyy-mm-dd` → epoch ms; no offset is UTC. */
export function parseTimestampMs(text: string): number | null {
  const m = /^\s*(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?\s*$/i.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0').slice(0, 3)));
  const check = new Date(ms);
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  if (zone && zone.toUpperCase() !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const offset = (Number(z[2]) * 60 + Number(z[3] ?? 0)) * 60_000;
    ms -= z[1] === '+' ? offset : -offset;
  }
  return ms;
}
