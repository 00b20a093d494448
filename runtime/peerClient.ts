// Calls to another api replica's private /internal API, authenticated by INTERNAL_API_SECRET. With no secret,
// forwarding is off (spec: an agent held elsewhere is then treated as unreachable).
import { createHash, timingSafeEqual } from 'node:crypto';

export const INTERNAL_SECRET_HEADER = 'x-internal-secret';

export class PeerUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PeerUnreachableError';
  }
}

export interface PeerClient {
  readonly enabled: boolean;
  /** POSTs JSON to `path` on the replica at `baseUrl`; the parsed answer, or null for an empty one. */
  post(baseUrl: string, path: string, body: unknown): Promise<{ status: number; body: unknown }>;
  /** Headers that authenticate a request to a peer (for streamed calls made elsewhere). */
  headers(): Record<string, string>;
}

export function peerClient(secret: string, timeoutMs = 5_000): PeerClient {
  return {
    enabled: secret !== '',
    headers: () => ({ [INTERNAL_SECRET_HEADER]: secret }),
    async post(baseUrl, path, body) {
      let r: Response;
      try {
        r = await fetch(new URL(path, baseUrl), {
          method: 'POST',
          headers: { 'content-type': 'application/json', [INTERNAL_SECRET_HEADER]: secret },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (e) {
        throw new PeerUnreachableError(`replica ${baseUrl} did not answer`, { cause: e });
      }
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : null };
    },
  };
}

/** Constant-time comparison of a presented secret with the configured one; an empty configured secret never
 *  matches. */
export function internalSecretMatches(configured: string, presented: string | undefined): boolean {
  if (!configured || typeof presented !== 'string') return false;
  // Digests first: equal lengths for timingSafeEqual, and no length leak.
  const a = createHash('sha256').update(configured).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}
