// Catalog search (docs/catalogs.md "Search"): the catalogs attached to a workspace, their schemas and tables whose
// name has a word starting with the text asked for. The catalog service matches schema and table names in its
// metastore's index (I3: the api stores no catalog structure); the api adds the catalogs' own slugs, narrows each
// scoped attachment to what its grants let the workspace see (I10, as the browse routes do), and merges.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import type { CatalogClient } from '../runtime/catalogClient.ts';
import { listWorkspaceCatalogs, resolveAttachedCatalog, type AccessMode } from './catalogs/attachments.ts';
import { fromCatalogService, warehouseName } from './catalogs/warehouses.ts';
import { scopeOf } from './catalogGrants.ts';

const CatalogSearchItemSchema = Schema.Struct({
  kind: Schema.Literals(['catalog', 'schema', 'table']),
  catalog: Schema.String,
  /** null for a catalog */
  schema: Schema.NullOr(Schema.String),
  /** null for a catalog or a schema */
  table: Schema.NullOr(Schema.String),
});
type CatalogSearchItem = typeof CatalogSearchItemSchema.Type;

/** Search results as the spec has them: `{items, has_more}`, no cursor (a narrower text is the next page). */
export const CatalogSearchOutSchema = Schema.Struct({ items: Schema.Array(CatalogSearchItemSchema), has_more: Schema.Boolean });
type CatalogSearchOut = typeof CatalogSearchOutSchema.Type;

// The word starts of migrations/catalog/005_name_search.sql, for the catalogs' slugs (matched here: they are the
// api's, and a workspace attaches a handful).
const WORD_START = /(?<=[^\p{L}\p{N}])[\p{L}\p{N}]|(?<=\p{Ll})\p{Lu}|(?<=\p{L})\p{N}|(?<=\p{N})\p{L}/gu;

/** The lower-cased name from each word start to its end, the first being the whole name. */
export function nameTerms(name: string): Array<{ term: string; whole: boolean }> {
  const starts = [0, ...[...name.matchAll(WORD_START)].map((m) => m.index)];
  return starts.map((i) => ({ term: name.slice(i).toLowerCase(), whole: i === 0 }));
}

interface Ranked extends CatalogSearchItem {
  whole: boolean;
  term: string;
}

/** The service's order: whole-name matches first, then by the matched term, then by name. */
function byRank(a: Ranked, b: Ranked): number {
  if (a.whole !== b.whole) return a.whole ? -1 : 1;
  const keys = (r: Ranked) => [r.term, r.catalog, r.schema ?? '', r.table ?? ''];
  const [x, y] = [keys(a), keys(b)];
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

export async function searchCatalogs(
  db: Queryable,
  client: CatalogClient,
  workspaceId: string,
  input: { q: string; limit: number; catalog?: string },
): Promise<CatalogSearchOut> {
  const { q, limit } = input;
  const attached: Array<{ id: string; slug: string; access_mode: AccessMode }> = input.catalog
    ? [await resolveAttachedCatalog(db, workspaceId, input.catalog)]
    : await listWorkspaceCatalogs(db, workspaceId);
  const needle = q.toLowerCase();
  let more = false;
  const perCatalog = await Promise.all(
    attached.map(async (c): Promise<Ranked[]> => {
      const scope = await scopeOf(db, workspaceId, c);
      let found;
      try {
        found = await client.searchNames(warehouseName(c), q, limit, scope.searchNarrowing() ?? undefined);
      } catch (e) {
        throw fromCatalogService(e, 'catalog');
      }
      if (found.has_more) more = true;
      const out: Ranked[] = [];
      // The slug matches like any name; every member sees the catalogs attached to the workspace.
      const slugTerm = nameTerms(c.slug).find((t) => t.term.startsWith(needle));
      if (slugTerm) out.push({ kind: 'catalog', catalog: c.slug, schema: null, table: null, ...slugTerm });
      for (const m of found.matches) {
        const schema = m.namespace.join('.');
        // The service narrowed by the grants; they are checked again here, with the browse routes' own rules.
        if (m.name === null ? !scope.seesSchema(schema) : !scope.table(schema, m.name, 'read')) continue;
        out.push({ kind: m.name === null ? 'schema' : 'table', catalog: c.slug, schema, table: m.name, whole: m.whole, term: m.term });
      }
      return out;
    }),
  );
  const all = perCatalog.flat().sort(byRank);
  return {
    items: all.slice(0, limit).map(({ kind, catalog, schema, table }) => ({ kind, catalog, schema, table })),
    has_more: more || all.length > limit,
  };
}
