// Users who sign in through a directory or an identity provider: created on first sign-in (just in time) with the
// provider as auth_provider, their name and mapped role kept in step at every sign-in. An email that already
// belongs to a local account or to another provider's is refused (409 account_conflict), so no provider can take
// over an account it did not create.
import type { Db } from '../runtime/db.ts';
import { AppError, conflict, unauthorized } from './errors.ts';
import type { GlobalRole, UserRow } from './identity.ts';

const USER_COLS = 'id, email, name, role, kind, auth_provider, password_hash, is_active, created_at';

export interface FederatedSignIn {
  /** `ldap` or `oidc:<provider id>` */
  provider: string;
  email: string;
  name: string;
  /** the role the groups map to; null leaves the role as it is (no map configured) */
  role: GlobalRole | null;
}

export interface FederatedResult {
  user: UserRow;
  created: boolean;
  /** the role before this sign-in, when the sign-in changed it */
  roleBefore: GlobalRole | null;
}

export async function signInFederated(db: Db, input: FederatedSignIn): Promise<FederatedResult> {
  const email = input.email.trim().toLowerCase();
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) {
    const oidc = input.provider.startsWith('oidc:');
    throw new AppError(oidc ? 400 : 401, oidc ? 'oidc_failed' : 'unauthorized', `${oidc ? 'the identity provider' : 'the directory'} gave no usable email address`);
  }
  return db.tx(async (tx) => {
    // Two first sign-ins of one email at once would both insert: serialize them on the email.
    await tx.query(`select pg_advisory_xact_lock(hashtext('eider:user-email:' || $1))`, [email]);
    const [existing] = await tx.query<UserRow>(`select ${USER_COLS} from users where email = $1 and kind = 'user' for update`, [email]);
    if (!existing) {
      const [user] = await tx.query<UserRow>(
        `insert into users (email, name, role, auth_provider, password_hash) values ($1, $2, $3, $4, null) returning ${USER_COLS}`,
        [email, input.name.slice(0, 200) || email, input.role ?? 'member', input.provider],
      );
      return { user, created: true, roleBefore: null };
    }
    if (existing.auth_provider !== input.provider) {
      const owner = existing.auth_provider === 'local' ? 'a local account' : `an account of ${existing.auth_provider}`;
      throw conflict(`this email belongs to ${owner}; sign in the way that account was created`, 'account_conflict');
    }
    if (!existing.is_active) throw unauthorized('this account is deactivated');
    let role = input.role;
    if (existing.role === 'admin' && role === 'member') {
      // The group map never demotes the last active admin: nobody could administer the server afterwards.
      const [{ n }] = await tx.query<{ n: number }>(`select count(*)::int as n from users where role = 'admin' and kind = 'user' and is_active and id <> $1`, [existing.id]);
      if (n === 0) role = 'admin';
    }
    const [user] = await tx.query<UserRow>(
      `update users set name = $2, role = coalesce($3, role) where id = $1 returning ${USER_COLS}`,
      [existing.id, input.name.slice(0, 200) || existing.name, role],
    );
    return { user, created: false, roleBefore: user.role !== existing.role ? existing.role : null };
  });
}
