// Saved queries, schedules and their runs (docs/api-decisions.md "Saved queries, schedules and runs"). Members read them;
// writers save, schedule and fire. An agent named for work needs the use tier, checked when it is named and again
// at every fire (as the schedule's creator).
import { Schema } from 'effect';
import { route, asArray, Limit, PageQuery, pageOfSchema, repeatable, Uuid } from '../route.ts';
import { requireAgentTier } from '../../domain/agents.ts';
import { listWorkspaceCatalogs } from '../../domain/catalogs/attachments.ts';
import { unprocessable } from '../../domain/errors.ts';
import * as saved from '../../domain/savedQueries.ts';
import * as schedules from '../../domain/schedules.ts';
import type { AppContext } from '../../usecases/context.ts';
import type { Principal } from '../../domain/identity.ts';
import type { WorkspaceAccess } from '../../domain/workspaces.ts';
import { runScheduleNow } from '../../usecases/scheduler.ts';
import { successRow } from '../audit.ts';

const WsParams = Schema.Struct({ workspace: Schema.String });
const SavedParams = Schema.Struct({ workspace: Schema.String, saved_query_id: Schema.String });
const ScheduleParams = Schema.Struct({ workspace: Schema.String, schedule_id: Schema.String });
const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200));
const Sql = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1_000_000));
// The spec's filter vocabulary: status repeatable, no default; an unknown value is 422.
const RunsQuery = Schema.Struct({ status: repeatable(Schema.Literals(schedules.RUN_STATUSES)), cursor: Schema.optionalKey(Schema.String), limit: Limit });

/** An agent named for work: the use tier (403 agent_forbidden, 404 without any). */
const checkAgent = (ctx: AppContext, p: Principal, ws: WorkspaceAccess, agentId: string | null | undefined) =>
  agentId ? requireAgentTier(ctx.db, p, agentId, 'use', ws.workspace.id) : Promise.resolve(undefined);

async function checkCatalog(ctx: AppContext, ws: WorkspaceAccess, catalog: string | null | undefined) {
  if (!catalog) return;
  const attached = await listWorkspaceCatalogs(ctx.db, ws.workspace.id);
  if (!attached.some((c) => c.slug === catalog)) {
    throw unprocessable(`catalog ${catalog} is not attached to workspace ${ws.workspace.slug}`, 'unprocessable_content', { fields: [{ field: 'catalog', message: 'not attached' }] });
  }
}

