// Version, liveness, readiness and metrics.
import { Schema } from 'effect';
import { route } from '../route.ts';
import { notFound } from '../../domain/errors.ts';
import { assertReady } from '../../usecases/readiness.ts';

export const systemRoutes = [
  route({
    method: 'GET',
    path: '/api/version',
    operationId: 'get_version',
    summary: 'Server build and contract version',
    tags: ['system'],
    access: { kind: 'public' },
    responses: { 200: Schema.Struct({ version: Schema.String, api_version: Schema.Finite }) },
    handler: async ({ ctx }) => ({ status: 200, body: { version: ctx.version, api_version: 2 } }),
  }),
  route({
    method: 'GET',
    path: '/api/healthz',
    operationId: 'get_health',
    summary: 'Liveness: the process answers',
    tags: ['system'],
    access: { kind: 'public' },
    responses: { 200: Schema.Struct({ status: Schema.Literal('ok') }) },
    handler: async () => ({ status: 200, body: { status: 'ok' as const } }),
  }),
  route({
    method: 'GET',
    path: '/api/readyz',
    operationId: 'get_readiness',
    summary: 'Readiness: the database answers, the process is not draining, and the startup gate is open',
    description:
      'The startup gate (once open, it stays open): with SEED_SAMPLES, the sample table is in place; with READY_AFTER_AGENT, that agent is healthy. While waiting, 503 not_ready names what it waits for in its message and in details.waiting_for.',
    tags: ['system'],
    access: { kind: 'public' },
    responses: { 200: Schema.Struct({ status: Schema.Literal('ready'), replica_id: Schema.String }), 503: null },
    handler: async ({ ctx }) => {
      await assertReady(ctx);
      return { status: 200, body: { status: 'ready', replica_id: ctx.config.REPLICA_ID } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/metrics',
    operationId: 'get_metrics',
    summary: 'Prometheus metrics (when METRICS_ENABLED)',
    tags: ['system'],
    access: { kind: 'public' },
    produces: 'text/plain; version=0.0.4',
    responses: { 200: Schema.String },
    handler: async ({ ctx }) => {
      if (!ctx.metrics) throw notFound('metrics endpoint (METRICS_ENABLED is false)');
      return { status: 200, body: await ctx.metrics.registry.metrics() };
    },
  }),
];
