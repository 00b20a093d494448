// A server span per HTTP request of a Fastify app (the api, the catalog service), continuing the caller's W3C
// traceparent. The handler runs inside the span, so its own spans and outgoing calls continue the trace. Attributes
// name the route, never the query string or the body (they may hold SQL or credentials).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SpanKind, SpanStatusCode, type Span, type Tracing } from './tracing.ts';
import type { Attributes } from '@opentelemetry/api';

const spans = new WeakMap<FastifyRequest, Span>();

export function traceRequests(app: FastifyInstance, tracing: Tracing, extra: (req: FastifyRequest) => Attributes = () => ({})) {
  app.addHook('onRequest', async (req) => {
    const incoming = req.headers.traceparent;
    const route = req.routeOptions?.url ?? 'unrouted';
    spans.set(
      req,
      tracing.startSpan(`${req.method} ${route}`, {
        kind: SpanKind.SERVER,
        parent: typeof incoming === 'string' ? incoming : null,
        attributes: { 'http.request.method': req.method, 'http.route': route, ...extra(req) },
      }),
    );
  });
  // The done callback continues the request inside the span's context, so the handler's async work inherits it.
  app.addHook('preHandler', (req, _reply, done) => {
    const span = spans.get(req);
    if (span) tracing.within(span, done);
    else done();
  });
  app.addHook('onResponse', async (req, reply) => {
    const span = spans.get(req);
    if (!span) return;
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}
