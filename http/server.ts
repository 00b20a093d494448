// The Fastify application: error envelope on every failure, authentication and access before input decoding,
// effect-Schema validation, OpenAPI generated from the same route declarations, and metrics per route.
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import { openApiSchema, swaggerOptions } from './openapi.ts';
import swaggerUi from '@fastify/swagger-ui';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { Cause, Exit, Schema } from 'effect';
import { AppError, derivedCode } from '../domain/errors.ts';
import { isDatabaseUnavailable } from '../runtime/db.ts';
import { fastEncoder, NOT_SURE } from '../runtime/schemaFastPath.ts';
import { alongFor, authenticate, authorize } from './auth.ts';
import type { AppContext } from '../usecases/context.ts';
import { decodePart, useJsonBodyParser, type RouteDef } from './route.ts';
import { auditRefusal, auditRouteSuccess } from './audit.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import type { Principal } from '../domain/identity.ts';
import { traceRequests } from '../telemetry/requestTracing.ts';
import { nulAt } from '../runtime/nulBytes.ts';
import { parseTrustedProxies } from '../runtime/trustedProxies.ts';
import { configuredOrigins, JSON_ONLY, refuseCrossSite, refuseMediaType, type CrossSiteOptions } from './crossSite.ts';

export interface ServerOptions {
  ctx: AppContext;
  routes: RouteDef[];
  /** hook for subsystems that register non-REST handlers (agent WebSocket, UI, /internal) */
  extend?: (app: FastifyInstance) => Promise<void> | void;
}

/** The error body: the spec's `{error, message, details}` (details always an object, empty when there is nothing to
 *  add), plus `detail: {error, detail}` for clients written against api_version 1 that read only `detail`. */
export function envelope(code: string, message: string, details?: Record<string, unknown>) {
  return { error: code, message, details: details ?? {}, detail: { error: code, detail: message } };
}

