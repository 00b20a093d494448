// The run's state at a glance: queued, running (with a live clock), done, failed, cancelled; and "waiting for
// compute" while a queued query has no agent yet (elastic compute is starting one for it).
import type { RunState } from './useQueryRun.ts';
import { formatDuration } from '../components/format.ts';

export function StatusPill(props: { run: Pick<RunState, 'query' | 'error' | 'submitting' | 'elapsedMs' | 'startedAtMs' | 'runNumber'> & Partial<Pick<RunState, 'pending' | 'steps' | 'current'>> }) {
  const { query, error, submitting, elapsedMs, startedAtMs, runNumber, pending = 0, steps = [], current = 0 } = props.run;
  if (startedAtMs === null) return <span className="pill idle">Ready</span>;
  const own = error ? 'failed' : submitting ? 'submitting' : (query?.status ?? 'submitting');
  // "Run all": done with one statement and more to go is still running; the count says which.
  const status = own === 'done' && pending > 0 ? 'running' : own;
  const of = steps.length + pending > 1 ? `${current + 1}/${steps.length + pending} ` : '';
  // data-status stays the query's own status; only the words differ while it waits for an agent to start.
  const waiting = status === 'queued' && query?.agent_id === null;
  const time = status === 'done' && query?.duration_ms != null && !of ? query.duration_ms : elapsedMs;
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
      {of}
      {waiting ? 'waiting for compute' : status} · {formatDuration(time)}
    </span>
  );
}
