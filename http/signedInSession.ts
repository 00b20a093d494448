// What every successful sign-in (local, LDAP, OIDC) ends with: the session, its `auth.login` row and, when the
// sign-in created the user or changed its role, the `user.role_change` row, all in one transaction.
import type { FastifyRequest } from 'fastify';
import { actorOf } from '../domain/audit.ts';
import { createSession, type UserRow } from '../domain/identity.ts';
import { joinTransaction } from '../runtime/db.ts';
import { audit } from './audit.ts';
import type { AppContext } from '../usecases/context.ts';

export interface SignedIn {
  user: UserRow;
  created: boolean;
  roleBefore: string | null;
  /** `auth.login` details: how (`local`, `ldap`, `oidc` and its provider) */
  login: Record<string, unknown>;
  /** `user.role_change` details beyond the roles: where the role came from */
  roleChange: Record<string, unknown>;
}

/** Opens the session; returns its id for the cookie. */
export function openSignedInSession(ctx: AppContext, req: Pick<FastifyRequest, 'id'>, s: SignedIn): Promise<string> {
  const actor = actorOf({ user: s.user, via: 'session', tokenId: null });
  return ctx.db.tx(async (q) => {
    await audit(ctx, req, { action: 'auth.login', outcome: 'success', actor, target: { kind: 'user', id: s.user.id }, details: { ...s.login, created: s.created } }, q);
    if (s.created || s.roleBefore) {
      const details = { ...s.roleChange, role_from: s.roleBefore, role_to: s.user.role, created: s.created };
      await audit(ctx, req, { action: 'user.role_change', outcome: 'success', actor, target: { kind: 'user', id: s.user.id }, details }, q);
    }
    return createSession(joinTransaction(q), s.user.id, ctx.config.SESSION_MAX_AGE_SECONDS);
  });
}
