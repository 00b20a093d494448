// Catalogs (global, bound to a storage backend), their attachment to workspaces and the grants of scoped
// attachments. `catalogRoutes` is everything this part serves, storage backends and catalog contents included.
import { Schema } from 'effect';
import { route, type RouteDef } from '../route.ts';
import * as catalogs from '../../domain/catalogs/catalogs.ts';
import * as attachments from '../../domain/catalogs/attachments.ts';
import * as grants from '../../domain/catalogGrants.ts';
import { SLUG_PATTERN } from '../../domain/workspaces.ts';
import { notFound } from '../../domain/errors.ts';
import { actorOf } from '../../domain/audit.ts';
import { audited } from '../audit.ts';
import { catalogClientOf, viaCatalog } from '../catalogService.ts';
import { storageRoutes } from './storage.ts';
import { catalogTableRoutes, NameSchema } from './catalogTables.ts';
import { catalogSearchRoutes } from './catalogSearch.ts';

const CatalogIdParams = Schema.Struct({ catalog_id: Schema.String });
const WsParams = Schema.Struct({ workspace: Schema.String });
const WsCatalogParams = Schema.Struct({ workspace: Schema.String, catalog: Schema.String });
const GrantParams = Schema.Struct({ workspace: Schema.String, catalog: Schema.String, grant_id: Schema.String });

