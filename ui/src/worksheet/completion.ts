// Completion in the SQL editor. First the columns of the tables the statement under the cursor reads (its FROM and
// JOIN items, by name or alias), then catalog, schema and table names from the api (fetched level by level as a
// dotted name is typed, cached for the life of the worksheet screen), then DuckDB's own functions (with their
// signatures, loaded on first use) and keywords. `SELECT fa… FROM samples.trips` offers `fare` before FALSE.
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { syntaxTree } from '@codemirror/language';
import { ApiError, call } from '../api/client.ts';
import { FUNCTION_KINDS, KEYWORD_LIST, TYPE_LIST } from './duckdbDialect.ts';
import { statementAt } from './statementAt.ts';

export interface ColumnName {
  name: string;
  type: string;
}

export class CatalogNames {
  private readonly ws: string;
  private readonly cache = new Map<string, Promise<unknown>>();
  defaultCatalog: string | null = null;

  constructor(ws: string) {
    this.ws = ws;
  }

  /** Forgets every level, so the next look reads the catalog again (after DDL, or Refresh). */
  invalidate(): void {
    this.cache.clear();
  }

  private cached<T>(key: string, load: () => Promise<T[]>): Promise<T[]> {
    let p = this.cache.get(key) as Promise<T[]> | undefined;
    if (!p) {
      p = load().catch((e: unknown) => {
        // A failed level (endpoint missing, no access) is retried next time; a name that does not exist (a CTE
        // read as a table) is not asked for again on every keystroke.
        if (!(e instanceof ApiError && e.status === 404)) this.cache.delete(key);
        return [];
      });
      this.cache.set(key, p);
    }
    return p;
  }

  catalogs(): Promise<string[]> {
    return this.cached('', async () => {
      const list = await call('GET /api/workspaces/{workspace}/catalogs', { path: { workspace: this.ws } });
      this.defaultCatalog = list.find((c) => c.is_default)?.slug ?? this.defaultCatalog;
      return list.map((c) => c.slug);
    });
  }

  schemas(catalog: string): Promise<string[]> {
    return this.cached(`${catalog}`, async () => {
      const list = await call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas', { path: { workspace: this.ws, catalog } });
      return list.map((s) => s.name);
    });
  }

  tables(catalog: string, schema: string): Promise<string[]> {
    return this.cached(`${catalog}.${schema}`, async () => {
      const list = await call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables', { path: { workspace: this.ws, catalog, schema } });
      return list.map((t) => t.name);
    });
  }

  columns(catalog: string, schema: string, table: string): Promise<ColumnName[]> {
    return this.cached(`${catalog}.${schema}.${table}`, async () => {
      const t = await call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}', { path: { workspace: this.ws, catalog, schema, table } });
      return t.columns.map((c) => ({ name: c.name, type: c.type }));
    });
  }
}

// ---- the tables a statement reads --------------------------------------------------------------------------

interface Token {
  kind: 'word' | 'quoted' | 'punct' | 'other';
  /** the identifier (unquoted), or the punctuation character */
  text: string;
}

/** Words, quoted identifiers and punctuation of `sql`; strings, numbers and comments become `other`. */
function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i];
    if (/\s/.test(c)) i++;
    else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      let text = '';
      while (j < n) {
        if (sql[j] === c) {
          if (sql[j + 1] === c) {
            text += c;
            j += 2;
            continue;
          }
          break;
        }
        text += sql[j++];
      }
      out.push(c === '"' ? { kind: 'quoted', text } : { kind: 'other', text: '' });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][\w$]*/.exec(sql.slice(i, i + 256))!;
      out.push({ kind: 'word', text: m[0] });
      i += m[0].length;
    } else if (/\d/.test(c)) {
      const m = /^[\d.eE_]+/.exec(sql.slice(i, i + 64))!;
      out.push({ kind: 'other', text: '' });
      i += m[0].length;
    } else {
      out.push({ kind: 'punct', text: c });
      i++;
    }
  }
  return out;
}

export interface TableInScope {
  /** the dotted name as written: [table], [schema, table] or [catalog, schema, table] */
  parts: string[];
  alias: string | null;
}

// Words that end a FROM item, so they are never read as its alias.
const NOT_ALIAS = new Set(
  ('where group order having limit offset qualify window on using join left right full inner outer cross natural ' +
    'union except intersect select from set values returning pivot unpivot sample tablesample positional asof anti ' +
    'semi lateral as with for fetch into by').split(' '),
);

const isIdent = (t: Token | undefined) => !!t && (t.kind === 'quoted' || (t.kind === 'word' && !NOT_ALIAS.has(t.text.toLowerCase())));

