// Saved queries (docs/api-decisions.md "Saved queries, schedules and runs"): SQL a workspace's members share by name, with
// a default agent and catalog; saving under a taken name replaces it unless the caller asked for an error.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { isUniqueViolation } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { AppError, notFound } from './errors.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from './pagination.ts';

/** A saved query as the api answers it. */
export const SavedQueryOutSchema = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  name: Schema.String,
  sql: Schema.String,
  default_agent_id: Schema.NullOr(Schema.String),
  catalog: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
  updated_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  last_run_at: Schema.NullOr(Schema.String),
});
export type SavedQueryOut = typeof SavedQueryOutSchema.Type;

// The row shape at the database boundary: the reply's fields, with its times as dates.
const Row = Schema.Struct({
  ...SavedQueryOutSchema.fields,
  created_at: Schema.Date,
  updated_at: Schema.Date,
  last_run_at: Schema.NullOr(Schema.Date),
});
type Row = typeof Row.Type;

const COLS = sql`id, workspace_id, name, sql, default_agent_id, catalog, created_by, updated_by, created_at, updated_at, last_run_at`;
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
      const [row] = await rows(
        q,
        Row,
        sql`insert into saved_queries (workspace_id, name, sql, default_agent_id, catalog, created_by, updated_by)
            values (${workspaceId}, ${input.name}, ${input.sql}, ${input.default_agent_id ?? null}, ${input.catalog ?? null}, ${userId}, ${userId})
            returning ${COLS}`,
      );
      return { created: true, query: out(row) };
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError(409, 'saved_query_exists', `a query named ${input.name} is already saved in this workspace`);
      throw e;
    }
  }
  const [row] = await rows(
    q,
    Schema.Struct({ ...Row.fields, inserted: Schema.Boolean }),
    sql`insert into saved_queries as s (workspace_id, name, sql, default_agent_id, catalog, created_by, updated_by)
        values (${workspaceId}, ${input.name}, ${input.sql}, ${input.default_agent_id ?? null}, ${input.catalog ?? null}, ${userId}, ${userId})
        on conflict (workspace_id, name) do update set sql = excluded.sql, default_agent_id = excluded.default_agent_id,
          catalog = excluded.catalog, updated_by = excluded.updated_by, updated_at = now()
        returning ${COLS}, (xmax = 0) as inserted`,
  );
  const { inserted, ...rest } = row;
  return { created: inserted, query: out(rest) };
}

export async function getSavedQuery(q: Queryable, workspaceId: string, id: string): Promise<SavedQueryOut> {
  const [row] = UUID.test(id) ? await rows(q, Row, sql`select ${COLS} from saved_queries where workspace_id = ${workspaceId} and id = ${id}`) : [];
  if (!row) throw notFound('saved query');
  return out(row);
}

export async function updateSavedQuery(q: Queryable, workspaceId: string, id: string, userId: string, patch: Partial<SavedQueryInput>): Promise<SavedQueryOut> {
  const current = await getSavedQuery(q, workspaceId, id);
  try {
    const [row] = await rows(
      q,
      Row,
      sql`update saved_queries set name = ${patch.name ?? current.name}, sql = ${patch.sql ?? current.sql},
            default_agent_id = ${patch.default_agent_id === undefined ? current.default_agent_id : patch.default_agent_id},
            catalog = ${patch.catalog === undefined ? current.catalog : patch.catalog}, updated_by = ${userId}, updated_at = now()
           where workspace_id = ${workspaceId} and id = ${id} returning ${COLS}`,
    );
    return out(row);
  } catch (e) {
    if (isUniqueViolation(e)) throw new AppError(409, 'saved_query_exists', `a query named ${patch.name} is already saved in this workspace`);
    throw e;
  }
}

export async function deleteSavedQuery(q: Queryable, workspaceId: string, id: string): Promise<void> {
  const deleted = UUID.test(id) ? await exec(q, sql`delete from saved_queries where workspace_id = ${workspaceId} and id = ${id} returning id`) : [];
  if (!deleted.length) throw notFound('saved query');
}

export async function listSavedQueries(q: Queryable, workspaceId: string, f: { cursor?: string; limit: number }): Promise<Page<SavedQueryOut>> {
  const sort = 'created_at:desc';
  let after = sql``;
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!UUID.test(c.id) || !(await exec(q, sql`select 1 from saved_queries where id = ${c.id}`)).length) throw staleCursor();
    after = sql`and (created_at, id) < (${c.k}::timestamptz, ${c.id}::uuid)`;
  }
  const found = await rows(
    q,
    Schema.Struct({ ...Row.fields, sort_key: Schema.String }),
    sql`select ${COLS}, created_at::text as sort_key from saved_queries where workspace_id = ${workspaceId} ${after}
         order by created_at desc, id desc limit ${f.limit + 1}`,
  );
  return pageOf(found, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), (r) => {
    const { sort_key: _k, ...rest } = r;
    return out(rest);
  });
}
