import { describe, expect, it } from 'vitest';
import type { QueryOut } from '../api/types.ts';
import { runProgress } from './runProgress.ts';

const q = (over: Partial<QueryOut>): QueryOut =>
  ({ id: 'q1', status: 'queued', agent_id: 'a1', started_at: '2026-11-29T10:00:00.000Z', running_at: null, finished_at: null, ...over }) as QueryOut;
const base = { error: null, submitting: false, steps: [], current: 0, pending: 0 };
const t0 = Date.parse('2026-11-29T10:00:00.000Z');

describe('runProgress', () => {
  it('nothing when idle, failed at submit, or finished', () => {
    expect(runProgress({ ...base, query: null }, t0)).toBeNull();
    expect(runProgress({ ...base, query: null, error: new Error('refused') }, t0)).toBeNull();
    expect(runProgress({ ...base, query: q({ status: 'done', running_at: '2026-11-29T10:00:01.000Z' }) }, t0 + 5000)).toBeNull();
  });

  it('submitting, then queued with its time so far, then waiting for compute when no agent has it', () => {
    expect(runProgress({ ...base, query: null, submitting: true }, t0)?.phase).toBe('submitting');
    expect(runProgress({ ...base, query: q({}) }, t0 + 1500)).toMatchObject({ phase: 'queued', queuedMs: 1500, runningMs: null, agentId: 'a1' });
    expect(runProgress({ ...base, query: q({ agent_id: null }) }, t0 + 10)?.phase).toBe('waiting for compute');
  });

  it('running: the queue time from the server’s two times, the running time so far', () => {
    const p = runProgress({ ...base, query: q({ status: 'running', running_at: '2026-11-29T10:00:00.250Z' }) }, t0 + 3250);
    expect(p).toMatchObject({ phase: 'running', queuedMs: 250, runningMs: 3000 });
  });

  it('a clock behind the server’s never shows a negative time', () => {
    expect(runProgress({ ...base, query: q({ status: 'running', running_at: '2026-11-29T10:00:01.000Z' }) }, t0)).toMatchObject({ runningMs: 0, queuedMs: 1000 });
  });

  it('running: how far the engine says it is, when it says; nothing of it once done', () => {
    const progress = { percent: 42.5, rows_processed: 850_000, rows_total: 2_000_002 };
    const running = q({ status: 'running', running_at: '2026-11-29T10:00:00.000Z', progress });
    expect(runProgress({ ...base, query: running }, t0 + 3000)?.engine).toEqual({ percent: 42.5, rowsProcessed: 850_000, rowsTotal: 2_000_002 });
    expect(runProgress({ ...base, query: q({ status: 'running', running_at: '2026-11-29T10:00:00.000Z' }) }, t0 + 3000)?.engine).toBeNull();
    expect(runProgress({ ...base, query: q({ status: 'done', running_at: '2026-11-29T10:00:00.000Z', progress }) }, t0 + 3000)).toBeNull();
  });

  it('run all: which statement of how many', () => {
    const steps = [{ from: 0, query: q({ status: 'done' }), error: null }, { from: 10, query: q({ status: 'running', running_at: '2026-11-29T10:00:00.000Z' }), error: null }];
    expect(runProgress({ ...base, query: steps[1].query, steps, current: 1, pending: 2 }, t0)?.statement).toEqual({ n: 2, of: 4 });
  });
});
