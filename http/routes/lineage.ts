// Lineage (spec "Lineage", decisions.md "Lineage"): the graph around a table, canonical imports from any producer,
// and purging a retired producer's edges.
import { Schema } from 'effect';
import { route } from '../route.ts';
import { listWorkspaceCatalogs } from '../../domain/catalogs.ts';
import { scopeOf } from '../../domain/catalogGrants.ts';
import { notFound, unprocessable } from '../../domain/errors.ts';
import * as lineage from '../../domain/lineage.ts';

const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200));
const End = Schema.Union([Schema.Struct({ catalog: Name, schema: Name, table: Name }), Schema.Struct({ external: Name })]);
const Column = Schema.Struct({ source_column: Name, target_column: Name });
const ProviderName = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/));

const Graph = Schema.Struct({
  nodes: Schema.Array(
    Schema.Struct({
      key: Schema.String,
      kind: Schema.Literals(['table', 'external', 'redacted']),
      catalog: Schema.NullOr(Schema.String),
      schema: Schema.NullOr(Schema.String),
      table: Schema.NullOr(Schema.String),
      column_count: Schema.Finite,
    }),
  ),
  edges: Schema.Array(
    Schema.Struct({
      source: Schema.String,
      target: Schema.String,
      providers: Schema.Array(
        Schema.Struct({
          provider: Schema.String,
          first_seen_at: Schema.String,
          last_seen_at: Schema.String,
          observation_count: Schema.Finite,
          stale: Schema.Boolean,
          column_lineage: Schema.String,
        }),
      ),
      observation_count: Schema.Finite,
      first_seen_at: Schema.String,
      last_seen_at: Schema.String,
      stale: Schema.Boolean,
      columns: Schema.Array(Schema.Struct({ source_column: Schema.String, target_column: Schema.String, providers: Schema.Array(Schema.String), stale: Schema.Boolean })),
    }),
  ),
  truncated: Schema.Boolean,
  hidden: Schema.Boolean,
  columns_truncated: Schema.Boolean,
});

export const lineageRoutes = [
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/catalogs/:catalog/schemas/:schema/tables/:table/lineage',
    operationId: 'get_table_lineage',
    summary: 'The lineage graph around a table: upstream, downstream or both, 1 to 5 hops',
    description:
      'Nodes are `catalog.schema.table` or `external:<name>`; a node in a catalog part the caller may not read ' +
      '(scoped grants) is `redacted:<n>` with no names. `hidden`: edges into catalogs no longer attached were dropped. ' +
      '`truncated`: the walk stopped at 500 nodes. An edge is stale when every provider’s last observation is older ' +
      'than LINEAGE_STALE_AFTER_DAYS.',
    tags: ['lineage'],
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String, catalog: Schema.String, schema: Schema.String, table: Schema.String }),
    query: Schema.Struct({
      direction: Schema.optionalKey(Schema.Literals(['upstream', 'downstream', 'both'])),
      depth: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 5 }))),
      provider: Schema.optionalKey(ProviderName),
    }),
    responses: { 200: Graph, 404: null, 422: null },
    handler: async ({ ctx, ws, params, query }) => {
      const workspaceId = ws!.workspace.id;
      const attached = await listWorkspaceCatalogs(ctx.db, workspaceId);
      const cat = attached.find((c) => c.slug.toLowerCase() === params.catalog.toLowerCase());
      if (!cat) throw notFound(`catalog ${params.catalog}`);
      const scopes = new Map(await Promise.all(attached.map(async (c) => [c.slug.toLowerCase(), await scopeOf(ctx.db, workspaceId, c)] as const)));
      if (!scopes.get(cat.slug.toLowerCase())!.table(params.schema, params.table, 'read')) throw notFound(`table ${params.schema}.${params.table}`);
      const graph = await lineage.readGraph(ctx.db, workspaceId, { catalog: cat.slug, schema: params.schema, table: params.table }, {
        direction: query.direction ?? 'both',
        depth: query.depth ?? 2,
        provider: query.provider,
        staleAfterDays: ctx.config.LINEAGE_STALE_AFTER_DAYS,
        attached: new Set(scopes.keys()),
        canSee: (e) => scopes.get(e.catalog)?.table(e.schema, e.table, 'read') ?? false,
      });
      return { status: 200, body: graph };
    },
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/lineage/imports',
    operationId: 'import_lineage',
    summary: 'Import canonical lineage edges from a producer (idempotent; unresolvable ends are skipped with a reason)',
    tags: ['lineage'],
    access: { kind: 'workspace', role: 'writer' },
    params: Schema.Struct({ workspace: Schema.String }),
    body: Schema.Struct({
      provider: ProviderName,
      edges: Schema.Array(
        Schema.Struct({
          source: End,
          target: End,
          columns: Schema.optionalKey(Schema.Array(Column).check(Schema.isMaxLength(2000))),
          column_lineage: Schema.optionalKey(Schema.Literals(['derived', 'unsupported', 'unknown'])),
          observed_at: Schema.optionalKey(Schema.String),
        }),
      ).check(Schema.isMaxLength(10_000)),
    }),
    responses: {
      200: Schema.Struct({
        provider: Schema.String,
        created: Schema.Finite,
        updated: Schema.Finite,
        skipped: Schema.Array(Schema.Struct({ index: Schema.Finite, reason: Schema.String })),
      }),
      403: null,
      422: null,
    },
    handler: async ({ ctx, ws, body }) => {
      for (const [i, e] of body.edges.entries()) {
        if (e.observed_at !== undefined && Number.isNaN(Date.parse(e.observed_at))) {
          throw unprocessable(`edges[${i}].observed_at is not a time`, 'unprocessable_content', { fields: [{ field: `edges.${i}.observed_at`, in: 'body', message: 'an ISO 8601 time' }] });
        }
      }
      const attached = await listWorkspaceCatalogs(ctx.db, ws!.workspace.id);
      return { status: 200, body: await lineage.importEdges(ctx.db, ws!.workspace.id, attached.map((c) => c.slug), body.provider, body.edges) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/workspaces/:workspace/lineage/imports',
    operationId: 'delete_lineage_imports',
    summary: 'Remove a retired producer’s edges (execution lineage cannot be purged)',
    tags: ['lineage'],
    access: { kind: 'workspace', role: 'owner' },
    params: Schema.Struct({ workspace: Schema.String }),
    query: Schema.Struct({ provider: ProviderName }),
    responses: { 200: Schema.Struct({ provider: Schema.String, deleted: Schema.Finite }), 422: null },
    handler: async ({ ctx, ws, query }) => ({ status: 200, body: await lineage.purgeProvider(ctx.db, ws!.workspace.id, query.provider) }),
  }),
];