/** The tables `sql` reads or writes by name (FROM lists, JOINs, UPDATE, INSERT INTO, in subqueries too), with their aliases. */
export function tablesInScope(sql: string): TableInScope[] {
  const toks = tokenize(sql);
  const out: TableInScope[] = [];
  /** The index after the parenthesis that closes the one at `i`. */
  const skipParens = (i: number) => {
    let depth = 0;
    for (; i < toks.length; i++) {
      if (toks[i].kind !== 'punct') continue;
      if (toks[i].text === '(') depth++;
      else if (toks[i].text === ')' && --depth === 0) return i + 1;
    }
    return i;
  };
  const alias = (i: number): [string | null, number] => {
    if (toks[i]?.kind === 'word' && toks[i].text.toLowerCase() === 'as' && isIdent(toks[i + 1])) return [toks[i + 1].text, i + 2];
    if (isIdent(toks[i])) return [toks[i].text, i + 1];
    return [null, i];
  };
  /** One FROM item at `i`; returns the index after it. */
  const item = (i: number): number => {
    const t = toks[i];
    if (!t) return i;
    if (t.kind === 'punct' && t.text === '(') {
      // a subquery: the tables it reads are in scope for completing inside it; its own alias names no table
      const end = skipParens(i);
      scan(i + 1, end - 1);
      return alias(end)[1];
    }
    if (t.kind !== 'word' && t.kind !== 'quoted') return i + 1;
    const parts = [t.text];
    i++;
    while (toks[i]?.kind === 'punct' && toks[i].text === '.' && (toks[i + 1]?.kind === 'word' || toks[i + 1]?.kind === 'quoted')) {
      parts.push(toks[i + 1].text);
      i += 2;
    }
    if (toks[i]?.kind === 'punct' && toks[i].text === '(') {
      i = skipParens(i); // a table function: its columns are not known here
      parts.length = 0;
    }
    const [name, next] = alias(i);
    if (parts.length) out.push({ parts, alias: name });
    return next;
  };
  const scan = (lo: number, hi: number) => {
    for (let i = lo; i < hi; i++) {
      const t = toks[i];
      if (t.kind !== 'word') continue;
      const w = t.text.toLowerCase();
      if (w === 'from') {
        let j = item(i + 1);
        while (toks[j]?.kind === 'punct' && toks[j].text === ',') j = item(j + 1);
        i = j - 1;
      } else if (w === 'join' || w === 'update' || (w === 'into' && toks[i - 1]?.text.toLowerCase() === 'insert')) {
        i = item(i + 1) - 1;
      }
    }
  };
  scan(0, toks.length);
  return out;
}

// ---- the completion source ---------------------------------------------------------------------------------

export const quoteIfNeeded = (s: string) => (/^[a-z_][a-z0-9_]*$/.test(s) ? s : `"${s.replace(/"/g, '""')}"`);
const unquote = (s: string) => s.replace(/^"|"$/g, '').replace(/""/g, '"');
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

const options = (list: string[], type: string, detail: string, boost = 0): Completion[] =>
  list.map((n) => ({ label: n, apply: quoteIfNeeded(n), type, detail, boost }));

// The functions' signatures and descriptions (about 25 KB gzipped) are loaded once completion first needs them.
let docs: Promise<typeof import('./duckdbDocs.generated.ts').FUNCTION_DOCS> | null = null;
const loadDocs = () => (docs ??= import('./duckdbDocs.generated.ts').then((m) => m.FUNCTION_DOCS));

function functionInfo(name: string) {
  return async () => {
    const d = (await loadDocs())[name];
    if (!d) return null;
    const [signatures, returns, description, example, named] = d;
    const dom = document.createElement('div');
    dom.className = 'fn-doc';
    const sig = dom.appendChild(document.createElement('code'));
    sig.className = 'fn-sig';
    sig.textContent = signatures + (returns ? `\n→ ${returns}` : '');
    if (description) dom.appendChild(document.createElement('p')).textContent = description;
    if (named) dom.appendChild(document.createElement('p')).textContent = `Named parameters (name := value): ${named}`;
    if (example) {
      const ex = dom.appendChild(document.createElement('code'));
      ex.className = 'fn-example';
      ex.textContent = example;
    }
    return dom;
  };
}

let vocabulary: Completion[] | null = null;
/** DuckDB's functions, keywords and types (a keyword that is also a function is offered as the function). */
function duckdbVocabulary(): Completion[] {
  if (vocabulary) return vocabulary;
  const out: Completion[] = [];
  for (const [name, kind] of FUNCTION_KINDS) out.push({ label: name, type: kind === 'table function' ? 'class' : 'function', detail: kind, info: functionInfo(name), boost: -1 });
  for (const k of KEYWORD_LIST) if (!FUNCTION_KINDS.has(k)) out.push({ label: k.toUpperCase(), type: 'keyword', boost: -2 });
  for (const t of TYPE_LIST) if (!FUNCTION_KINDS.has(t)) out.push({ label: t.toUpperCase(), type: 'type', boost: -3 });
  return (vocabulary = out);
}

