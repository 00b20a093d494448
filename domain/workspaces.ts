// Workspaces and their members. Membership is checked before anything else on every workspace route; a
// non-member learns nothing (404). Global admins act as owners everywhere.
import { Schema } from 'effect';
import type { Db, Queryable } from '../runtime/db.ts';
import { isUniqueViolation } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { conflict, forbidden, notFound } from './errors.ts';
import { isUuid, type AlongWithCaller, type Caller, type Principal } from './identity.ts';

const WORKSPACE_ROLES = ['reader', 'writer', 'owner'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];
const rank = (r: WorkspaceRole) => WORKSPACE_ROLES.indexOf(r);
const Role = Schema.Literals(WORKSPACE_ROLES);

// Row shapes at the database boundary.
const WorkspaceRowSchema = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  default_catalog_id: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
});
export type WorkspaceRow = typeof WorkspaceRowSchema.Type;
/** A workspace member as read and as answered. */
export const MemberOutSchema = Schema.Struct({ user_id: Schema.String, email: Schema.NullOr(Schema.String), name: Schema.String, role: Role });

/** A workspace as the api answers it: its default catalog by slug. */
export const WorkspaceOutSchema = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  created_at: Schema.String,
  default_catalog: Schema.NullOr(Schema.String),
});
export type WorkspaceOut = typeof WorkspaceOutSchema.Type;

export interface WorkspaceAccess {
  workspace: WorkspaceRow;
  role: WorkspaceRole;
}

export type MemberOut = typeof MemberOutSchema.Type;

const WS_COLS = sql`w.id, w.slug, w.name, w.default_catalog_id, w.created_at`;

export async function toWorkspaceOut(q: Queryable, w: WorkspaceRow): Promise<WorkspaceOut> {
  let default_catalog: string | null = null;
  if (w.default_catalog_id) {
    const r = await rows(q, Schema.Struct({ slug: Schema.String }), sql`select slug from catalogs where id = ${w.default_catalog_id}`);
    default_catalog = r[0]?.slug ?? null;
  }
  return { id: w.id, slug: w.slug, name: w.name, created_at: w.created_at.toISOString(), default_catalog };
}

/** A principal's role in a workspace given its membership's (null: not a member): an admin owns every workspace. */
export const roleIn = (p: Principal, memberRole: WorkspaceRole | null): WorkspaceRole | null => (p.user.role === 'admin' ? 'owner' : memberRole);

const SeenWorkspace = Schema.Struct({ ...WorkspaceRowSchema.fields, member_role: Schema.NullOr(Role) });

/** The caller's access to a workspace as read (undefined: no such workspace), requiring at least `min`; 404 for non-members. */
function accessTo(p: Principal, row: typeof SeenWorkspace.Type | undefined, min: WorkspaceRole): WorkspaceAccess {
  const role = roleIn(p, row?.member_role ?? null);
  if (!row || !role) throw notFound('workspace');
  if (rank(role) < rank(min)) throw forbidden(`this needs the ${min} role in workspace ${row.slug}`);
  const { member_role: _m, ...workspace } = row;
  return { workspace, role };
}

const byRef = (ref: string) => (isUuid(ref) ? sql`w.id = ${ref}::uuid` : sql`w.slug = ${ref}`);

/** Resolves `{workspace}` (slug or UUID) for the caller, requiring at least `min`; 404 for non-members. */
export async function resolveWorkspace(q: Queryable, p: Principal, ref: string, min: WorkspaceRole = 'reader'): Promise<WorkspaceAccess> {
  const found = await rows(
    q,
    SeenWorkspace,
    sql`select ${WS_COLS}, m.role as member_role from workspaces w
          left join workspace_members m on m.workspace_id = w.id and m.user_id = ${p.user.id}
         where ${byRef(ref)}`,
  );
  return accessTo(p, found[0], min);
}

/**
 * `{workspace}` read with the caller's credential, in its statement (identity's AlongWithCaller): the same row
 * resolveWorkspace reads, its columns prefixed `ws_`.
 */
export function workspaceWithCaller(ref: string): AlongWithCaller {
  return {
    select: SEEN_WORKSPACE_COLUMNS,
    join: `left join workspaces w on ${isUuid(ref) ? 'w.id = $2::uuid' : 'w.slug = $2'} ${CALLER_MEMBERSHIP_JOIN}`,
    params: [ref],
  };
}

/** What workspaceAccessOf reads beside a credential: the workspace `w` and the caller's membership `m` in it (joined
 *  by CALLER_MEMBERSHIP_JOIN), for a read that finds its workspace another way (a session's). */
export const SEEN_WORKSPACE_COLUMNS =
  'w.id as ws_id, w.slug as ws_slug, w.name as ws_name, w.default_catalog_id as ws_default_catalog_id, w.created_at as ws_created_at, m.role as ws_member_role';
export const CALLER_MEMBERSHIP_JOIN = 'left join workspace_members m on m.workspace_id = w.id and m.user_id = f.id';