const catalogOwnRoutes = [
  route({
    method: 'GET',
    path: '/api/catalogs',
    operationId: 'list_catalogs',
    summary: 'Catalogs: all of them for catalog managers, else those attached to your workspaces or made by you',
    tags: ['catalogs'],
    access: { kind: 'authenticated' },
    responses: { 200: Schema.Array(catalogs.CatalogOutSchema) },
    handler: async ({ ctx, principal }) => ({ status: 200, body: await catalogs.listCatalogs(ctx.db, principal) }),
  }),
  route({
    method: 'GET',
    path: '/api/catalogs/:catalog_id',
    operationId: 'get_catalog',
    summary: 'One catalog (404 when it is not visible to the caller)',
    tags: ['catalogs'],
    access: { kind: 'authenticated' },
    params: CatalogIdParams,
    responses: { 200: catalogs.CatalogOutSchema, 404: null },
    handler: async ({ ctx, principal, params }) => ({ status: 200, body: await catalogs.getVisibleCatalog(ctx.db, principal, params.catalog_id) }),
  }),
  route({
    method: 'POST',
    path: '/api/catalogs',
    operationId: 'create_catalog',
    summary: 'Create a catalog bound to a storage backend; its warehouse is rooted at {backend root_uri}{slug}/',
    tags: ['catalogs'],
    access: { kind: 'permission', permission: 'catalogs' },
    body: Schema.Struct({
      slug: Schema.String.check(Schema.isPattern(new RegExp(SLUG_PATTERN))),
      storage_backend_id: Schema.String,
    }),
    responses: { 201: catalogs.CatalogOutSchema, 409: null, 422: null, 503: null },
    handler: async ({ ctx, req, principal, body }) => {
      const client = catalogClientOf(ctx);
      const out = await viaCatalog('catalog', () =>
        audited(
          ctx,
          req,
          (db) => catalogs.createCatalog(db, client, ctx.config, principal, body),
          (out) => ({ action: 'catalog.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'catalog', id: out.id }, details: { change: 'created', slug: out.slug, storage_backend_id: out.storage_backend_id } }),
        ),
      );
      return { status: 201, body: out };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/catalogs/:catalog_id',
    operationId: 'delete_catalog',
    summary: 'Drop a catalog with everything in it; 409 catalog_attached while any workspace attaches it',
    tags: ['catalogs'],
    access: { kind: 'permission', permission: 'catalogs' },
    params: CatalogIdParams,
    responses: { 204: null, 404: null, 409: null, 503: null },
    handler: async ({ ctx, req, principal, params }) => {
      const found = await catalogs.findCatalog(ctx.db, params.catalog_id);
      if (!found) throw notFound('catalog');
      const client = catalogClientOf(ctx);
      await viaCatalog('catalog', () =>
        audited(
          ctx,
          req,
          (db) => catalogs.deleteCatalog(db, client, principal, params.catalog_id, ctx.config, ctx.logger),
          () => ({ action: 'catalog.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'catalog', id: params.catalog_id }, details: { change: 'deleted', slug: found.slug } }),
        ),
      );
      return { status: 204 };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/catalogs',
    operationId: 'list_workspace_catalogs',
    summary: 'Catalogs attached to the workspace; is_default marks the default',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    responses: { 200: Schema.Array(attachments.WorkspaceCatalogOutSchema) },
    handler: async ({ ctx, ws }) => ({ status: 200, body: await attachments.listWorkspaceCatalogs(ctx.db, ws!.workspace.id) }),
  }),
  route({
    method: 'PUT',
    path: '/api/workspaces/:workspace/catalogs/:catalog',
    operationId: 'attach_workspace_catalog',
    summary: 'Attach a catalog (201) or update the attachment (200); a new attachment also needs a catalog manager',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'owner' },
    params: WsCatalogParams,
    body: Schema.Struct({
      make_default: Schema.Boolean,
      access_mode: Schema.optionalKey(Schema.Literals(attachments.ACCESS_MODES)),
    }),
    responses: { 200: attachments.WorkspaceCatalogOutSchema, 201: attachments.WorkspaceCatalogOutSchema, 403: null, 404: null },
    handler: async ({ ctx, req, principal, ws, params, body }) => {
      const r = await audited(
        ctx,
        req,
        (db) => attachments.attachCatalog(db, principal, ws!, params.catalog, body),
        (r) => ({
        action: 'catalog.change',
        outcome: 'success',
        actor: actorOf(principal),
        target: { kind: 'catalog', id: r.catalog.id },
        details: { change: r.created ? 'attached' : 'attachment_updated', workspace: ws!.workspace.slug, slug: r.catalog.slug, access_mode: r.catalog.access_mode, is_default: r.catalog.is_default },
      }),
      );
      return { status: r.created ? 201 : 200, body: r.catalog };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/workspaces/:workspace/catalogs/:catalog',
    operationId: 'detach_workspace_catalog',
    summary: 'Detach a catalog; detaching the default leaves the workspace without a default catalog',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'owner' },
    params: WsCatalogParams,
    responses: { 204: null, 404: null },
    handler: async ({ ctx, req, principal, ws, params }) => {
      await audited(
        ctx,
        req,
        (db) => attachments.detachCatalog(db, ws!.workspace.id, params.catalog),
        () => ({ action: 'catalog.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'catalog', id: null }, details: { change: 'detached', workspace: ws!.workspace.slug, slug: params.catalog } }),
      );
      return { status: 204 };
    },
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/catalogs/:catalog/grants',
    operationId: 'list_workspace_catalog_grants',
    summary: 'Grants of the attachment (enforced while its access_mode is scoped)',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'reader' },
    params: WsCatalogParams,
    responses: { 200: Schema.Array(grants.GrantOutSchema), 404: null },
    handler: async ({ ctx, ws, params }) => {
      const c = await attachments.resolveAttachedCatalog(ctx.db, ws!.workspace.id, params.catalog);
      return { status: 200, body: await grants.listGrants(ctx.db, ws!.workspace.id, c) };
    },
  }),
  route({
    method: 'PUT',
    path: '/api/workspaces/:workspace/catalogs/:catalog/grants',
    operationId: 'put_workspace_catalog_grant',
    summary: 'Grant the workspace a catalog, a schema or a table (named in the body) for read or write: 201 new, 200 replaced',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'owner' },
    params: WsCatalogParams,
    body: Schema.Struct({
      schema: Schema.optionalKey(Schema.NullOr(NameSchema)),
      table: Schema.optionalKey(Schema.NullOr(NameSchema)),
      privilege: Schema.Literals(['read', 'write']),
    }),
    responses: { 200: grants.GrantOutSchema, 201: grants.GrantOutSchema, 403: null, 404: null, 422: null },
    handler: async ({ ctx, req, principal, ws, params, body }) => {
      const c = await attachments.resolveAttachedCatalog(ctx.db, ws!.workspace.id, params.catalog);
      const r = await audited(
        ctx,
        req,
        (db) => grants.putGrant(db, principal, ws!.workspace.id, c, body),
        (r) => ({
        action: 'grant.change',
        outcome: 'success',
        actor: actorOf(principal),
        target: { kind: 'catalog_grant', id: r.grant.id },
        details: { change: r.created ? 'created' : 'replaced', workspace: ws!.workspace.slug, catalog: c.slug, schema: body.schema ?? null, table: body.table ?? null, privilege: body.privilege },
      }),
      );
      return { status: r.created ? 201 : 200, body: r.grant };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/workspaces/:workspace/catalogs/:catalog/grants/:grant_id',
    operationId: 'delete_workspace_catalog_grant',
    summary: 'Revoke one grant of the attachment',
    tags: ['catalogs'],
    access: { kind: 'workspace', role: 'owner' },
    params: GrantParams,
    responses: { 204: null, 403: null, 404: null },
    handler: async ({ ctx, req, principal, ws, params }) => {
      const c = await attachments.resolveAttachedCatalog(ctx.db, ws!.workspace.id, params.catalog);
      await audited(
        ctx,
        req,
        (db) => grants.deleteGrant(db, principal, ws!.workspace.id, c, params.grant_id),
        () => ({ action: 'grant.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'catalog_grant', id: params.grant_id }, details: { change: 'deleted', workspace: ws!.workspace.slug, catalog: c.slug } }),
      );
      return { status: 204 };
    },
  }),
];

export const catalogRoutes: RouteDef[] = [...storageRoutes, ...catalogOwnRoutes, ...catalogTableRoutes, ...catalogSearchRoutes];
