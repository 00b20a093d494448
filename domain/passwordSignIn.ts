// Sign-in with an email and a password (POST /auth/login): local accounts first; with LDAP on, an email that is not
// a local account's is asked of the directory, and its user is created or refreshed just in time. A directory that
// cannot be asked is a 503 for directory users only: local accounts never wait on it.
import type { Db, Queryable } from '../runtime/db.ts';
import { unauthorized } from './errors.ts';
import { verifyLogin, type GlobalRole, type UserRow } from './identity.ts';
import { authenticateLdap, roleFromGroups, type LdapSettings } from './ldap.ts';
import { signInFederated } from './federatedUsers.ts';

export type PasswordMethod = 'local' | 'ldap';

export interface PasswordSignIn {
  user: UserRow;
  method: PasswordMethod;
  created: boolean;
  roleBefore: GlobalRole | null;
}

/** Which check an email's password goes to: the directory unless a local (or other non-LDAP) account holds it. */
export async function passwordMethodFor(q: Queryable, ldap: LdapSettings | null, email: string): Promise<PasswordMethod> {
  if (!ldap) return 'local';
  const [u] = await q.query<{ auth_provider: string }>(`select auth_provider from users where email = lower($1) and kind = 'user'`, [email]);
  return !u || u.auth_provider === 'ldap' ? 'ldap' : 'local';
}

export async function signInWithPassword(db: Db, ldap: LdapSettings | null, method: PasswordMethod, email: string, password: string): Promise<PasswordSignIn> {
  if (method === 'local' || !ldap) return { user: await verifyLogin(db, email, password), method: 'local', created: false, roleBefore: null };
  const found = await authenticateLdap(ldap, email, password);
  // Same answer as a local failure: nobody learns from it whether the email exists in the directory.
  if (!found) throw unauthorized('invalid email or password');
  const r = await signInFederated(db, { provider: 'ldap', email: found.email, name: found.name, role: roleFromGroups(found.groups, ldap.groupRoleMap) });
  return { ...r, method: 'ldap' };
}
