// Worksheets (domain/worksheets.ts): every member keeps their own SQL tabs on the server, private or shared with the
// workspace. Any member may list, read and create; only the owner changes or deletes one. Sharing and unsharing are
// audited (worksheet.share): they change who may read the SQL.
import { Schema } from 'effect';
import type { FastifyRequest } from 'fastify';
import { route, Limit, Uuid } from '../route.ts';
import { audit } from '../audit.ts';
import { requireAgentTier } from '../../domain/agents.ts';
import { actorOf } from '../../domain/audit.ts';
import { listWorkspaceCatalogs } from '../../domain/catalogs/attachments.ts';
import { AppError, unprocessable } from '../../domain/errors.ts';
import type { Principal } from '../../domain/identity.ts';
import type { WorkspaceAccess } from '../../domain/workspaces.ts';
import * as worksheets from '../../domain/worksheets.ts';
import type { Queryable } from '../../runtime/db.ts';
import type { AppContext } from '../../usecases/context.ts';

const WsParams = Schema.Struct({ workspace: Schema.String });
const SheetParams = Schema.Struct({ workspace: Schema.String, worksheet_id: Schema.String });
const Title = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200));
const Sql = Schema.String.check(Schema.isMaxLength(1_000_000));
const Visibility = Schema.Literals(worksheets.WORKSHEET_VISIBILITIES);

const WorksheetPage = Schema.Struct({ items: Schema.Array(worksheets.WorksheetOutSchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean });

const field = (name: string, message: string) => unprocessable(`${name}: ${message}`, 'unprocessable_content', { fields: [{ field: name, in: 'body', message }] });

/** The worksheet's agent must be one the caller may run work on (the use tier); an unknown one is a bad field. */
async function checkAgent(ctx: AppContext, p: Principal, ws: WorkspaceAccess, agentId: string | null | undefined) {
  if (!agentId) return;
  try {
    await requireAgentTier(ctx.db, p, agentId, 'use', ws.workspace.id);
  } catch (e) {
    if (e instanceof AppError && e.status === 404) throw field('agent_id', `no agent ${agentId} is visible to you`);
    throw e;
  }
}

async function checkCatalog(ctx: AppContext, ws: WorkspaceAccess, catalog: string | null | undefined) {
  if (!catalog) return;
  const attached = await listWorkspaceCatalogs(ctx.db, ws.workspace.id);
  if (!attached.some((c) => c.slug === catalog)) throw field('catalog', `catalog ${catalog} is not attached to workspace ${ws.workspace.slug}`);
}

const shareAudit = (ctx: AppContext, req: FastifyRequest, p: Principal, w: worksheets.WorksheetOut, from: worksheets.WorksheetVisibility, q: Queryable) =>
  audit(
    ctx,
    req,
    { action: 'worksheet.share', outcome: 'success', actor: actorOf(p), target: { kind: 'worksheet', id: w.id }, details: { workspace_id: w.workspace_id, visibility_from: from, visibility_to: w.visibility } },
    q,
  );

export const worksheetRoutes = [
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/worksheets',
    operationId: 'create_worksheet',
    summary: 'Keep a worksheet on the server: yours, private unless visibility is workspace',
    tags: ['worksheets'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    body: Schema.Struct({
      title: Title,
      sql: Schema.optionalKey(Sql),
      agent_id: Schema.optionalKey(Schema.NullOr(Uuid)),
      catalog: Schema.optionalKey(Schema.NullOr(Schema.String)),
      visibility: Schema.optionalKey(Visibility),
    }),
    responses: { 201: worksheets.WorksheetOutSchema, 403: null, 404: null, 422: null },
    handler: async ({ ctx, req, principal, ws, body }) => {
      await checkAgent(ctx, principal, ws!, body.agent_id);
      await checkCatalog(ctx, ws!, body.catalog);
      const created = await ctx.db.tx(async (q) => {
        const w = await worksheets.createWorksheet(q, ws!.workspace.id, principal.user.id, body);
        if (w.visibility === 'workspace') await shareAudit(ctx, req, principal, w, 'private', q);
        return w;
      });
      return { status: 201, body: created };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/worksheets',
    operationId: 'list_worksheets',
    summary: 'Worksheets you may see, most recently changed first: scope=mine (yours), scope=shared (shared with the workspace), or both',
    tags: ['worksheets'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    query: Schema.Struct({ scope: Schema.optionalKey(Schema.Literals(worksheets.WORKSHEET_SCOPES)), cursor: Schema.optionalKey(Schema.String), limit: Limit }),
    responses: { 200: WorksheetPage, 422: null },
    handler: async ({ ctx, principal, ws, query }) => ({
      status: 200,
      body: await worksheets.listWorksheets(ctx.db, ws!.workspace.id, principal.user.id, { scope: query.scope, cursor: query.cursor, limit: query.limit ?? 100 }),
    }),
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/worksheets/:worksheet_id',
    operationId: 'get_worksheet',
    summary: 'One of your worksheets, or one shared with the workspace (404 for another member’s private one)',
    tags: ['worksheets'],
    access: { kind: 'workspace', role: 'reader' },
    params: SheetParams,
    responses: { 200: worksheets.WorksheetOutSchema, 404: null },
    handler: async ({ ctx, principal, ws, params }) => ({ status: 200, body: await worksheets.getWorksheet(ctx.db, ws!.workspace.id, principal.user.id, params.worksheet_id) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/workspaces/:workspace/worksheets/:worksheet_id',
    operationId: 'update_worksheet',
    summary: 'Change your worksheet (title, SQL, agent, catalog, visibility); 403 worksheet_read_only for a shared one you do not own',
    tags: ['worksheets'],
    access: { kind: 'workspace', role: 'reader' },
    params: SheetParams,
    body: Schema.Struct({
      title: Schema.optionalKey(Title),
      sql: Schema.optionalKey(Sql),
      agent_id: Schema.optionalKey(Schema.NullOr(Uuid)),
      catalog: Schema.optionalKey(Schema.NullOr(Schema.String)),
      visibility: Schema.optionalKey(Visibility),
    }),
    responses: { 200: worksheets.WorksheetOutSchema, 403: null, 404: null, 422: null },
    handler: async ({ ctx, req, principal, ws, params, body }) => {
      await checkAgent(ctx, principal, ws!, body.agent_id);
      await checkCatalog(ctx, ws!, body.catalog);
      const after = await ctx.db.tx(async (q) => {
        const r = await worksheets.updateWorksheet(q, ws!.workspace.id, principal.user.id, params.worksheet_id, body);
        if (r.before.visibility !== r.after.visibility) await shareAudit(ctx, req, principal, r.after, r.before.visibility, q);
        return r.after;
      });
      return { status: 200, body: after };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/workspaces/:workspace/worksheets/:worksheet_id',
    operationId: 'delete_worksheet',
    summary: 'Delete your worksheet; 403 worksheet_read_only for a shared one you do not own',
    tags: ['worksheets'],
    access: { kind: 'workspace', role: 'reader' },
    params: SheetParams,
    responses: { 204: null, 403: null, 404: null },
    handler: async ({ ctx, principal, ws, params }) => {
      await worksheets.deleteWorksheet(ctx.db, ws!.workspace.id, principal.user.id, params.worksheet_id);
      return { status: 204 };
    },
  }),
];
