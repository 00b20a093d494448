// GET /api/workspaces/{workspace}/catalog-search (and /search, the spec's workspace-level search): catalogs, schemas
// and tables of the workspace's attached catalogs by name (docs/api-decisions.md "Storage backends and catalogs",
// docs/catalogs.md "Search").
import { Schema } from 'effect';
import { Limit, route } from '../route.ts';
import { CatalogSearchOutSchema, searchCatalogs } from '../../domain/catalogSearch.ts';
import { catalogClientOf } from '../catalogService.ts';

const searchQuery = Schema.Struct({
  q: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200), Schema.isPattern(/\S/)),
  limit: Limit,
  catalog: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255))),
});

const DESCRIPTION =
  'A word starts a name, follows `_`, `-`, `.` or a space, or starts a camelCase or digit run: `ord` finds `orders` and ' +
  '`customer_orders`, `sales_or` finds `sales_orders`. Case-insensitive. Whole-name matches come first. A scoped ' +
  'attachment shows only what its grants let the workspace see. `catalog` limits the search to one attached catalog.';

// The spec names a workspace-level `/search` (its Versioning: "both search endpoints return {items, ...}; q is
// required") besides the semantic layer's; it answers as catalog-search does, at the path the spec's clients use.
export const catalogSearchRoutes = (
  [
    ['/api/workspaces/:workspace/catalog-search', 'search_catalogs', 'Catalogs, schemas and tables whose name has a word starting with q (best first)'],
    ['/api/workspaces/:workspace/search', 'search_workspace', 'The workspace-level search: catalogs, schemas and tables by name, as catalog-search answers'],
  ] as const
).map(([path, operationId, summary]) =>
  route({
    method: 'GET',
    path,
    operationId,
    summary,
    description: DESCRIPTION,
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String }),
    query: searchQuery,
    responses: { 200: CatalogSearchOutSchema, 404: null, 422: null, 503: null },
    handler: async ({ ctx, ws, query }) => {
      const body = await searchCatalogs(ctx.db, catalogClientOf(ctx), ws!.workspace.id, { q: query.q.trim(), limit: query.limit ?? 100, catalog: query.catalog });
      return { status: 200, body };
    },
  }),
);
