// Lineage (spec "Lineage", docs/api-decisions.md "Lineage"): the graph around a table, canonical imports from any producer,
// and purging a retired producer's edges.
import { Schema } from 'effect';
import { asArray, repeatable, route } from '../route.ts';
import { listWorkspaceCatalogs } from '../../domain/catalogs/attachments.ts';
import { checkScopedAccess, scopeOf } from '../../domain/catalogGrants.ts';
import { AppError, notFound, unprocessable } from '../../domain/errors.ts';
import * as lineage from '../../domain/lineage/graph.ts';
import { ARTIFACT_PROVIDERS, dbtLineage, parseDbtArtifact } from '../../domain/lineage/dbt.ts';
import { loadParser } from '../../domain/lineage/columns.ts';
import * as backfill from '../../domain/lineage/backfill.ts';
import { fromCatalogService, warehouseName } from '../../domain/catalogs/warehouses.ts';
import { CatalogServiceError } from '../../runtime/catalogClient.ts';
import { viaCatalog } from '../catalogService.ts';
import type { AppContext } from '../../usecases/context.ts';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../domain/identity.ts';
import type { Queryable } from '../../runtime/db.ts';
import { successRow } from '../audit.ts';

/** A table's column count as the catalog has it now; null when it cannot be read. Without a catalog service, none. */
function columnCounter(ctx: AppContext): ((ends: readonly lineage.TableEnd[]) => Promise<ReadonlyMap<string, number>>) | undefined {
  const client = ctx.catalog;
  if (!client) return undefined;
  return async (ends) => {
    // One request per catalog for all its tables in the graph; a catalog that cannot answer leaves its tables at 0.
    const byCatalog = new Map<string, lineage.TableEnd[]>();
    for (const e of ends) byCatalog.set(e.catalog, [...(byCatalog.get(e.catalog) ?? []), e]);
    const counts = new Map<string, number>();
    await Promise.all(
      [...byCatalog].map(async ([catalog, list]) => {
        try {
          const found = await client.columnCounts(warehouseName({ slug: catalog }), list.map((e) => ({ namespace: [e.schema], name: e.table })));
          for (const t of found) counts.set(lineage.tableKey({ catalog, schema: t.namespace.join('.'), table: t.name }), t.column_count);
        } catch {
          // the graph is still answered, without these counts
        }
      }),
    );
    return counts;
  };
}

/** The success row of a lineage import, written with its edges. */
function importRecord(ctx: AppContext, req: FastifyRequest, principal: Principal, workspaceId: string, operation: string) {
  return (q: Queryable, r: { provider: string; created: number; updated: number; skipped: number }) =>
    successRow(ctx, req, principal, { action: 'lineage.import', target: { kind: 'workspace', id: workspaceId }, details: { operation, ...r } })(q);
}

/** An import's table ends must exist: the catalog is asked (a table it does not have is skipped, with the reason). */
function importChecks(ctx: AppContext): { exists?: (e: lineage.TableEnd) => Promise<boolean> } {
  const client = ctx.catalog;
  if (!client) return {};
  return {
    exists: async (e) => {
      try {
        await client.loadTable(warehouseName({ slug: e.catalog }), [e.schema], e.table);
        return true;
      } catch (err) {
        if (err instanceof CatalogServiceError && err.status === 404) return false;
        throw fromCatalogService(err, 'table');
      }
    },
  };
}

const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200));
/**
 * The spec's "writer on each target catalog": every imported edge's target table in an attached catalog must be
 * writable from this workspace (a scoped attachment needs a write grant covering it). Targets outside the attached
 * catalogs are left to the import, which skips them with a reason.
 */
