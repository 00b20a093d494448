// The run's state at a glance: queued, running (with a live clock), done, failed, cancelled.
import type { RunState } from './useQueryRun.ts';
import { formatDuration } from '../components/format.ts';

export function StatusPill(props: { run: RunState }) {
  const { query, error, submitting, elapsedMs, startedAtMs, runNumber } = props.run;
  if (startedAtMs === null) return <span className="pill idle">Ready</span>;
  const status = error ? 'failed' : submitting ? 'submitting' : (query?.status ?? 'submitting');
  const time = status === 'done' && query?.duration_ms != null ? query.duration_ms : elapsedMs;
  return (
    <span className={`pill ${status}`} role="status" aria-live="polite" data-status={status} data-run={runNumber}>
      {status} · {formatDuration(time)}
    </span>
  );
}