/** JSON with 64-bit integers as strings: a BigInt never fails a response. */
export const toJson = (data: unknown): string => {
  // Plain JSON.stringify first: a replacer is a call per value, which tripled the cost of a 1,000-row page. Only a
  // body holding a BigInt (which plain stringify refuses) pays for it.
  try {
    return JSON.stringify(data);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    return JSON.stringify(data, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  }
};

/** A NUL in a request (see runtime/nulBytes.ts) is a 422 naming where it was, like any other refused field. */
function refuseNul(at: string | undefined) {
  if (at === undefined) return;
  const [where, ...rest] = at.split('.');
  const field = rest.length ? rest.join('.') : where;
  const message = 'must not contain a NUL character (U+0000)';
  throw new AppError(422, 'unprocessable_content', `invalid ${where}: ${field}: ${message}`, { fields: [{ field, in: where, message }] });
}

const MAX_PARAM_LENGTH = 500;

const sendError = (_req: FastifyRequest, reply: FastifyReply, status: number, code: string, message: string, details?: Record<string, unknown>) =>
  reply.status(status).type('application/json').send(envelope(code, message, details));

/**
 * A request Node's HTTP parser refuses (malformed, headers too large, too slow) never reaches Fastify: it is answered
 * on the socket, in the envelope, and the connection closed (as Node and Fastify's default handler do).
 */
function rawClientError(err: NodeJS.ErrnoException, socket: Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request_timeout', 'the request was not received in time']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'the request headers exceed the size this server accepts']
        : [400, 'bad_request', 'the request is not valid HTTP'];
  const body = JSON.stringify(envelope(code, message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

const pathRegex = (path: string) => new RegExp('^' + path.replace(/:[A-Za-z_]+/g, '[^/]+') + '/?$');

export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  const { ctx } = opts;
  const options: FastifyServerOptions = {
    logger: false,
    bodyLimit: ctx.config.BODY_LIMIT_BYTES,
    genReqId: () => randomUUID(),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Errors the framework answers before any hook (a malformed escape, an over-long path segment): the envelope too.
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id);
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
        return sendError(req, reply, 414, 'uri_too_long', `a path segment is longer than ${MAX_PARAM_LENGTH} characters`);
      }
      if (err.code === 'FST_ERR_BAD_URL') return sendError(req, reply, 400, 'bad_request', 'the url holds a malformed percent-escape');
      return sendError(req, reply, 400, 'bad_request', String(err.message));
    },
    // A request arriving while the server closes: Fastify's own 503 body is not the envelope, so it is answered by
    // the onRequest hook below instead.
    return503OnClosing: false,
    clientErrorHandler: rawClientError,
  };
  const app: FastifyInstance = Fastify(options);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => toJson);

  useJsonBodyParser(app);
  // Semantic-layer imports send YAML; its routes read the text themselves.
  app.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
  await app.register(cookie);
  await app.register(swagger, swaggerOptions(ctx.version));
  await app.register(swaggerUi, { routePrefix: '/api/docs' });

  // When each request started, for the latency metric.
  const startedAt = new WeakMap<FastifyRequest, bigint>();
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    // Draining: each answer ends its connection, so a keep-alive client does not hold the shutdown open.
    if (ctx.draining.value) reply.header('connection', 'close');
    startedAt.set(req, process.hrtime.bigint());
    if (closing) {
      reply.header('connection', 'close');
      throw new AppError(503, 'unavailable', 'this replica is shutting down; retry on another', undefined, { 'retry-after': '1' });
    }
    refuseNul(nulAt(req.params, 'path') ?? nulAt(req.query, 'query') ?? (/%00/i.test(req.url) ? 'path' : undefined));
  });
  // After parsing and before any handler (REST, /mcp, /internal): a NUL in a JSON or YAML body never gets further.
  app.addHook('preValidation', async (req) => refuseNul(nulAt(req.body, 'body')));
  if (ctx.tracing.enabled) traceRequests(app, ctx.tracing, (req) => ({ 'eider.request_id': req.id, 'eider.replica_id': ctx.config.REPLICA_ID }));
  app.addHook('onResponse', async (req, reply) => {
    if (!ctx.metrics) return;
    const routeLabel = req.routeOptions?.url ?? 'unrouted';
    const labels = { method: req.method, route: routeLabel, status: String(reply.statusCode) };
    ctx.metrics.requests.inc(labels);
    const started = startedAt.get(req);
    if (started) ctx.metrics.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof AppError) {
      if (err.headers) for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
      return sendError(req, reply, err.status, err.code, err.message, err.details);
    }
    // The database down or restarting is an outage to wait out, not a fault of the request: 503, and said so.
    if (isDatabaseUnavailable(err)) {
      ctx.logger.warn({ reqId: req.id, method: req.method, url: req.url, err: String(err?.message ?? err) }, 'database unavailable');
      return sendError(req, reply, 503, 'unavailable', 'the database is not reachable; try again shortly');
    }
    const status: number = typeof err?.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 500) {
      ctx.logger.error({ reqId: req.id, method: req.method, url: req.url, err }, 'unhandled error');
      return sendError(req, reply, 500, 'internal_error', 'internal server error');
    }
    const fastifyCode: string | undefined = err?.code;
    const code =
      fastifyCode === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
        ? 'bad_request' // the spec's code for a 400; the message says what was wrong
        : fastifyCode === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'payload_too_large'
          : fastifyCode === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
            ? 'unsupported_media_type'
            : derivedCode(status);
    const message =
      code === 'bad_request' && (fastifyCode === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError)
        ? 'request body is not valid JSON'
        : code === 'payload_too_large'
          ? `request body exceeds ${ctx.config.BODY_LIMIT_BYTES} bytes`
          : String(err?.message ?? 'bad request');
    return sendError(req, reply, status, code, message);
  });

  const patterns = opts.routes.map((r) => ({ method: r.method, re: pathRegex(r.path) }));
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    const allowed = [...new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method))];
    if (allowed.length && !(allowed as string[]).includes(req.method)) {
      reply.header('allow', allowed.join(', '));
      // The spec's derived code for a 4xx it names no code for (Errors 2); the Allow header says what would do.
      return sendError(req, reply, 405, 'bad_request', `${req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`);
    }
    return sendError(req, reply, 404, 'not_found', `no route for ${req.method} ${path}`);
  });

  const crossSite: CrossSiteOptions = {
    trusted: parseTrustedProxies(ctx.config.TRUSTED_PROXIES),
    allowedOrigins: configuredOrigins(ctx.config.CORS_ORIGINS, ctx.config.OIDC_REDIRECT_BASE_URL),
  };
  for (const def of opts.routes) registerRoute(app, ctx, def, crossSite);
  await opts.extend?.(app);

  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}

