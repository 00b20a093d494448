// The run's state at a glance: queued, running (with a live clock), done, failed, cancelled; and "waiting for
// compute" while a queued query has no agent yet (elastic compute is starting one for it).
import type { RunState } from './useQueryRun.ts';
import { formatDuration } from '../components/format.ts';

export function StatusPill(props: { run: RunState }) {
  const { query, error, submitting, elapsedMs, startedAtMs, runNumber } = props.run;
  if (startedAtMs === null) return <span className="pill idle">Ready</span>;
  const status = error ? 'failed' : submitting ? 'submitting' : (query?.status ?? 'submitting');
  // data-status stays the query's own status; only the words differ while it waits for an agent to start.
  const waiting = status === 'queued' && query?.agent_id === null;
  const time = status === 'done' && query?.duration_ms != null ? query.duration_ms : elapsedMs;
  return (
    <span
      className={`pill ${status}`}
      role="status"
      aria-live="polite"
      data-status={status}
      data-waiting={waiting ? 'compute' : undefined}
      data-run={runNumber}
      title={waiting ? 'No agent has this query yet: elastic compute is starting one' : undefined}
    >
      {waiting ? 'waiting for compute' : status} · {formatDuration(time)}
    </span>
  );
}
