// How long one poll of a query the worksheet follows may wait (GET /api/queries/{id}?wait_timeout_s). The answer
// comes early only when the query ends, so the wait also sets how often its start and a running query's progress are
// read: every second while it is queued (a queued query that waited 10 s showed "queued" through a whole short run,
// and its progress never), every second in its first ten seconds of running and while its engine reports progress
// (the api keeps it once a second), every ten otherwise.
import type { QueryOut } from '../api/types.ts';

export function pollWaitS(query: Pick<QueryOut, 'status' | 'running_at' | 'progress'>, now: number): number {
  if (query.status === 'queued') return 1;
  if (query.status !== 'running') return 10;
  if (query.progress) return 1;
  const running = query.running_at ? Date.parse(query.running_at) : NaN;
  return !Number.isFinite(running) || now - running < 10_000 ? 1 : 10;
}
