// The line under the worksheet's toolbar while a query runs: a bar (how far, when the engine reports it; otherwise
// indeterminate), the phase, its times and the agent, the rows read so far, and which statement of a "run all". Not
// a live region: it changes ten times a second (the pill announces the status changes).
import type { Agent } from '../api/types.ts';
import { call } from '../api/client.ts';
import { useAsync } from '../app/useAsync.ts';
import { formatCount, formatDuration } from '../components/format.ts';
import type { RunState } from './useQueryRun.ts';
import { runProgress } from './runProgress.ts';

export function RunProgressLine(props: { run: RunState }) {
  const { run } = props;
  // The run's own clock (ticking while it runs), so a render reads no clock of its own.
  const now = run.startedAtMs ? run.startedAtMs + run.elapsedMs : Date.now();
  const p = runProgress(run, now);
  const agentId = p?.agentId ?? null;
  const agents = useAsync((signal) => (agentId ? call('GET /api/agents', { signal }) : Promise.resolve([] as Agent[])), [agentId]);
  if (!p) return null;
  const agentName = agents.data?.find((a) => a.id === p.agentId)?.name ?? null;
  const parts: string[] = [];
  if (p.statement) parts.push(`statement ${p.statement.n} of ${p.statement.of}`);
  const engine = p.engine;
  if (engine) parts.push(`${formatPercent(engine.percent)} · ${formatCount(engine.rowsProcessed)}${engine.rowsTotal !== null ? ` of ${formatCount(engine.rowsTotal)}` : ''} rows read`);
  if (p.phase === 'running') {
    parts.push(`running for ${formatDuration(p.runningMs)}${agentName ? ` on ${agentName}` : ''}`);
    if (p.queuedMs !== null) parts.push(`queued ${formatDuration(p.queuedMs)}`);
  } else if (p.phase === 'submitting') parts.push('submitting');
  else parts.push(`${p.phase} for ${formatDuration(p.queuedMs)}${p.phase === 'queued' && agentName ? ` (for ${agentName})` : ''}`);
  return (
    <div className="run-progress" data-phase={p.phase} aria-label="Query progress" role="group">
      {engine ? (
        // A native progress element is a progressbar with its value (aria-valuenow) and max; the text says the rows.
        <progress aria-label={`Query ${p.phase}`} max={100} value={engine.percent} aria-valuetext={`${formatPercent(engine.percent)} done`} />
      ) : (
        <progress aria-label={`Query ${p.phase}`} />
      )}
      <span className="run-progress-text">{parts.join(' · ')}</span>
    </div>
  );
}

const formatPercent = (percent: number) => `${percent.toFixed(percent < 10 ? 1 : 0)}%`;
