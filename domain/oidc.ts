// OpenID Connect sign-in (docs/api-decisions.md "Federated sign-in") with openid-client, a certified relying party:
// discovery from each provider's server_metadata_url, the authorization code flow with PKCE (S256), state and nonce.
// The handshake (provider, state, nonce, PKCE verifier) travels in a short-lived cookie signed with SECRET_KEY, so
// any replica can finish a sign-in another one started. Any failure of the handshake or an error from the provider
// is 400 oidc_failed and establishes nothing.
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import type { OidcProviderConfig } from '../runtime/config.ts';
import { AppError, badRequest, unavailable } from './errors.ts';

export const HANDSHAKE_COOKIE = 'eider_oidc';
/** A sign-in has ten minutes to come back from the provider. */
export const HANDSHAKE_MAX_AGE_S = 600;

export interface Handshake {
  provider: string;
  state: string;
  nonce: string;
  verifier: string;
  /** where the provider sends the browser back: the exact redirect_uri of the authorization request */
  redirectUri: string;
  /** epoch seconds after which the handshake is refused */
  exp: number;
}

interface OidcIdentity {
  subject: string;
  email: string;
  name: string;
  groups: string[];
}

const failed = (why: string) => badRequest(`OIDC sign-in failed: ${why}`, 'oidc_failed');

// ---- the signed handshake cookie ------------------------------------------------------------------------------

const mac = (key: string, body: string) => createHmac('sha256', key).update(`eider-oidc-handshake:${body}`).digest('base64url');

export function sealHandshake(key: string, h: Handshake): string {
  const body = Buffer.from(JSON.stringify(h)).toString('base64url');
  return `${body}.${mac(key, body)}`;
}

/** The handshake the cookie carries, checked against its signature, its provider and its age. */
export function openHandshake(key: string, cookie: string | undefined, provider: string, now = Date.now()): Handshake {
  if (!cookie) throw failed('no sign-in is in progress in this browser (the handshake cookie is missing)');
  const [body, sig] = cookie.split('.');
  if (!body || !sig) throw failed('the handshake cookie is malformed');
  const want = Buffer.from(mac(key, body));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got)) throw failed('the handshake cookie was altered');
  let h: Handshake;
  try {
    h = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Handshake;
  } catch {
    throw failed('the handshake cookie is malformed');
  }
  if (h.provider !== provider) throw failed('the sign-in was started with another provider');
  if (typeof h.exp !== 'number' || h.exp * 1000 < now) throw failed('the sign-in took too long; start again');
  return h;
}

// ---- the relying party ----------------------------------------------------------------------------------------

export interface OidcClients {
  providers: readonly OidcProviderConfig[];
  find(id: string): OidcProviderConfig | undefined;
  /** Starts a sign-in: the provider's authorization URL and the handshake to keep in the browser. */
  begin(p: OidcProviderConfig, redirectUri: string): Promise<{ url: string; handshake: Handshake }>;
  /** Finishes it: exchanges the code (checking state, nonce and PKCE) and reads the user's claims. */
  finish(p: OidcProviderConfig, h: Handshake, callbackUrl: URL): Promise<OidcIdentity>;
}

export function oidcClients(providers: readonly OidcProviderConfig[], opts: { timeoutS?: number } = {}): OidcClients {
  const configs = new Map<string, Promise<client.Configuration>>();
  const timeout = opts.timeoutS ?? 10;
  // Discovery once per provider, again after a failure (a provider that was down at the first sign-in).
  const configOf = (p: OidcProviderConfig) => {
    let c = configs.get(p.id);
    if (!c) {
      const url = new URL(p.server_metadata_url);
      c = client.discovery(url, p.client_id, p.client_secret ?? undefined, undefined, {
        timeout,
        // Plain http only when the operator configured an http:// provider (a provider on the same host or network).
        execute: url.protocol === 'http:' ? [client.allowInsecureRequests] : [],
      });
      c.catch(() => configs.delete(p.id));
      configs.set(p.id, c);
    }
    return c.catch((e: unknown) => {
      throw unavailable(`identity provider ${p.id} cannot be reached (${(e as { code?: string }).code ?? (e as Error).name})`, 'oidc_unavailable');
    });
  };

  return {
    providers,
    find: (id) => providers.find((p) => p.id === id),
    async begin(p, redirectUri) {
      const config = await configOf(p);
      const verifier = client.randomPKCECodeVerifier();
      const handshake: Handshake = {
        provider: p.id,
        state: client.randomState(),
        nonce: client.randomNonce(),
        verifier,
        redirectUri,
        exp: Math.floor(Date.now() / 1000) + HANDSHAKE_MAX_AGE_S,
      };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: p.scopes,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: handshake.state,
        nonce: handshake.nonce,
      });
      return { url: url.href, handshake };
    },
    async finish(p, h, callbackUrl) {
      const config = await configOf(p);
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: h.verifier,
          expectedState: h.state,
          expectedNonce: h.nonce,
          idTokenExpected: true,
        });
      } catch (e) {
        throw failed(describe(e));
      }
      const idClaims = tokens.claims();
      if (!idClaims) throw failed('the provider returned no ID token');
      let claims: Record<string, unknown> = { ...idClaims };
      // Providers put email and groups in the ID token or only in userinfo: ask userinfo when one is missing.
      if (claims.email === undefined || claims[p.groups_claim] === undefined) {
        try {
          claims = { ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)), ...claims };
        } catch (e) {
          throw failed(`userinfo: ${describe(e)}`);
        }
      }
      if (typeof claims.email !== 'string' || !claims.email) throw failed('the provider gave no email address (is the email scope granted?)');
      // An unverified address could be anyone's: it never names an account here.
      if (claims.email_verified === false) throw failed('the provider has not verified this email address');
      const g = claims[p.groups_claim];
      const groups = Array.isArray(g) ? g.filter((x): x is string => typeof x === 'string') : typeof g === 'string' ? [g] : [];
      const name = typeof claims.name === 'string' && claims.name ? claims.name : claims.email;
      return { subject: idClaims.sub, email: claims.email, name, groups };
    },
  };
}

/** The reason a provider exchange failed, for the 400's message: error codes and names, never tokens. */
function describe(e: unknown): string {
  if (e instanceof AppError) return e.message;
  if (e instanceof client.AuthorizationResponseError) return `the provider answered ${e.error}`;
  if (e instanceof client.ResponseBodyError) return `the provider refused the code (${e.error})`;
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code.toLowerCase().replace(/^oauth_/, '').replaceAll('_', ' ') : 'the provider’s answer was refused';
}

/** The role a provider's groups map to through group_role_map: admin wins; null when no map is configured. */
export function roleFromClaimGroups(groups: readonly string[], map: Readonly<Record<string, 'admin' | 'member'>>): 'admin' | 'member' | null {
  const entries = Object.entries(map);
  if (entries.length === 0) return null;
  return groups.some((g) => map[g] === 'admin') ? 'admin' : 'member';
}
