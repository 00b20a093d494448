// Table maintenance (docs/api-decisions.md "Maintenance"): recommendations the scanner made (members see those of their
// workspaces' catalogs; catalog administrators all of them, and dismiss or apply them), a scan on demand, the
// runtime policy, and a workspace's tables by health. Applying runs the recommendation's procedure on an agent as
// a query of origin `maintenance` (hidden from history lists).
import { Schema } from 'effect';
import { route, asArray, Limit, repeatable } from '../route.ts';
import { AppError } from '../../domain/errors.ts';
import { hasPermission, type Principal } from '../../domain/identity.ts';
import { findCatalog } from '../../domain/catalogs/catalogs.ts';
import { listWorkspaceCatalogs } from '../../domain/catalogs/attachments.ts';
import { listWorkspaces, resolveWorkspace } from '../../domain/workspaces.ts';
import * as maintenance from '../../domain/maintenance/store.ts';
import { scanTables } from '../../domain/maintenance/scan.ts';
import { CADENCES, PROFILES } from '../../domain/maintenance/thresholds.ts';
import * as queries from '../../domain/queries.ts';
import type { AppContext } from '../../usecases/context.ts';
import { catalogClientOf } from '../catalogService.ts';
import { readQuery } from '../../usecases/querySubmission.ts';
import { applyRecommendation } from '../../usecases/maintenanceApply.ts';
import { QueryOutSchema } from '../../domain/queries.ts';

const PolicyOut = Schema.Struct({
  cadence: Schema.Literals(CADENCES),
  profile: Schema.Literals(PROFILES),
  updated_at: Schema.String,
  last_scan_at: Schema.NullOr(Schema.String),
  last_deep_scan_at: Schema.NullOr(Schema.String),
});
const ScanReport = Schema.Struct({
  scanned_at: Schema.String,
  deep: Schema.Boolean,
  profile: Schema.String,
  catalogs: Schema.Number,
  tables: Schema.Number,
  recommendations_opened: Schema.Number,
  recommendations_resolved: Schema.Number,
  errors: Schema.Array(Schema.Struct({ catalog: Schema.String, schema: Schema.NullOr(Schema.String), table: Schema.NullOr(Schema.String), message: Schema.String })),
  duration_ms: Schema.Number,
});
const RecParams = Schema.Struct({ recommendation_id: Schema.String });

/** The catalogs whose recommendations the caller may read: one workspace's, or every workspace's of theirs; all for
 *  a catalog administrator who names no workspace. */
async function visibleCatalogIds(ctx: AppContext, principal: Principal, workspace: string | undefined): Promise<string[] | null> {
  if (workspace) {
    const ws = await resolveWorkspace(ctx.db, principal, workspace);
    return (await listWorkspaceCatalogs(ctx.db, ws.workspace.id)).map((c) => c.id);
  }
  if (hasPermission(principal, 'catalogs')) return null;
  const ids = new Set<string>();
  for (const w of await listWorkspaces(ctx.db, principal)) for (const c of await listWorkspaceCatalogs(ctx.db, w.id)) ids.add(c.id);
  return [...ids];
}

