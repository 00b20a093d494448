// What every catalog route needs, built once by server.ts.
import type { Db } from '../runtime/db.ts';
import type { TableService } from './tables.ts';
import type { WarehouseStorage } from './storage.ts';

export interface CatalogContext {
  db: Db;
  tables: TableService;
  storage: WarehouseStorage;
  credentialTtlSeconds: number;
}
