// How route handlers reach the catalog service: the client on the application context, and the translation of
// its failures into our error envelope (a missing schema is our 404, the service being down is our 503).
import type { CatalogClient } from '../runtime/catalogClient.ts';
import { AppError } from '../domain/errors.ts';
import { fromCatalogService } from '../domain/catalogs/warehouses.ts';
import type { AppContext } from '../usecases/context.ts';

export function catalogClientOf(ctx: AppContext): CatalogClient {
  if (!ctx.catalog) throw new AppError(503, 'catalog_unavailable', 'this api process has no catalog service configured');
  return ctx.catalog;
}

/** Runs a catalog-service call; its errors come back as AppErrors about `what`. */
export async function viaCatalog<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw fromCatalogService(e, what);
  }
}
