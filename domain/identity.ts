// Identity rules: first admin, local sign-in, server-side sessions, personal and service-account tokens,
// users and service accounts. Secrets (passwords, session ids, tokens) are stored only as hashes.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import { Schema } from 'effect';
import type { Db, Queryable } from '../runtime/db.ts';
import { isUniqueViolation } from '../runtime/db.ts';
import { conflict, forbidden, notFound, unauthorized, unprocessable } from './errors.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from './pagination.ts';

export type GlobalRole = 'admin' | 'member';
const PERMISSIONS = ['agents:manage', 'query-admin', 'catalogs'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const PAT_PREFIX = 'eid_pat_';
const MAX_LIVE_TOKENS = 25;
const MAX_TOKEN_DAYS = 365;

/** A users row at the database boundary. */
export const UserRowSchema = Schema.Struct({
  id: Schema.String,
  email: Schema.NullOr(Schema.String),
  name: Schema.String,
  role: Schema.Literals(['admin', 'member']),
  kind: Schema.Literals(['user', 'service_account']),
  auth_provider: Schema.String,
  password_hash: Schema.NullOr(Schema.String),
  is_active: Schema.Boolean,
  created_at: Schema.Date,
});
export type UserRow = typeof UserRowSchema.Type;

/** A user as the api answers it; role and permissions are published as plain strings. */
export const UserOutSchema = Schema.Struct({
  id: Schema.String,
  email: Schema.NullOr(Schema.String),
  name: Schema.String,
  role: Schema.String,
  auth_provider: Schema.String,
  is_active: Schema.Boolean,
  permissions: Schema.Array(Schema.String),
  created_at: Schema.String,
});
export type UserOut = typeof UserOutSchema.Type;

export interface Principal {
  user: UserRow;
  via: 'session' | 'token';
  tokenId: string | null;
}

const permissionsOf = (role: GlobalRole): Permission[] => (role === 'admin' ? [...PERMISSIONS] : []);
export const hasPermission = (p: Principal, perm: Permission) => permissionsOf(p.user.role).includes(perm);

export const toUserOut = (u: UserRow): UserOut => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  auth_provider: u.auth_provider,
  is_active: u.is_active,
  permissions: permissionsOf(u.role),
  created_at: u.created_at.toISOString(),
});

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(sha256(a));
  const y = Buffer.from(sha256(b));
  return timingSafeEqual(x, y);
}

// argon2id, memory-hard (19 MiB, 2 passes: OWASP's minimum profile), so a stolen table is slow to crack.
const ARGON = { memoryCost: 19456, timeCost: 2, parallelism: 1 };
const hashPassword = (pw: string) => argonHash(pw, ARGON);
// Verified against when the email is unknown, so both failures cost the same time.
let dummyHash: Promise<string> | undefined;

const USER_COLS = 'id, email, name, role, kind, auth_provider, password_hash, is_active, created_at';

export async function findUser(q: Queryable, id: string): Promise<UserRow | undefined> {
  if (!isUuid(id)) return undefined;
  return (await q.query<UserRow>(`select ${USER_COLS} from users where id = $1`, [id]))[0];
}

export const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

// ---- setup -------------------------------------------------------------------------------------------------

export async function needsAdmin(db: Queryable): Promise<boolean> {
  const r = await db.query(`select 1 from users where role = 'admin' and kind = 'user' limit 1`);
  return r.length === 0;
}

export async function createFirstAdmin(
  db: Db,
  input: { email: string; password: string; name: string },
  afterCreate: (tx: Queryable, admin: UserRow) => Promise<void>,
): Promise<UserRow> {
  const password_hash = await hashPassword(input.password);
  return db.tx(async (tx) => {
    // Serializes concurrent setup attempts: exactly one creates the admin.
    await tx.query(`select pg_advisory_xact_lock(hashtext('eider:setup'))`);
    if (!(await needsAdmin(tx))) throw conflict('an admin already exists');
    const [admin] = await tx.query<UserRow>(
      `insert into users (email, name, role, password_hash) values (lower($1), $2, 'admin', $3) returning ${USER_COLS}`,
      [input.email, input.name, password_hash],
    );
    await afterCreate(tx, admin);
    return admin;
  });
}

// ---- sign-in and sessions ------------------------------------------------------------------------------------

