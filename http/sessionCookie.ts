// The session cookie every sign-in sets (local, LDAP, OIDC): HttpOnly, SameSite=Lax, and Secure with COOKIE_SECURE or
// whenever the browser reached the api over HTTPS (directly, or through a trusted proxy saying
// `X-Forwarded-Proto: https`), so a cookie set over HTTPS is never sent back over plain HTTP.
import type { FastifyRequest } from 'fastify';
import { parseTrustedProxies, type TrustedProxies } from '../runtime/trustedProxies.ts';
import { SESSION_COOKIE } from './auth.ts';
import type { AppContext } from '../usecases/context.ts';
import { reachedOverHttps } from './crossSite.ts';

let parsed: { from: string; trusted: TrustedProxies } | undefined;
const trustedOf = (ctx: AppContext) => {
  if (parsed?.from !== ctx.config.TRUSTED_PROXIES) parsed = { from: ctx.config.TRUSTED_PROXIES, trusted: parseTrustedProxies(ctx.config.TRUSTED_PROXIES) };
  return parsed.trusted;
};

/** Whether cookies set in answer to `req` carry `Secure`. */
export const cookieSecure = (ctx: AppContext, req: FastifyRequest): boolean => ctx.config.COOKIE_SECURE || reachedOverHttps(req, trustedOf(ctx));

export const sessionCookie = (ctx: AppContext, req: FastifyRequest, value: string, maxAge: number) =>
  `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAge}${cookieSecure(ctx, req) ? '; Secure' : ''}`;
