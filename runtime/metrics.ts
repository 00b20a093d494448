// Prometheus metrics: request counts and latency by route and status, database pool usage.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  latency: Histogram<'method' | 'route' | 'status'>;
}

export function createMetrics(pool: () => { active: number; max: number }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'eider_' });
  const requests = new Counter({
    name: 'eider_http_requests_total',
    help: 'HTTP requests by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'eider_http_request_duration_seconds',
    help: 'HTTP request latency by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'eider_db_pool_active_connections',
    help: 'database operations holding a pool connection',
    registers: [registry],
    collect() {
      this.set(pool().active);
    },
  });
  new Gauge({
    name: 'eider_db_pool_max_connections',
    help: 'pool size plus overflow',
    registers: [registry],
    collect() {
      this.set(pool().max);
    },
  });
  return { registry, requests, latency };
}
