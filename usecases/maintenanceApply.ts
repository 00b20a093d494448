// Applying a maintenance recommendation: its procedure (compaction, snapshot expiry, manifest rewrite, orphan
// removal) submitted as a query on an agent, in a workspace the catalog is attached to; the recommendation records
// the query that carries it out.
import { AppError, unprocessable } from '../domain/errors.ts';
import type { Principal } from '../domain/identity.ts';
import { listWorkspaceCatalogs } from '../domain/catalogs/attachments.ts';
import { assertCatalogsWritable } from '../domain/storageMigrations/records.ts';
import { resolveWorkspace, type WorkspaceAccess } from '../domain/workspaces.ts';
import * as maintenance from '../domain/maintenance/store.ts';
import { readQuery, submitQuery } from './querySubmission.ts';
import { chooseCompute } from './compute.ts';
import type { AppContext } from './context.ts';

/** A workspace the catalog is attached to (the named one, else the first), to submit the maintenance query in. */
async function workspaceFor(ctx: AppContext, principal: Principal, catalogId: string, named: string | undefined): Promise<WorkspaceAccess> {
  if (named) {
    const ws = await resolveWorkspace(ctx.db, principal, named, 'writer');
    if (!(await listWorkspaceCatalogs(ctx.db, ws.workspace.id)).some((c) => c.id === catalogId)) {
      throw unprocessable(`the catalog is not attached to workspace ${ws.workspace.slug}`, 'unprocessable_content', { fields: [{ field: 'workspace', in: 'body', message: 'catalog not attached' }] });
    }
    return ws;
  }
  const slug = await maintenance.firstAttachedWorkspaceSlug(ctx.db, catalogId);
  if (!slug) throw unprocessable('the catalog is attached to no workspace: attach it to one to run maintenance on it', 'unprocessable_content');
  // An administrator acts in any workspace (resolveWorkspace grants them owner access).
  return resolveWorkspace(ctx.db, principal, slug, 'writer');
}

/** Submits the recommendation's procedure and marks it applied; returns the query's id. */
export async function applyRecommendation(
  ctx: AppContext,
  principal: Principal,
  recommendationId: string,
  opts: { agentId: string | null; workspace: string | undefined },
): Promise<string> {
  const rec = await maintenance.findRecommendation(ctx.db, recommendationId);
  if (!rec.remediation_sql) throw unprocessable(`a ${rec.kind} recommendation has nothing to apply: investigate it`, 'unprocessable_content');
  if (rec.status === 'resolved') throw new AppError(409, 'conflict', 'the recommendation is resolved: its condition has cleared');
  if (rec.status === 'applied' && rec.applied_query_id) {
    const running = await readQuery(ctx, rec.applied_query_id);
    if (running && (running.status === 'queued' || running.status === 'running')) {
      throw new AppError(409, 'conflict', `the recommendation is being applied by query ${rec.applied_query_id}`);
    }
  }
  const ws = await workspaceFor(ctx, principal, rec.catalog_id, opts.workspace);
  await assertCatalogsWritable(ctx.db, [rec.catalog_id]);
  const compute = await chooseCompute(ctx, principal, ws, opts.agentId);
  const id = await submitQuery(ctx, {
    workspaceId: ws.workspace.id,
    workspaceSlug: ws.workspace.slug,
    userId: principal.user.id,
    sql: rec.remediation_sql,
    agentId: compute.agentId,
    computePool: compute.pool,
    timeoutS: ctx.config.QUERY_DEFAULT_TIMEOUT_S,
    // A procedure rewrites the table's files and snapshots, not its rows: of the spec's statement types, an alter.
    statementType: 'alter',
    tables: [{ catalog: rec.catalog, schema: rec.schema, name: rec.table }],
    catalog: rec.catalog,
    origin: 'maintenance',
  });
  await maintenance.setRecommendationStatus(ctx.db, rec.id, 'applied', id);
  return id;
}
