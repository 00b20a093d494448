// The second reader of a read: DuckDB's own parse tree (json_serialize_sql, which serializes SELECTs only) walked
// with the same rules as the polyglot walk. polyglot's DuckDB dialect misses parts of DuckDB's grammar (`//`,
// EXPORT_STATE, `* LIKE`, casts to UNION(…), FROM-first with QUALIFY…); for a single read it cannot parse, or
// misreads, the engine's parse decides instead (I1 allows the api the engine for parsing). Fails closed: a
// table reference of a kind not listed, a function on the deny-list, a table function off the allow-list, a table
// name that is a path or a denied view rejects. Pure: the tree comes from the caller.
import type { TableRef } from './ast.ts';
import { isAllowedTableFunction, isDeniedFunction, isDeniedTableName, isPathLike } from './rules.ts';

export type DuckReadVerdict = { ok: true; tables: TableRef[] } | { ok: false; reason: string };

// Every table reference kind of DuckDB's serialized SELECT that reads nothing but tables and its own inputs.
const TABLE_REF_TYPES = new Set(['BASE_TABLE', 'TABLE_FUNCTION', 'JOIN', 'SUBQUERY', 'EXPRESSION_LIST', 'EMPTY', 'PIVOT', 'SHOW_REF']);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Judges DuckDB's serialized statements of one read. `quoted` tells whether a name was written double-quoted (kept
 * as written) or not (folded to lower case, as the polyglot walk reports it).
 */
export function judgeDuckRead(statements: unknown[], sql: string, quoted: (name: string) => boolean): DuckReadVerdict {
  const tables: TableRef[] = [];
  const bytes = Buffer.from(sql, 'utf8');
  let violation: string | null = null;
  const fold = (name: string) => (quoted(name) ? name : name.toLowerCase());

  const walk = (v: unknown, ctes: ReadonlySet<string>): void => {
    if (violation !== null) return;
    if (Array.isArray(v)) return v.forEach((x) => walk(x, ctes));
    if (!isObj(v)) return;
    let scope = ctes;
    // CTE scoping as DuckDB binds it: each body sees the CTEs before it (a recursive one also itself); the rest of
    // the node sees them all. A CTE name hides a bare table name only inside that scope.
    const map = isObj(v.cte_map) && Array.isArray(v.cte_map.map) ? (v.cte_map.map as Obj[]) : [];
    for (const entry of map) {
      const key = str(entry.key).toLowerCase();
      const body = isObj(entry.value) && isObj(entry.value.query) ? entry.value.query.node : undefined;
      const recursive = isObj(body) && body.type === 'RECURSIVE_CTE_NODE';
      walk(entry.value, recursive ? new Set([...scope, key]) : scope);
      scope = new Set([...scope, key]);
    }
    const isTableRef = 'sample' in v && 'alias' in v && !('select_list' in v) && typeof v.type === 'string';
    if (isTableRef) {
      const type = v.type as string;
      if (!TABLE_REF_TYPES.has(type)) return void (violation = `${type.toLowerCase()} is not allowed as a table source`);
      if (type === 'BASE_TABLE') {
        const parts = [str(v.catalog_name), str(v.schema_name), str(v.table_name)];
        for (const p of parts) if (isPathLike(p)) return void (violation = `'${p}' names a file, not a table`);
        const [catalog, schema, name] = parts;
        // DuckDB's tree does not say how a name was written. A string in FROM ('x', $$x$$, E'x') is a replacement
        // scan, which may read a file: the name must start where the text has an identifier (at the byte offset
        // DuckDB records), and may not be empty.
        if (name === '' || !writtenAsIdentifier(bytes, v.query_location)) return void (violation = `'${name}' names a file, not a table`);
        if (isDeniedTableName(name)) return void (violation = `the system view ${name} is not allowed`);
        if (!(catalog === '' && schema === '' && scope.has(name.toLowerCase()))) {
          tables.push({ catalog: catalog === '' ? null : fold(catalog), schema: schema === '' ? null : fold(schema), name: fold(name) });
        }
      }
      if (type === 'TABLE_FUNCTION') {
        const fn = isObj(v.function) ? v.function : {};
        const name = str(fn.function_name);
        if (str(fn.schema) !== '' || str(fn.catalog) !== '' || !isAllowedTableFunction(name)) {
          return void (violation = `table function ${name}() is not allowed`);
        }
      }
      // SHOW TABLES and the like name a catalog listing rather than a query: left to the polyglot reading.
      if (type === 'SHOW_REF' && str(v.table_name) !== '') return void (violation = 'SHOW is not allowed here');
    }
    if (typeof v.function_name === 'string' && isDeniedFunction(v.function_name)) {
      return void (violation = `function ${v.function_name}() is not allowed`);
    }
    for (const [k, x] of Object.entries(v)) if (k !== 'cte_map') walk(x, scope);
  };
  walk(statements, new Set());
  if (violation !== null) return { ok: false, reason: violation };
  const seen = new Set<string>();
  const unique = tables.filter((t) => {
    const key = JSON.stringify([t.catalog, t.schema, t.name]);
    return seen.has(key) ? false : (seen.add(key), true);
  });
  return { ok: true, tables: unique };
}

// The text at a table reference's byte offset starts an identifier: a double quote, a letter, `_`, or a non-ASCII
// byte; not a string (`'`, `$$`, `E'`). A reference with no recorded offset fails.
function writtenAsIdentifier(bytes: Buffer, location: unknown): boolean {
  if (typeof location !== 'number' || !Number.isInteger(location) || location < 0 || location >= bytes.length) return false;
  const c = bytes[location];
  if ((c === 0x45 || c === 0x65) && bytes[location + 1] === 0x27) return false;
  return c === 0x22 || c === 0x5f || c >= 0x80 || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
