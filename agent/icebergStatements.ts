// Statement recognition for the Iceberg bridge. The bridge runs the user's statement unchanged in DuckDB (against
// tables and views it prepares under the attached catalog names) and only needs to know, per statement: its kind,
// its write target, every table it references (to prepare), and the simple predicates of its WHERE (for pruning).
// That comes from @polyglot-sql/sdk's DuckDB dialect (a sqlglot port: the statement kind is the first key of each
// AST node, tables are `{table: {catalog, schema, name}}` nodes). Two things it does not parse are done by hand:
// splitting a script into statement texts, and the `PARTITIONED BY (...)` clause of CREATE TABLE, which DuckDB
// parses but refuses for its own tables, so the bridge strips it before DuckDB sees the statement.
import { parse } from '@polyglot-sql/sdk';
import { extractPredicates, type Predicate } from '../iceberg/predicates.ts';

export interface TableRef {
  catalog: string | null;
  schema: string | null;
  name: string;
}

export type StatementKind =
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
}

type Obj = Record<string, any>;

// ---------------------------------------------------------------------------------------------------------------
// Lexing: splitting scripts and finding PARTITIONED BY outside strings and comments

/** Start/end offsets of code outside string literals, quoted identifiers and comments, for each character. */
function scan(sql: string, onCode: (i: number) => boolean | void): void {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === "'" || c === '"') {
      i++;
      while (i < sql.length) {
        if (sql[i] === c) {
          if (sql[i + 1] === c) i += 2;
          else break;
        } else i++;
      }
      i++;
    } else if (c === '-' && next === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        i = end < 0 ? sql.length : end + tag[0].length;
      } else {
        if (onCode(i) === true) return;
        i++;
      }
    } else {
      if (onCode(i) === true) return;
      i++;
    }
  }
}