export const maintenanceRoutes = [
  route({
    method: 'GET',
    path: '/api/maintenance/recommendations',
    operationId: 'list_maintenance_recommendations',
    summary: 'Maintenance recommendations, newest first (every status unless status is sent)',
    tags: ['maintenance'],
    access: { kind: 'authenticated' },
    query: Schema.Struct({
      status: repeatable(Schema.String),
      workspace: Schema.optionalKey(Schema.String),
      catalog: Schema.optionalKey(Schema.String),
      schema: Schema.optionalKey(Schema.String),
      table: Schema.optionalKey(Schema.String),
      cursor: Schema.optionalKey(Schema.String),
      limit: Limit,
    }),
    responses: { 200: Schema.Struct({ items: Schema.Array(maintenance.RecommendationOutSchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean }), 404: null, 422: null },
    handler: async ({ ctx, principal, query }) => {
      let ids = await visibleCatalogIds(ctx, principal, query.workspace);
      if (query.catalog) {
        const c = await findCatalog(ctx.db, query.catalog);
        ids = c && (ids === null || ids.includes(c.id)) ? [c.id] : [];
      }
      const page = await maintenance.listRecommendations(ctx.db, {
        statuses: asArray(query.status),
        catalogIds: ids,
        schema: query.schema,
        table: query.table,
        cursor: query.cursor,
        limit: query.limit ?? 100,
      });
      return { status: 200, body: page };
    },
  }),
  route({
    method: 'POST',
    path: '/api/maintenance/recommendations/:recommendation_id/dismiss',
    operationId: 'dismiss_maintenance_recommendation',
    summary: 'Dismiss a recommendation: it stays dismissed while its condition lasts (catalogs permission)',
    tags: ['maintenance'],
    access: { kind: 'permission', permission: 'catalogs' },
    params: RecParams,
    responses: { 200: maintenance.RecommendationOutSchema, 404: null, 409: null },
    handler: async ({ ctx, params }) => {
      const rec = await maintenance.findRecommendation(ctx.db, params.recommendation_id);
      if (rec.status === 'resolved') throw new AppError(409, 'conflict', 'the recommendation is resolved: its condition has cleared');
      await maintenance.setRecommendationStatus(ctx.db, rec.id, 'dismissed');
      return { status: 200, body: await maintenance.findRecommendation(ctx.db, rec.id) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/maintenance/recommendations/:recommendation_id/apply',
    operationId: 'apply_maintenance_recommendation',
    summary: 'Carry a recommendation out: its procedure runs on an agent; 202 with that query (catalogs permission)',
    description:
      'Compaction, snapshot expiry, manifest rewrite and orphan clean-up run on an agent as Iceberg commits (see ' +
      'docs/maintenance.md). `agent_id` names the agent; without it the workspace pool runs it when elastic compute ' +
      'is on. The next scan resolves the recommendation once its condition has cleared.',
    tags: ['maintenance'],
    access: { kind: 'permission', permission: 'catalogs' },
    params: RecParams,
    body: Schema.Struct({ agent_id: Schema.optionalKey(Schema.NullOr(Schema.String)), workspace: Schema.optionalKey(Schema.String) }),
    responses: { 202: QueryOutSchema, 404: null, 409: null, 422: null, 503: null },
    handler: async ({ ctx, principal, params, body }) => {
      const id = await applyRecommendation(ctx, principal, params.recommendation_id, { agentId: body?.agent_id ?? null, workspace: body?.workspace });
      return { status: 202, body: queries.toQueryOut(await readQuery(ctx, id)) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/maintenance/scan',
    operationId: 'scan_maintenance',
    summary: 'Scan every table now (deep: also list storage for orphan files); 200 with the report',
    tags: ['maintenance'],
    access: { kind: 'permission', permission: 'catalogs' },
    body: Schema.Struct({ deep: Schema.optionalKey(Schema.Boolean) }),
    responses: { 200: ScanReport, 503: null },
    handler: async ({ ctx, body }) => ({ status: 200, body: await scanTables(ctx.db, catalogClientOf(ctx), { deep: body?.deep ?? false }) }),
  }),
  route({
    method: 'GET',
    path: '/api/admin/maintenance/policy',
    operationId: 'get_maintenance_policy',
    summary: 'The scanner’s cadence and profile (runtime settings) and when it last scanned',
    tags: ['maintenance'],
    access: { kind: 'permission', permission: 'catalogs' },
    responses: { 200: PolicyOut },
    handler: async ({ ctx }) => ({ status: 200, body: await maintenance.readPolicy(ctx.db) }),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/maintenance/policy',
    operationId: 'put_maintenance_policy',
    summary: 'Set the cadence (off, hourly, daily) and the profile (conservative, balanced, aggressive)',
    tags: ['maintenance'],
    access: { kind: 'permission', permission: 'catalogs' },
    body: Schema.Struct({ cadence: Schema.optionalKey(Schema.Literals(CADENCES)), profile: Schema.optionalKey(Schema.Literals(PROFILES)) }),
    responses: { 200: PolicyOut, 422: null },
    handler: async ({ ctx, body }) => ({ status: 200, body: await maintenance.writePolicy(ctx.db, body ?? {}) }),
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/maintenance/health',
    operationId: 'list_workspace_table_health',
    summary: 'The workspace’s tables by health, worst first, with their open recommendations',
    tags: ['maintenance'],
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String }),
    responses: {
      200: Schema.Array(
        Schema.Struct({ catalog: Schema.String, schema: Schema.String, table: Schema.String, score: Schema.Number, grade: Schema.String, open: Schema.Number, scanned_at: Schema.String }),
      ),
    },
    handler: async ({ ctx, ws }) => {
      const ids = (await listWorkspaceCatalogs(ctx.db, ws!.workspace.id)).map((c) => c.id);
      const rows = await maintenance.listHealth(ctx.db, ids);
      return { status: 200, body: rows.map((r) => ({ ...r, scanned_at: r.scanned_at.toISOString() })) };
    },
  }),
];
