// Prometheus metrics: request counts and latency by route and status, database pool usage.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  latency: Histogram<'method' | 'route' | 'status'>;
  /** /mcp tool calls by tool and outcome (ok, tool_error, invalid_arguments) */
  mcpToolCalls: Counter<'tool' | 'outcome'>;
  /** the assistant's tool calls by tool and outcome (those of /mcp, and approval_required, rejected, skipped) */
  assistantToolCalls: Counter<'tool' | 'outcome'>;
  /** assistant turns by how they ended (answer, length, approval_required, request_limit, output_limit, model_error, internal_error) */
  assistantTurns: Counter<'outcome'>;
  /**
   * Execution lineage that could not be read, by stage: `statement` (the write's SQL did not parse) or `columns`
   * (parsed, but its column lineage was not established and is recorded `unsupported`). The query stands either way.
   */
  lineageFailures: Counter<'stage'>;
}

/** Cluster-wide counts read from the database at scrape time (so every replica reports the same). */
export interface SessionCounts {
  /** live sessions by status (pending, opening, open, closing) */
  sessions: Record<string, number>;
  /** session statements queued or running, by status */
  statements: Record<string, number>;
  /** ended sessions by close_reason (failed ones without a reason count as `failed`) */
  ended: Record<string, number>;
}

/** Elastic compute figures, cluster-wide from the database at scrape time. */
export interface ElasticFigures {
  /** incarnations the provider accepted, ever */
  provisioned: number;
  /** seconds from request to dial-home, by quantile */
  provisioningSeconds: Record<string, number>;
  /** ended incarnations by reason (idle, lifetime, operator, agent_lost, provisioning_failed) */
  ended: Record<string, number>;
  /** live incarnations by state */
  live: Record<string, number>;
}

/** A gauge with one series per key of what `pick` returns from this scrape's read. */
function labelledGauge<T>(registry: Registry, read: () => Promise<T>, name: string, help: string, label: string, pick: (v: T) => Record<string, number>) {
  return new Gauge({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [k, v] of Object.entries(pick(await read()))) this.set({ [label]: k }, v);
    },
  });
}

/** One read per scrape, shared by the gauges built from it. */
function perScrape<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | null = null;
  return () => (pending ??= read().finally(() => setTimeout(() => (pending = null), 0)));
}

export function createMetrics(
  pool: () => { active: number; max: number },
  sessionCounts?: () => Promise<SessionCounts>,
  elasticFigures?: () => Promise<ElasticFigures>,
): Metrics {
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
  const mcpToolCalls = new Counter({
    name: 'eider_mcp_tool_calls_total',
    help: '/mcp tool calls by tool and outcome',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  const assistantToolCalls = new Counter({
    name: 'eider_assistant_tool_calls_total',
    help: 'the data assistant’s tool calls by tool and outcome',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  const assistantTurns = new Counter({
    name: 'eider_assistant_turns_total',
    help: 'the data assistant’s turns by how they ended',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const lineageFailures = new Counter({
    name: 'eider_lineage_failures_total',
    help: 'done writes whose execution lineage could not be read, by stage (statement, columns)',
    labelNames: ['stage'] as const,
    registers: [registry],
  });
  if (sessionCounts) {
    const counts = perScrape(sessionCounts);
    const gauge = (name: string, help: string, label: string, pick: (c: SessionCounts) => Record<string, number>) =>
      labelledGauge(registry, counts, name, help, label, pick);
    gauge('eider_sql_sessions', 'SQL sessions not yet ended, by status', 'status', (c) => c.sessions);
    gauge('eider_sql_statements', 'SQL session statements queued or running, by status', 'status', (c) => c.statements);
    gauge('eider_sql_sessions_ended', 'SQL sessions ended, by close reason', 'reason', (c) => c.ended);
  }
  if (elasticFigures) {
    const figures = perScrape(elasticFigures);
    new Gauge({
      name: 'eider_elastic_agents_provisioned',
      help: 'elastic agent instances the provider accepted, ever',
      registers: [registry],
      async collect() {
        this.set((await figures()).provisioned);
      },
    });
    const labelled = (name: string, help: string, label: string, pick: (f: ElasticFigures) => Record<string, number>) =>
      labelledGauge(registry, figures, name, help, label, pick);
    labelled('eider_elastic_agents_reaped', 'elastic agents ended, by reason', 'reason', (f) => f.ended);
    labelled('eider_elastic_agents_live', 'elastic agents not yet ended, by state', 'state', (f) => f.live);
    labelled('eider_elastic_provisioning_seconds', 'time from request to the agent dialling home, by quantile', 'quantile', (f) => f.provisioningSeconds);
  }
  return { registry, requests, latency, mcpToolCalls, assistantToolCalls, assistantTurns, lineageFailures };
}
