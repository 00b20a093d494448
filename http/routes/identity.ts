// Setup, sign-in, the current user, personal tokens, users and service accounts.
import { Schema } from 'effect';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../usecases/context.ts';
import { joinTransaction, type Queryable } from '../../runtime/db.ts';
import { route, PageQuery, pageOfSchema } from '../route.ts';
import { SESSION_COOKIE } from '../auth.ts';
import { forbidden, notFound } from '../../domain/errors.ts';
import * as identity from '../../domain/identity.ts';
import { createWorkspaceForAdmin } from '../../domain/bootstrap.ts';
import { listUserWorkspaces, toWorkspaceOut, WorkspaceOutSchema } from '../../domain/workspaces.ts';
import { safeEqual } from '../../domain/identity.ts';
import { actorOf, ANONYMOUS } from '../../domain/audit.ts';
import { AppError } from '../../domain/errors.ts';
import { audit, audited } from '../audit.ts';
import { closeSessionsOfInactiveUsers } from '../../actors/sqlSessionKind.ts';
import { sessionCookie } from '../sessionCookie.ts';
import { openSignedInSession } from '../signedInSession.ts';
import { passwordMethodFor, signInWithPassword, type PasswordSignIn } from '../../domain/passwordSignIn.ts';

const Email = Schema.String.check(Schema.isPattern(/^[^@\s]+@[^@\s]+$/), Schema.isMaxLength(320));
const Password = Schema.String.check(Schema.isMinLength(8), Schema.isMaxLength(1024));
const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200));
const Role = Schema.Literals(['admin', 'member']);

/** A token's optional name, what it is for: shown in token lists, never a credential. */
const TokenName = Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))));
const UserIdParams = Schema.Struct({ user_id: Schema.String });
const SaParams = Schema.Struct({ service_account_id: Schema.String });
const SaPatParams = Schema.Struct({ service_account_id: Schema.String, pat_id: Schema.String });
const PatchPrincipal = Schema.Struct({
  name: Schema.optionalKey(Name),
  role: Schema.optionalKey(Role),
  is_active: Schema.optionalKey(Schema.Boolean),
});


/** Audits a role or activation change of a user or service account, in the change's own transaction. */
const roleChangeAudit =
  (ctx: AppContext, req: FastifyRequest, by: identity.Principal) => async (tx: Queryable, before: identity.UserRow, after: identity.UserRow) => {
    if (before.role === after.role && before.is_active === after.is_active) return;
    await audit(
      ctx,
      req,
      {
        action: 'user.role_change',
        outcome: 'success',
        actor: actorOf(by),
        target: { kind: after.kind, id: after.id },
        details: { role_from: before.role, role_to: after.role, is_active_from: before.is_active, is_active_to: after.is_active },
      },
      tx,
    );
  };

