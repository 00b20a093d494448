// POST /v1/oauth/tokens: the OAuth2 client_credentials grant (form body or HTTP Basic client authentication).
// Errors follow RFC 6749 (OAuthTokenErrorResponse in the OpenAPI document), not the ErrorModel.
import type { FastifyInstance } from 'fastify';
import type { TokenIssuer } from '../auth.ts';

export function oauthRoutes(app: FastifyInstance, tokens: TokenIssuer): void {
  app.post('/v1/oauth/tokens', async (req, reply) => {
    const form = (req.body ?? {}) as Record<string, string>;
    if (form.grant_type !== 'client_credentials') {
      return reply.code(400).send({ error: 'unsupported_grant_type', error_description: 'only client_credentials is supported' });
    }
    let id = form.client_id;
    let secret = form.client_secret;
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) {
        id = decodeURIComponent(decoded.slice(0, colon));
        secret = decodeURIComponent(decoded.slice(colon + 1));
      }
    }
    // `scope` narrows the token (see catalog/auth.ts); `expires_in` asks for a shorter life than the service's default.
    const ttl = form.expires_in === undefined ? undefined : Number(form.expires_in);
    if (ttl !== undefined && !(Number.isFinite(ttl) && ttl > 0)) {
      return reply.code(400).send({ error: 'invalid_request', error_description: 'expires_in must be a positive number of seconds' });
    }
    const issued = id && secret ? tokens.issue(id, secret, { scope: form.scope, ttlSeconds: ttl }) : undefined;
    if (issued === 'invalid_scope') {
      return reply.code(400).send({ error: 'invalid_scope', error_description: 'scope items are warehouse:<name>:read or warehouse:<name>:write' });
    }
    if (!issued) return reply.code(401).send({ error: 'invalid_client', error_description: 'invalid client credentials' });
    return reply.code(200).send({
      access_token: issued.token,
      token_type: 'bearer',
      expires_in: issued.expiresIn,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      ...(form.scope ? { scope: form.scope } : {}),
    });
  });
}