/**
 * The body as its declared schema encodes it: fields the schema does not name are dropped, so a handler can never
 * leak a column it happened to read. A body its schema refuses is a bug of ours: it is logged and answered 500.
 */
function encodeResponse(def: RouteDef, status: number, body: unknown): unknown {
  const schema = def.responses[status];
  if (!schema) return body;
  const fast = fastEncoder(schema);
  const encoded = fast ? fast(body) : NOT_SURE;
  if (encoded !== NOT_SURE) return encoded;
  const exit = Schema.encodeUnknownExit(schema as Schema.Codec<unknown, unknown>)(body);
  if (Exit.isSuccess(exit)) return exit.value;
  throw new Error(`${def.operationId} answered ${status} with a body its schema refuses: ${String(Cause.squash(exit.cause)).slice(0, 500)}`);
}

function registerRoute(app: FastifyInstance, ctx: AppContext, def: RouteDef, crossSite: CrossSiteOptions) {
  app.route({
    method: def.method,
    url: def.path,
    schema: openApiSchema(def),
    handler: async (req, reply) => {
      const rawParams = (req.params ?? {}) as Record<string, string>;
      let principal: Principal | undefined;
      let ws: WorkspaceAccess | undefined;
      let along: Record<string, unknown> | undefined;
      let atAccess = true;
      let inHandler = false;
      let out: Awaited<ReturnType<RouteDef['handler']>>;
      const watch = def.watchFirst?.(rawParams, req.query, ctx) ?? null;
      try {
        // A refusal here (cross-site, no sign-in) is audited only for a public route that declares its action (a
        // sign-in): a signed-in caller's is audited below, once it is known.
        refuseCrossSite(req, crossSite);
        const alongRead = alongFor(def, rawParams, ctx);
        const caller = await authenticate(ctx.db, req, { ignoreStaleCookie: def.access.kind === 'public', along: alongRead });
        principal = caller?.principal;
        along = alongRead && def.access.kind !== 'workspace' ? caller?.along : undefined;
        ws = await authorize(ctx.db, def.access, caller, rawParams);
        atAccess = false;
        def.gate?.(ctx);
        refuseMediaType(req, def.consumes ?? JSON_ONLY);
        const params = decodePart(def.params, rawParams, 'path');
        const query = decodePart(def.query, req.query, 'query');
        const body = def.body ? decodePart(def.body, req.body === undefined || req.body === null ? undefined : req.body, 'body') : undefined;
        inHandler = true;
        out = await def.handler({ ctx, principal: principal!, params, query, body, ws, along, watch, req, reply });
      } catch (e) {
        await auditRefusal(ctx, req, def, principal, ws, e, atAccess, inHandler);
        throw e;
      } finally {
        watch?.cancel();
      }
      await auditRouteSuccess(ctx, req, def, principal, ws);
      if (out.headers) for (const [k, v] of Object.entries(out.headers)) reply.header(k, v);
      reply.status(out.status);
      if (out.status === 204 || out.body === undefined) return reply.send();
      // A raw route's handler may name its own media type (an export's format) in its headers.
      if (def.produces) return (out.headers?.['content-type'] ? reply : reply.type(def.produces)).send(out.body);
      return reply.type('application/json').send(encodeResponse(def, out.status, out.body));
    },
  });
}