export const scheduleRoutes = [
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/saved-queries',
    operationId: 'create_saved_query',
    summary: 'Save a query for the workspace: 201 created, 200 replaced (same name), 409 saved_query_exists with on_conflict=error',
    tags: ['saved-queries'],
    access: { kind: 'workspace', role: 'writer' },
    params: WsParams,
    body: Schema.Struct({
      name: Name,
      sql: Sql,
      default_agent_id: Schema.optionalKey(Schema.NullOr(Uuid)),
      catalog: Schema.optionalKey(Schema.NullOr(Schema.String)),
      on_conflict: Schema.optionalKey(Schema.Literals(['replace', 'error'])),
    }),
    responses: { 200: saved.SavedQueryOutSchema, 201: saved.SavedQueryOutSchema, 403: null, 404: null, 409: null, 422: null },
    handler: async ({ ctx, principal, ws, body }) => {
      await checkAgent(ctx, principal, ws!, body.default_agent_id);
      await checkCatalog(ctx, ws!, body.catalog);
      const r = await saved.saveQuery(ctx.db, ws!.workspace.id, principal.user.id, body, body.on_conflict ?? 'replace');
      return r.created ? { status: 201, body: r.query } : { status: 200, body: r.query };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/saved-queries',
    operationId: 'list_saved_queries',
    summary: 'The workspace’s saved queries, newest first',
    tags: ['saved-queries'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    query: PageQuery,
    responses: { 200: pageOfSchema(saved.SavedQueryOutSchema) },
    handler: async ({ ctx, ws, query }) => ({ status: 200, body: await saved.listSavedQueries(ctx.db, ws!.workspace.id, { cursor: query.cursor, limit: query.limit ?? 100 }) }),
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/saved-queries/:saved_query_id',
    operationId: 'get_saved_query',
    summary: 'One saved query',
    tags: ['saved-queries'],
    access: { kind: 'workspace', role: 'reader' },
    params: SavedParams,
    responses: { 200: saved.SavedQueryOutSchema, 404: null },
    handler: async ({ ctx, ws, params }) => ({ status: 200, body: await saved.getSavedQuery(ctx.db, ws!.workspace.id, params.saved_query_id) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/workspaces/:workspace/saved-queries/:saved_query_id',
    operationId: 'update_saved_query',
    summary: 'Rename or change a saved query (409 saved_query_exists when the new name is taken)',
    tags: ['saved-queries'],
    access: { kind: 'workspace', role: 'writer' },
    params: SavedParams,
    body: Schema.Struct({
      name: Schema.optionalKey(Name),
      sql: Schema.optionalKey(Sql),
      default_agent_id: Schema.optionalKey(Schema.NullOr(Uuid)),
      catalog: Schema.optionalKey(Schema.NullOr(Schema.String)),
    }),
    responses: { 200: saved.SavedQueryOutSchema, 403: null, 404: null, 409: null, 422: null },
    handler: async ({ ctx, principal, ws, params, body }) => {
      await checkAgent(ctx, principal, ws!, body.default_agent_id);
      await checkCatalog(ctx, ws!, body.catalog);
      return { status: 200, body: await saved.updateSavedQuery(ctx.db, ws!.workspace.id, params.saved_query_id, principal.user.id, body) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/workspaces/:workspace/saved-queries/:saved_query_id',
    operationId: 'delete_saved_query',
    summary: 'Delete a saved query (and its schedules)',
    tags: ['saved-queries'],
    access: { kind: 'workspace', role: 'writer' },
    params: SavedParams,
    responses: { 204: null, 404: null },
    handler: async ({ ctx, ws, params }) => {
      await saved.deleteSavedQuery(ctx.db, ws!.workspace.id, params.saved_query_id);
      return { status: 204 };
    },
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/schedules',
    operationId: 'create_schedule',
    summary: 'Schedule a saved query: a 5-field cron in UTC, an agent (use tier), enabled by default',
    tags: ['schedules'],
    access: { kind: 'workspace', role: 'writer' },
    params: WsParams,
    body: Schema.Struct({ saved_query_id: Uuid, cron: Schema.String.check(Schema.isMaxLength(200)), agent_id: Uuid, enabled: Schema.optionalKey(Schema.Boolean) }),
    responses: { 201: schedules.ScheduleOutSchema, 403: null, 404: null, 422: null },
    handler: async ({ ctx, principal, ws, body }) => {
      await saved.getSavedQuery(ctx.db, ws!.workspace.id, body.saved_query_id);
      await checkAgent(ctx, principal, ws!, body.agent_id);
      return { status: 201, body: await schedules.createSchedule(ctx.db, ws!.workspace.id, principal.user.id, body) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/schedules',
    operationId: 'list_schedules',
    summary: 'The workspace’s schedules with their next and last runs',
    tags: ['schedules'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    responses: { 200: Schema.Array(schedules.ScheduleOutSchema) },
    handler: async ({ ctx, ws }) => ({ status: 200, body: await schedules.listSchedules(ctx.db, ws!.workspace.id) }),
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/schedules/:schedule_id',
    operationId: 'get_schedule',
    summary: 'One schedule',
    tags: ['schedules'],
    access: { kind: 'workspace', role: 'reader' },
    params: ScheduleParams,
    responses: { 200: schedules.ScheduleOutSchema, 404: null },
    handler: async ({ ctx, ws, params }) => ({ status: 200, body: await schedules.getSchedule(ctx.db, ws!.workspace.id, params.schedule_id) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/workspaces/:workspace/schedules/:schedule_id',
    operationId: 'update_schedule',
    summary: 'Change a schedule’s cron, agent or enabled flag (its next run is recomputed from now)',
    tags: ['schedules'],
    access: { kind: 'workspace', role: 'writer' },
    params: ScheduleParams,
    body: Schema.Struct({ cron: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200))), agent_id: Schema.optionalKey(Uuid), enabled: Schema.optionalKey(Schema.Boolean) }),
    responses: { 200: schedules.ScheduleOutSchema, 403: null, 404: null, 422: null },
    handler: async ({ ctx, principal, ws, params, body }) => {
      await checkAgent(ctx, principal, ws!, body.agent_id);
      return { status: 200, body: await schedules.updateSchedule(ctx.db, ws!.workspace.id, params.schedule_id, body) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/workspaces/:workspace/schedules/:schedule_id',
    operationId: 'delete_schedule',
    summary: 'Delete a schedule (its runs go with it; their queries stay in the history)',
    tags: ['schedules'],
    access: { kind: 'workspace', role: 'writer' },
    params: ScheduleParams,
    responses: { 204: null, 404: null },
    handler: async ({ ctx, ws, params }) => {
      await schedules.deleteSchedule(ctx.db, ws!.workspace.id, params.schedule_id);
      return { status: 204 };
    },
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/schedules/:schedule_id/run',
    operationId: 'run_schedule',
    // (its success row is written with the run it records, below)
    audit: { action: 'schedule.run', target: { kind: 'schedule', param: 'schedule_id' } },
    summary: 'Fire a schedule now (202 with the run; skipped while its last run still runs)',
    tags: ['schedules'],
    access: { kind: 'workspace', role: 'writer' },
    params: ScheduleParams,
    responses: { 202: schedules.RunOutSchema, 404: null },
    handler: async ({ ctx, ws, principal, params, req }) => {
      // The success row is written in the run's own transaction: a crash cannot leave the run without it.
      const record = successRow(ctx, req, principal, { action: 'schedule.run', target: { kind: 'schedule', id: params.schedule_id }, details: { operation: 'run_schedule' } });
      return { status: 202, body: await runScheduleNow(ctx, ws!.workspace.id, params.schedule_id, record) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/schedules/:schedule_id/runs',
    operationId: 'list_schedule_runs',
    summary: 'A schedule’s runs, newest first',
    tags: ['schedules'],
    access: { kind: 'workspace', role: 'reader' },
    params: ScheduleParams,
    query: RunsQuery,
    responses: { 200: pageOfSchema(schedules.RunOutSchema), 404: null, 422: null },
    handler: async ({ ctx, ws, params, query }) => {
      await schedules.getSchedule(ctx.db, ws!.workspace.id, params.schedule_id);
      return {
        status: 200,
        body: await schedules.listRuns(ctx.db, { workspaceId: ws!.workspace.id, scheduleId: params.schedule_id }, { status: asArray(query.status), cursor: query.cursor, limit: query.limit ?? 100 }),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/schedule-runs',
    operationId: 'list_workspace_schedule_runs',
    summary: 'Every schedule run of the workspace, newest first',
    tags: ['schedules'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    query: RunsQuery,
    responses: { 200: pageOfSchema(schedules.RunOutSchema), 422: null },
    handler: async ({ ctx, ws, query }) => ({
      status: 200,
      body: await schedules.listRuns(ctx.db, { workspaceId: ws!.workspace.id }, { status: asArray(query.status), cursor: query.cursor, limit: query.limit ?? 100 }),
    }),
  }),
];
