// Walks one statement's polyglot (sqlglot-style) AST and reports the tables it references and the first reason it
// must be rejected. The walk is generic over node shapes on purpose: a table hidden in a node kind we never listed
// is still found by its shape, and a write nested anywhere below the top is still seen, so a new construct in the
// parser fails closed instead of slipping through.
import {
  isAllowedTableFunction,
  isDeniedFunction,
  isDeniedTableName,
  isPathLike,
  isStagingReader,
  RESERVED_KEYWORDS,
} from './rules.ts';

export interface TableRef {
  catalog: string | null;
  schema: string | null;
  name: string;
}

// The schema a CREATE SCHEMA or DROP SCHEMA names; `catalog` null means the query's default catalog.
export interface SchemaRef {
  catalog: string | null;
  name: string;
}

export interface StatementFacts {
  tables: TableRef[];
  schemas: SchemaRef[];
  violation: string | null;
}

type Obj = Record<string, unknown>;

// Node kinds that are statements of their own and may only appear as the top node of a statement: finding one
// below the top is DML in a CTE, DDL in a subquery, and so on.
const NESTED_STATEMENT_KINDS: ReadonlySet<string> = new Set([
  'insert',
  'update',
  'delete',
  'merge',
  'copy',
  'truncate',
  'truncate_table',
  'attach',
  'detach',
  'install',
  'pragma',
  'set_statement',
  'set',
  'transaction',
  'commit',
  'rollback',
  'command',
  'raw',
  'use',
  'load_data',
  'export',
  'prepare',
  'execute',
  'kill',
  'grant',
  'revoke',
  'comment',
  'cache',
  'uncache',
  'refresh',
  'declare',
  'analyze',
  'alter_session',
  'clone',
  'heredoc',
]);
const NESTED_STATEMENT_PREFIX = /^(create|drop|alter|undrop)_/;

// Node kinds accepted where a table is expected (FROM items, joined items, MERGE USING).
const TABLE_SOURCE_KINDS: ReadonlySet<string> = new Set([
  'table',
  'subquery',
  'paren',
  'joined_table',
  'unnest',
  'values',
  'pivot',
  'lateral',
  'function',
]);

// polyglot caps parse depth well below this; the cap here keeps the recursive walk safe whatever it is handed.
const MAX_DEPTH = 4000;

// Statements whose target is always a catalog table: DuckDB binds the target of INSERT, UPDATE, DELETE, MERGE and
// TRUNCATE from the catalog, never from a CTE of the same name (`WITH v AS (…) INSERT INTO v` writes the table v).
const WRITE_TARGET_KINDS: ReadonlySet<string> = new Set(['insert', 'update', 'delete', 'merge', 'truncate']);

export interface WalkRules {
  /**
   * SQL sessions: judges a call of a staging reader (read_parquet, read_csv…), given its function node: null allows
   * it, a string is the reason to reject. Without it, readers are denied like every other file reader.
   */
  stagedRead?: (call: Obj) => string | null;
  /** SQL sessions: the functions allowed in sessions only (getvariable) pass. */
  session?: boolean;
}

export function analyzeStatement(root: unknown, rules: WalkRules = {}): StatementFacts {
  const walk = new Walk(rules);
  walk.visit(root, new Set(), 0, true);
  return { tables: dedupeTables(walk.tables), schemas: walk.schemas, violation: walk.violation };
}

class Walk {
  readonly rules: WalkRules;
  tables: TableRef[] = [];
  schemas: SchemaRef[] = [];
  violation: string | null = null;

  constructor(rules: WalkRules) {
    this.rules = rules;
  }

  reject(reason: string): void {
    this.violation ??= reason;
  }

  visit(node: unknown, ctes: ReadonlySet<string>, depth: number, isRoot: boolean): void {
    if (this.violation !== null) return;
    if (depth > MAX_DEPTH) return this.reject('the statement is nested too deeply');
    if (Array.isArray(node)) {
      for (const item of node) this.visit(item, ctes, depth + 1, false);
      return;
    }
    if (!isObj(node)) return;
    if (isTableStruct(node)) return this.tableStruct(node, ctes, depth);
    const keys = Object.keys(node);
    if (keys.length === 1) return this.wrapper(keys[0], node[keys[0]], ctes, depth, isRoot);
    this.struct(node, ctes, depth);
  }