/** The caller's access to the workspace workspaceWithCaller read beside its credential; the same answers as resolveWorkspace. */
export function workspaceAccessOf(caller: Caller, min: WorkspaceRole = 'reader'): WorkspaceAccess {
  const a = caller.along;
  const row =
    a.ws_id === null || a.ws_id === undefined
      ? undefined
      : Schema.decodeUnknownSync(SeenWorkspace)({
          id: a.ws_id,
          slug: a.ws_slug,
          name: a.ws_name,
          default_catalog_id: a.ws_default_catalog_id,
          created_at: a.ws_created_at,
          member_role: a.ws_member_role,
        });
  return accessTo(caller.principal, row, min);
}

export const SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';

export async function createWorkspace(db: Db, p: Principal, input: { slug: string; name: string }): Promise<WorkspaceRow> {
  return db.tx(async (tx) => {
    try {
      const [w] = await rows(
        tx,
        WorkspaceRowSchema,
        sql`insert into workspaces (slug, name) values (${input.slug}, ${input.name}) returning id, slug, name, default_catalog_id, created_at`,
      );
      await exec(tx, sql`insert into workspace_members (workspace_id, user_id, role) values (${w.id}, ${p.user.id}, 'owner')`);
      return w;
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(`workspace slug ${input.slug} is taken`);
      throw e;
    }
  });
}

export async function listWorkspaces(q: Queryable, p: Principal): Promise<WorkspaceRow[]> {
  if (p.user.role === 'admin') return rows(q, WorkspaceRowSchema, sql`select ${WS_COLS} from workspaces w order by w.slug`);
  return rows(
    q,
    WorkspaceRowSchema,
    sql`select ${WS_COLS} from workspaces w join workspace_members m on m.workspace_id = w.id and m.user_id = ${p.user.id} order by w.slug`,
  );
}

export async function listUserWorkspaces(q: Queryable, userId: string): Promise<(WorkspaceRow & { role: WorkspaceRole })[]> {
  return rows(
    q,
    Schema.Struct({ ...WorkspaceRowSchema.fields, role: Role }),
    sql`select ${WS_COLS}, m.role from workspaces w join workspace_members m on m.workspace_id = w.id and m.user_id = ${userId} order by w.slug`,
  );
}

export async function listMembers(q: Queryable, workspaceId: string): Promise<MemberOut[]> {
  return rows(
    q,
    MemberOutSchema,
    sql`select m.user_id, u.email, u.name, m.role from workspace_members m join users u on u.id = m.user_id
         where m.workspace_id = ${workspaceId} order by u.name, m.user_id`,
  );
}

/** PUT semantics: insert (created: true) or change the role. The last owner cannot be demoted. */
export async function putMember(db: Db, workspaceId: string, userId: string, role: WorkspaceRole): Promise<{ member: MemberOut; created: boolean }> {
  return db.tx(async (tx) => {
    const user = isUuid(userId) ? (await exec(tx, sql`select id from users where id = ${userId}`))[0] : undefined;
    if (!user) throw notFound('user');
    await exec(tx, sql`select id from workspaces where id = ${workspaceId} for update`);
    const [existing] = await memberRole(tx, workspaceId, userId);
    if (existing?.role === 'owner' && role !== 'owner') await assertAnotherOwner(tx, workspaceId, userId);
    await exec(
      tx,
      sql`insert into workspace_members (workspace_id, user_id, role) values (${workspaceId}, ${userId}, ${role})
          on conflict (workspace_id, user_id) do update set role = excluded.role`,
    );
    const member = (await listMembers(tx, workspaceId)).find((m) => m.user_id === userId)!;
    return { member, created: !existing };
  });
}

export async function removeMember(db: Db, workspaceId: string, userId: string): Promise<void> {
  await db.tx(async (tx) => {
    await exec(tx, sql`select id from workspaces where id = ${workspaceId} for update`);
    const [existing] = isUuid(userId) ? await memberRole(tx, workspaceId, userId) : [];
    if (!existing) throw notFound('member');
    if (existing.role === 'owner') await assertAnotherOwner(tx, workspaceId, userId);
    await exec(tx, sql`delete from workspace_members where workspace_id = ${workspaceId} and user_id = ${userId}`);
  });
}

const memberRole = (q: Queryable, workspaceId: string, userId: string) =>
  rows(q, Schema.Struct({ role: Role }), sql`select role from workspace_members where workspace_id = ${workspaceId} and user_id = ${userId}`);

async function assertAnotherOwner(tx: Queryable, workspaceId: string, userId: string) {
  const [{ n }] = await rows(
    tx,
    Schema.Struct({ n: Schema.Finite }),
    sql`select count(*)::int as n from workspace_members where workspace_id = ${workspaceId} and role = 'owner' and user_id <> ${userId}`,
  );
  if (n === 0) throw conflict('a workspace keeps at least one owner');
}
