// Catalogs: each bound to one storage backend and hosted as one warehouse in the catalog service (warehouses.ts).
// Only the binding lives in our database; the structure inside a catalog lives in the catalog service (I3).
import { Schema } from 'effect';
import type { Db, Queryable } from '../../runtime/db.ts';
import { isUniqueViolation } from '../../runtime/db.ts';
import type { CatalogClient } from '../../runtime/catalogClient.ts';
import type { Logger } from '../../runtime/logger.ts';
import { AppError, conflict, forbidden, notFound } from '../errors.ts';
import { hasPermission, isUuid, type Principal } from '../identity.ts';
import { backendConnection, blobStoreFor, type BackendConfig, type StorageKind } from '../backendStorage.ts';
import { field, findBackend, STORAGE_KINDS } from './backends.ts';
import { refuseOverlappingRoot } from './roots.ts';
import { registerWarehouse, warehouseInputFor, warehouseName, type WarehouseConfig } from './warehouses.ts';

export interface CatalogRow {
  id: string;
  slug: string;
  storage_backend_id: string;
  storage_kind: StorageKind;
  backend_root_uri: string;
  created_by: string | null;
  created_at: Date;
}

/** A catalog as every route answers it: its warehouse root is the backend root plus the slug. */
export const CatalogOutSchema = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  storage_backend_id: Schema.String,
  storage_kind: Schema.Literals(STORAGE_KINDS),
  root_uri: Schema.String,
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
});
export type CatalogOut = typeof CatalogOutSchema.Type;

export const CATALOG_COLS = `c.id, c.slug, c.storage_backend_id, b.kind as storage_kind, b.root_uri as backend_root_uri, c.created_by, c.created_at`;
export const CATALOG_FROM = `catalogs c join storage_backends b on b.id = c.storage_backend_id`;

/** The warehouse root of a catalog: the backend root plus the slug (I4). */
export const catalogRootUri = (c: Pick<CatalogRow, 'slug' | 'backend_root_uri'>) => `${c.backend_root_uri}${c.slug}/`;

export const toCatalogOut = (c: CatalogRow): CatalogOut => ({
  id: c.id,
  slug: c.slug,
  storage_backend_id: c.storage_backend_id,
  storage_kind: c.storage_kind,
  root_uri: catalogRootUri(c),
  created_by: c.created_by,
  created_at: c.created_at.toISOString(),
});

/** Who may bind, attach, scope and drop a catalog: holders of the `catalogs` permission and its creator. */
export const mayManageCatalog = (p: Principal, c: Pick<CatalogRow, 'created_by'>) =>
  hasPermission(p, 'catalogs') || (c.created_by !== null && c.created_by === p.user.id);

export async function findCatalog(q: Queryable, ref: string): Promise<CatalogRow | undefined> {
  return (await q.query<CatalogRow>(`select ${CATALOG_COLS} from ${CATALOG_FROM} where ${isUuid(ref) ? 'c.id = $1::uuid' : 'c.slug = $1'}`, [ref]))[0];
}

/** Every catalog for catalog managers; for anyone else those attached to one of their workspaces or made by them. */
export async function listCatalogs(q: Queryable, p: Principal): Promise<CatalogOut[]> {
  const rows = hasPermission(p, 'catalogs')
    ? await q.query<CatalogRow>(`select ${CATALOG_COLS} from ${CATALOG_FROM} order by c.slug`)
    : await q.query<CatalogRow>(
        `select ${CATALOG_COLS} from ${CATALOG_FROM}
          where c.created_by = $1
             or exists (select 1 from workspace_catalogs wc join workspace_members m on m.workspace_id = wc.workspace_id
                         where wc.catalog_id = c.id and m.user_id = $1)
          order by c.slug`,
        [p.user.id],
      );
  return rows.map(toCatalogOut);
}

export async function getVisibleCatalog(q: Queryable, p: Principal, id: string): Promise<CatalogOut> {
  const visible = (await listCatalogs(q, p)).find((c) => c.id === id);
  if (!visible) throw notFound('catalog');
  return visible;
}

/**
 * Binds a new catalog to a backend and registers its warehouse in the catalog service, in one database
 * transaction: if the catalog service refuses, no catalog row is left behind.
 */
