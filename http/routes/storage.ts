// Admin storage backends: where catalogs keep their files. Secrets go in and never come out (has_credentials).
import { Schema } from 'effect';
import { route } from '../route.ts';
import * as backends from '../../domain/catalogs/backends.ts';
import * as rotation from '../../domain/catalogs/credentialRotation.ts';
import { SLUG_PATTERN } from '../../domain/workspaces.ts';
import { actorOf } from '../../domain/audit.ts';
import { audited } from '../audit.ts';
import { catalogClientOf, viaCatalog } from '../catalogService.ts';

const Text = (max: number) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max));
const OptionalText = (max: number) => Schema.optionalKey(Schema.NullOr(Text(max)));
const BackendParams = Schema.Struct({ storage_backend_id: Schema.String });

export const storageRoutes = [
  route({
    method: 'GET',
    path: '/api/admin/storage-backends',
    operationId: 'list_storage_backends',
    summary: 'Every storage backend (secrets never shown)',
    tags: ['catalogs'],
    access: { kind: 'admin' },
    responses: { 200: Schema.Array(backends.BackendOutSchema) },
    handler: async ({ ctx }) => ({ status: 200, body: await backends.listBackends(ctx.db) }),
  }),
  route({
    method: 'POST',
    path: '/api/admin/storage-backends',
    operationId: 'create_storage_backend',
    audit: { action: 'backend.change' },
    summary: 'Register a storage backend: object_store (S3-compatible endpoint), s3 (AWS S3) or azure (Blob Storage / ADLS Gen2, account_name and account_key)',
    tags: ['catalogs'],
    access: { kind: 'admin' },
    body: Schema.Struct({
      name: Schema.String.check(Schema.isPattern(new RegExp(SLUG_PATTERN))),
      kind: Schema.Literals(backends.STORAGE_KINDS),
      root_uri: Text(1024),
      endpoint: OptionalText(1024),
      region: OptionalText(64),
      access_key_id: OptionalText(256),
      secret_access_key: OptionalText(1024),
      account_name: OptionalText(64),
      account_key: OptionalText(1024),
      // s3 and object_store: the IAM role STS AssumeRole assumes for sts vending (AWS STS requires one); 422 for azure.
      role_arn: OptionalText(2048),
    }),
    // 422 storage_unreachable: the probe (put, read, delete one object under the root) failed, with the store's message.
    // 422 storage_credentials_missing: nothing to reach the store with (an azure backend always needs its account key).
    responses: { 201: backends.BackendOutSchema, 409: null, 422: null },
    handler: async ({ ctx, req, principal, body }) => {
      // The credentials themselves never go in the row: only whether some were given.
      const b = await audited(
        ctx,
        req,
        (db) => backends.createBackend(db, ctx.config, body),
        (b) => ({ action: 'backend.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'storage_backend', id: b.id }, details: { change: 'created', name: b.name, kind: b.kind, root_uri: b.root_uri, static_keys: b.has_credentials } }),
      );
      return { status: 201, body: b };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/storage-backends/:storage_backend_id',
    operationId: 'get_storage_backend',
    summary: 'One storage backend',
    tags: ['catalogs'],
    access: { kind: 'admin' },
    params: BackendParams,
    responses: { 200: backends.BackendOutSchema, 404: null },
    handler: async ({ ctx, params }) => ({ status: 200, body: await backends.getBackend(ctx.db, params.storage_backend_id) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/storage-backends/:storage_backend_id',
    operationId: 'update_storage_backend_credentials',
    audit: { action: 'backend.change', target: { kind: 'storage_backend', param: 'storage_backend_id' } },
    summary: 'Rotate a storage backend\'s credentials (never its location): probed with the new ones, then saved and given to every catalog on it',
    tags: ['catalogs'],
    access: { kind: 'admin' },
    params: BackendParams,
    // At least one field. s3 and object_store: access_key_id with secret_access_key, role_arn (null removes it);
    // azure: account_key. A field of another kind, or any on the bundled store's backends, is 422 naming it.
    body: Schema.Struct({
      access_key_id: Schema.optionalKey(Text(256)),
      secret_access_key: Schema.optionalKey(Text(1024)),
      account_key: Schema.optionalKey(Text(1024)),
      role_arn: OptionalText(2048),
    }),
    // 422 storage_unreachable: the probe with the new credentials failed (nothing changed), with the store's message.
    // 409 migration_cutover: a storage migration from or to this backend is cutting over; retry after it.
    // 502/503: a catalog's warehouse could not be updated; nothing changed, and a retry converges.
    responses: { 200: backends.BackendOutSchema, 404: null, 409: null, 422: null, 502: null, 503: null },
    handler: async ({ ctx, req, principal, params, body }) => {
      const plan = await rotation.planCredentialRotation(ctx.db, ctx.config, params.storage_backend_id, body);
      // Only which fields changed is recorded: never a key, secret or account key.
      const b = await viaCatalog('storage backend', () =>
        audited(
          ctx,
          req,
          (db) => rotation.rotateBackendCredentials(db, () => catalogClientOf(ctx), ctx.config, plan, ctx.logger),
          (b) => ({ action: 'backend.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'storage_backend', id: b.id }, details: { change: 'credentials_rotated', fields: plan.fields } }),
        ),
      );
      return { status: 200, body: b };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/storage-backends/:storage_backend_id',
    operationId: 'delete_storage_backend',
    audit: { action: 'backend.change', target: { kind: 'storage_backend', param: 'storage_backend_id' } },
    summary: 'Remove a storage backend; 409 storage_backend_in_use while a catalog is bound to it',
    tags: ['catalogs'],
    access: { kind: 'admin' },
    params: BackendParams,
    responses: { 204: null, 404: null, 409: null },
    handler: async ({ ctx, req, principal, params }) => {
      await audited(
        ctx,
        req,
        (db) => backends.deleteBackend(db, params.storage_backend_id),
        () => ({ action: 'backend.change', outcome: 'success', actor: actorOf(principal), target: { kind: 'storage_backend', id: params.storage_backend_id }, details: { change: 'deleted' } }),
      );
      return { status: 204 };
    },
  }),
];
