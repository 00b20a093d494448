// Completion of catalog, schema, table and column names from the api, fetched level by level as the user types a
// dotted name and cached for the life of the worksheet screen.
import type { CompletionContext, CompletionResult, Completion } from '@codemirror/autocomplete';
import { api, enc } from '../api/client.ts';
import type { WorkspaceCatalog, TableOut } from '../api/types.ts';

export class CatalogNames {
  private readonly ws: string;
  private readonly cache = new Map<string, Promise<string[]>>();
  defaultCatalog: string | null = null;

  constructor(ws: string) {
    this.ws = ws;
  }

  private cached(key: string, load: () => Promise<string[]>): Promise<string[]> {
    let p = this.cache.get(key);
    if (!p) {
      p = load().catch(() => {
        this.cache.delete(key); // a failed level (endpoint missing, no access) is retried next time
        return [];
      });
      this.cache.set(key, p);
    }
    return p;
  }

  catalogs(): Promise<string[]> {
    return this.cached('', async () => {
      const list = await api.get<WorkspaceCatalog[]>(`/api/workspaces/${enc(this.ws)}/catalogs`);
      this.defaultCatalog = list.find((c) => c.is_default)?.slug ?? this.defaultCatalog;
      return list.map((c) => c.slug);
    });
  }

  schemas(catalog: string): Promise<string[]> {
    return this.cached(`${catalog}`, async () => {
      const list = await api.get<Array<{ name: string }>>(`/api/workspaces/${enc(this.ws)}/catalogs/${enc(catalog)}/schemas`);
      return list.map((s) => s.name);
    });
  }

  tables(catalog: string, schema: string): Promise<string[]> {
    return this.cached(`${catalog}.${schema}`, async () => {
      const list = await api.get<Array<{ name: string }>>(
        `/api/workspaces/${enc(this.ws)}/catalogs/${enc(catalog)}/schemas/${enc(schema)}/tables`,
      );
      return list.map((t) => t.name);
    });
  }

  columns(catalog: string, schema: string, table: string): Promise<string[]> {
    return this.cached(`${catalog}.${schema}.${table}`, async () => {
      const t = await api.get<TableOut>(
        `/api/workspaces/${enc(this.ws)}/catalogs/${enc(catalog)}/schemas/${enc(schema)}/tables/${enc(table)}`,
      );
      return t.columns.map((c) => c.name);
    });
  }
}

const unquote = (s: string) => s.replace(/^"|"$/g, '').replace(/""/g, '"');
const quoteIfNeeded = (s: string) => (/^[a-z_][a-z0-9_]*$/.test(s) ? s : `"${s.replace(/"/g, '""')}"`);

const options = (names: string[], type: string, detail: string): Completion[] =>
  names.map((n) => ({ label: n, apply: quoteIfNeeded(n), type, detail }));

/**
 * A CodeMirror completion source over a dotted name before the cursor: `cat.` lists schemas, `cat.sch.` tables,
 * `cat.sch.tbl.` columns; a name that is not a catalog is read against the default catalog (`sch.` → tables).
 */
export function catalogCompletion(names: CatalogNames) {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const word = ctx.matchBefore(/(?:(?:"(?:[^"]|"")*"|[\w$]+)\.)*(?:"(?:[^"]|"")*|[\w$]*)$/);
    if (!word || (word.from === word.to && !ctx.explicit)) return null;
    const parts = word.text.split('.');
    const last = parts.pop() ?? '';
    const path = parts.map(unquote);
    const from = word.to - last.length;
    const catalogs = await names.catalogs();
    const def = names.defaultCatalog;
    let result: Completion[] = [];
    if (path.length === 0) {
      const [schemas] = await Promise.all([def ? names.schemas(def) : Promise.resolve([])]);
      result = [...options(catalogs, 'namespace', 'catalog'), ...options(schemas, 'namespace', `schema in ${def}`)];
    } else if (path.length === 1) {
      if (catalogs.includes(path[0])) result = options(await names.schemas(path[0]), 'namespace', 'schema');
      else if (def) result = options(await names.tables(def, path[0]), 'class', 'table');
    } else if (path.length === 2) {
      if (catalogs.includes(path[0])) result = options(await names.tables(path[0], path[1]), 'class', 'table');
      else if (def) result = options(await names.columns(def, path[0], path[1]), 'property', 'column');
    } else if (path.length === 3) {
      result = options(await names.columns(path[0], path[1], path[2]), 'property', 'column');
    }
    if (!result.length) return null;
    return { from, options: result, validFor: /^(?:"(?:[^"]|"")*|[\w$]*)$/ };
  };
}