export async function verifyLogin(db: Queryable, email: string, password: string): Promise<UserRow> {
  const user = (
    await db.query<UserRow>(`select ${USER_COLS} from users where email = lower($1) and kind = 'user'`, [email])
  )[0];
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  const ok = await argonVerify(user?.password_hash ?? (await dummyHash), password).catch(() => false);
  if (!user || !ok || !user.password_hash) throw unauthorized('invalid email or password');
  if (!user.is_active) throw unauthorized('invalid email or password');
  return user;
}

export async function createSession(db: Queryable, userId: string, maxAgeSeconds: number): Promise<string> {
  const sid = randomBytes(32).toString('base64url');
  await db.query(
    `insert into web_sessions (id_hash, user_id, expires_at) values ($1, $2, now() + make_interval(secs => $3))`,
    [sha256(sid), userId, maxAgeSeconds],
  );
  return sid;
}

export async function deleteSession(db: Queryable, sid: string): Promise<void> {
  await db.query(`delete from web_sessions where id_hash = $1`, [sha256(sid)]);
}

/**
 * More about the caller, read in the statement that checks its credential (a round trip fewer for every request
 * that needs it): columns `select`ed from tables `join`ed to `f`, the caller's user row (`f.id`); its parameters are
 * numbered from $2. What it reads comes back as `along`, unchecked: its owner decodes it.
 */
export interface AlongWithCaller {
  select: string;
  join: string;
  params: readonly unknown[];
}
export interface Caller {
  principal: Principal;
  along: Record<string, unknown>;
}

const USER_OF_FOUND = USER_COLS.split(', ').map((c) => `f.${c}`).join(', ');

/** The caller's row from `found` (token_id and the user's columns), with what `along` reads beside it. */
async function callerFrom(db: Queryable, ctes: string, secretHash: string, via: Principal['via'], along?: AlongWithCaller): Promise<Caller | undefined> {
  const rows = await db.query<UserRow & { token_id: string | null }>(
    `with ${ctes} select f.token_id, ${USER_OF_FOUND}${along ? `, ${along.select}` : ''} from found f ${along?.join ?? ''}`,
    [secretHash, ...(along?.params ?? [])],
  );
  const r = rows[0];
  if (!r) return undefined;
  const user: Record<string, unknown> = {};
  const rest: Record<string, unknown> = { ...r };
  for (const c of USER_COLS.split(', ')) {
    user[c] = rest[c];
    delete rest[c];
  }
  const { token_id, ...more } = rest;
  return { principal: { user: user as unknown as UserRow, via, tokenId: (token_id as string | null) ?? null }, along: more };
}

const SESSION_FOUND = `found as (
     select null::uuid as token_id, ${USER_COLS.split(', ').map((c) => `u.${c}`).join(', ')} from web_sessions s join users u on u.id = s.user_id
      where s.id_hash = $1 and s.expires_at > now() and u.is_active)`;

/** The signed-in caller of a web session (and `along`), or undefined when it is unknown, expired or its user inactive. */
export async function callerFromSession(db: Queryable, sid: string, along?: AlongWithCaller): Promise<Caller | undefined> {
  return callerFrom(db, SESSION_FOUND, sha256(sid), 'session', along);
}

export async function principalFromSession(db: Queryable, sid: string): Promise<Principal | undefined> {
  return (await callerFromSession(db, sid))?.principal;
}

// Last use is recorded in the same round trip, at most once a minute per token (a write per request would cost
// every request a row update).
const TOKEN_FOUND = `found as (
     select t.id as token_id, t.last_used_at, ${USER_COLS.split(', ').map((c) => `u.${c}`).join(', ')}
       from access_tokens t join users u on u.id = t.user_id
      where t.token_hash = $1 and t.revoked_at is null and (t.expires_at is null or t.expires_at > now()) and u.is_active),
   touched as (
     update access_tokens set last_used_at = now()
      where id = (select token_id from found) and (last_used_at is null or last_used_at < now() - interval '1 minute'))`;

/** The caller of a personal or service-account token (and `along`), or undefined when it is not a live token of an active user. */
export async function callerFromToken(db: Queryable, token: string, along?: AlongWithCaller): Promise<Caller | undefined> {
  if (!token.startsWith(PAT_PREFIX)) return undefined;
  return callerFrom(db, TOKEN_FOUND, sha256(token), 'token', along);
}

export async function principalFromToken(db: Queryable, token: string): Promise<Principal | undefined> {
  return (await callerFromToken(db, token))?.principal;
}

// ---- tokens ------------------------------------------------------------------------------------------------

