// What first boot and first-admin setup create (decisions.md): storage backend `bundled`, catalog `warehouse`,
// and workspace `default` owned by the first admin with `warehouse` attached as its default catalog.
import type { Queryable } from '../runtime/db.ts';

export const BUNDLED_BACKEND = 'bundled';
export const DEFAULT_CATALOG = 'warehouse';
export const DEFAULT_WORKSPACE = 'default';

/** Idempotent: creates the bundled backend and the `warehouse` catalog if they do not exist. */
export async function ensureBundledCatalog(db: Queryable, opts: { bucket: string; endpoint: string; region: string }): Promise<string> {
  await db.query(
    `insert into storage_backends (name, kind, root_uri, endpoint, region)
     values ($1, 'object_store', $2, $3, $4) on conflict (name) do nothing`,
    [BUNDLED_BACKEND, `s3://${opts.bucket}/`, opts.endpoint, opts.region],
  );
  await db.query(
    `insert into catalogs (slug, storage_backend_id)
     select $1, id from storage_backends where name = $2 on conflict (slug) do nothing`,
    [DEFAULT_CATALOG, BUNDLED_BACKEND],
  );
  const [c] = await db.query<{ id: string }>(`select id from catalogs where slug = $1`, [DEFAULT_CATALOG]);
  return c.id;
}

/** Creates workspace `default` (admin is owner) and attaches `warehouse` as its default catalog when it exists. */
export async function createWorkspaceForAdmin(tx: Queryable, adminId: string): Promise<string> {
  const wsId = await ensureDefaultWorkspace(tx);
  await tx.query(
    `insert into workspace_members (workspace_id, user_id, role) values ($1, $2, 'owner')
     on conflict (workspace_id, user_id) do update set role = 'owner'`,
    [wsId, adminId],
  );
  return wsId;
}

/**
 * Idempotent: workspace `default` with `warehouse` attached as its default catalog. The samples seed creates it
 * before anyone signs up (so the sample table is in place when the stack says ready); the first admin then becomes
 * its owner.
 */
export async function ensureDefaultWorkspace(tx: Queryable): Promise<string> {
  const [ws] = await tx.query<{ id: string }>(
    `insert into workspaces (slug, name) values ($1, 'Default') on conflict (slug) do update set slug = excluded.slug returning id`,
    [DEFAULT_WORKSPACE],
  );
  const cat = (await tx.query<{ id: string }>(`select id from catalogs where slug = $1`, [DEFAULT_CATALOG]))[0];
  if (cat) {
    await tx.query(
      `insert into workspace_catalogs (workspace_id, catalog_id) values ($1, $2) on conflict do nothing`,
      [ws.id, cat.id],
    );
    await tx.query(`update workspaces set default_catalog_id = $2 where id = $1 and default_catalog_id is null`, [ws.id, cat.id]);
  }
  return ws.id;
}
