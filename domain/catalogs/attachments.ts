// Catalogs attached to workspaces: the attachment's access mode (full or scoped) and the workspace's default.
import { Schema } from 'effect';
import type { Db, Queryable } from '../../runtime/db.ts';
import { DbError } from '../../runtime/db.ts';
import { forbidden, notFound } from '../errors.ts';
import { isUuid, type Principal } from '../identity.ts';
import type { WorkspaceAccess } from '../workspaces.ts';
import { CATALOG_COLS, CATALOG_FROM, CatalogOutSchema, findCatalog, mayManageCatalog, toCatalogOut, type CatalogRow } from './catalogs.ts';

export const ACCESS_MODES = ['full', 'scoped'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

/** A catalog as one workspace sees it: whether it is the default, and the attachment's access mode. */
export const WorkspaceCatalogOutSchema = Schema.Struct({
  ...CatalogOutSchema.fields,
  is_default: Schema.Boolean,
  access_mode: Schema.Literals(ACCESS_MODES),
});
export type WorkspaceCatalogOut = typeof WorkspaceCatalogOutSchema.Type;

/** An attached catalog as seen from one workspace. */
export interface AttachedCatalog extends CatalogRow {
  access_mode: AccessMode;
  is_default: boolean;
}

const toWorkspaceCatalogOut = (c: AttachedCatalog): WorkspaceCatalogOut => ({
  ...toCatalogOut(c),
  is_default: c.is_default,
  access_mode: c.access_mode,
});

const ATTACHED_COLS = `${CATALOG_COLS}, wc.access_mode, (w.default_catalog_id is not distinct from c.id) as is_default`;
const ATTACHED_FROM = `workspace_catalogs wc join ${CATALOG_FROM} on c.id = wc.catalog_id join workspaces w on w.id = wc.workspace_id`;

export async function listWorkspaceCatalogs(q: Queryable, workspaceId: string): Promise<WorkspaceCatalogOut[]> {
  const rows = await q.query<AttachedCatalog>(`select ${ATTACHED_COLS} from ${ATTACHED_FROM} where wc.workspace_id = $1 order by c.slug`, [workspaceId]);
  return rows.map(toWorkspaceCatalogOut);
}

/** `{catalog}` (slug or id) as attached to the workspace; 404 when it is not attached there. */
export async function resolveAttachedCatalog(q: Queryable, workspaceId: string, ref: string): Promise<AttachedCatalog> {
  const rows = await q.query<AttachedCatalog>(
    `select ${ATTACHED_COLS} from ${ATTACHED_FROM} where wc.workspace_id = $1 and ${isUuid(ref) ? 'c.id = $2::uuid' : 'c.slug = $2'}`,
    [workspaceId, ref],
  );
  if (!rows[0]) throw notFound('catalog');
  return rows[0];
}

/**
 * PUT semantics for an attachment. Attaching grants the workspace's members access to the catalog's data, so a
 * new attachment, and widening a scoped one to full, need a catalog manager (besides the workspace owner role the
 * route declares); narrowing to scoped, changing the default or re-sending the same attachment need only the
 * owner role. `access_mode` absent keeps the current mode (`full` on first attach). The first catalog attached to
 * a workspace without a default becomes its default; `make_default: false` never unsets a default.
 */
export async function attachCatalog(
  db: Db,
  p: Principal,
  ws: WorkspaceAccess,
  ref: string,
  input: { make_default: boolean; access_mode?: AccessMode },
): Promise<{ created: boolean; catalog: WorkspaceCatalogOut }> {
  return db.tx(async (tx) => {
    const c = await findCatalog(tx, ref);
    if (!c) throw notFound('catalog');
    await tx.query(`select id from workspaces where id = $1 for update`, [ws.workspace.id]);
    const existing = (await tx.query<{ access_mode: AccessMode }>(
      `select access_mode from workspace_catalogs where workspace_id = $1 and catalog_id = $2`,
      [ws.workspace.id, c.id],
    ))[0];
    const mode: AccessMode = input.access_mode ?? existing?.access_mode ?? 'full';
    const widens = !existing || (existing.access_mode === 'scoped' && mode === 'full');
    if (widens && !mayManageCatalog(p, c)) {
      throw forbidden(
        existing
          ? `widening catalog ${c.slug} to full access needs the catalogs permission or being its creator`
          : `attaching catalog ${c.slug} needs the catalogs permission or being its creator`,
      );
    }
    try {
      await tx.query(
        `insert into workspace_catalogs (workspace_id, catalog_id, access_mode) values ($1, $2, $3)
         on conflict (workspace_id, catalog_id) do update set access_mode = excluded.access_mode`,
        [ws.workspace.id, c.id, mode],
      );
    } catch (e) {
      // the catalog was dropped between our read and the insert
      if (e instanceof DbError && e.code === '23503') throw notFound('catalog');
      throw e;
    }
    await tx.query(
      `update workspaces set default_catalog_id = $2 where id = $1 and ($3::boolean or default_catalog_id is null)`,
      [ws.workspace.id, c.id, input.make_default],
    );
    return { created: !existing, catalog: toWorkspaceCatalogOut(await resolveAttachedCatalog(tx, ws.workspace.id, c.id)) };
  });
}

/** Detaches (its grants go with it). Detaching the default leaves the workspace without a default catalog. */
export async function detachCatalog(db: Db, workspaceId: string, ref: string): Promise<void> {
  await db.tx(async (tx) => {
    await tx.query(`select id from workspaces where id = $1 for update`, [workspaceId]);
    const c = await resolveAttachedCatalog(tx, workspaceId, ref);
    await tx.query(`delete from workspace_catalogs where workspace_id = $1 and catalog_id = $2`, [workspaceId, c.id]);
    await tx.query(`update workspaces set default_catalog_id = null where id = $1 and default_catalog_id = $2`, [workspaceId, c.id]);
  });
}
