// One worksheet's run: submit, wait on the query by long-polling its status, cancel. The elapsed clock ticks while
// the query is queued or running.
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiError, enc } from '../api/client.ts';
import type { QueryOut } from '../api/types.ts';

export const isTerminal = (s: string | undefined) => s === 'done' || s === 'failed' || s === 'cancelled';

export interface RunState {
  query: QueryOut | null;
  /** request-level failure (policy rejection, agent not connected, network) */
  error: unknown;
  submitting: boolean;
  startedAtMs: number | null;
  elapsedMs: number;
  /** counts runs of this worksheet, so a new run is told apart from the last one even with the same outcome */
  runNumber: number;
}

export function useQueryRun(ws: string) {
  const [state, setState] = useState<RunState>({ query: null, error: null, submitting: false, startedAtMs: null, elapsedMs: 0, runNumber: 0 });
  const runSeq = useRef(0);

  // The elapsed clock.
  const ticking = state.startedAtMs !== null && !(state.query && isTerminal(state.query.status)) && !state.error;
  useEffect(() => {
    if (!ticking) return;
    const t = setInterval(() => setState((s) => (s.startedAtMs === null ? s : { ...s, elapsedMs: Date.now() - s.startedAtMs })), 100);
    return () => clearInterval(t);
  }, [ticking]);

  const run = useCallback(
    async (sql: string, agentId: string | null, catalog: string | null) => {
      const mine = ++runSeq.current;
      const startedAtMs = Date.now();
      setState((s) => ({ query: null, error: null, submitting: true, startedAtMs, elapsedMs: 0, runNumber: s.runNumber + 1 }));
      try {
        let q = await api.post<QueryOut>(`/api/workspaces/${enc(ws)}/queries`, {
          sql,
          ...(agentId ? { agent_id: agentId } : {}),
          ...(catalog ? { catalog } : {}),
        });
        if (mine !== runSeq.current) return;
        setState((s) => ({ ...s, query: q, submitting: false }));
        while (!isTerminal(q.status)) {
          q = await api.get<QueryOut>(`/api/queries/${enc(q.id)}`, { query: { wait_timeout_s: 10 } });
          if (mine !== runSeq.current) return;
          setState((s) => ({ ...s, query: q }));
        }
        setState((s) => ({ ...s, elapsedMs: Date.now() - startedAtMs }));
      } catch (e) {
        if (mine !== runSeq.current) return;
        setState((s) => ({ ...s, error: e, submitting: false, elapsedMs: Date.now() - startedAtMs }));
      }
    },
    [ws],
  );

  const cancel = useCallback(async () => {
    const q = state.query;
    if (!q || isTerminal(q.status)) return;
    try {
      const out = await api.post<QueryOut>(`/api/queries/${enc(q.id)}/cancel`);
      if (out?.id === q.id) setState((s) => ({ ...s, query: out }));
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 409)) setState((s) => ({ ...s, error: e }));
    }
  }, [state.query]);

  return { ...state, run, cancel };
}

/** The query's error as code and message. */
export function queryError(q: QueryOut): { code: string; message: string } | null {
  if (!q.error && !q.error_code) return null;
  return { code: q.error_code ?? q.status, message: q.error ?? '' };
}