export const identityRoutes = [
  route({
    method: 'GET',
    path: '/api/setup/status',
    operationId: 'get_setup_status',
    summary: 'Whether the first admin still has to be created',
    tags: ['identity'],
    access: { kind: 'public' },
    responses: { 200: Schema.Struct({ needs_admin: Schema.Boolean }) },
    handler: async ({ ctx }) => ({ status: 200, body: { needs_admin: await identity.needsAdmin(ctx.db) } }),
  }),
  route({
    method: 'POST',
    path: '/api/setup/admin',
    operationId: 'create_setup_admin',
    summary: 'Create the first admin with the setup token (header X-Setup-Token)',
    tags: ['identity'],
    access: { kind: 'public' },
    body: Schema.Struct({ email: Email, password: Password, name: Name }),
    responses: { 201: identity.UserOutSchema, 403: null, 409: null },
    handler: async ({ ctx, req, body }) => {
      const given = req.headers['x-setup-token'];
      if (typeof given !== 'string' || !safeEqual(given, ctx.setupToken)) throw forbidden('wrong or missing setup token');
      const admin = await identity.createFirstAdmin(ctx.db, body, async (tx, a) => {
        const wsId = await createWorkspaceForAdmin(tx, a.id);
        for (const hook of ctx.onFirstAdmin) await hook(tx, a.id, wsId);
      });
      return { status: 201, body: identity.toUserOut(admin) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/auth/methods',
    operationId: 'get_auth_methods',
    summary: 'Sign-in methods offered',
    tags: ['identity'],
    access: { kind: 'public' },
    responses: {
      200: Schema.Struct({
        local: Schema.Boolean,
        ldap: Schema.Boolean,
        oidc_providers: Schema.Array(Schema.Struct({ id: Schema.String, label: Schema.String })),
      }),
    },
    handler: async ({ ctx }) => ({
      status: 200,
      body: { local: true, ldap: ctx.ldap !== null, oidc_providers: ctx.oidc.providers.map((p) => ({ id: p.id, label: p.label })) },
    }),
  }),
  route({
    method: 'POST',
    path: '/api/auth/login',
    operationId: 'create_login',
    summary: 'Sign in with email and password; sets the session cookie',
    tags: ['identity'],
    access: { kind: 'public' },
    // Refusals before the handler (a cross-site form, another content type, an unreadable body) are audited too.
    audit: { action: 'auth.login' },
    body: Schema.Struct({ email: Schema.String, password: Schema.String }),
    responses: { 200: identity.UserOutSchema, 401: null, 409: null, 503: null },
    handler: async ({ ctx, req, body }) => {
      const method = await passwordMethodFor(ctx.db, ctx.ldap, body.email);
      let signedIn: PasswordSignIn;
      try {
        signedIn = await signInWithPassword(ctx.db, ctx.ldap, method, body.email, body.password);
      } catch (e) {
        // The attempted email is kept (who was tried), never the password.
        if (e instanceof AppError) {
          await audit(ctx, req, { action: 'auth.login', outcome: 'failure', actor: { ...ANONYMOUS, email: body.email.slice(0, 320) }, details: { method, code: e.code } });
        }
        throw e;
      }
      const { user } = signedIn;
      const sid = await openSignedInSession(ctx, req, {
        user,
        created: signedIn.created,
        roleBefore: signedIn.roleBefore,
        login: { method },
        roleChange: { source: method },
      });
      return {
        status: 200,
        body: identity.toUserOut(user),
        headers: { 'set-cookie': sessionCookie(ctx, req, sid, ctx.config.SESSION_MAX_AGE_SECONDS) },
      };
    },
  }),
  route({
    method: 'POST',
    path: '/api/auth/logout',
    operationId: 'create_logout',
    summary: 'Sign out: deletes the session server-side',
    tags: ['identity'],
    access: { kind: 'public' },
    responses: { 204: null },
    handler: async ({ ctx, req }) => {
      const sid = req.cookies?.[SESSION_COOKIE];
      if (sid) {
        const p = await identity.principalFromSession(ctx.db, sid);
        await ctx.db.tx(async (q) => {
          await identity.deleteSession(joinTransaction(q), sid);
          if (p) await audit(ctx, req, { action: 'auth.logout', outcome: 'success', actor: actorOf(p), target: { kind: 'user', id: p.user.id } }, q);
        });
      }
      return { status: 204, headers: { 'set-cookie': sessionCookie(ctx, req, '', 0) } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/me',
    operationId: 'get_me',
    summary: 'The signed-in user',
    tags: ['identity'],
    access: { kind: 'authenticated' },
    responses: { 200: identity.UserOutSchema },
    handler: async ({ principal }) => ({ status: 200, body: identity.toUserOut(principal.user) }),
  }),
  route({
    method: 'POST',
    path: '/api/me/pats',
    operationId: 'create_my_pat',
    summary: 'Issue a personal access token, optionally named for what it is for (needs a browser session; the secret is shown once)',
    tags: ['tokens'],
    access: { kind: 'authenticated' },
    body: Schema.Struct({ expires_in_days: Schema.Finite.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 365 })), name: TokenName }),
    responses: { 201: identity.IssuedTokenSchema, 403: null, 409: null },
    handler: async ({ ctx, req, principal, body }) => {
      const issued = await audited(
        ctx,
        req,
        (db) => identity.issuePersonalToken(db, principal, body.expires_in_days, body.name ?? null),
        (issued) => ({ action: 'token.create', outcome: 'success', actor: actorOf(principal), target: { kind: 'access_token', id: issued.id }, details: { owner_id: principal.user.id, expires_at: issued.expires_at, name: issued.name } }),
      );
      return { status: 201, body: issued };
    },
  }),
  route({
    method: 'GET',
    path: '/api/me/pats',
    operationId: 'list_my_pats',
    summary: 'My live tokens; current marks the one authenticating this request',
    tags: ['tokens'],
    access: { kind: 'authenticated' },
    responses: { 200: Schema.Array(identity.TokenOutSchema) },
    handler: async ({ ctx, principal }) => ({
      status: 200,
      body: await identity.listTokens(ctx.db, principal.user.id, principal.tokenId),
    }),
  }),
  route({
    method: 'DELETE',
    path: '/api/me/pats/:pat_id',
    operationId: 'delete_my_pat',
    summary: 'Revoke one of my tokens (404 for anyone else’s)',
    tags: ['tokens'],
    access: { kind: 'authenticated' },
    params: Schema.Struct({ pat_id: Schema.String }),
    responses: { 204: null, 404: null },
    handler: async ({ ctx, req, principal, params }) => {
      await audited(
        ctx,
        req,
        (db) => identity.revokeToken(db, principal.user.id, params.pat_id),
        () => ({ action: 'token.revoke', outcome: 'success', actor: actorOf(principal), target: { kind: 'access_token', id: params.pat_id }, details: { owner_id: principal.user.id } }),
      );
      return { status: 204 };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/users',
    operationId: 'list_users',
    summary: 'Users, paged',
    tags: ['admin'],
    access: { kind: 'admin' },
    query: PageQuery,
    responses: { 200: pageOfSchema(identity.UserOutSchema) },
    handler: async ({ ctx, query }) => {
      const page = await identity.listPrincipals(ctx.db, 'user', { limit: query.limit ?? 100, cursor: query.cursor });
      return { status: 200, body: { ...page, items: page.items.map(identity.toUserOut) } };
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/users',
    operationId: 'create_user',
    summary: 'Create a local user',
    tags: ['admin'],
    access: { kind: 'admin' },
    body: Schema.Struct({ email: Email, name: Name, password: Password, role: Role }),
    responses: { 201: identity.UserOutSchema, 409: null },
    handler: async ({ ctx, req, principal, body }) => {
      const u = await audited(
        ctx,
        req,
        (db) => identity.createUser(db, body),
        (u) => ({ action: 'user.role_change', outcome: 'success', actor: actorOf(principal), target: { kind: 'user', id: u.id }, details: { created: true, role_to: u.role } }),
      );
      return { status: 201, body: identity.toUserOut(u) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/users/:user_id',
    operationId: 'update_user',
    summary: 'Rename, change role, activate or deactivate (deactivation revokes sessions and tokens)',
    tags: ['admin'],
    access: { kind: 'admin' },
    params: UserIdParams,
    body: PatchPrincipal,
    responses: { 200: identity.UserOutSchema, 404: null },
    handler: async ({ ctx, req, principal, params, body }) => {
      const user = await identity.updatePrincipal(ctx.db, 'user', params.user_id, body, roleChangeAudit(ctx, req, principal));
      if (body.is_active === false) await closeSessionsOfInactiveUsers(ctx.db, ctx.host, ctx.logger, user.id);
      return { status: 200, body: identity.toUserOut(user) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/users/:user_id/workspaces',
    operationId: 'list_user_workspaces',
    summary: 'The workspaces a user belongs to, with the role',
    tags: ['admin'],
    access: { kind: 'admin' },
    params: UserIdParams,
    responses: { 200: Schema.Array(Schema.Struct({ ...WorkspaceOutSchema.fields, role: Schema.String })) },
    handler: async ({ ctx, params }) => {
      const u = await identity.findUser(ctx.db, params.user_id);
      if (!u) throw notFound('user');
      const rows = await listUserWorkspaces(ctx.db, u.id);
      return { status: 200, body: await Promise.all(rows.map(async (r) => ({ ...(await toWorkspaceOut(ctx.db, r)), role: r.role }))) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/service-accounts',
    operationId: 'list_service_accounts',
    summary: 'Service accounts, paged',
    tags: ['admin'],
    access: { kind: 'admin' },
    query: PageQuery,
    responses: { 200: pageOfSchema(identity.ServiceAccountOutSchema) },
    handler: async ({ ctx, query }) => {
      const page = await identity.listPrincipals(ctx.db, 'service_account', { limit: query.limit ?? 100, cursor: query.cursor });
      return { status: 200, body: { ...page, items: page.items.map(identity.toServiceAccountOut) } };
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/service-accounts',
    operationId: 'create_service_account',
    summary: 'Create a service account',
    tags: ['admin'],
    access: { kind: 'admin' },
    body: Schema.Struct({ name: Name, role: Schema.optionalKey(Role) }),
    responses: { 201: identity.ServiceAccountOutSchema },
    handler: async ({ ctx, body }) => ({
      status: 201,
      body: identity.toServiceAccountOut(await identity.createServiceAccount(ctx.db, body)),
    }),
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/service-accounts/:service_account_id',
    operationId: 'update_service_account',
    summary: 'Rename, change role, activate or deactivate a service account',
    tags: ['admin'],
    access: { kind: 'admin' },
    params: SaParams,
    body: PatchPrincipal,
    responses: { 200: identity.ServiceAccountOutSchema, 404: null },
    handler: async ({ ctx, req, principal, params, body }) => {
      const account = await identity.updatePrincipal(ctx.db, 'service_account', params.service_account_id, body, roleChangeAudit(ctx, req, principal));
      if (body.is_active === false) await closeSessionsOfInactiveUsers(ctx.db, ctx.host, ctx.logger, account.id);
      return { status: 200, body: identity.toServiceAccountOut(account) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/service-accounts/:service_account_id/pats',
    operationId: 'create_service_account_pat',
    summary: 'Issue a service-account token, optionally named; expires_in_days may be null (never expires)',
    tags: ['admin'],
    access: { kind: 'admin' },
    params: SaParams,
    body: Schema.Struct({
      expires_in_days: Schema.NullOr(Schema.Finite.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 365 }))),
      name: TokenName,
    }),
    responses: { 201: identity.IssuedTokenSchema, 404: null, 409: null },
    handler: async ({ ctx, req, principal, params, body }) => {
      const issued = await audited(
        ctx,
        req,
        (db) => identity.issueServiceAccountToken(db, params.service_account_id, body.expires_in_days, body.name ?? null),
        (issued) => ({ action: 'token.create', outcome: 'success', actor: actorOf(principal), target: { kind: 'access_token', id: issued.id }, details: { owner_id: params.service_account_id, expires_at: issued.expires_at, name: issued.name } }),
      );
      return { status: 201, body: issued };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/service-accounts/:service_account_id/pats',
    operationId: 'list_service_account_pats',
    summary: 'A service account’s live tokens',
    tags: ['admin'],
    access: { kind: 'admin' },
    params: SaParams,
    responses: { 200: Schema.Array(identity.TokenOutSchema) },
    handler: async ({ ctx, params, principal }) => {
      const sa = await identity.findServiceAccount(ctx.db, params.service_account_id);
      return { status: 200, body: await identity.listTokens(ctx.db, sa.id, principal.tokenId) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/service-accounts/:service_account_id/pats/:pat_id',
    operationId: 'delete_service_account_pat',
    summary: 'Revoke a service-account token',
    tags: ['admin'],
    access: { kind: 'admin' },
    params: SaPatParams,
    responses: { 204: null, 404: null },
    handler: async ({ ctx, req, principal, params }) => {
      const sa = await identity.findServiceAccount(ctx.db, params.service_account_id);
      await audited(
        ctx,
        req,
        (db) => identity.revokeToken(db, sa.id, params.pat_id),
        () => ({ action: 'token.revoke', outcome: 'success', actor: actorOf(principal), target: { kind: 'access_token', id: params.pat_id }, details: { owner_id: sa.id } }),
      );
      return { status: 204 };
    },
  }),
];

