// Warehouse management for the api (not part of the Iceberg REST protocol): the api binds each Eider catalog to
// a storage backend by creating a warehouse here. Secrets go in and never come out.
import type { FastifyInstance } from 'fastify';
import * as store from '../metastore.ts';
import type { Warehouse } from '../metastore.ts';
import type { CatalogContext } from '../context.ts';
import { sendJson } from '../http.ts';
import { badRequest } from '../errors.ts';
import { normalizeRootUri } from '../storage.ts';
import { parseVendedKeyId } from '../../runtime/objectStore.ts';

interface WarehouseBody {
  name?: unknown;
  root_uri?: unknown;
  kind?: unknown;
  endpoint?: unknown;
  region?: unknown;
  access_key_id?: unknown;
  secret_access_key?: unknown;
  path_style?: unknown;
}

export function warehouseOut(w: Warehouse) {
  return {
    name: w.name,
    root_uri: w.rootUri,
    kind: w.kind,
    endpoint: w.endpoint,
    region: w.region,
    path_style: w.pathStyle,
    credential_epoch: w.credentialEpoch,
    created_at: w.createdAt,
  };
}

const optString = (v: unknown, what: string): string | undefined => {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`${what} must be a string`);
  return v;
};

function parseBody(b: WarehouseBody, partial: boolean) {
  const kind = optString(b.kind, 'kind');
  if (kind !== undefined && kind !== 'object_store' && kind !== 's3') throw badRequest('kind must be object_store or s3');
  const rootUri = optString(b.root_uri, 'root_uri');
  const accessKeyId = optString(b.access_key_id, 'access_key_id');
  const secretAccessKey = optString(b.secret_access_key, 'secret_access_key');
  if (!partial && (!rootUri || !accessKeyId || !secretAccessKey)) {
    throw badRequest('root_uri, access_key_id and secret_access_key are required');
  }
  if (b.path_style !== undefined && typeof b.path_style !== 'boolean') throw badRequest('path_style must be a boolean');
  return {
    rootUri: rootUri === undefined ? undefined : normalizeRootUri(rootUri),
    kind: kind as 'object_store' | 's3' | undefined,
    endpoint: optString(b.endpoint, 'endpoint'),
    region: optString(b.region, 'region'),
    accessKeyId,
    secretAccessKey,
    pathStyle: b.path_style as boolean | undefined,
  };
}

const dropUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

export function managementRoutes(app: FastifyInstance, ctx: CatalogContext): void {
  app.post<{ Body: WarehouseBody }>('/management/v1/warehouses', async (req, reply) => {
    const b = req.body ?? {};
    if (typeof b.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(b.name)) {
      throw badRequest('name must be 1-128 characters of letters, digits, _ . -');
    }
    const p = parseBody(b, false);
    const w = await store.insertWarehouse(ctx.db, {
      name: b.name,
      rootUri: p.rootUri!,
      kind: p.kind ?? 'object_store',
      endpoint: p.endpoint ?? null,
      region: p.region ?? 'us-east-1',
      accessKeyId: p.accessKeyId!,
      secretAccessKey: p.secretAccessKey!,
      pathStyle: p.pathStyle ?? true,
    });
    return sendJson(reply, 201, warehouseOut(w));
  });

  app.get('/management/v1/warehouses', async (_req, reply) => {
    return sendJson(reply, 200, { warehouses: (await store.listWarehouses(ctx.db)).map(warehouseOut) });
  });

  app.get<{ Params: { name: string } }>('/management/v1/warehouses/:name', async (req, reply) => {
    return sendJson(reply, 200, warehouseOut(await store.getWarehouse(ctx.db, req.params.name)));
  });

  // Connection changes (rotated keys, new endpoint) revoke every credential vended before.
  app.put<{ Params: { name: string }; Body: WarehouseBody }>('/management/v1/warehouses/:name', async (req, reply) => {
    const p = parseBody(req.body ?? {}, true);
    const w = await ctx.db.tx((q) => store.updateWarehouseConnection(q, req.params.name, dropUndefined(p) as any));
    return sendJson(reply, 200, warehouseOut(w));
  });

  app.delete<{ Params: { name: string } }>('/management/v1/warehouses/:name', async (req, reply) => {
    await ctx.db.tx((q) => store.deleteWarehouse(q, req.params.name));
    return reply.code(204).send();
  });

  /** Revokes every credential vended for the warehouse so far. */
  app.post<{ Params: { name: string } }>('/management/v1/warehouses/:name/revoke-credentials', async (req, reply) => {
    const epoch = await store.bumpCredentialEpoch(ctx.db, req.params.name);
    return sendJson(reply, 200, { credential_epoch: epoch });
  });

  /** Revokes one vended credential by its access key id. */
  app.post<{ Params: { name: string }; Body: { access_key_id?: unknown } }>(
    '/management/v1/warehouses/:name/credentials/revoke',
    async (req, reply) => {
      const id = req.body?.access_key_id;
      if (typeof id !== 'string' || !id) throw badRequest('access_key_id is required');
      await store.getWarehouse(ctx.db, req.params.name);
      const claims = parseVendedKeyId(id);
      if (!claims || claims.warehouse !== req.params.name) throw badRequest('access_key_id is not a credential vended for this warehouse');
      // Kept until the key expires; the store refuses it after that anyway.
      await store.revokeCredential(ctx.db, id, req.params.name, new Date(claims.expiresAt * 1000));
      return reply.code(204).send();
    },
  );
}