/** The catalog, schema and table a name in a FROM clause refers to, the way DuckDB resolves it. */
async function resolveTable(names: CatalogNames, catalog: string | null, parts: string[]): Promise<[string, string, string] | null> {
  const catalogs = await names.catalogs();
  const def = catalog ?? names.defaultCatalog;
  if (parts.length === 3) return [parts[0], parts[1], parts[2]];
  if (parts.length === 2) {
    if (def && (await names.schemas(def)).some((s) => same(s, parts[0]))) return [def, parts[0], parts[1]];
    if (catalogs.some((c) => same(c, parts[0]))) return [parts[0], 'main', parts[1]];
    return def ? [def, parts[0], parts[1]] : null;
  }
  return def ? [def, 'main', parts[0]] : null;
}

/**
 * A CodeMirror completion source. `catalog` is the worksheet's chosen catalog (null: the workspace default).
 * After a dot: an alias or table in scope lists its columns; `cat.` lists schemas, `cat.sch.` tables,
 * `cat.sch.tbl.` columns; a name that is not a catalog is read against the default catalog (`sch.` → tables).
 */
export function sqlCompletion(names: CatalogNames, catalog: () => string | null = () => null) {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const inside = syntaxTree(ctx.state).resolveInner(ctx.pos, -1).name;
    if (inside === 'String' || inside === 'LineComment' || inside === 'BlockComment') return null;
    const word = ctx.matchBefore(/(?:(?:"(?:[^"]|"")*"|[\w$]+)\.)*(?:"(?:[^"]|"")*|[\w$]*)$/);
    if (!word || (word.from === word.to && !ctx.explicit)) return null;
    const parts = word.text.split('.');
    const last = parts.pop() ?? '';
    const path = parts.map(unquote);
    const from = word.to - last.length;

    const doc = ctx.state.doc.toString();
    const statement = statementAt(doc, ctx.pos);
    // The name being typed is left out of the scope: `FROM samples.` names a schema, not a table called samples.
    const scope = statement ? tablesInScope(doc.slice(statement.from, word.from) + ' ' + doc.slice(word.to, Math.max(statement.to, ctx.pos))) : [];
    const columnsOf = async (t: TableInScope) => {
      const ref = await resolveTable(names, catalog(), t.parts);
      return ref ? names.columns(...ref) : [];
    };

    const catalogs = await names.catalogs();
    const def = catalog() ?? names.defaultCatalog;
    let result: Completion[] = [];
    if (path.length === 0) {
      const scoped = await Promise.all(scope.map(async (t) => ({ t, columns: await columnsOf(t) })));
      const seen = new Set<string>();
      for (const { t, columns } of scoped)
        for (const c of columns) {
          if (seen.has(c.name)) continue;
          seen.add(c.name);
          result.push({ label: c.name, apply: quoteIfNeeded(c.name), type: 'property', detail: `${c.type} · ${t.alias ?? t.parts.at(-1)}`, boost: 50 });
        }
      result.push(...options(scope.flatMap((t) => (t.alias ? [t.alias] : [])), 'variable', 'alias', 40));
      const schemas = def ? await names.schemas(def) : [];
      result.push(...options(catalogs, 'namespace', 'catalog', 10), ...options(schemas, 'namespace', `schema in ${def}`, 10));
      result.push(...duckdbVocabulary());
    } else {
      const inScope = path.length === 1 ? scope.find((t) => (t.alias ? same(t.alias, path[0]) : same(t.parts.at(-1)!, path[0]))) : undefined;
      if (inScope) {
        result = (await columnsOf(inScope)).map((c) => ({ label: c.name, apply: quoteIfNeeded(c.name), type: 'property', detail: c.type }));
      } else if (path.length === 1) {
        if (catalogs.includes(path[0])) result = options(await names.schemas(path[0]), 'namespace', 'schema');
        else if (def) result = options(await names.tables(def, path[0]), 'class', 'table');
      } else if (path.length === 2) {
        if (catalogs.includes(path[0])) result = options(await names.tables(path[0], path[1]), 'class', 'table');
        else if (def) result = (await names.columns(def, path[0], path[1])).map((c) => ({ label: c.name, apply: quoteIfNeeded(c.name), type: 'property', detail: c.type }));
      } else if (path.length === 3) {
        result = (await names.columns(path[0], path[1], path[2])).map((c) => ({ label: c.name, apply: quoteIfNeeded(c.name), type: 'property', detail: c.type }));
      }
    }
    if (!result.length) return null;
    return { from, options: result, validFor: /^(?:"(?:[^"]|"")*|[\w$]*)$/ };
  };
}