/** A live token as its owner's listing shows it (never the secret). */
export const TokenOutSchema = Schema.Struct({
  id: Schema.String,
  /** what its owner named it for ("laptop dbt"), null when unnamed */
  name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  created_at: Schema.String,
  expires_at: Schema.NullOr(Schema.String),
  /** when it last authenticated a request (to the minute), null if never */
  last_used_at: Schema.optionalKey(Schema.NullOr(Schema.String)),
  current: Schema.optionalKey(Schema.Boolean),
});
export type TokenOut = typeof TokenOutSchema.Type;

/** A token just issued: the only answer that holds its secret. */
export const IssuedTokenSchema = Schema.Struct({
  id: Schema.String,
  token: Schema.String,
  name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  created_at: Schema.String,
  expires_at: Schema.NullOr(Schema.String),
});
export type IssuedToken = typeof IssuedTokenSchema.Type;

async function issueToken(db: Db, userId: string, expiresInDays: number | null, name: string | null): Promise<IssuedToken> {
  const token = PAT_PREFIX + randomBytes(32).toString('base64url');
  return db.tx(async (tx) => {
    // Row lock on the owner serializes concurrent issues, so the 25-token cap cannot be raced past.
    await tx.query(`select id from users where id = $1 for update`, [userId]);
    const [{ n }] = await tx.query<{ n: number }>(
      `select count(*)::int as n from access_tokens where user_id = $1 and revoked_at is null and (expires_at is null or expires_at > now())`,
      [userId],
    );
    if (n >= MAX_LIVE_TOKENS) throw conflict(`at most ${MAX_LIVE_TOKENS} live tokens per principal`, 'too_many_tokens');
    const [row] = await tx.query<{ id: string; created_at: Date; expires_at: Date | null; name: string | null }>(
      `insert into access_tokens (user_id, token_hash, expires_at, name)
       values ($1, $2, case when $3::int is null then null else now() + make_interval(days => $3::int) end, $4)
       returning id, created_at, expires_at, name`,
      [userId, sha256(token), expiresInDays, name],
    );
    return { id: row.id, token, name: row.name, created_at: row.created_at.toISOString(), expires_at: row.expires_at?.toISOString() ?? null };
  });
}

function checkExpiry(days: unknown, allowNull: boolean): number | null {
  if (days === null && allowNull) return null;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_TOKEN_DAYS) {
    throw unprocessable(`expires_in_days must be an integer from 1 to ${MAX_TOKEN_DAYS}`, 'unprocessable_content', {
      fields: [{ field: 'expires_in_days', message: allowNull ? 'an integer from 1 to 365, or null' : 'required: an integer from 1 to 365' }],
    });
  }
  return days;
}

export async function issuePersonalToken(db: Db, p: Principal, expiresInDays: number, name: string | null = null): Promise<IssuedToken> {
  if (p.user.kind === 'service_account') {
    throw forbidden('service account tokens are issued by an admin', 'service_account_tokens_are_managed');
  }
  if (p.via !== 'session') throw forbidden('issuing a token needs a signed-in browser session, not a bearer token', 'session_required');
  return issueToken(db, p.user.id, checkExpiry(expiresInDays, false), name);
}

export async function listTokens(db: Queryable, userId: string, currentTokenId: string | null): Promise<TokenOut[]> {
  const rows = await db.query<{ id: string; name: string | null; created_at: Date; expires_at: Date | null; last_used_at: Date | null }>(
    `select id, name, created_at, expires_at, last_used_at from access_tokens
      where user_id = $1 and revoked_at is null and (expires_at is null or expires_at > now())
      order by created_at, id`,
    [userId],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    created_at: r.created_at.toISOString(),
    expires_at: r.expires_at?.toISOString() ?? null,
    last_used_at: r.last_used_at?.toISOString() ?? null,
    current: r.id === currentTokenId,
  }));
}

export async function revokeToken(db: Queryable, userId: string, tokenId: string): Promise<void> {
  if (!isUuid(tokenId)) throw notFound('token');
  const r = await db.query(`delete from access_tokens where id = $1 and user_id = $2 returning id`, [tokenId, userId]);
  if (r.length === 0) throw notFound('token');
}

// ---- users and service accounts ------------------------------------------------------------------------------

export async function createUser(
  db: Queryable,
  input: { email: string; name: string; password: string; role: GlobalRole },
): Promise<UserRow> {
  const password_hash = await hashPassword(input.password);
  try {
    const [u] = await db.query<UserRow>(
      `insert into users (email, name, role, password_hash) values (lower($1), $2, $3, $4) returning ${USER_COLS}`,
      [input.email, input.name, input.role, password_hash],
    );
    return u;
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict('a user with this email exists');
    throw e;
  }
}

