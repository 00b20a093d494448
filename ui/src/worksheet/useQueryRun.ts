// One worksheet's run: submit, wait on the query by long-polling its status, cancel. "Run all" runs the
// worksheet's statements one after another, each its own query with its own result, and stops at the first that
// does not finish. The run belongs to the worksheet, not to the screen: each step is reported (onRun) so the
// worksheet keeps it, and a worksheet opened again (after leaving the screen, or a reload) re-attaches to its last
// queries: polls one still running, so Cancel works, and shows their results when done. Leaving the screen stops
// the polling, never the query. The elapsed clock ticks while a query is queued or running.
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, call } from '../api/client.ts';
import type { QueryOut } from '../api/types.ts';
import type { LastRun, StepRef } from './worksheetStore.ts';
import type { Connection } from './worksheetSession.ts';
import { pollWaitS } from './pollWait.ts';
import { recordRefused } from './refusedLog.ts';

/** Sends one statement: a plain query by default; the worksheet sends it to its session (worksheetSession.ts). */
export type Submit = (sql: string, agentId: string | null, catalog: string | null, signal: AbortSignal) => Promise<{ query: QueryOut; connection: Connection | null }>;

export const isTerminal = (s: string | undefined) => s === 'done' || s === 'failed' || s === 'cancelled';

/** One statement of a run: where it starts in the worksheet's text, and its query or the api's refusal. */
export interface Step {
  from: number;
  query: QueryOut | null;
  /** request-level failure (policy rejection, agent not connected, network) */
  error: unknown;
}

export interface RunState {
  /** the current step's query and error (the pill's status) */
  query: QueryOut | null;
  error: unknown;
  submitting: boolean;
  startedAtMs: number | null;
  elapsedMs: number;
  /** counts runs of this worksheet, so a new run is told apart from the last one even with the same outcome */
  runNumber: number;
  /** where the current statement starts in the worksheet's text */
  from: number;
  steps: Step[];
  /** the step being run (or the last one run) */
  current: number;
  /** statements of a "run all" not started yet */
  pending: number;
  /** how the last statement ran (in the worksheet's session, or alone), null before the first run */
  connection: Connection | null;
}

const idle: RunState = { query: null, error: null, submitting: false, startedAtMs: null, elapsedMs: 0, runNumber: 0, from: 0, steps: [], current: 0, pending: 0, connection: null };

const errorOf = (e: NonNullable<StepRef['error']>) => new ApiError(e.status, e.code, e.message, e.details);
const refOf = (s: Step): StepRef =>
  s.error instanceof ApiError
    ? { queryId: null, from: s.from, error: { status: s.error.status, code: s.error.code, message: s.error.message, details: s.error.details } }
    : { queryId: s.query?.id ?? null, from: s.from };

/** The state with the step at `i` as the current one (the fields the pill and the result read). */
function focus(s: Omit<RunState, 'query' | 'error' | 'from'> & Partial<RunState>, i: number): RunState {
  const step = s.steps[i];
  return { ...s, current: i, query: step?.query ?? null, error: step?.error ?? null, from: step?.from ?? 0 } as RunState;
}

function restored(last: LastRun | null | undefined): RunState {
  const steps = last?.steps ?? [];
  if (!steps.length) return idle;
  const all: Step[] = steps.map((r) => ({ from: r.from, query: null, error: r.error ? errorOf(r.error) : null }));
  const waiting = steps.some((r) => r.queryId);
  return focus({ ...idle, steps: all, submitting: waiting, startedAtMs: waiting ? Date.now() : 0 }, all.length - 1);
}

/** An update of step `i` (and of the current fields when it is the current step). */
const withStep = (i: number, patch: Partial<Step>) => (s: RunState): RunState => {
  const steps = s.steps.map((st, j) => (j === i ? { ...st, ...patch } : st));
  return { ...s, steps, ...(i === s.current ? { query: steps[i].query, error: steps[i].error } : {}) };
};

const startedAt = (q: QueryOut) => {
  const t = Date.parse(q.started_at);
  return Number.isFinite(t) ? t : Date.now();
};

const plainQuery = (ws: string): Submit => async (sql, agentId, catalog) => ({
  query: await call('POST /api/workspaces/{workspace}/queries', {
    path: { workspace: ws },
    body: { sql, ...(agentId ? { agent_id: agentId } : {}), ...(catalog ? { catalog } : {}) },
  }),
  connection: null,
});

