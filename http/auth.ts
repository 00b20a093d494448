// Authentication (session cookie or bearer token) and the route-level access check.
import type { FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from '../domain/errors.ts';
import { callerFromSession, callerFromToken, hasPermission, type AlongWithCaller, type Caller } from '../domain/identity.ts';
import { resolveWorkspace, workspaceAccessOf, workspaceWithCaller, type WorkspaceAccess } from '../domain/workspaces.ts';
import type { Queryable } from '../runtime/db.ts';
import type { Access, RouteDef } from './route.ts';
import type { AppContext } from '../usecases/context.ts';

export const SESSION_COOKIE = 'session';

/**
 * The caller, or undefined when no credential was sent; a credential that is sent but invalid is 401. With
 * `ignoreStaleCookie` (public routes: sign-in, sign-out, setup, OIDC) a session cookie that no longer resolves counts
 * as none: the browser sends it unasked, and refusing it would keep a signed-out user from signing in again. A bearer
 * token is chosen by the client, so an invalid one is refused everywhere. `along`: more read with the credential
 * (identity's AlongWithCaller).
 */
export async function authenticate(
  db: Queryable,
  req: FastifyRequest,
  opts: { ignoreStaleCookie?: boolean; along?: AlongWithCaller } = {},
): Promise<Caller | undefined> {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const c = m ? await callerFromToken(db, m[1], opts.along) : undefined;
    if (!c) throw unauthorized('invalid, expired or revoked token');
    return c;
  }
  const sid = req.cookies?.[SESSION_COOKIE];
  if (sid) {
    const c = await callerFromSession(db, sid, opts.along);
    if (!c && !opts.ignoreStaleCookie) throw unauthorized('session expired or signed out');
    return c;
  }
  return undefined;
}

/**
 * What is read with the credential for a route: a workspace route's workspace (its access check), else the resource
 * the route's own `along` names.
 */
export const alongFor = (def: Pick<RouteDef, 'access' | 'along'>, params: Record<string, string>, ctx: AppContext): AlongWithCaller | undefined =>
  def.access.kind === 'workspace' ? workspaceWithCaller(params.workspace ?? '') : def.along?.(params, ctx);

export async function authorize(
  db: Queryable,
  access: Access,
  caller: Caller | undefined,
  params: Record<string, string>,
): Promise<WorkspaceAccess | undefined> {
  const principal = caller?.principal;
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
      // Read with the credential when authenticate was given alongFor(access); else read now.
      return 'ws_id' in caller!.along ? workspaceAccessOf(caller!, access.role) : resolveWorkspace(db, principal, params.workspace ?? '', access.role);
  }
}