/** Splits a script into statement texts on semicolons outside strings and comments; empty statements dropped. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  scan(sql, (i) => {
    if (sql[i] === ';') {
      out.push(sql.slice(start, i));
      start = i + 1;
    }
  });
  out.push(sql.slice(start));
  return out.filter((s) => s.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim() !== '');
}

/** Removes a `PARTITIONED BY (...)` clause (outside strings), returning the statement and the clause's inner text. */
export function stripPartitionedBy(sql: string): { sql: string; clause: string | null } {
  let found = -1;
  scan(sql, (i) => {
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

function tableRef(node: Obj | null | undefined): TableRef | null {
  if (!node || typeof node !== 'object' || !node.name) return null;
  const part = (x: Obj | null) => (x && typeof x.name === 'string' ? x.name : null);
  const name = part(node.name);
  if (name === null) return null;
  return { catalog: part(node.catalog), schema: part(node.schema), name };
}

/** Every `{table: …}` node below `node`, and CTE names defined anywhere below it. */
function collectTables(node: unknown, tables: TableRef[], ctes: Set<string>, depth = 0): void {
  if (depth > 400 || node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) collectTables(x, tables, ctes, depth + 1);
    return;
  }
  const o = node as Obj;
  if (o.table && typeof o.table === 'object' && o.table.name && typeof o.table.name === 'object' && 'name' in o.table.name) {
    const ref = tableRef(o.table);
    if (ref) tables.push(ref);
  }
  if (Array.isArray(o.ctes)) {
    for (const c of o.ctes) if (c?.alias?.name) ctes.add(String(c.alias.name).toLowerCase());
  }
  for (const [k, v] of Object.entries(o)) {
    if (k === 'span') continue;
    collectTables(v, tables, ctes, depth + 1);
  }
}

/** The table inside a (possibly aliased) node: `{table}` or `{alias: {this: {table}, alias}}`. */
function aliased(node: Obj | null | undefined): { ref: TableRef | null; alias: string | null } {
  if (!node) return { ref: null, alias: null };
  if (node.table) return { ref: tableRef(node.table), alias: node.table.alias?.name ?? null };
  if (node.alias?.this?.table) return { ref: tableRef(node.alias.this.table), alias: node.alias.alias?.name ?? null };
  if (node.name && node.name.name !== undefined) return { ref: tableRef(node), alias: node.alias?.name ?? null };
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
  };
}

// polyglot does not parse `DROP SCHEMA a.b`; the statement is simple enough to recognize directly.
const DROP_SCHEMA = /^\s*DROP\s+SCHEMA\s+(IF\s+EXISTS\s+)?((?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)(?:\s*\.\s*(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*))?)\s*(CASCADE|RESTRICT)?\s*$/i;

function splitName(text: string): string[] {
  return text.split(/\s*\.\s*(?=(?:[^"]*"[^"]*")*[^"]*$)/).map((p) => unquote(p.trim()));
}

export function analyzeStatement(text: string): StatementInfo {
  const stripped = stripPartitionedBy(text);
  const info = emptyInfo(stripped.sql);
  if (stripped.clause !== null) info.partitionBy = parsePartitionClause(stripped.clause);
  const dropSchema = DROP_SCHEMA.exec(stripped.sql.replace(/--[^\n]*/g, ''));
  if (dropSchema) {
    const parts = splitName(dropSchema[2]);
    info.kind = 'drop_schema';
    info.target = parts.length === 2 ? { catalog: parts[0], schema: null, name: parts[1] } : { catalog: null, schema: null, name: parts[0] };
    info.ifExists = Boolean(dropSchema[1]);
    info.cascade = (dropSchema[3] ?? '').toUpperCase() === 'CASCADE';
    return info;
  }
  let result: Obj;
  try {
    result = parse(stripped.sql, 'duckdb' as never) as unknown as Obj;
  } catch (error) {
    info.parseError = (error as Error).message;
    return info;
  }
  if (!result.success || !Array.isArray(result.ast) || result.ast.length !== 1) {
    info.parseError = String(result.error ?? 'not a single statement');
    return info;
  }
  const root = result.ast[0] as Obj;
  const kind = Object.keys(root)[0];
  const node = root[kind] as Obj;
  const tables: TableRef[] = [];
  const ctes = new Set<string>();
  collectTables(node, tables, ctes);
  info.refs = tables.filter((t) => !(t.catalog === null && t.schema === null && ctes.has(t.name.toLowerCase())));
  switch (kind) {
    case 'select':
    case 'describe': {
      info.kind = 'select';
      const from = node.from?.expressions;
      if (Array.isArray(from) && from.length === 1 && !(node.joins?.length)) {
        const a = aliased(from[0]);
        info.targetAlias = a.alias;
      }
      info.predicates = extractPredicates(node.where_clause?.this);
      break;
    }
    case 'insert':
      info.kind = 'insert';
      info.target = tableRef(node.table) ?? aliased(node.this).ref;
      break;
    case 'update':
    case 'delete': {
      info.kind = kind;
      const a = aliased(node.table ? { table: node.table } : node.this);
      info.target = a.ref;
      info.targetAlias = a.alias;
      info.predicates = extractPredicates(node.where_clause?.this);
      break;
    }
    case 'merge': {
      info.kind = 'merge';
      const a = aliased(node.this);
      info.target = a.ref;
      info.targetAlias = a.alias;
      break;
    }
    case 'create_table':
      info.kind = 'create_table';
      info.target = tableRef(node.name);
      info.ifNotExists = Boolean(node.if_not_exists);
      info.orReplace = Boolean(node.or_replace);
      info.temporary = Boolean(node.temporary);
      info.asSelect = Boolean(node.as_select);
      break;
    case 'create_schema': {
      info.kind = 'create_schema';
      const parts = (Array.isArray(node.name) ? node.name : [node.name]).map((p: Obj) => String(p.name));
      info.target = parts.length === 2 ? { catalog: parts[0], schema: null, name: parts[1] } : { catalog: null, schema: null, name: parts[0] };
      info.ifNotExists = Boolean(node.if_not_exists);
      break;
    }
    case 'drop_schema': {
      info.kind = 'drop_schema';
      const n = node.name as Obj;
      info.target = { catalog: null, schema: null, name: String(n.name) };
      info.ifExists = Boolean(node.if_exists);
      info.cascade = Boolean(node.cascade);
      break;
    }
    case 'drop_table':
      info.kind = 'drop_table';
      if (Array.isArray(node.names) && node.names.length > 1) info.parseError = 'DROP TABLE of several tables: drop them one at a time';
      info.target = tableRef(node.names?.[0]);
      info.ifExists = Boolean(node.if_exists);
      info.cascade = Boolean(node.cascade);
      break;
    case 'alter_table': {
      info.kind = 'alter_table';
      info.target = tableRef(node.name);
      const rename = (node.actions ?? []).find((a: Obj) => a.RenameTable)?.RenameTable;
      if (rename) info.renameTo = tableRef(rename);
      break;
    }
    default:
      info.kind = 'other';
  }
  return info;
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
