// What first boot and first-admin setup create (docs/api-decisions.md): storage backend `bundled`, catalog `warehouse`,
// and workspace `default` owned by the first admin with `warehouse` attached as its default catalog.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';

export const BUNDLED_BACKEND = 'bundled';
const DEFAULT_CATALOG = 'warehouse';
export const DEFAULT_WORKSPACE = 'default';

const IdRow = Schema.Struct({ id: Schema.String });

/** Idempotent: creates the bundled backend and the `warehouse` catalog if they do not exist. */
export async function ensureBundledCatalog(db: Queryable, opts: { bucket: string; endpoint: string; region: string }): Promise<string> {
  const rootUri = `s3://${opts.bucket}/`;
  await exec(
    db,
    sql`insert into storage_backends (name, kind, root_uri, endpoint, region)
        values (${BUNDLED_BACKEND}, 'object_store', ${rootUri}, ${opts.endpoint}, ${opts.region}) on conflict (name) do nothing`,
  );
  await exec(
    db,
    sql`insert into catalogs (slug, storage_backend_id)
        select ${DEFAULT_CATALOG}, id from storage_backends where name = ${BUNDLED_BACKEND} on conflict (slug) do nothing`,
  );
  const [c] = await rows(db, IdRow, sql`select id from catalogs where slug = ${DEFAULT_CATALOG}`);
  return c.id;
}

/** Creates workspace `default` (admin is owner) and attaches `warehouse` as its default catalog when it exists. */
export async function createWorkspaceForAdmin(tx: Queryable, adminId: string): Promise<string> {
  const wsId = await ensureDefaultWorkspace(tx);
  await exec(
    tx,
    sql`insert into workspace_members (workspace_id, user_id, role) values (${wsId}, ${adminId}, 'owner')
        on conflict (workspace_id, user_id) do update set role = 'owner'`,
  );
  return wsId;
}

/**
 * Idempotent: workspace `default` with `warehouse` attached as its default catalog. The samples seed creates it
 * before anyone signs up (so the sample table is in place when the stack says ready); the first admin then becomes
 * its owner.
 */
export async function ensureDefaultWorkspace(tx: Queryable): Promise<string> {
  const [ws] = await rows(
    tx,
    IdRow,
    sql`insert into workspaces (slug, name) values (${DEFAULT_WORKSPACE}, 'Default') on conflict (slug) do update set slug = excluded.slug returning id`,
  );
  const [cat] = await rows(tx, IdRow, sql`select id from catalogs where slug = ${DEFAULT_CATALOG}`);
  if (cat) {
    await exec(tx, sql`insert into workspace_catalogs (workspace_id, catalog_id) values (${ws.id}, ${cat.id}) on conflict do nothing`);
    await exec(tx, sql`update workspaces set default_catalog_id = ${cat.id} where id = ${ws.id} and default_catalog_id is null`);
  }
  return ws.id;
}
