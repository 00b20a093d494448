// Workspaces and their members. Membership is checked before anything else on every workspace route; a
// non-member learns nothing (404). Global admins act as owners everywhere.
import type { Db, Queryable } from '../runtime/db.ts';
import { isUniqueViolation } from '../runtime/db.ts';
import { conflict, forbidden, notFound } from './errors.ts';
import { isUuid, type Principal } from './identity.ts';

export type WorkspaceRole = 'reader' | 'writer' | 'owner';
export const WORKSPACE_ROLES: readonly WorkspaceRole[] = ['reader', 'writer', 'owner'];
const rank = (r: WorkspaceRole) => WORKSPACE_ROLES.indexOf(r);

export interface WorkspaceRow {
  id: string;
  slug: string;
  name: string;
  default_catalog_id: string | null;
  created_at: Date;
}

export interface WorkspaceOut {
  id: string;
  slug: string;
  name: string;
  created_at: string;
  default_catalog: string | null;
}

export interface WorkspaceAccess {
  workspace: WorkspaceRow;
  role: WorkspaceRole;
}

export interface MemberOut {
  user_id: string;
  email: string | null;
  name: string;
  role: WorkspaceRole;
}

const WS_COLS = 'w.id, w.slug, w.name, w.default_catalog_id, w.created_at';

export async function toWorkspaceOut(q: Queryable, w: WorkspaceRow): Promise<WorkspaceOut> {
  let default_catalog: string | null = null;
  if (w.default_catalog_id) {
    const r = await q.query<{ slug: string }>(`select slug from catalogs where id = $1`, [w.default_catalog_id]);
    default_catalog = r[0]?.slug ?? null;
  }
  return { id: w.id, slug: w.slug, name: w.name, created_at: w.created_at.toISOString(), default_catalog };
}

/** Resolves `{workspace}` (slug or UUID) for the caller, requiring at least `min`; 404 for non-members. */
export async function resolveWorkspace(q: Queryable, p: Principal, ref: string, min: WorkspaceRole = 'reader'): Promise<WorkspaceAccess> {
  const rows = await q.query<WorkspaceRow & { member_role: WorkspaceRole | null }>(
    `select ${WS_COLS}, m.role as member_role from workspaces w
       left join workspace_members m on m.workspace_id = w.id and m.user_id = $2
      where ${isUuid(ref) ? 'w.id = $1::uuid' : 'w.slug = $1'}`,
    [ref, p.user.id],
  );
  const row = rows[0];
  const role: WorkspaceRole | null = p.user.role === 'admin' ? 'owner' : (row?.member_role ?? null);
  if (!row || !role) throw notFound('workspace');
  if (rank(role) < rank(min)) throw forbidden(`this needs the ${min} role in workspace ${row.slug}`);
  const { member_role: _m, ...workspace } = row;
  return { workspace, role };
}

export const SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';

export async function createWorkspace(db: Db, p: Principal, input: { slug: string; name: string }): Promise<WorkspaceRow> {
  return db.tx(async (tx) => {
    try {
      const [w] = await tx.query<WorkspaceRow>(
        `insert into workspaces (slug, name) values ($1, $2) returning id, slug, name, default_catalog_id, created_at`,
        [input.slug, input.name],
      );
      await tx.query(`insert into workspace_members (workspace_id, user_id, role) values ($1, $2, 'owner')`, [w.id, p.user.id]);
      return w;
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(`workspace slug ${input.slug} is taken`);
      throw e;
    }
  });
}

export async function listWorkspaces(q: Queryable, p: Principal): Promise<WorkspaceRow[]> {
  if (p.user.role === 'admin') {
    return q.query<WorkspaceRow>(`select ${WS_COLS} from workspaces w order by w.slug`);
  }
  return q.query<WorkspaceRow>(
    `select ${WS_COLS} from workspaces w join workspace_members m on m.workspace_id = w.id and m.user_id = $1 order by w.slug`,
    [p.user.id],
  );
}

export async function listUserWorkspaces(q: Queryable, userId: string): Promise<(WorkspaceRow & { role: WorkspaceRole })[]> {
  return q.query(
    `select ${WS_COLS}, m.role from workspaces w join workspace_members m on m.workspace_id = w.id and m.user_id = $1 order by w.slug`,
    [userId],
  );
}

export async function listMembers(q: Queryable, workspaceId: string): Promise<MemberOut[]> {
  return q.query<MemberOut>(
    `select m.user_id, u.email, u.name, m.role from workspace_members m join users u on u.id = m.user_id
      where m.workspace_id = $1 order by u.name, m.user_id`,
    [workspaceId],
  );
}

/** PUT semantics: insert (created: true) or change the role. The last owner cannot be demoted. */
export async function putMember(db: Db, workspaceId: string, userId: string, role: WorkspaceRole): Promise<{ member: MemberOut; created: boolean }> {
  return db.tx(async (tx) => {
    const user = isUuid(userId) ? (await tx.query(`select id from users where id = $1`, [userId]))[0] : undefined;
    if (!user) throw notFound('user');
    await tx.query(`select id from workspaces where id = $1 for update`, [workspaceId]);
    const existing = (await tx.query<{ role: WorkspaceRole }>(
      `select role from workspace_members where workspace_id = $1 and user_id = $2`,
      [workspaceId, userId],
    ))[0];
    if (existing?.role === 'owner' && role !== 'owner') await assertAnotherOwner(tx, workspaceId, userId);
    await tx.query(
      `insert into workspace_members (workspace_id, user_id, role) values ($1, $2, $3)
       on conflict (workspace_id, user_id) do update set role = excluded.role`,
      [workspaceId, userId, role],
    );
    const member = (await listMembers(tx, workspaceId)).find((m) => m.user_id === userId)!;
    return { member, created: !existing };
  });
}

export async function removeMember(db: Db, workspaceId: string, userId: string): Promise<void> {
  await db.tx(async (tx) => {
    await tx.query(`select id from workspaces where id = $1 for update`, [workspaceId]);
    const existing = isUuid(userId)
      ? (await tx.query<{ role: WorkspaceRole }>(`select role from workspace_members where workspace_id = $1 and user_id = $2`, [workspaceId, userId]))[0]
      : undefined;
    if (!existing) throw notFound('member');
    if (existing.role === 'owner') await assertAnotherOwner(tx, workspaceId, userId);
    await tx.query(`delete from workspace_members where workspace_id = $1 and user_id = $2`, [workspaceId, userId]);
  });
}

async function assertAnotherOwner(tx: Queryable, workspaceId: string, userId: string) {
  const [{ n }] = await tx.query<{ n: number }>(
    `select count(*)::int as n from workspace_members where workspace_id = $1 and role = 'owner' and user_id <> $2`,
    [workspaceId, userId],
  );
  if (n === 0) throw conflict('a workspace keeps at least one owner');
}