  // A single-key object is an expression or statement node: the key names its kind.
  wrapper(kind: string, value: unknown, ctes: ReadonlySet<string>, depth: number, isRoot: boolean): void {
    if (!isRoot && (NESTED_STATEMENT_KINDS.has(kind) || NESTED_STATEMENT_PREFIX.test(kind))) {
      return this.reject(`${kind.replaceAll('_', ' ').toUpperCase()} inside another statement`);
    }
    const v = isObj(value) ? value : null;
    if (isRoot && v && WRITE_TARGET_KINDS.has(kind)) this.writeTargets(v, depth);
    if (isRoot && v && (kind === 'create_schema' || kind === 'drop_schema')) this.schemaTarget(v.name);
    if (kind === 'function' && v && typeof v.name === 'string' && isDeniedFunction(v.name, this.rules.session)) {
      const staged = this.stagedRead(v);
      if (staged !== null) return this.reject(staged ?? `function ${v.name.toLowerCase()}() is not allowed`);
    }
    if (kind === 'method_call' && v && isObj(v.method) && typeof v.method.name === 'string' && isDeniedFunction(v.method.name, this.rules.session)) {
      return this.reject(`function ${v.method.name.toLowerCase()}() is not allowed`);
    }
    // polyglot turns some readers into their own node kinds (read_c_s_v, read_parquet).
    if (kind.startsWith('read_')) return this.reject(`${kind} is not allowed`);
    if (kind === 'select' && v && v.into != null) return this.reject('SELECT … INTO is not allowed');
    if (kind === 'pivot' && v) this.pivotSource(v.this, ctes);
    // DESCRIBE and SUMMARIZE take a table or a query; `SUMMARIZE 'file.csv'` (a string) would read the file.
    if (kind === 'describe' && v && !isDescribable(v.target)) return this.reject('only a table or a query can be described');
    if (kind === 'summarize' && v && !isDescribable(v.this)) return this.reject('only a table or a query can be summarized');
    this.visit(value, ctes, depth + 1, false);
  }

  struct(node: Obj, ctes: ReadonlySet<string>, depth: number): void {
    const w = node.with;
    const hasCtes = isObj(w) && Array.isArray(w.ctes);
    const scope = hasCtes ? this.withClause(w, ctes, depth) : ctes;
    if (this.violation !== null) return;
    this.tableSources(node);
    for (const [key, value] of Object.entries(node)) {
      if (key === 'with' && hasCtes) continue;
      if (key === 'span' || key === 'trailing_comments' || key === 'leading_comments') continue;
      this.visit(value, scope, depth + 1, false);
    }
  }

  // A staging reader's verdict: null allowed, a reason, or undefined when the call is no staging read at all.
  stagedRead(call: Obj): string | null | undefined {
    const name = typeof call.name === 'string' ? call.name : '';
    return this.rules.stagedRead && isStagingReader(name) ? this.rules.stagedRead(call) : undefined;
  }

