// A catalog's warehouse in the catalog service: each catalog is one warehouse, named by its slug and rooted at
// `{backend root_uri}{slug}/` (I4), with the connection settings its backend implies; creating one (adopting what
// an earlier attempt left), and the catalog service's errors as the api answers them.
import { CatalogServiceError, CatalogUnreachableError, type CatalogClient, type WarehouseInput } from '../../runtime/catalogClient.ts';
import { AppError, conflict, notFound, unprocessable } from '../errors.ts';
import { backendConnection, type BackendConfig } from '../backendStorage.ts';
import type { BackendRow } from './backends.ts';

/** The catalog-service settings a warehouse needs beyond what a backend row holds. */
export type WarehouseConfig = BackendConfig;

/** The catalog service warehouse that holds a catalog. */
export const warehouseName = (c: { slug: string }) => c.slug;

/**
 * What the catalog service needs to host a catalog on a backend (backendStorage.ts backendConnection: the bundled
 * store's backends use its root keys from configuration; an s3 backend without keys the deployment's AWS_*
 * variables), with the vending mode the backend's probe found.
 */
export function warehouseInputFor(backend: BackendRow, catalogSlug: string, config: WarehouseConfig): WarehouseInput {
  const c = backendConnection(backend, config);
  if (!c) throw unprocessable(`storage backend ${backend.name} has no credentials the catalog service could use`, 'storage_credentials_missing');
  return {
    name: catalogSlug,
    root_uri: `${backend.root_uri}${catalogSlug}/`,
    kind: backend.kind,
    endpoint: c.endpoint,
    region: c.region,
    access_key_id: c.accessKeyId,
    secret_access_key: c.secretAccessKey,
    path_style: c.pathStyle,
    vending: backend.credential_vending,
    role_arn: backend.kind === 'azure' ? null : (backend.role_arn ?? null),
  };
}

/**
 * Creates the warehouse; one left by an earlier attempt (same name, same root) is adopted, since a create whose
 * database commit failed leaves exactly that. A warehouse of that name with another root is a conflict.
 */
export async function registerWarehouse(client: CatalogClient, w: WarehouseInput): Promise<'created' | 'adopted'> {
  try {
    await client.createWarehouse(w);
    return 'created';
  } catch (e) {
    if (!(e instanceof CatalogServiceError) || e.status !== 409) throw e;
    const existing = await client.getWarehouse(w.name);
    if (existing && existing.root_uri === w.root_uri) {
      await client.updateWarehouse(w.name, { kind: w.kind, endpoint: w.endpoint, region: w.region, access_key_id: w.access_key_id, secret_access_key: w.secret_access_key, path_style: w.path_style, vending: w.vending, role_arn: w.role_arn ?? null });
      return 'adopted';
    }
    throw conflict(`the catalog service already hosts a warehouse named ${w.name} elsewhere (${existing?.root_uri ?? 'unknown root'})`, 'warehouse_exists');
  }
}

/** For errors the catalog service answers on our behalf: its conflicts and missing objects keep their status. */
export function fromCatalogService(e: unknown, what: string): unknown {
  if (e instanceof CatalogUnreachableError) return new AppError(503, 'catalog_unavailable', 'the catalog service is not reachable');
  if (!(e instanceof CatalogServiceError)) return e;
  if (e.status === 404) return notFound(what);
  if (e.status === 409) return conflict(e.message);
  if (e.status === 400 || e.status === 422) return unprocessable(e.message);
  return new AppError(502, 'catalog_error', `the catalog service failed: ${e.message}`);
}
