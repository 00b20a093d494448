// OAuth2 client_credentials for the catalog (POST /v1/oauth/tokens) and bearer-token checks on every other route.
// Tokens are stateless (HMAC over their claims) so that any catalog replica accepts them and nothing but PostgreSQL
// holds state; rotating CATALOG_CLIENT_SECRET invalidates every token issued before.
//
// A token may be scoped (OAuth2 `scope`: `warehouse:<name>:read` or `warehouse:<name>:write`, space-separated): the
// api mints one per dispatched query, limited to the catalogs that query may use, read or write, and living only as
// long as the query may run. The catalog service is then the second line of I10: a leaked agent-side token reaches
// nothing else. A token without a scope is the api's own (every warehouse, and the management routes).
import { createHmac, timingSafeEqual } from 'node:crypto';

const TOKEN_PREFIX = 'eidc1';

type WarehouseAccess = 'read' | 'write';

export interface TokenClaims {
  sub: string;
  realm: string;
  exp: number;
  /** warehouse → access; absent: the unscoped token of the client itself */
  scope?: Record<string, WarehouseAccess>;
}

export interface TokenIssuer {
  /** Checks client credentials; returns a token, undefined when they are wrong, or 'invalid_scope'. */
  issue(clientId: string, clientSecret: string, request?: { scope?: string; ttlSeconds?: number }): { token: string; expiresIn: number } | 'invalid_scope' | undefined;
  /** The claims of a bearer token this service issued and that has not expired. */
  verify(token: string): TokenClaims | undefined;
}

const VERIFIED_MAX = 1024;

const SCOPE_ITEM = /^warehouse:([^\s:]+):(read|write)$/;

/**
 * `warehouse:a:read warehouse:b:write` → {a: 'read', b: 'write'}. Items that do not start with `warehouse:` are the
 * conventional ones other clients send (`catalog`, `PRINCIPAL_ROLE:ALL`) and narrow nothing: with no warehouse item
 * the token is unscoped (undefined). A malformed `warehouse:` item is refused (null).
 */
function parseScope(scope: string): Record<string, WarehouseAccess> | null | undefined {
  const out: Record<string, WarehouseAccess> = {};
  let scoped = false;
  for (const item of scope.split(/\s+/).filter(Boolean)) {
    if (!item.startsWith('warehouse:')) continue;
    const m = SCOPE_ITEM.exec(item);
    if (!m) return null;
    scoped = true;
    const name = decodeURIComponent(m[1]);
    if (out[name] !== 'write') out[name] = m[2] as WarehouseAccess;
  }
  return scoped ? out : undefined;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function makeTokenIssuer(opts: { clientId: string; clientSecret: string; realm: string; ttlSeconds: number }): TokenIssuer {
  const key = createHmac('sha256', opts.clientSecret).update(`eider-catalog-token:${opts.realm}`).digest();
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url');
  // Tokens whose signature checked out, by their full text: a client sends the same one on every request, and the
  // HMAC was a noticeable part of a small request. Expiry is still checked on every use.
  const verified = new Map<string, TokenClaims>();
  return {
    issue(clientId, clientSecret, request = {}) {
      if (!equal(clientId, opts.clientId) || !equal(clientSecret, opts.clientSecret)) return undefined;
      const scope = request.scope ? parseScope(request.scope) : undefined;
      if (scope === null) return 'invalid_scope';
      const ttl = Math.max(1, Math.min(opts.ttlSeconds, Math.floor(request.ttlSeconds ?? opts.ttlSeconds)));
      // Rounded up: a token lives at least the seconds it was issued for (rounded down, a 1-second token issued late
      // in a second was dead within milliseconds).
      const claims: TokenClaims = { sub: clientId, realm: opts.realm, exp: Math.ceil(Date.now() / 1000) + ttl, ...(scope ? { scope } : {}) };
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      return { token: `${TOKEN_PREFIX}.${payload}.${sign(payload)}`, expiresIn: ttl };
    },
    verify(token) {
      const known = verified.get(token);
      if (known) return known.exp > Date.now() / 1000 ? known : undefined;
      const [prefix, payload, sig] = token.split('.');
      if (prefix !== TOKEN_PREFIX || !payload || !sig || !equal(sig, sign(payload))) return undefined;
      let claims: TokenClaims;
      try {
        claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims;
      } catch {
        return undefined;
      }
      if (!(typeof claims.exp === 'number' && claims.exp > Date.now() / 1000 && claims.realm === opts.realm)) return undefined;
      verified.set(token, claims);
      if (verified.size > VERIFIED_MAX) verified.delete(verified.keys().next().value!);
      return claims;
    },
  };
}

/**
 * Whether a token's scope allows a request: the management routes need the unscoped token; `/v1/config` and every
 * `/v1/{prefix}/…` route need the warehouse in scope, and a change (any method but GET and HEAD) needs `write`.
 */
export function scopeAllows(claims: TokenClaims, method: string, path: string, query: Record<string, string | undefined>): string | null {
  const scope = claims.scope;
  if (!scope) return null;
  if (path.startsWith('/management/')) return 'a scoped token cannot manage warehouses';
  const warehouse = path === '/v1/config' ? query.warehouse : /^\/v1\/([^/]+)\//.exec(path)?.[1];
  if (warehouse === undefined) return null;
  const name = decodeURIComponent(warehouse);
  const access = scope[name];
  if (!access) return `this token does not cover warehouse ${name}`;
  const change = method !== 'GET' && method !== 'HEAD';
  if (change && access !== 'write') return `this token may only read warehouse ${name}`;
  return null;
}
