// Catalog storage migrations (spec: "Catalog storage migrations"; docs/api-decisions.md "Storage backends and migrations"):
// start one (202, pending), the page of a catalog's migrations, one with its per-table progress, its log after a
// sequence, and cancel (only before the cutover). Who: catalog managers (the catalogs permission or the creator).
import { Schema } from 'effect';
import { route, Limit, Uuid } from '../route.ts';
import * as migrations from '../../domain/storageMigrations/records.ts';
import { findCatalog } from '../../domain/catalogs/catalogs.ts';
import { conflict, notFound } from '../../domain/errors.ts';
import { actorOf } from '../../domain/audit.ts';
import { audit } from '../audit.ts';
import { catalogClientOf } from '../catalogService.ts';
import type { StorageMigrationInput } from '../../machines/storageMigration.ts';

const DAY_MS = 86_400_000;

const CatalogParams = Schema.Struct({ catalog_id: Schema.String });
const MigrationParams = Schema.Struct({ catalog_id: Schema.String, migration_id: Schema.String });
const MANAGERS = { kind: 'resource' as const, note: 'catalog managers: the catalogs permission or the catalog’s creator' };

export const migrationRoutes = [
  route({
    method: 'POST',
    path: '/api/catalogs/:catalog_id/migrations',
    operationId: 'start_catalog_migration',
    summary: 'Move a catalog to another storage backend (202, pending): copy, path rewrite, verify, atomic cutover',
    description:
      'While the migration is active the catalog is read-only: writes to it answer 409 catalog_read_only; reads work. ' +
      'The catalog keeps its id and slug. After the cutover the old files are kept for MIGRATION_RETENTION_DAYS. ' +
      '409 migration_active while another migration of the catalog is active.',
    tags: ['catalogs'],
    access: MANAGERS,
    params: CatalogParams,
    body: Schema.Struct({ target_storage_backend_id: Uuid }),
    responses: { 202: migrations.MigrationOutSchema, 403: null, 404: null, 409: null, 422: null, 503: null },
    handler: async ({ ctx, req, principal, params, body }) => {
      catalogClientOf(ctx);
      const c = await findCatalog(ctx.db, params.catalog_id);
      const { start, entity } = await migrations.prepareMigration(ctx.db, principal, params.catalog_id, body.target_storage_backend_id, ctx.config);
      const input: StorageMigrationInput = {
        ...start,
        phaseLeaseMs: migrations.PHASE_LEASE_MS,
        retentionMs: Math.max(1, ctx.config.MIGRATION_RETENTION_DAYS * DAY_MS),
        maxPhaseAttempts: migrations.MAX_PHASE_ATTEMPTS,
      };
      try {
        const spawned = await ctx.host.spawn('storageMigration', input.migrationId, input, { entity });
        await spawned.start();
      } catch (e) {
        throw migrations.asStartConflict(e, c?.slug ?? params.catalog_id);
      }
      // The record as accepted (pending), read before anything can begin it.
      const record = await migrations.getMigration(ctx.db, principal, params.catalog_id, input.migrationId);
      await audit(ctx, req, {
        action: 'catalog.change',
        outcome: 'success',
        actor: actorOf(principal),
        target: { kind: 'catalog', id: params.catalog_id },
        details: { change: 'migration_started', migration_id: input.migrationId, source_storage_backend_id: input.sourceBackendId, target_storage_backend_id: input.targetBackendId },
      });
      // The runner's leader begins it on its next tick; this replica tries at once (after reading the pending record).
      void ctx.migrations?.tickNow().catch(() => undefined);
      return { status: 202, body: record };
    },
  }),
  route({
    method: 'GET',
    path: '/api/catalogs/:catalog_id/migrations',
    operationId: 'list_catalog_migrations',
    summary: 'The catalog’s storage migrations, newest first (page)',
    tags: ['catalogs'],
    access: MANAGERS,
    params: CatalogParams,
    query: Schema.Struct({ cursor: Schema.optionalKey(Schema.String), limit: Limit }),
    responses: { 200: Schema.Struct({ items: Schema.Array(migrations.MigrationOutSchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean }), 403: null, 404: null },
    handler: async ({ ctx, principal, params, query }) => ({
      status: 200,
      body: await migrations.listMigrations(ctx.db, principal, params.catalog_id, { cursor: query.cursor, limit: query.limit ?? 100 }),
    }),
  }),
  route({
    method: 'GET',
    path: '/api/catalogs/:catalog_id/migrations/:migration_id',
    operationId: 'get_catalog_migration',
    summary: 'One storage migration: status, phase, bytes and per-table progress',
    tags: ['catalogs'],
    access: MANAGERS,
    params: MigrationParams,
    responses: { 200: migrations.MigrationOutSchema, 403: null, 404: null },
    handler: async ({ ctx, principal, params }) => ({ status: 200, body: await migrations.getMigration(ctx.db, principal, params.catalog_id, params.migration_id) }),
  }),
  route({
    method: 'GET',
    path: '/api/catalogs/:catalog_id/migrations/:migration_id/logs',
    operationId: 'get_catalog_migration_logs',
    summary: 'Log entries newer than `after` (a sequence number; 0 by default), oldest first, at most 1000',
    tags: ['catalogs'],
    access: MANAGERS,
    params: MigrationParams,
    query: Schema.Struct({ after: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))) }),
    responses: { 200: Schema.Array(migrations.MigrationLogOutSchema), 403: null, 404: null },
    handler: async ({ ctx, principal, params, query }) => ({
      status: 200,
      body: await migrations.migrationLogs(ctx.db, principal, params.catalog_id, params.migration_id, query.after ?? 0),
    }),
  }),
  route({
    method: 'POST',
    path: '/api/catalogs/:catalog_id/migrations/:migration_id/cancel',
    operationId: 'cancel_catalog_migration',
    summary: 'Cancel a migration before its cutover (202 with the record); the copy is removed, the catalog stays where it was',
    tags: ['catalogs'],
    access: MANAGERS,
    params: MigrationParams,
    responses: { 202: migrations.MigrationOutSchema, 403: null, 404: null, 409: null },
    handler: async ({ ctx, req, principal, params }) => {
      const before = await migrations.getMigration(ctx.db, principal, params.catalog_id, params.migration_id);
      const r = await ctx.host.send('storageMigration', params.migration_id, { type: 'cancel' });
      if (r.actor.state !== 'cancelled') {
        if (r.actor.state === 'failed') throw conflict('the migration already failed; nothing is left to cancel', 'conflict');
        throw migrations.pastCutover();
      }
      if (before.status !== 'cancelled') {
        await audit(ctx, req, {
          action: 'catalog.change',
          outcome: 'success',
          actor: actorOf(principal),
          target: { kind: 'catalog', id: params.catalog_id },
          details: { change: 'migration_cancelled', migration_id: params.migration_id },
        });
      }
      const out = await migrations.getMigration(ctx.db, principal, params.catalog_id, params.migration_id).catch(() => {
        throw notFound('storage migration');
      });
      return { status: 202, body: out };
    },
  }),
];
