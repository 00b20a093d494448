// What a workspace may read, for the semantic layer: a model binding a table outside the workspace's reach (a
// catalog not attached, or a table a scoped attachment does not grant) is absent from lists and searches, and is
// 404 when named, so a model never reveals a table the workspace cannot see.
import type { Queryable } from '../../runtime/db.ts';
import { listWorkspaceCatalogs } from '../catalogs/attachments.ts';
import { notGranted, scopeOf, type AttachmentScope } from '../catalogGrants.ts';
import { AppError, notFound } from '../errors.ts';
import type { Dataset, Model } from './definitions.ts';

export interface TableReach {
  /** whether the workspace may read the table (the metadata tier the spec asks for) */
  readable(catalog: string, schema: string, table: string): boolean;
  /** throws the query path's 403 (catalog_not_attached, not_granted) when it may not */
  require(catalog: string, schema: string, table: string): void;
}

export async function tableReach(q: Queryable, workspaceId: string): Promise<TableReach> {
  const attached = await listWorkspaceCatalogs(q, workspaceId);
  const scopes = new Map<string, AttachmentScope>();
  for (const c of attached) scopes.set(c.slug.toLowerCase(), await scopeOf(q, workspaceId, { id: c.id, access_mode: c.access_mode }));
  const readable = (catalog: string, schema: string, table: string) => scopes.get(catalog.toLowerCase())?.table(schema, table, 'read') ?? false;
  return {
    readable,
    require(catalog, schema, table) {
      const scope = scopes.get(catalog.toLowerCase());
      if (!scope) throw new AppError(403, 'catalog_not_attached', `catalog ${catalog} is not attached to this workspace`);
      if (!scope.table(schema, table, 'read')) throw notGranted(`table ${catalog}.${schema}.${table}`, 'read');
    },
  };
}

export const datasetReadable = (reach: TableReach, d: Pick<Dataset, 'catalog' | 'schema_name' | 'table_name'>) =>
  reach.readable(d.catalog, d.schema_name, d.table_name);

export const modelReadable = (reach: TableReach, m: Model) => m.datasets.every((d) => datasetReadable(reach, d));

/** The model if the workspace may read every table it binds; 404 as for a model that does not exist otherwise. */
export function requireReadable(reach: TableReach, m: Model | undefined): Model {
  if (!m || !modelReadable(reach, m)) throw notFound('semantic model');
  return m;
}
