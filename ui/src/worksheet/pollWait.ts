// How long one poll of a query the worksheet follows may wait (GET /api/queries/{id}?wait_timeout_s). The answer
// comes early only when the query ends, so the wait also sets how often a running query's progress is read: every
// second once its engine reports progress (the api keeps it once a second), every two seconds in its first ten
// seconds (it may yet report some), every ten otherwise.
import type { QueryOut } from '../api/types.ts';

export function pollWaitS(query: Pick<QueryOut, 'status' | 'running_at' | 'progress'>, now: number): number {
  if (query.status !== 'running') return 10;
  if (query.progress) return 1;
  const running = query.running_at ? Date.parse(query.running_at) : NaN;
  return !Number.isFinite(running) || now - running < 10_000 ? 2 : 10;
}