async function requireWritableTargets(db: Parameters<typeof checkScopedAccess>[0], workspaceId: string, attached: readonly string[], targets: readonly unknown[]) {
  const slugs = new Set(attached.map((s) => s.toLowerCase()));
  const tables = targets
    .filter((t): t is { catalog: string; schema: string; table: string } => typeof t === 'object' && t !== null && 'catalog' in t && 'table' in t)
    .filter((t) => slugs.has(t.catalog.toLowerCase()))
    .map((t) => ({ catalog: t.catalog, schema: t.schema, name: t.table }));
  await checkScopedAccess(db, workspaceId, tables, null, 'write');
}

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
      'than LINEAGE_STALE_AFTER_DAYS. `provider` (repeatable) keeps those producers’ edges. Column detail is given for ' +
      'edges touching a node of `columns_for` (repeatable node keys; none when absent), at most 2000 ' +
      'entries per answer (`columns_truncated`), never when an end is redacted. A table node’s `column_count` is the ' +
      'table’s column count. Lineage is the catalog’s: every workspace attaching it sees the same edges. 404 when the ' +
      'table does not exist.',
    tags: ['lineage'],
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String, catalog: Schema.String, schema: Schema.String, table: Schema.String }),
    query: Schema.Struct({
      direction: Schema.optionalKey(Schema.Literals(['upstream', 'downstream', 'both'])),
      depth: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 5 }))),
      provider: repeatable(ProviderName),
      columns_for: repeatable(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1000))),
    }),
    responses: { 200: Graph, 404: null, 422: null, 503: null },
    handler: async ({ ctx, ws, params, query }) => {
      const workspaceId = ws!.workspace.id;
      const attached = await listWorkspaceCatalogs(ctx.db, workspaceId);
      const cat = attached.find((c) => c.slug.toLowerCase() === params.catalog.toLowerCase());
      if (!cat) throw notFound(`catalog ${params.catalog}`);
      const scopes = new Map(await Promise.all(attached.map(async (c) => [c.slug.toLowerCase(), await scopeOf(ctx.db, workspaceId, c)] as const)));
      if (!scopes.get(cat.slug.toLowerCase())!.table(params.schema, params.table, 'read')) throw notFound(`table ${params.schema}.${params.table}`);
      // A table that does not exist (or was dropped) has no graph: 404, as its detail route answers.
      const columns = columnCounter(ctx);
      if (ctx.catalog) await viaCatalog('table', () => ctx.catalog!.loadTable(warehouseName(cat), [params.schema], params.table));
      const graph = await lineage.readGraph(ctx.db, { catalog: cat.slug, schema: params.schema, table: params.table }, {
        direction: query.direction ?? 'both',
        depth: query.depth ?? 2,
        providers: asArray(query.provider),
        columnsFor: asArray(query.columns_for),
        staleAfterDays: ctx.config.LINEAGE_STALE_AFTER_DAYS,
        attached: new Set(scopes.keys()),
        canSee: (e) => scopes.get(e.catalog)?.table(e.schema, e.table, 'read') ?? false,
        ...(columns ? { columnCounts: columns } : {}),
      });
      return { status: 200, body: graph };
    },
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/lineage/imports',
    operationId: 'import_lineage',
    // (its success row is written in the import's own transaction)
    audit: { action: 'lineage.import', target: { kind: 'workspace', param: 'workspace' } },
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
    handler: async ({ ctx, ws, principal, body, req }) => {
      for (const [i, e] of body.edges.entries()) {
        if (e.observed_at !== undefined && Number.isNaN(Date.parse(e.observed_at))) {
          throw unprocessable(`edges[${i}].observed_at is not a time`, 'unprocessable_content', { fields: [{ field: `edges.${i}.observed_at`, in: 'body', message: 'an ISO 8601 time' }] });
        }
      }
      const attached = await listWorkspaceCatalogs(ctx.db, ws!.workspace.id);
      await requireWritableTargets(ctx.db, ws!.workspace.id, attached.map((c) => c.slug), body.edges.map((e) => e.target));
      const record = importRecord(ctx, req, principal, ws!.workspace.id, 'import_lineage');
      return { status: 200, body: await lineage.importEdges(ctx.db, attached.map((c) => c.slug), body.provider, body.edges, { ...importChecks(ctx), record }) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/lineage/imports/:provider',
    operationId: 'import_lineage_artifact',
    // (its success row is written in the import's own transaction)
    audit: { action: 'lineage.import', target: { kind: 'workspace', param: 'workspace' } },
    summary: 'Import a producer’s artifact as lineage edges: transform takes a dbt manifest.json, or {manifest, catalog} for column detail',
    description:
      'The body is the artifact (application/json or text/plain). Models, seeds and snapshots are `database.schema.alias`, ' +
      'their database being the catalog; depends_on.nodes are the edges (ephemeral models inlined); a source outside the ' +
      'workspace’s catalogs is an external node. With catalog.json each model’s compiled SQL gives its column lineage. ' +
      'Idempotent like the canonical import; unusable items are listed in skipped as `{item, reason}`, item being the dbt ' +
      'unique ids. A bad artifact is 422 naming the expected format.',
    tags: ['lineage'],
    access: { kind: 'workspace', role: 'writer' },
    params: Schema.Struct({ workspace: Schema.String, provider: Schema.Literals(ARTIFACT_PROVIDERS) }),
    body: Schema.Union([Schema.String, Schema.Record(Schema.String, Schema.Unknown)]),
    consumes: ['application/json', 'text/plain'],
    responses: {
      200: Schema.Struct({
        provider: Schema.String,
        created: Schema.Finite,
        updated: Schema.Finite,
        skipped: Schema.Array(Schema.Struct({ item: Schema.String, reason: Schema.String })),
      }),
      403: null,
      422: null,
    },
    handler: async ({ ctx, ws, principal, params, body, req }) => {
      const { manifest, catalog } = parseDbtArtifact(body);
      const attached = await listWorkspaceCatalogs(ctx.db, ws!.workspace.id);
      if (catalog) await loadParser();
      const read = dbtLineage(manifest, catalog, new Set(attached.map((c) => c.slug.toLowerCase())));
      await requireWritableTargets(ctx.db, ws!.workspace.id, attached.map((c) => c.slug), read.edges.map((e) => e.edge.target));
      const record = importRecord(ctx, req, principal, ws!.workspace.id, 'import_lineage_artifact');
      const r = await lineage.importEdges(ctx.db, attached.map((c) => c.slug), params.provider, read.edges.map((e) => e.edge), { ...importChecks(ctx), record });
      const skipped = [...read.skipped, ...r.skipped.map((s) => ({ item: read.edges[s.index].item, reason: s.reason }))];
      return { status: 200, body: { provider: r.provider, created: r.created, updated: r.updated, skipped } };
    },
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/lineage/backfill',
    operationId: 'start_lineage_backfill',
    summary: 'Backfill execution lineage from the workspace’s past done writes (a one-shot job; resumes a stopped one)',
    description:
      'Starts the job and answers 202 at once; GET reads its progress and report. The job walks done writes finished ' +
      'before it started, newest first, checkpointing each batch in the database. When a job’s runner stopped (a restart) ' +
      'the next POST resumes it from its checkpoint (`report.resumed_from`); while its runner is alive POST is 409 ' +
      '`backfill_running`. Observations already recorded are not counted again; edges into tables that no longer exist ' +
      'are not recreated.',
    tags: ['lineage'],
    access: { kind: 'workspace', role: 'owner' },
    params: Schema.Struct({ workspace: Schema.String }),
    responses: { 202: backfill.BackfillOutSchema, 409: null, 503: null },
    handler: async ({ ctx, ws, principal }) => {
      const catalog = ctx.catalog;
      // Only tables that exist now get edges back: without the catalog service nothing can be checked.
      if (!catalog) throw new AppError(503, 'catalog_unavailable', 'the catalog service is not configured: the backfill checks tables against it');
      const { job, token } = await backfill.claimBackfill(ctx.db, ws!.workspace.id, principal.user.id);
      const failed = (stage: 'statement' | 'columns') => ctx.metrics?.lineageFailures.inc({ stage });
      // The job outlives the request; its checkpoint, not this promise, is what a restart resumes from.
      void backfill.runBackfill(ctx.db, job.id, token, { catalog, failed }).catch(async (e) => {
        ctx.logger.warn({ err: (e as Error).message, backfill: job.id }, 'lineage backfill stopped');
        await backfill.releaseBackfill(ctx.db, job.id, token, (e as Error).message).catch(() => undefined);
      });
      return { status: 202, body: job };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/lineage/backfill',
    operationId: 'get_lineage_backfill',
    summary: 'The workspace’s latest lineage backfill: status, checkpoint and report',
    tags: ['lineage'],
    access: { kind: 'workspace', role: 'owner' },
    params: Schema.Struct({ workspace: Schema.String }),
    responses: { 200: backfill.BackfillOutSchema, 404: null },
    handler: async ({ ctx, ws }) => {
      const job = await backfill.latestBackfill(ctx.db, ws!.workspace.id);
      if (!job) throw notFound('lineage backfill');
      return { status: 200, body: job };
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
    handler: async ({ ctx, ws, query }) => ({
      status: 200,
      body: await lineage.purgeProvider(ctx.db, (await listWorkspaceCatalogs(ctx.db, ws!.workspace.id)).map((c) => c.slug), query.provider),
    }),
  }),
];