export async function createCatalog(
  db: Db,
  client: CatalogClient,
  config: WarehouseConfig,
  p: Principal,
  input: { slug: string; storage_backend_id: string },
): Promise<CatalogOut> {
  return db.tx(async (tx) => {
    // FOR SHARE: a credential rotation of the backend (which locks it FOR UPDATE) either lands before this reads its
    // keys or waits for this catalog and then updates its warehouse too.
    const backend = await findBackend(tx, input.storage_backend_id, 'for share');
    if (!backend) throw field('storage_backend_id', 'no storage backend has this id');
    const warehouse = warehouseInputFor(backend, input.slug, config);
    let row: CatalogRow;
    try {
      const [c] = await tx.query<{ id: string }>(
        `insert into catalogs (slug, storage_backend_id, created_by) values ($1, $2, $3) returning id`,
        [input.slug, backend.id, p.user.id],
      );
      row = (await findCatalog(tx, c.id))!;
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(`catalog slug ${input.slug} is taken`);
      throw e;
    }
    await refuseOverlappingRoot(tx, config, backend, catalogRootUri(row), { backendId: backend.id, catalogId: row.id });
    await registerWarehouse(client, warehouse);
    return toCatalogOut(row);
  });
}

/**
 * The old files a finished migration of the catalog still keeps (cut over, its retention not over): they go with the
 * catalog, since nothing could read them afterwards and their migration record goes too.
 */
async function purgeRetainedCopies(q: Queryable, catalogId: string, config: BackendConfig, logger?: Logger): Promise<void> {
  const retained = await q.query<{ id: string; source_storage_backend_id: string; source_root: string }>(
    `select id, source_storage_backend_id, source_root from storage_migrations where catalog_id = $1 and cutover_at is not null and purged_at is null`,
    [catalogId],
  );
  for (const m of retained) {
    const backend = await findBackend(q, m.source_storage_backend_id);
    const connection = backend ? backendConnection(backend, config) : undefined;
    if (!connection) {
      logger?.warn({ migrationId: m.id, root: m.source_root }, 'the storage a retained migration copy lives on is gone or unreachable: its files were not deleted');
      continue;
    }
    const store = blobStoreFor(connection);
    try {
      const files = await store.deletePrefix(m.source_root);
      logger?.info({ migrationId: m.id, root: m.source_root, files }, 'retained migration copy deleted with its catalog');
    } finally {
      store.close();
    }
  }
}

/**
 * Drops a catalog that no workspace attaches: every table (purged) and schema in its warehouse, the warehouse,
 * then the row (its sidecar rows go with it). Attachments are checked under the row lock, so an attach racing
 * this either lands first (and this answers 409) or waits and then finds no catalog.
 */
export async function deleteCatalog(db: Db, client: CatalogClient, p: Principal, id: string, config: BackendConfig, logger?: Logger): Promise<void> {
  await db.tx(async (tx) => {
    const locked = isUuid(id) ? (await tx.query<{ id: string }>(`select id from catalogs where id = $1 for update`, [id]))[0] : undefined;
    if (!locked) throw notFound('catalog');
    const c = (await findCatalog(tx, id))!;
    if (!mayManageCatalog(p, c)) throw forbidden('dropping a catalog needs the catalogs permission or being its creator');
    const moving = await tx.query<{ id: string }>(`select id from storage_migrations where catalog_id = $1 and status in ('pending', 'running')`, [id]);
    if (moving.length) {
      throw new AppError(409, 'catalog_read_only', `catalog ${c.slug} is read-only while its storage migration runs`, { catalog: c.slug, migration_id: moving[0].id });
    }
    const attached = await tx.query<{ slug: string }>(
      `select w.slug from workspace_catalogs wc join workspaces w on w.id = wc.workspace_id where wc.catalog_id = $1 order by w.slug`,
      [id],
    );
    if (attached.length) {
      throw conflict(`catalog ${c.slug} is attached to workspace(s) ${attached.map((w) => w.slug).join(', ')}; detach it first`, 'catalog_attached', {
        workspaces: attached.map((w) => w.slug),
      });
    }
    const wh = warehouseName(c);
    if (await client.getWarehouse(wh)) {
      for (const ns of await client.listNamespaces(wh)) {
        for (const t of await client.listTables(wh, ns)) await client.dropTable(wh, ns, t, { purge: true });
        await client.dropNamespace(wh, ns);
      }
      await client.dropWarehouse(wh);
    }
    await purgeRetainedCopies(tx, id, config, logger);
    await tx.query(`delete from catalogs where id = $1`, [id]);
    logger?.info({ catalog: c.slug, catalogId: c.id }, 'catalog dropped');
  });
}
