// Worksheets: a member's SQL tabs kept on the server (migrations/control/190_worksheets.sql). A worksheet is its
// owner's: private, or shared with the workspace, where the other members may read it and open a copy but not change
// it. Saved queries (savedQueries.ts) are the other, workspace-owned kind of stored SQL: named, shared by everyone,
// and what schedules run. A worksheet another member cannot see does not exist for them (404); one they can see but
// do not own is refused when they try to change it (403 worksheet_read_only).
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { AppError, notFound } from './errors.ts';
import { isUuid } from './identity.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from './pagination.ts';

export const WORKSHEET_VISIBILITIES = ['private', 'workspace'] as const;
export type WorksheetVisibility = (typeof WORKSHEET_VISIBILITIES)[number];

/** Which worksheets a listing holds: the caller's own (both visibilities), or those shared with the workspace. */
export const WORKSHEET_SCOPES = ['mine', 'shared'] as const;
export type WorksheetScope = (typeof WORKSHEET_SCOPES)[number];

/** A worksheet as the api answers it to one caller. */
export const WorksheetOutSchema = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  title: Schema.String,
  sql: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  catalog: Schema.NullOr(Schema.String),
  visibility: Schema.Literals(WORKSHEET_VISIBILITIES),
  owner_id: Schema.String,
  owner_name: Schema.NullOr(Schema.String),
  /** whether the caller may change it (they own it) */
  editable: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String,
});
export type WorksheetOut = typeof WorksheetOutSchema.Type;

export interface WorksheetInput {
  title: string;
  sql?: string;
  agent_id?: string | null;
  catalog?: string | null;
  visibility?: WorksheetVisibility;
}

/** A worksheets row as read: the answer's fields, with timestamps as dates and without the caller's `editable`. */
type Row = Omit<WorksheetOut, 'editable' | 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date };

const COLS = `w.id, w.workspace_id, w.title, w.sql, w.agent_id, w.catalog, w.visibility, w.owner_id, u.name as owner_name, w.created_at, w.updated_at`;
const FROM = `worksheets w left join users u on u.id = w.owner_id`;
const SORT = 'updated_at:desc';

const out = (r: Row, callerId: string): WorksheetOut => ({
  ...r,
  editable: r.owner_id === callerId,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export async function createWorksheet(q: Queryable, workspaceId: string, ownerId: string, input: WorksheetInput): Promise<WorksheetOut> {
  const [{ id }] = await q.query<{ id: string }>(
    `insert into worksheets (workspace_id, owner_id, title, sql, agent_id, catalog, visibility)
     values ($1, $2, $3, $4, $5, $6, $7) returning id`,
    [workspaceId, ownerId, input.title, input.sql ?? '', input.agent_id ?? null, input.catalog ?? null, input.visibility ?? 'private'],
  );
  return getWorksheet(q, workspaceId, ownerId, id);
}

/** One worksheet the caller may see: their own, or one shared with the workspace. */
export async function getWorksheet(q: Queryable, workspaceId: string, callerId: string, id: string): Promise<WorksheetOut> {
  const [row] = isUuid(id)
    ? await q.query<Row>(
        `select ${COLS} from ${FROM} where w.workspace_id = $1 and w.id = $2 and (w.owner_id = $3 or w.visibility = 'workspace')`,
        [workspaceId, id, callerId],
      )
    : [];
  if (!row) throw notFound('worksheet');
  return out(row, callerId);
}

/** The caller's own worksheet, for a change: 404 when they cannot see it, 403 when it is someone else's shared one. */
async function ownWorksheet(q: Queryable, workspaceId: string, callerId: string, id: string, lock: boolean): Promise<WorksheetOut> {
  const [row] = isUuid(id)
    ? await q.query<Row>(
        `select ${COLS} from ${FROM} where w.workspace_id = $1 and w.id = $2 and (w.owner_id = $3 or w.visibility = 'workspace')
         ${lock ? 'for update of w' : ''}`,
        [workspaceId, id, callerId],
      )
    : [];
  if (!row) throw notFound('worksheet');
  if (row.owner_id !== callerId) {
    throw new AppError(403, 'worksheet_read_only', `worksheet ${id} is shared by ${row.owner_name ?? 'another member'}: only its owner may change it (open a copy to edit)`);
  }
  return out(row, callerId);
}

/** Changes the fields given (absent ones stay, null clears agent and catalog); returns the worksheet and what changed. */
export async function updateWorksheet(
  q: Queryable,
  workspaceId: string,
  callerId: string,
  id: string,
  patch: Partial<WorksheetInput>,
): Promise<{ before: WorksheetOut; after: WorksheetOut }> {
  const before = await ownWorksheet(q, workspaceId, callerId, id, true);
  await q.query(
    `update worksheets set title = $3, sql = $4, agent_id = $5, catalog = $6, visibility = $7, updated_at = now()
      where workspace_id = $1 and id = $2`,
    [
      workspaceId,
      id,
      patch.title ?? before.title,
      patch.sql ?? before.sql,
      patch.agent_id === undefined ? before.agent_id : patch.agent_id,
      patch.catalog === undefined ? before.catalog : patch.catalog,
      patch.visibility ?? before.visibility,
    ],
  );
  return { before, after: await getWorksheet(q, workspaceId, callerId, id) };
}

export async function deleteWorksheet(q: Queryable, workspaceId: string, callerId: string, id: string): Promise<WorksheetOut> {
  const w = await ownWorksheet(q, workspaceId, callerId, id, true);
  await q.query(`delete from worksheets where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return w;
}

/**
 * The worksheets the caller may see, most recently changed first: all of them (their own and every shared one), only
 * their own (`mine`), or only those shared with the workspace (`shared`, theirs included).
 */
export async function listWorksheets(
  q: Queryable,
  workspaceId: string,
  callerId: string,
  f: { scope?: WorksheetScope; cursor?: string; limit: number },
): Promise<Page<WorksheetOut>> {
  const params: unknown[] = [workspaceId, callerId];
  // Every form names $2 (PostgreSQL refuses a parameter it cannot type), so the cursor's parameters stay $3 and $4.
  const scope =
    f.scope === 'mine' ? `w.owner_id = $2` : f.scope === 'shared' ? `w.visibility = 'workspace' and $2::uuid is not null` : `(w.owner_id = $2 or w.visibility = 'workspace')`;
  let after = '';
  if (f.cursor) {
    const c = decodeCursor(f.cursor, SORT);
    if (!isUuid(c.id) || !(await q.query(`select 1 from worksheets where id = $1`, [c.id])).length) throw staleCursor();
    params.push(c.k, c.id);
    after = `and (w.updated_at, w.id) < ($3::timestamptz, $4::uuid)`;
  }
  params.push(f.limit + 1);
  const rows = await q.query<Row & { sort_key: string }>(
    `select ${COLS}, w.updated_at::text as sort_key from ${FROM}
      where w.workspace_id = $1 and ${scope} ${after}
      order by w.updated_at desc, w.id desc limit $${params.length}`,
    params,
  );
  return pageOf(rows, f.limit, SORT, (r) => ({ k: r.sort_key, id: r.id }), (r) => {
    const { sort_key: _k, ...rest } = r;
    return out(rest, callerId);
  });
}
