// Saved queries (decisions.md "Saved queries, schedules and runs"): SQL a workspace's members share by name, with
// a default agent and catalog; saving under a taken name replaces it unless the caller asked for an error.
import type { Queryable } from '../runtime/db.ts';
import { isUniqueViolation } from '../runtime/db.ts';
import { AppError, notFound } from './errors.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from './pagination.ts';

export interface SavedQueryOut {
  id: string;
  workspace_id: string;
  name: string;
  sql: string;
  default_agent_id: string | null;
  catalog: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: string;
  updated_at: string;
  last_run_at: string | null;
}

interface Row extends Omit<SavedQueryOut, 'created_at' | 'updated_at' | 'last_run_at'> {
  created_at: Date;
  updated_at: Date;
  last_run_at: Date | null;
}

const COLS = `id, workspace_id, name, sql, default_agent_id, catalog, created_by, updated_by, created_at, updated_at, last_run_at`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const out = (r: Row): SavedQueryOut => ({
  ...r,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  last_run_at: r.last_run_at ? r.last_run_at.toISOString() : null,
});

export interface SavedQueryInput {
  name: string;
  sql: string;
  default_agent_id?: string | null;
  catalog?: string | null;
}

/** Creates, or replaces the query saved under the same name: `created` tells which (201 or 200). */
export async function saveQuery(q: Queryable, workspaceId: string, userId: string, input: SavedQueryInput, onConflict: 'replace' | 'error') {
  if (onConflict === 'error') {
    try {
      const [row] = await q.query<Row>(
        `insert into saved_queries (workspace_id, name, sql, default_agent_id, catalog, created_by, updated_by)
         values ($1, $2, $3, $4, $5, $6, $6) returning ${COLS}`,
        [workspaceId, input.name, input.sql, input.default_agent_id ?? null, input.catalog ?? null, userId],
      );
      return { created: true, query: out(row) };
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError(409, 'saved_query_exists', `a query named ${input.name} is already saved in this workspace`);
      throw e;
    }
  }
  const [row] = await q.query<Row & { inserted: boolean }>(
    `insert into saved_queries as s (workspace_id, name, sql, default_agent_id, catalog, created_by, updated_by)
     values ($1, $2, $3, $4, $5, $6, $6)
     on conflict (workspace_id, name) do update set sql = excluded.sql, default_agent_id = excluded.default_agent_id,
       catalog = excluded.catalog, updated_by = excluded.updated_by, updated_at = now()
     returning ${COLS}, (xmax = 0) as inserted`,
    [workspaceId, input.name, input.sql, input.default_agent_id ?? null, input.catalog ?? null, userId],
  );
  const { inserted, ...rest } = row;
  return { created: inserted, query: out(rest) };
}

export async function getSavedQuery(q: Queryable, workspaceId: string, id: string): Promise<SavedQueryOut> {
  const [row] = UUID.test(id) ? await q.query<Row>(`select ${COLS} from saved_queries where workspace_id = $1 and id = $2`, [workspaceId, id]) : [];
  if (!row) throw notFound('saved query');
  return out(row);
}

export async function updateSavedQuery(q: Queryable, workspaceId: string, id: string, userId: string, patch: Partial<SavedQueryInput>): Promise<SavedQueryOut> {
  const current = await getSavedQuery(q, workspaceId, id);
  try {
    const [row] = await q.query<Row>(
      `update saved_queries set name = $3, sql = $4, default_agent_id = $5, catalog = $6, updated_by = $7, updated_at = now()
        where workspace_id = $1 and id = $2 returning ${COLS}`,
      [
        workspaceId,
        id,
        patch.name ?? current.name,
        patch.sql ?? current.sql,
        patch.default_agent_id === undefined ? current.default_agent_id : patch.default_agent_id,
        patch.catalog === undefined ? current.catalog : patch.catalog,
        userId,
      ],
    );
    return out(row);
  } catch (e) {
    if (isUniqueViolation(e)) throw new AppError(409, 'saved_query_exists', `a query named ${patch.name} is already saved in this workspace`);
    throw e;
  }
}

export async function deleteSavedQuery(q: Queryable, workspaceId: string, id: string): Promise<void> {
  const rows = UUID.test(id) ? await q.query(`delete from saved_queries where workspace_id = $1 and id = $2 returning id`, [workspaceId, id]) : [];
  if (!rows.length) throw notFound('saved query');
}

export async function listSavedQueries(q: Queryable, workspaceId: string, f: { cursor?: string; limit: number }): Promise<Page<SavedQueryOut>> {
  const sort = 'created_at:desc';
  const params: unknown[] = [workspaceId];
  let after = '';
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!UUID.test(c.id) || !(await q.query(`select 1 from saved_queries where id = $1`, [c.id])).length) throw staleCursor();
    params.push(c.k, c.id);
    after = `and (created_at, id) < ($2::timestamptz, $3::uuid)`;
  }
  params.push(f.limit + 1);
  const rows = await q.query<Row & { sort_key: string }>(
    `select ${COLS}, created_at::text as sort_key from saved_queries where workspace_id = $1 ${after}
      order by created_at desc, id desc limit $${params.length}`,
    params,
  );
  return pageOf(rows, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), (r) => {
    const { sort_key: _k, ...rest } = r;
    return out(rest);
  });
}