export function useQueryRun(ws: string, last?: LastRun | null, onRun?: (run: LastRun | null) => void, submit?: Submit, title?: string) {
  const [state, setState] = useState<RunState>(() => restored(last));
  const submitter = useRef(submit ?? plainQuery(ws));
  submitter.current = submit ?? plainQuery(ws);
  const runSeq = useRef(0);
  const aborter = useRef<AbortController | null>(null);
  const report = useRef(onRun);
  report.current = onRun;
  const titleRef = useRef(title);
  titleRef.current = title;

  // The elapsed clock.
  const ticking = state.startedAtMs !== null && state.startedAtMs > 0 && !(state.query && isTerminal(state.query.status) && !state.pending) && !state.error;
  useEffect(() => {
    if (!ticking) return;
    const t = setInterval(() => setState((s) => (s.startedAtMs === null ? s : { ...s, elapsedMs: Date.now() - s.startedAtMs })), 100);
    return () => clearInterval(t);
  }, [ticking]);

  /** Follows query `q` (step `i`) until it ends (long polls of 1 to 10 s, pollWaitS), unless a newer run or leaving stops it. */
  const follow = useCallback(async (mine: number, i: number, q: QueryOut, signal: AbortSignal): Promise<QueryOut | null> => {
    while (!isTerminal(q.status)) {
      q = await call('GET /api/queries/{query_id}', { path: { query_id: q.id }, query: { wait_timeout_s: pollWaitS(q, Date.now()) }, signal });
      if (mine !== runSeq.current) return null;
      const next = q;
      setState(withStep(i, { query: next }));
    }
    return q;
  }, []);

  const fresh = () => {
    aborter.current?.abort();
    aborter.current = new AbortController();
    return aborter.current.signal;
  };

  // Re-attach to the worksheet's last queries once, when the worksheet opens; stop polling when it closes.
  const attachTo = useRef(last?.steps ?? []);
  useEffect(() => {
    const refs = attachTo.current;
    if (refs.some((r) => r.queryId)) {
      const mine = ++runSeq.current;
      const signal = fresh();
      void (async () => {
        try {
          const queries = await Promise.all(refs.map((r) => (r.queryId ? call('GET /api/queries/{query_id}', { path: { query_id: r.queryId }, signal }) : Promise.resolve(null))));
          if (mine !== runSeq.current) return;
          const first = queries.find((q) => q) ?? null;
          setState((s) => {
            const steps = s.steps.map((st, j) => ({ ...st, query: queries[j] ?? null }));
            const t0 = first ? startedAt(first) : Date.now();
            const lastQ = queries[queries.length - 1];
            const end = lastQ?.finished_at ? Date.parse(lastQ.finished_at) : Date.now();
            return focus({ ...s, steps, submitting: false, startedAtMs: t0, elapsedMs: end - t0 }, s.current);
          });
          const i = queries.findIndex((q) => q && !isTerminal(q.status));
          if (i >= 0) await follow(mine, i, queries[i]!, signal);
        } catch (e) {
          if (mine !== runSeq.current || (e as Error)?.name === 'AbortError') return;
          // A query that is gone (deleted, or history pruned) leaves the worksheet ready for the next run.
          if (e instanceof ApiError && e.status === 404) {
            setState(idle);
            report.current?.(null);
          } else setState((s) => ({ ...s, submitting: false, error: e }));
        }
      })();
    }
    return () => aborter.current?.abort();
  }, [follow]);

  /** Runs the statements in order, each once the one before is done; one statement is a plain run. */
  const runAll = useCallback(
    async (statements: Array<{ text: string; from: number }>, agentId: string | null, catalog: string | null) => {
      if (!statements.length) return;
      const mine = ++runSeq.current;
      const signal = fresh();
      const startedAtMs = Date.now();
      const steps: Step[] = [];
      setState((s) => ({ ...idle, submitting: true, startedAtMs, runNumber: s.runNumber + 1, from: statements[0].from, pending: statements.length, connection: s.connection }));
      for (let i = 0; i < statements.length; i++) {
        const { text, from } = statements[i];
        steps.push({ from, query: null, error: null });
        setState((s) => focus({ ...s, steps: [...steps], submitting: true, pending: statements.length - i - 1 }, i));
        let outcome: QueryOut | null = null;
        try {
          const { query: q, connection } = await submitter.current(text, agentId, catalog, signal);
          if (mine !== runSeq.current) return;
          steps[i] = { from, query: q, error: null };
          report.current?.({ steps: steps.map(refOf) });
          setState((s) => focus({ ...s, steps: [...steps], submitting: false, connection }, i));
          outcome = await follow(mine, i, q, signal);
          if (!outcome) return;
          steps[i] = { from, query: outcome, error: null };
        } catch (e) {
          if (mine !== runSeq.current || (e as Error)?.name === 'AbortError') return;
          // Refused at submit (policy, syntax, role, grants, agent): no query row holds it, so History keeps it here.
          if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 401)
            recordRefused(ws, { sql: text, status: e.status, code: e.code, message: e.message, worksheet: titleRef.current ?? null });
          steps[i] = { from, query: null, error: e };
          report.current?.({ steps: steps.map(refOf) });
          setState((s) => focus({ ...s, steps: [...steps], submitting: false, pending: 0, elapsedMs: Date.now() - startedAtMs }, i));
          return;
        }
        const end = outcome.finished_at ? Date.parse(outcome.finished_at) : Date.now();
        const stop = outcome.status !== 'done' || i === statements.length - 1;
        setState((s) => focus({ ...s, steps: [...steps], pending: stop ? 0 : s.pending, elapsedMs: Math.max(0, end - startedAtMs) }, i));
        if (stop) return;
      }
    },
    [follow, ws],
  );

  const run = useCallback(
    (sql: string, agentId: string | null, catalog: string | null, from = 0) => runAll([{ text: sql, from }], agentId, catalog),
    [runAll],
  );

  const { query: currentQuery, current } = state;
  const cancel = useCallback(async () => {
    const q = currentQuery;
    if (!q || isTerminal(q.status)) return;
    try {
      const out = await call('POST /api/queries/{query_id}/cancel', { path: { query_id: q.id } });
      const i = current;
      if (out?.id === q.id) setState((s) => (s.steps[i]?.query?.id === out.id ? withStep(i, { query: out })(s) : s));
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 409)) setState((s) => ({ ...s, error: e }));
    }
  }, [currentQuery, current]);

  return { ...state, run, runAll, cancel };
}

/** The query's error as code and message. */
export function queryError(q: QueryOut): { code: string; message: string } | null {
  if (!q.error && !q.error_code) return null;
  return { code: q.error_code ?? q.status, message: q.error ?? '' };
}
