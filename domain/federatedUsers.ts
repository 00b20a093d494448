// Users who sign in through a directory or an identity provider: created on first sign-in (just in time) with the
// provider as auth_provider, their name and mapped role kept in step at every sign-in. An email that already
// belongs to a local account or to another provider's is refused (409 account_conflict), so no provider can take
// over an account it did not create.
import { Schema } from 'effect';
import type { Db } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { AppError, conflict, unauthorized } from './errors.ts';
import { UserRowSchema, type GlobalRole, type UserRow } from './identity.ts';

const USER_COLS = sql`id, email, name, role, kind, auth_provider, password_hash, is_active, created_at`;

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
    await exec(tx, sql`select pg_advisory_xact_lock(hashtext('eider:user-email:' || ${email}))`);
    const [existing] = await rows(tx, UserRowSchema, sql`select ${USER_COLS} from users where email = ${email} and kind = 'user' for update`);
    if (!existing) {
      const [user] = await rows(
        tx,
        UserRowSchema,
        sql`insert into users (email, name, role, auth_provider, password_hash)
            values (${email}, ${input.name.slice(0, 200) || email}, ${input.role ?? 'member'}, ${input.provider}, null) returning ${USER_COLS}`,
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
      const [{ n }] = await rows(
        tx,
        Schema.Struct({ n: Schema.Number }),
        sql`select count(*)::int as n from users where role = 'admin' and kind = 'user' and is_active and id <> ${existing.id}`,
      );
      if (n === 0) role = 'admin';
    }
    const [user] = await rows(
      tx,
      UserRowSchema,
      sql`update users set name = ${input.name.slice(0, 200) || existing.name}, role = coalesce(${role}, role) where id = ${existing.id} returning ${USER_COLS}`,
    );
    return { user, created: false, roleBefore: user.role !== existing.role ? existing.role : null };
  });
}
