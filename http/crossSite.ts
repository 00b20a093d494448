// Requests a browser may send on a user's behalf from another site. A session cookie goes with a form POST from any
// page of the same site (SameSite=Lax does not stop a page on 127.0.0.1:9000 from posting to 127.0.0.1:8000), so:
// - an unsafe request (POST, PUT, PATCH, DELETE) without a bearer token must come from the api's own origin when the
//   browser says where it comes from (Origin, else Referer); `Origin: null` (sandboxed frames, opaque origins) never
//   does;
// - every unsafe request's Content-Type must be one its route declares (JSON unless it says otherwise), which leaves a
//   form nothing to send: forms can only post urlencoded, multipart or text/plain.
// A bearer token is set by a program, never by a browser on its own, so it needs neither check for the origin.
import type { FastifyRequest } from 'fastify';
import { AppError, forbidden } from '../domain/errors.ts';
import type { TrustedProxies } from '../runtime/trustedProxies.ts';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const JSON_ONLY: readonly string[] = ['application/json'];

/** The peer is a proxy we believe (TRUSTED_PROXIES): its X-Forwarded-* headers say how the client reached us. */
const viaTrustedProxy = (req: FastifyRequest, trusted: TrustedProxies) => trusted.trusts(req.socket.remoteAddress ?? '');

const firstForwarded = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim().toLowerCase();

/** Whether the client reached the api over HTTPS: a TLS socket, or a trusted proxy saying `X-Forwarded-Proto: https`. */
export function reachedOverHttps(req: FastifyRequest, trusted: TrustedProxies): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  return viaTrustedProxy(req, trusted) && firstForwarded(req.headers['x-forwarded-proto']) === 'https';
}

/** The origins the api itself is reached at for this request: as addressed (Host, or a trusted proxy's forwarded host). */
function ownOrigin(req: FastifyRequest, trusted: TrustedProxies): string | undefined {
  const proxied = viaTrustedProxy(req, trusted);
  const host = (proxied ? firstForwarded(req.headers['x-forwarded-host']) : undefined) ?? req.headers.host?.toLowerCase();
  if (!host) return undefined;
  return `${reachedOverHttps(req, trusted) ? 'https' : 'http'}://${host}`;
}

const originOf = (url: string): string | undefined => {
  try {
    const u = new URL(url);
    return u.origin === 'null' ? undefined : u.origin;
  } catch {
    return undefined;
  }
};

export interface CrossSiteOptions {
  trusted: TrustedProxies;
  /** configured origins the api is also reached at: CORS_ORIGINS and the public URL (OIDC_REDIRECT_BASE_URL) */
  allowedOrigins: ReadonlySet<string>;
}

/** The configured origins from CORS_ORIGINS and the public base URL, normalised (`https://host[:port]`). */
export function configuredOrigins(corsOrigins: string, publicUrl: string): Set<string> {
  const out = new Set<string>();
  for (const o of [...corsOrigins.split(/[\s,]+/), publicUrl]) {
    const origin = o.trim() ? originOf(o.trim()) : undefined;
    if (origin) out.add(origin);
  }
  return out;
}

/** 403 `cross_site_request` when a browser sent an unsafe request from a page of another origin. */
export function refuseCrossSite(req: FastifyRequest, opts: CrossSiteOptions): void {
  if (!UNSAFE.has(req.method) || req.headers.authorization !== undefined) return;
  const origin = req.headers.origin;
  const from = origin !== undefined ? (origin === 'null' ? 'null' : (originOf(origin) ?? origin)) : req.headers.referer ? (originOf(req.headers.referer) ?? 'null') : undefined;
  // Neither header: not a browser (browsers send Origin with every POST, PUT, PATCH and DELETE).
  if (from === undefined) return;
  const own = ownOrigin(req, opts.trusted);
  if (from === own || opts.allowedOrigins.has(from)) return;
  throw forbidden(`a ${req.method} from ${from} is refused: only pages of this server may send it with a session cookie (use a bearer token)`, 'cross_site_request');
}

/** 415 when an unsafe request's Content-Type is not one its route declares. */
export function refuseMediaType(req: FastifyRequest, accepted: readonly string[]): void {
  if (!UNSAFE.has(req.method)) return;
  const header = req.headers['content-type'];
  if (header === undefined) return;
  const media = header.split(';')[0].trim().toLowerCase();
  if (accepted.includes(media)) return;
  throw new AppError(415, 'unsupported_media_type', `Content-Type ${media || '(empty)'} is not accepted here; send ${accepted.join(' or ')}`);
}
