// Authentication (session cookie or bearer token) and the route-level access check.
import type { FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from '../domain/errors.ts';
import { hasPermission, principalFromSession, principalFromToken, type Principal } from '../domain/identity.ts';
import { resolveWorkspace, type WorkspaceAccess } from '../domain/workspaces.ts';
import type { Queryable } from '../runtime/db.ts';
import type { Access } from './route.ts';

export const SESSION_COOKIE = 'session';

/**
 * The caller, or undefined when no credential was sent; a credential that is sent but invalid is 401. With
 * `ignoreStaleCookie` (public routes: sign-in, sign-out, setup, OIDC) a session cookie that no longer resolves counts
 * as none: the browser sends it unasked, and refusing it would keep a signed-out user from signing in again. A bearer
 * token is chosen by the client, so an invalid one is refused everywhere.
 */
export async function authenticate(db: Queryable, req: FastifyRequest, opts: { ignoreStaleCookie?: boolean } = {}): Promise<Principal | undefined> {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const p = m ? await principalFromToken(db, m[1]) : undefined;
    if (!p) throw unauthorized('invalid, expired or revoked token');
    return p;
  }
  const sid = req.cookies?.[SESSION_COOKIE];
  if (sid) {
    const p = await principalFromSession(db, sid);
    if (!p && !opts.ignoreStaleCookie) throw unauthorized('session expired or signed out');
    return p;
  }
  return undefined;
}

export async function authorize(
  db: Queryable,
  access: Access,
  principal: Principal | undefined,
  params: Record<string, string>,
): Promise<WorkspaceAccess | undefined> {
  if (access.kind === 'public') return undefined;
  if (!principal) throw unauthorized();
  switch (access.kind) {
    case 'authenticated':
    case 'resource':
      return undefined;
    case 'admin':
      if (principal.user.role !== 'admin') throw forbidden('this needs the admin role');
      return undefined;
    case 'permission':
      if (!hasPermission(principal, access.permission)) throw forbidden(`this needs the ${access.permission} permission`);
      return undefined;
    case 'workspace':
      return resolveWorkspace(db, principal, params.workspace ?? '', access.role);
  }
}