  // Each CTE body sees the CTEs before it (and itself when RECURSIVE); the statement body sees all of them.
  withClause(w: Obj, ctes: ReadonlySet<string>, depth: number): ReadonlySet<string> {
    const list = w.ctes as unknown[];
    const names = list.map((c) => (isObj(c) && isObj(c.alias) && typeof c.alias.name === 'string' ? c.alias.name.toLowerCase() : ''));
    const recursive = w.recursive === true;
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      const visible = new Set([...ctes, ...names.slice(0, recursive ? i + 1 : i)]);
      if (isObj(c)) this.visit(c.this, visible, depth + 1, false);
    }
    return new Set([...ctes, ...names]);
  }

  tableStruct(t: Obj, ctes: ReadonlySet<string>, depth: number): void {
    const ref = toRef([t.catalog, t.schema, t.name]);
    if (!ref) return this.reject('a table reference could not be read');
    for (const part of [t.catalog, t.schema, t.name]) {
      const id = ident(part);
      if (id && !id.quoted && RESERVED_KEYWORDS.has(id.name.toLowerCase())) {
        return this.reject(`the statement could not be read reliably (keyword ${id.name.toUpperCase()} where a table name belongs)`);
      }
    }
    this.addTable(ref, ctes);
    // Time-travel clauses and the like can hold expressions; names and aliases cannot.
    if (t.when != null) this.visit(t.when, ctes, depth + 1, false);
  }

  // Targets are recorded with no CTE in scope, so a CTE that shadows the target cannot hide it from the grant check.
  writeTargets(v: Obj, depth: number): void {
    for (const key of ['table', 'this', 'target']) {
      const t = v[key];
      const struct = isObj(t) && isTableStruct(t) ? t : isObj(t) && isObj(t.table) && isTableStruct(t.table) ? t.table : null;
      if (struct) this.tableStruct(struct, new Set(), depth + 1);
    }
  }

  // CREATE SCHEMA names [catalog.]schema; DROP SCHEMA one identifier or a list of parts.
  schemaTarget(name: unknown): void {
    const parts = (Array.isArray(name) ? name : [name]).map(ident);
    if (parts.length < 1 || parts.length > 2 || parts.some((p) => p === null)) return this.reject('the schema name could not be read');
    const [a, b] = parts as Ident[];
    this.schemas.push(b ? { catalog: norm(a), name: norm(b) } : { catalog: null, name: norm(a) });
  }

  addTable(ref: TableRef, ctes: ReadonlySet<string>): void {
    for (const part of [ref.catalog, ref.schema, ref.name]) {
      if (part !== null && isPathLike(part)) return this.reject(`'${part}' names a file, not a table`);
    }
    if (isDeniedTableName(ref.name)) return this.reject(`the system view ${ref.name} is not allowed`);
    if (ref.catalog === null && ref.schema === null && ctes.has(ref.name.toLowerCase())) return;
    this.tables.push(ref);
  }

  // DuckDB's PIVOT statement names its source like a column (`PIVOT c.s.t ON …`); polyglot parses it as one.
  pivotSource(source: unknown, ctes: ReadonlySet<string>): void {
    if (!isObj(source) || 'subquery' in source || 'table' in source || 'paren' in source) return;
    const parts = nameParts(source);
    const ref = parts && parts.length <= 3 ? toRef([parts.at(-3) ?? null, parts.at(-2) ?? null, parts.at(-1)]) : null;
    if (!ref) return this.reject('the PIVOT source could not be read');
    this.addTable(ref, ctes);
  }

  // FROM items and joined items must be tables, subqueries or allow-listed table functions.
  tableSources(node: Obj): void {
    const items: unknown[] = [];
    for (const key of ['from', 'from_clause']) {
      const f = node[key];
      if (isObj(f) && Array.isArray(f.expressions)) items.push(...f.expressions);
    }
    for (const key of ['joins', 'from_joins', 'table_joins']) {
      const j = node[key];
      if (Array.isArray(j)) for (const join of j) if (isObj(join)) items.push(join.this);
    }
    if ('whens' in node && node.using != null) items.push(node.using);
    for (const item of items) this.tableSource(item);
  }

  tableSource(item: unknown): void {
    if (!isObj(item) || isTableStruct(item)) return;
    const keys = Object.keys(item);
    const kind = keys.length === 1 ? keys[0] : '';
    // `FROM range(10) AS r(i)`: an aliased source is judged by what it aliases.
    if (kind === 'alias' && isObj(item.alias)) return this.tableSource(item.alias.this);
    if (!TABLE_SOURCE_KINDS.has(kind)) return this.reject(`${kind || 'this'} is not allowed as a table source`);
    const v = item[kind];
    if (kind === 'function') {
      const name = isObj(v) && typeof v.name === 'string' ? v.name : '';
      const staged = isAllowedTableFunction(name) || !isObj(v) ? undefined : this.stagedRead(v);
      if (!isAllowedTableFunction(name) && staged !== null) return this.reject(staged ?? `table function ${name.toLowerCase()}() is not allowed`);
    }
    if ((kind === 'lateral' || kind === 'paren') && isObj(v)) this.tableSource(v.this);
    // The joined items of a parenthesized join are checked when its struct is walked; its first item is not.
    if (kind === 'joined_table' && isObj(v)) this.tableSource(v.left);
  }
}

const DESCRIBABLE_KINDS: ReadonlySet<string> = new Set(['table', 'select', 'union', 'intersect', 'except', 'values', 'subquery', 'paren']);

function isDescribable(target: unknown): boolean {
  if (!isObj(target)) return false;
  const keys = Object.keys(target);
  return keys.length === 1 && DESCRIBABLE_KINDS.has(keys[0]);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// polyglot's table reference struct (also used bare for INSERT/UPDATE/DELETE targets and DELETE … USING).
function isTableStruct(o: Obj): boolean {
  return isObj(o.name) && typeof o.name.name === 'string' && 'schema' in o && 'catalog' in o && Array.isArray(o.hints);
}

interface Ident {
  name: string;
  quoted: boolean;
}

function ident(v: unknown): Ident | null {
  if (isObj(v) && typeof v.name === 'string') return { name: v.name, quoted: v.quoted === true };
  return null;
}

// Unquoted identifiers fold to lower case as DuckDB resolves them; quoted ones are kept as written.
function norm(i: Ident): string {
  return i.quoted ? i.name : i.name.toLowerCase();
}

function toRef(parts: [unknown, unknown, unknown]): TableRef | null {
  const [c, s, n] = parts.map((p) => (p === null || p === undefined ? null : ident(p) ?? undefined));
  if (!n || c === undefined || s === undefined) return null;
  return { catalog: c ? norm(c) : null, schema: s ? norm(s) : null, name: norm(n) };
}

// Flattens column / dot / identifier nodes into name parts.
function nameParts(node: unknown): Ident[] | null {
  if (!isObj(node)) return null;
  if (isObj(node.column)) {
    const name = ident(node.column.name);
    if (!name) return null;
    const table = node.column.table == null ? null : ident(node.column.table);
    return table ? [table, name] : [name];
  }
  if (isObj(node.dot)) {
    const head = nameParts(node.dot.this);
    const field = ident(node.dot.field);
    return head && field ? [...head, field] : null;
  }
  const id = ident(node.identifier);
  return id ? [id] : null;
}

export function dedupeTables(tables: TableRef[]): TableRef[] {
  const seen = new Set<string>();
  return tables.filter((t) => {
    const key = JSON.stringify([t.catalog, t.schema, t.name]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
