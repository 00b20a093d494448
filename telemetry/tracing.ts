// OpenTelemetry tracing, one tracer per process part (api, agent, catalog service), exported over OTLP
// http/protobuf. Each part gets its own provider rather than the global one: under tests the api and the catalog
// service share a process and must keep their own service names. The active span travels with the async call
// chain (AsyncLocalStorage), so deep code (an HTTP call to the catalog, an object-store read) parents its spans
// without being handed a context; across processes it travels as a W3C `traceparent` (frames, HTTP headers).
import {
  context,
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export { SpanKind, SpanStatusCode };
export type { Span };

export interface Tracing {
  /** false when no endpoint is configured: spans are not recorded and nothing is exported */
  readonly enabled: boolean;
  /** Runs `fn` inside a new span, child of the active span (or of `parent`, a W3C traceparent, when given). The
   *  span ends when `fn` settles; a throw marks it as an error (the message only, never a statement's text). */
  span<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T> | T): Promise<T>;
  /** Starts a span the caller ends (request spans whose end is another hook). */
  startSpan(name: string, opts?: SpanOptions): Span;
  /** Runs `fn` with `span` as the active span. */
  within<T>(span: Span, fn: () => T): T;
  /** The active span's W3C traceparent, to carry in a frame or a header; undefined when not tracing. */
  traceparent(): string | undefined;
  /** Exports what is buffered (tests, and before a process exits). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface SpanOptions {
  /** a W3C traceparent to continue (from a frame or a header); otherwise the active span is the parent */
  parent?: string | null;
  kind?: SpanKind;
  attributes?: Attributes;
}

let contextReady = false;
function ensureContextManager() {
  if (contextReady) return;
  contextReady = true;
  // Returns false when another part of this process registered one first; either way there is one.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

const propagator = new W3CTraceContextPropagator();

/** The OTLP endpoint as the spec reads it: `/v1/traces` appended when the URL has no path. */
export function tracesUrl(endpoint: string): string {
  const u = new URL(endpoint);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/v1/traces';
  return u.toString();
}

function parentContext(traceparent: string | null | undefined): Context {
  if (!traceparent) return context.active();
  return propagator.extract(ROOT_CONTEXT, { traceparent }, { get: (c, k) => (c as Record<string, string>)[k], keys: (c) => Object.keys(c) });
}

// The agent is a process of its own: its tracing is registered process-wide so deep code (the catalog client,
// object-store reads) reaches it through `processSpan` without being handed it. The api and the catalog service
// may share a process (tests), so they pass theirs explicitly.
let processTracing: Tracing | null = null;

export function createTracing(opts: { serviceName: string; endpoint?: string | null; processWide?: boolean }): Tracing {
  ensureContextManager();
  const endpoint = opts.endpoint?.trim();
  let provider: TracerProvider | null = null;
  let tracer: Tracer;
  if (endpoint) {
    provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: tracesUrl(endpoint) }), scheduledDelayMillis: 500 })],
    });
    tracer = provider.getTracer('eider');
  } else {
    // The API's no-op tracer: spans cost nothing and carry no context.
    tracer = trace.getTracer('eider-disabled');
  }
  const enabled = provider !== null;

  const startSpan = (name: string, o: SpanOptions = {}): Span =>
    tracer.startSpan(name, { kind: o.kind ?? SpanKind.INTERNAL, attributes: o.attributes }, parentContext(o.parent));

  const self: Tracing = {
    enabled,
    startSpan,
    async span(name, o, fn) {
      if (!enabled) return fn(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
      const span = startSpan(name, o);
      try {
        return await context.with(trace.setSpan(context.active(), span), () => fn(span));
      } catch (e) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message.slice(0, 200) : 'error' });
        throw e;
      } finally {
        span.end();
      }
    },
    within: (span, fn) => (enabled ? context.with(trace.setSpan(context.active(), span), fn) : fn()),
    traceparent() {
      if (!enabled) return undefined;
      const carrier: Record<string, string> = {};
      propagator.inject(context.active(), carrier, { set: (c, k, v) => ((c as Record<string, string>)[k] = v) });
      return carrier.traceparent;
    },
    flush: async () => {
      await provider?.forceFlush();
    },
    shutdown: async () => {
      if (processTracing === self) processTracing = null;
      await provider?.shutdown().catch(() => undefined);
    },
  };
  if (opts.processWide) processTracing = self;
  return self;
}

/** A span of the process-wide tracing (the agent's); just `fn` when there is none. */
export function processSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T> | T): Promise<T> {
  const t = processTracing;
  return t?.enabled ? t.span(name, opts, fn) : Promise.resolve().then(() => fn(trace.wrapSpanContext(INVALID_SPAN_CONTEXT)));
}

/** `headers` plus the active span's traceparent, so the server called continues the trace (unchanged when no span
 *  is active). */
export function traceHeaders(headers: Record<string, string> = {}): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagator.inject(context.active(), carrier, { set: (c, k, v) => ((c as Record<string, string>)[k] = v) });
  return carrier.traceparent ? { ...headers, traceparent: carrier.traceparent } : headers;
}
