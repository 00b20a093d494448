// HTTP helpers shared by the catalog routes: 64-bit-safe JSON replies, the ErrorModel error handler, namespace
// path decoding and page tokens.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../runtime/db.ts';
import { stringifyJson, parseJson } from '../iceberg/json.ts';
import { CatalogError, badRequest, unprocessable } from './errors.ts';
import { nulAt } from '../runtime/nulBytes.ts';
import { NS_SEP, getWarehouse, type Warehouse } from './metastore.ts';

export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json').send(stringifyJson(body));
}

/** Request bodies go through the 64-bit-safe parser (snapshot ids in commits); forms for the OAuth endpoint. */
export function installParsers(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, (body as string).length ? parseJson(body as string) : undefined);
    } catch {
      done(badRequest('request body is not valid JSON'), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | CatalogError, req, reply) => {
    if (err instanceof CatalogError) return sendJson(reply, err.status, err.toBody());
    if (err?.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendJson(reply, err.statusCode, { error: { message: err.message, type: 'BadRequestException', code: err.statusCode } });
    }
    req.log.error({ err }, 'catalog request failed');
    return sendJson(reply, 500, { error: { message: 'internal error', type: 'InternalServerError', code: 500 } });
  });
  app.setNotFoundHandler((req, reply) =>
    sendJson(reply, 404, { error: { message: `no route for ${req.method} ${req.url.split('?')[0]}`, type: 'NotFoundException', code: 404 } }),
  );
}

/**
 * A NUL in the path, query or body is refused with 422 before authentication or a route reads the metastore
 * (PostgreSQL text cannot hold one: it answered 500). Installed before every other hook.
 */
export function refuseNulBytes(app: FastifyInstance): void {
  const refuse = (at: string | undefined) => {
    if (at !== undefined) throw unprocessable(`${at} must not contain a NUL character (U+0000)`);
  };
  app.addHook('onRequest', async (req) => refuse(nulAt(req.params, 'path') ?? nulAt(req.query, 'query') ?? (/%00/i.test(req.url) ? 'path' : undefined)));
  app.addHook('preValidation', async (req) => refuse(nulAt(req.body, 'body')));
}

/** A namespace path parameter: levels joined by U+001F (the client sends %1F). */
export function namespaceParam(raw: string): string[] {
  const levels = raw.split(NS_SEP);
  if (levels.some((l) => l.length === 0)) throw badRequest(`invalid namespace: ${JSON.stringify(raw)}`);
  return levels;
}

const readByHook = new WeakMap<FastifyRequest, Warehouse>();

/** Keeps the warehouse the request hook read (a write's read-only check) for the route to use. */
export function rememberWarehouse(req: FastifyRequest, w: Warehouse): void {
  readByHook.set(req, w);
}

/** The request's warehouse: the hook's read of it for this same request when there was one, else read now. */
export async function requestWarehouse(db: Queryable, req: FastifyRequest, name: string): Promise<Warehouse> {
  const w = readByHook.get(req);
  return w && w.name === name ? w : getWarehouse(db, name);
}

/**
 * `first` and `then()` asked at once, as two statements on two of the pool's connections: a load and a namespace
 * listing read the warehouse and then what is in it, and those two round trips to PostgreSQL one after the other
 * were most of the request's time. The answer is what asking in turn gave: `first`'s failure when both fail (a
 * missing warehouse before a missing table), and a synchronous throw of `then` is its failure.
 */
export async function atOnce<A, B>(first: Promise<A>, then: () => Promise<B>): Promise<[A, B]> {
  const second = (async () => then())();
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}

export interface Page {
  after: string | undefined;
  limit: number;
  /** Whether the client asked for pages (pageSize given). */
  paged: boolean;
}

const MAX_UNPAGED = 10_000;

export function pageParams(query: { pageToken?: string; pageSize?: string }): Page {
  let limit = MAX_UNPAGED;
  let paged = false;
  if (query.pageSize !== undefined && query.pageSize !== '') {
    const n = Number(query.pageSize);
    if (!Number.isInteger(n) || n < 1) throw badRequest('pageSize must be a positive integer');
    limit = Math.min(n, 1000);
    paged = true;
  }
  let after: string | undefined;
  if (query.pageToken) {
    after = Buffer.from(query.pageToken, 'base64url').toString('utf8');
    paged = true;
  }
  return { after, limit, paged };
}

export const pageToken = (lastKey: string) => Buffer.from(lastKey, 'utf8').toString('base64url');
