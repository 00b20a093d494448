// A running statement's progress, read from its DuckDB connection once a second and sent as query_progress frames:
// nothing before it has run a second (a short query sends none), nothing while the engine reports no progress for
// its plan (DuckDB says -1) or none made yet (0% of nothing read: a range() or generate_series() source is reported
// so until it ends, which would show a stuck 0%), and nothing that repeats the last frame.
import type { AgentFrame, QueryProgressFrame } from '../protocol/index.ts';

/** DuckDB's query progress (duckdb_query_progress) as @duckdb/node-api's `connection.progress` returns it. */
export interface EngineProgress {
  readonly percentage: number;
  readonly rows_processed: bigint;
  readonly total_rows_to_process: bigint;
}

const PROGRESS_INTERVAL_MS = 1_000;

/**
 * DuckDB tracks a statement's progress only with its progress bar on, a per-connection setting (the instance's
 * configuration refuses it), set before the configuration lock; never printed. Its cost was lost in the noise of a
 * loaded machine (bench/progressTracking.ts, docs/performance.md "Query progress").
 */
export const PROGRESS_SETTINGS = ['SET enable_progress_bar=true', 'SET enable_progress_bar_print=false'];

/** The frame's payload for one reading, or null when the engine reports no progress, or none made yet. */
export function progressPayload(queryId: string, p: EngineProgress): QueryProgressFrame['payload'] | null {
  if (!Number.isFinite(p.percentage) || p.percentage < 0) return null;
  if (p.percentage === 0 && p.rows_processed === 0n) return null;
  const total = Number(p.total_rows_to_process);
  return {
    query_id: queryId,
    // One decimal: finer steps would only make more frames (and database writes) that say nothing new.
    percent: Math.min(100, Math.round(p.percentage * 10) / 10),
    rows_processed: Number(p.rows_processed),
    rows_total: total > 0 ? total : null,
  };
}

/**
 * Samples `read` every `intervalMs` (the first time one interval after the call) and sends what changed; returns
 * the stop, which the caller runs before it reports the outcome, so no progress frame follows query_done.
 */
export function reportProgress(o: {
  queryId: string;
  read: () => EngineProgress | null;
  send: (frame: AgentFrame) => void;
  intervalMs?: number;
}): () => void {
  let last = '';
  const timer = setInterval(() => {
    const reading = o.read();
    const payload = reading && progressPayload(o.queryId, reading);
    if (!payload) return;
    const key = `${payload.percent}/${payload.rows_processed}/${payload.rows_total}`;
    if (key === last) return;
    last = key;
    o.send({ type: 'query_progress', payload });
  }, o.intervalMs ?? PROGRESS_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
