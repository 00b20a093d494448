// At start, once the catalog service is up: every catalog has its warehouse, with the settings its backend implies.
import type { Queryable } from '../../runtime/db.ts';
import type { CatalogClient } from '../../runtime/catalogClient.ts';
import type { Logger } from '../../runtime/logger.ts';
import { findBackend } from './backends.ts';
import { CATALOG_COLS, CATALOG_FROM, type CatalogRow } from './catalogs.ts';
import { registerWarehouse, warehouseInputFor, warehouseName, type WarehouseConfig } from './warehouses.ts';

export interface EnsureReport {
  created: string[];
  updated: string[];
  unchanged: string[];
  failed: Array<{ catalog: string; error: string }>;
}

/**
 * Idempotent, for startup once the catalog service is up: every catalog (the bundled `warehouse` first of all)
 * has its warehouse, with the connection settings its backend implies. Settings the service shows (root, kind,
 * endpoint, region, path style) are compared and updated when they differ; keys are never shown back, so a
 * rotated key is applied by `updateWarehouse` from an operator action, not here (an update revokes every vended
 * credential, which a restart must not do).
 */
export async function ensureCatalogWarehouses(db: Queryable, client: CatalogClient, config: WarehouseConfig, logger?: Logger): Promise<EnsureReport> {
  const report: EnsureReport = { created: [], updated: [], unchanged: [], failed: [] };
  const rows = await db.query<CatalogRow>(`select ${CATALOG_COLS} from ${CATALOG_FROM} order by c.slug`);
  for (const c of rows) {
    // A storage migration between its two cutover steps (the warehouse moved, the catalog row not yet): the resumed
    // cutover finishes it; "correcting" the warehouse back to the old backend here would undo it.
    if ((await db.query(`select 1 from storage_migrations where catalog_id = $1 and status = 'running' and phase = 'cutover'`, [c.id])).length) {
      report.unchanged.push(c.slug);
      continue;
    }
    try {
      const backend = (await findBackend(db, c.storage_backend_id))!;
      const want = warehouseInputFor(backend, c.slug, config);
      const have = await client.getWarehouse(warehouseName(c));
      if (!have) {
        report[(await registerWarehouse(client, want)) === 'created' ? 'created' : 'updated'].push(c.slug);
      } else if (
        have.root_uri !== want.root_uri ||
        have.kind !== want.kind ||
        (have.endpoint ?? null) !== (want.endpoint ?? null) ||
        have.region !== want.region ||
        have.path_style !== want.path_style ||
        (have.vending !== undefined && have.vending !== want.vending) ||
        (have.role_arn !== undefined && (have.role_arn ?? null) !== (want.role_arn ?? null))
      ) {
        const { name: _n, ...settings } = want;
        await client.updateWarehouse(want.name, settings);
        report.updated.push(c.slug);
      } else {
        report.unchanged.push(c.slug);
      }
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      report.failed.push({ catalog: c.slug, error: message });
      logger?.error({ catalog: c.slug, error: message }, 'catalog warehouse could not be ensured');
    }
  }
  return report;
}
