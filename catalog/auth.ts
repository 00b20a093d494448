// OAuth2 client_credentials for the catalog (POST /v1/oauth/tokens) and bearer-token checks on every other route.
// Tokens are stateless (HMAC over {client, realm, expiry}) so that any catalog replica accepts them and nothing
// but PostgreSQL holds state; rotating CATALOG_CLIENT_SECRET invalidates every token issued before.
import { createHmac, timingSafeEqual } from 'node:crypto';

const TOKEN_PREFIX = 'eidc1';

export interface TokenIssuer {
  /** Checks client credentials; returns a token or undefined when they are wrong. */
  issue(clientId: string, clientSecret: string): { token: string; expiresIn: number } | undefined;
  /** True when the bearer token is one this service issued and it has not expired. */
  verify(token: string): boolean;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function makeTokenIssuer(opts: { clientId: string; clientSecret: string; realm: string; ttlSeconds: number }): TokenIssuer {
  const key = createHmac('sha256', opts.clientSecret).update(`eider-catalog-token:${opts.realm}`).digest();
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url');
  return {
    issue(clientId, clientSecret) {
      if (!equal(clientId, opts.clientId) || !equal(clientSecret, opts.clientSecret)) return undefined;
      const exp = Math.floor(Date.now() / 1000) + opts.ttlSeconds;
      const payload = Buffer.from(JSON.stringify({ sub: clientId, realm: opts.realm, exp })).toString('base64url');
      return { token: `${TOKEN_PREFIX}.${payload}.${sign(payload)}`, expiresIn: opts.ttlSeconds };
    },
    verify(token) {
      const [prefix, payload, sig] = token.split('.');
      if (prefix !== TOKEN_PREFIX || !payload || !sig || !equal(sig, sign(payload))) return false;
      try {
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
        return typeof claims.exp === 'number' && claims.exp > Date.now() / 1000 && claims.realm === opts.realm;
      } catch {
        return false;
      }
    },
  };
}
