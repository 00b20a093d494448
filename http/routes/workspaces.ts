// Workspaces and members. Every route under a workspace checks membership first (non-members get 404).
import { Schema } from 'effect';
import { route } from '../route.ts';
import * as ws from '../../domain/workspaces.ts';
import { actorOf } from '../../domain/audit.ts';
import { audited } from '../audit.ts';

const Slug = Schema.String.check(Schema.isPattern(new RegExp(ws.SLUG_PATTERN)));
const WsParams = Schema.Struct({ workspace: Schema.String });
const MemberParams = Schema.Struct({ workspace: Schema.String, user_id: Schema.String });

export const workspaceRoutes = [
  route({
    method: 'POST',
    path: '/api/workspaces',
    operationId: 'create_workspace',
    summary: 'Create a workspace; the caller becomes its owner',
    tags: ['workspaces'],
    access: { kind: 'authenticated' },
    body: Schema.Struct({ slug: Slug, name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)) }),
    responses: { 201: ws.WorkspaceOutSchema, 409: null },
    handler: async ({ ctx, principal, body }) => {
      const w = await ws.createWorkspace(ctx.db, principal, body);
      return { status: 201, body: await ws.toWorkspaceOut(ctx.db, w) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces',
    operationId: 'list_workspaces',
    summary: 'The caller’s workspaces (admins: all)',
    tags: ['workspaces'],
    access: { kind: 'authenticated' },
    responses: { 200: Schema.Array(ws.WorkspaceOutSchema) },
    handler: async ({ ctx, principal }) => {
      const rows = await ws.listWorkspaces(ctx.db, principal);
      return { status: 200, body: await Promise.all(rows.map((r) => ws.toWorkspaceOut(ctx.db, r))) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace',
    operationId: 'get_workspace',
    summary: 'One workspace, by slug or id',
    tags: ['workspaces'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    responses: { 200: ws.WorkspaceOutSchema, 404: null },
    handler: async ({ ctx, ws: access }) => ({ status: 200, body: await ws.toWorkspaceOut(ctx.db, access!.workspace) }),
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/members',
    operationId: 'list_workspace_members',
    summary: 'Members and their roles',
    tags: ['workspaces'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    responses: { 200: Schema.Array(ws.MemberOutSchema) },
    handler: async ({ ctx, ws: access }) => ({ status: 200, body: await ws.listMembers(ctx.db, access!.workspace.id) }),
  }),
  route({
    method: 'PUT',
    path: '/api/workspaces/:workspace/members/:user_id',
    operationId: 'put_workspace_member',
    summary: 'Add a member (201) or change a role (200)',
    tags: ['workspaces'],
    access: { kind: 'workspace', role: 'owner' },
    params: MemberParams,
    body: Schema.Struct({ role: Schema.Literals(['reader', 'writer', 'owner']) }),
    responses: { 200: ws.MemberOutSchema, 201: ws.MemberOutSchema, 404: null, 409: null },
    handler: async ({ ctx, req, principal, ws: access, params, body }) => {
      const r = await audited(
        ctx,
        req,
        (db) => ws.putMember(db, access!.workspace.id, params.user_id, body.role),
        (r) => ({
        action: 'workspace.member_change',
        outcome: 'success',
        actor: actorOf(principal),
        target: { kind: 'workspace', id: access!.workspace.id },
        details: { workspace: access!.workspace.slug, user_id: params.user_id, role: body.role, change: r.created ? 'added' : 'role_set' },
      }),
      );
      return { status: r.created ? 201 : 200, body: r.member };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/workspaces/:workspace/members/:user_id',
    operationId: 'delete_workspace_member',
    summary: 'Remove a member (a workspace keeps at least one owner)',
    tags: ['workspaces'],
    access: { kind: 'workspace', role: 'owner' },
    params: MemberParams,
    responses: { 204: null, 404: null, 409: null },
    handler: async ({ ctx, req, principal, ws: access, params }) => {
      await audited(
        ctx,
        req,
        (db) => ws.removeMember(db, access!.workspace.id, params.user_id),
        () => ({
        action: 'workspace.member_change',
        outcome: 'success',
        actor: actorOf(principal),
        target: { kind: 'workspace', id: access!.workspace.id },
        details: { workspace: access!.workspace.slug, user_id: params.user_id, change: 'removed' },
      }),
      );
      return { status: 204 };
    },
  }),
];