export async function updatePrincipal(
  db: Db,
  kind: UserRow['kind'],
  id: string,
  patch: { name?: string; role?: GlobalRole; is_active?: boolean },
  /** runs in the same transaction (the audit row commits with the change or not at all) */
  afterUpdate?: (tx: Queryable, before: UserRow, after: UserRow) => Promise<void>,
): Promise<UserRow> {
  return db.tx(async (tx) => {
    const existing = (await tx.query<UserRow>(`select ${USER_COLS} from users where id = $1 and kind = $2 for update`, [isUuid(id) ? id : null, kind]))[0];
    if (!existing) throw notFound(kind === 'user' ? 'user' : 'service account');
    if (existing.role === 'admin' && existing.kind === 'user' && (patch.role === 'member' || patch.is_active === false)) {
      const [{ n }] = await tx.query<{ n: number }>(
        `select count(*)::int as n from users where role = 'admin' and kind = 'user' and is_active and id <> $1`,
        [id],
      );
      if (n === 0) throw conflict('the last active admin cannot be demoted or deactivated');
    }
    const [u] = await tx.query<UserRow>(
      `update users set name = coalesce($2, name), role = coalesce($3, role), is_active = coalesce($4, is_active)
        where id = $1 returning ${USER_COLS}`,
      [id, patch.name ?? null, patch.role ?? null, patch.is_active ?? null],
    );
    if (patch.is_active === false) {
      // Deactivation stops every credential at once, not at its expiry.
      await tx.query(`delete from web_sessions where user_id = $1`, [id]);
      await tx.query(`update access_tokens set revoked_at = now() where user_id = $1 and revoked_at is null`, [id]);
    }
    await afterUpdate?.(tx, existing, u);
    return u;
  });
}

/** A service account as the api answers it; role and permissions are published as plain strings. */
export const ServiceAccountOutSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  role: Schema.String,
  is_active: Schema.Boolean,
  permissions: Schema.Array(Schema.String),
  created_at: Schema.String,
});
export type ServiceAccountOut = typeof ServiceAccountOutSchema.Type;

export const toServiceAccountOut = (u: UserRow): ServiceAccountOut => ({
  id: u.id,
  name: u.name,
  role: u.role,
  is_active: u.is_active,
  permissions: permissionsOf(u.role),
  created_at: u.created_at.toISOString(),
});

export async function createServiceAccount(db: Queryable, input: { name: string; role?: GlobalRole }): Promise<UserRow> {
  const [u] = await db.query<UserRow>(
    `insert into users (email, name, role, kind, auth_provider) values (null, $1, $2, 'service_account', 'service_account') returning ${USER_COLS}`,
    [input.name, input.role ?? 'member'],
  );
  return u;
}

export async function findServiceAccount(db: Queryable, id: string): Promise<UserRow> {
  const u = await findUser(db, id);
  if (!u || u.kind !== 'service_account') throw notFound('service account');
  return u;
}

export async function issueServiceAccountToken(db: Db, saId: string, expiresInDays: number | null, name: string | null = null) {
  await findServiceAccount(db, saId);
  return issueToken(db, saId, checkExpiry(expiresInDays, true), name);
}

export async function listPrincipals(
  db: Queryable,
  kind: UserRow['kind'],
  opts: { limit: number; cursor?: string },
): Promise<Page<UserRow>> {
  const sort = `${kind}:created_at:asc`;
  const params: unknown[] = [kind, opts.limit + 1];
  let where = 'kind = $1';
  if (opts.cursor) {
    const c = decodeCursor(opts.cursor, sort);
    const exists = await db.query(`select 1 from users where id = $1`, [isUuid(c.id) ? c.id : null]);
    if (exists.length === 0) throw staleCursor();
    params.push(c.k, c.id);
    where += ` and (created_at, id) > ($3::timestamptz, $4::uuid)`;
  }
  // The key travels as PostgreSQL's own text form: a JS Date would drop the microseconds and repeat rows.
  const rows = await db.query<UserRow & { ck: string }>(
    `select ${USER_COLS}, created_at::text as ck from users where ${where} order by created_at, id limit $2`,
    params,
  );
  return pageOf(rows, opts.limit, sort, (r) => ({ k: r.ck, id: r.id }), ({ ck: _ck, ...r }) => r as UserRow);
}

