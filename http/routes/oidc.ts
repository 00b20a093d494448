// OIDC sign-in: /auth/oidc/{provider}/login sends the browser to the provider with a signed handshake cookie;
// /auth/oidc/{provider}/callback finishes it, creates or refreshes the user just in time and sets the session.
import { Schema } from 'effect';
import type { FastifyRequest } from 'fastify';
import { route } from '../route.ts';
import type { AppContext } from '../../usecases/context.ts';
import { AppError, notFound } from '../../domain/errors.ts';
import { HANDSHAKE_COOKIE, HANDSHAKE_MAX_AGE_S, openHandshake, roleFromClaimGroups, sealHandshake } from '../../domain/oidc.ts';
import { signInFederated } from '../../domain/federatedUsers.ts';
import { ANONYMOUS } from '../../domain/audit.ts';
import { audit } from '../audit.ts';
import { cookieSecure, sessionCookie } from '../sessionCookie.ts';
import { openSignedInSession } from '../signedInSession.ts';

const ProviderParams = Schema.Struct({ provider: Schema.String });
const CALLBACK_PATH = (id: string) => `/api/auth/oidc/${encodeURIComponent(id)}/callback`;

// Scoped to the OIDC routes; Lax so the provider's top-level redirect back carries it.
const handshakeCookie = (ctx: AppContext, req: FastifyRequest, value: string, maxAge: number) =>
  `${HANDSHAKE_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/api/auth/oidc; Max-Age=${maxAge}${cookieSecure(ctx, req) ? '; Secure' : ''}`;

/** The public address callbacks go to: OIDC_REDIRECT_BASE_URL, else the scheme and host this request came to. */
function redirectBase(ctx: AppContext, req: FastifyRequest): string {
  const base = ctx.config.OIDC_REDIRECT_BASE_URL || `${req.protocol}://${req.headers.host ?? `127.0.0.1:${ctx.config.PORT}`}`;
  return base.replace(/\/+$/, '');
}

const providerOf = (ctx: AppContext, id: string) => {
  const p = ctx.oidc.find(id);
  if (!p) throw notFound('OIDC provider');
  return p;
};

// After sign-in the browser lands here and goes on to the app; no script, so a strict CSP cannot break it.
const forwardPage = `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/"><title>Signed in</title></head><body><p>Signed in. <a href="/">Continue to Eider</a>.</p></body></html>`;

export const oidcRoutes = [
  route({
    method: 'GET',
    path: '/api/auth/oidc/:provider/login',
    operationId: 'start_oidc_login',
    summary: 'Start signing in with an OIDC provider: 302 to the provider (authorization code with PKCE)',
    tags: ['identity'],
    access: { kind: 'public' },
    params: ProviderParams,
    responses: { 302: null, 404: null, 503: null },
    handler: async ({ ctx, req, params }) => {
      const p = providerOf(ctx, params.provider);
      const { url, handshake } = await ctx.oidc.begin(p, redirectBase(ctx, req) + CALLBACK_PATH(p.id));
      return {
        status: 302,
        headers: { location: url, 'set-cookie': handshakeCookie(ctx, req, sealHandshake(ctx.secretKey, handshake), HANDSHAKE_MAX_AGE_S), 'cache-control': 'no-store' },
      };
    },
  }),
  route({
    method: 'GET',
    path: '/api/auth/oidc/:provider/callback',
    operationId: 'get_oidc_callback',
    summary: 'Where the provider sends the browser back: sets the session cookie and forwards to the app',
    description:
      'Refuses with 400 `oidc_failed` (and no session) a missing, altered, expired or replayed handshake, a state, ' +
      'nonce or PKCE mismatch, or an error from the provider; 409 `account_conflict` when the email belongs to a ' +
      'local account or to another provider’s.',
    tags: ['identity'],
    access: { kind: 'public' },
    params: ProviderParams,
    produces: 'text/html',
    responses: { 200: Schema.String, 400: null, 404: null, 409: null, 503: null },
    handler: async ({ ctx, req, reply, params }) => {
      const p = providerOf(ctx, params.provider);
      // The handshake is single-use: whatever happens next, the browser drops it.
      const clear = handshakeCookie(ctx, req, '', 0);
      let email: string | null = null;
      try {
        const h = openHandshake(ctx.secretKey, req.cookies?.[HANDSHAKE_COOKIE], p.id);
        const callbackUrl = new URL(h.redirectUri);
        callbackUrl.search = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
        const who = await ctx.oidc.finish(p, h, callbackUrl);
        email = who.email;
        const r = await signInFederated(ctx.db, { provider: `oidc:${p.id}`, email: who.email, name: who.name, role: roleFromClaimGroups(who.groups, p.group_role_map) });
        const sid = await openSignedInSession(ctx, req, {
          user: r.user,
          created: r.created,
          roleBefore: r.roleBefore,
          login: { method: 'oidc', provider: p.id },
          roleChange: { source: `oidc:${p.id}`, groups: who.groups.slice(0, 50) },
        });
        reply.header('set-cookie', [clear, sessionCookie(ctx, req, sid, ctx.config.SESSION_MAX_AGE_SECONDS)]);
        return { status: 200, body: forwardPage, headers: { 'cache-control': 'no-store' } };
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        await audit(ctx, req, { action: 'auth.login', outcome: 'failure', actor: { ...ANONYMOUS, email }, details: { method: 'oidc', provider: p.id, code: e.code } });
        throw new AppError(e.status, e.code, e.message, e.details, { ...e.headers, 'set-cookie': clear });
      }
    },
  }),
];
