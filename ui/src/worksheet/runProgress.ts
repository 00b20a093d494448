// What a run is doing while it runs, from the query the api answers: submitting, queued (and for how long; waiting
// for compute when no agent has it yet), running (and for how long, on which agent, and how far when the engine
// reports it: percent and rows read), and which statement of a "run all".
import type { RunState } from './useQueryRun.ts';
import { isTerminal } from './useQueryRun.ts';

export interface RunProgress {
  phase: 'submitting' | 'queued' | 'waiting for compute' | 'running';
  /** time in the queue: until it started running, or until now */
  queuedMs: number | null;
  /** time running so far (null before it runs) */
  runningMs: number | null;
  agentId: string | null;
  /** "run all": the statement being run (1-based) and how many there are */
  statement: { n: number; of: number } | null;
  /** how far the engine says it is (only while running, and only for plans it can measure) */
  engine: { percent: number; rowsProcessed: number; rowsTotal: number | null } | null;
}

type Run = Pick<RunState, 'query' | 'error' | 'submitting' | 'steps' | 'current' | 'pending'>;

const ms = (iso: string | null | undefined) => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : null;
};

/** The run's progress at `now` (ms), or null when nothing runs. Times read the api's own clock where it has both ends. */
export function runProgress(run: Run, now: number): RunProgress | null {
  const { query, error, submitting, steps, current, pending } = run;
  if (error) return null;
  const of = steps.length + pending;
  const statement = of > 1 ? { n: current + 1, of } : null;
  if (submitting || !query) return submitting ? { phase: 'submitting', queuedMs: null, runningMs: null, agentId: null, statement, engine: null } : null;
  if (isTerminal(query.status)) return null;
  const submitted = ms(query.started_at);
  const running = ms(query.running_at);
  // Both ends on the server's clock when it has started running; the browser's clock only for "so far".
  const queuedMs = submitted === null ? null : Math.max(0, (running ?? now) - submitted);
  const runningMs = running === null ? null : Math.max(0, now - running);
  const phase = query.status === 'running' || running !== null ? 'running' : query.agent_id === null ? 'waiting for compute' : 'queued';
  const p = query.status === 'running' ? query.progress : undefined;
  const engine = p ? { percent: p.percent, rowsProcessed: p.rows_processed, rowsTotal: p.rows_total } : null;
  return { phase, queuedMs, runningMs, agentId: query.agent_id, statement, engine };
}
