// The session cookie every sign-in sets (local, LDAP, OIDC): HttpOnly, SameSite=Lax, Secure with COOKIE_SECURE.
import { SESSION_COOKIE } from './auth.ts';
import type { AppContext } from './context.ts';

export const sessionCookie = (ctx: AppContext, value: string, maxAge: number) =>
  `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAge}${ctx.config.COOKIE_SECURE ? '; Secure' : ''}`;
