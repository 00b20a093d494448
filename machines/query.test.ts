import { describe, expect, test } from 'vitest';
import { queryMachine, projectQuery } from './query.ts';
import type { QueryEvent, QueryInput } from './query.ts';
import { replay } from './replay.ts';

const T = 1_700_000_000_000;
const input: QueryInput = {
  queryId: 'q-1',
  workspace: 'default',
  sql: 'select 42 as answer',
  agentId: 'agent-1',
  at: T,
  timeoutMs: 60_000,
  graceMs: 30_000,
  dispatchAckTimeoutMs: 10_000,
  computeWaitTimeoutMs: 300_000,
};
const done: QueryEvent = {
  type: 'done',
  at: T + 500,
  rowCount: 1,
  durationMs: 12,
  resultPath: 'results/q-1.parquet',
  columns: ['answer'],
  columnSchema: [{ name: 'answer', type: 'INTEGER' }],
  profile: { summary: { total_ms: 3 } },
};

describe('query machine', () => {
  test('dispatches on creation, runs, and records the result when done', () => {
    const steps = replay(queryMachine, input, [{ type: 'dispatched', at: T + 5 }, done]);
    const [created, running, finished] = steps;
    expect(created.snapshot.value).toBe('queued');
    expect(created.actions).toEqual([
      {
        type: 'sendDispatchQuery',
        params: { queryId: 'q-1', agentId: 'agent-1', sql: 'select 42 as answer', workspace: 'default', timeoutS: 60, extras: null },
      },
      { type: 'agentWorkChanged', params: { agentId: 'agent-1' } },
    ]);
    expect(projectQuery(created.snapshot)).toMatchObject({ status: 'queued', deadlineAt: T + 10_000, terminal: false });
    expect(running.snapshot.value).toBe('running');
    expect(running.snapshot.context.deadlineAt).toBe(T + 5 + 60_000 + 30_000);
    expect(finished.snapshot.value).toBe('done');
    expect(finished.actions).toEqual([
      { type: 'recordProfile', params: { queryId: 'q-1', readOnly: false } },
      { type: 'agentWorkChanged', params: { agentId: 'agent-1' } },
    ]);
    expect(projectQuery(finished.snapshot)).toMatchObject({
      status: 'done',
      terminal: true,
      deadlineAt: null,
      rowCount: 1,
      resultPath: 'results/q-1.parquet',
      columns: ['answer'],
      startedAt: T,
      runningAt: T + 5,
      finishedAt: T + 500,
    });
  });

  test('a read asks for no recordProfile when done (nothing to record), from running, queued or cancelling', () => {
    const read: QueryInput = { ...input, dispatchExtras: { write: false } };
    for (const before of [[{ type: 'dispatched', at: T + 5 }], [], [{ type: 'dispatched', at: T + 5 }, { type: 'cancel', at: T + 9 }]] as QueryEvent[][]) {
      const finished = replay(queryMachine, read, [...before, done]).at(-1)!;
      expect(finished.snapshot.value).toBe('done');
      expect(finished.snapshot.context.rowCount).toBe(1);
      expect(finished.actions).toEqual([{ type: 'agentWorkChanged', params: { agentId: 'agent-1' } }]);
    }
    // A write still records what it wrote.
    const write = replay(queryMachine, { ...input, dispatchExtras: { write: true } }, [{ type: 'dispatched', at: T + 5 }, done]).at(-1)!;
    expect(write.actions[0]).toEqual({ type: 'recordProfile', params: { queryId: 'q-1', readOnly: false } });
  });

  test('cancel sends cancel_query and shows running until the agent confirms; a late query_done cannot revive it', () => {
    const confirmed: QueryEvent = { type: 'failed', at: T + 12, code: 'cancelled', message: 'cancelled' };
    const steps = replay(queryMachine, input, [{ type: 'dispatched', at: T + 5 }, { type: 'cancel', at: T + 9 }, { type: 'agentLost', at: T + 10 }, confirmed, done]);
    expect(steps[2].snapshot.value).toBe('cancelling');
    expect(projectQuery(steps[2].snapshot).status).toBe('running');
    expect(steps[2].actions[0]).toEqual({ type: 'sendCancelQuery', params: { queryId: 'q-1', agentId: 'agent-1', untilAt: steps[1].snapshot.context.deadlineAt } });
    // The agent's socket went (its replica died): the cancel still waits for it.
    expect(steps[3].snapshot.value).toBe('cancelling');
    expect(steps[4].snapshot.value).toBe('cancelled');
    expect(steps[5].snapshot.value).toBe('cancelled');
    expect(steps[5].snapshot.context.rowCount).toBeNull();
    expect(steps[5].actions).toEqual([]);
  });

  test('a cancelling query is cancelled when the agent has no such query, or past the deadline of its own timeout', () => {
    const acked = replay(queryMachine, input, [{ type: 'dispatched', at: T + 5 }, { type: 'cancel', at: T + 9 }, { type: 'cancelAck', at: T + 10, found: false }]);
    expect(acked.at(-1)!.snapshot.value).toBe('cancelled');
    const steps = replay(queryMachine, input, [{ type: 'dispatched', at: T + 5 }, { type: 'cancel', at: T + 9 }]);
    const deadline = steps.at(-1)!.snapshot.context.deadlineAt!;
    expect(deadline).toBe(T + 5 + input.timeoutMs + input.graceMs);
    const late = replay(queryMachine, input, [{ type: 'dispatched', at: T + 5 }, { type: 'cancel', at: T + 9 }, { type: 'deadline', at: deadline }]);
    expect(late.at(-1)!.snapshot.value).toBe('cancelled');
    // Another outcome of the agent stands.
    const failed = replay(queryMachine, input, [{ type: 'dispatched', at: T + 5 }, { type: 'cancel', at: T + 9 }, { type: 'failed', at: T + 10, code: 'sql_error', message: 'x' }]);
    expect(failed.at(-1)!.snapshot.value).toBe('failed');
  });

  test('agent error, agent loss, and timeout fail it with an error', () => {
    const agentError = replay(queryMachine, input, [
      { type: 'dispatched', at: T + 1 },
      { type: 'failed', at: T + 2, code: 'engine_error', message: 'Catalog Error: Table x does not exist' },
    ]).at(-1)!;
    expect(projectQuery(agentError.snapshot)).toMatchObject({ status: 'failed', errorCode: 'engine_error' });

    const lost = replay(queryMachine, input, [{ type: 'dispatched', at: T + 1 }, { type: 'agentLost', at: T + 2 }]).at(-1)!;
    expect(projectQuery(lost.snapshot)).toMatchObject({ status: 'failed', errorCode: 'agent_disconnected' });
    // A write whose agent was lost may have committed: its outcome is unknown, not a plain failure.
    const lostWrite = replay(queryMachine, { ...input, dispatchExtras: { write: true } }, [{ type: 'dispatched', at: T + 1 }, { type: 'agentLost', at: T + 2 }]).at(-1)!;
    expect(projectQuery(lostWrite.snapshot)).toMatchObject({ status: 'failed', errorCode: 'outcome_unknown' });
    const lostRead = replay(queryMachine, { ...input, dispatchExtras: { write: false } }, [{ type: 'dispatched', at: T + 1 }, { type: 'agentLost', at: T + 2 }]).at(-1)!;
    expect(projectQuery(lostRead.snapshot)).toMatchObject({ status: 'failed', errorCode: 'agent_disconnected' });

    const deadlineAt = T + 1 + 90_000;
    const early = replay(queryMachine, input, [{ type: 'dispatched', at: T + 1 }, { type: 'deadline', at: deadlineAt - 1 }]).at(-1)!;
    expect(early.snapshot.value).toBe('running');
    const reaped = replay(queryMachine, input, [{ type: 'dispatched', at: T + 1 }, { type: 'deadline', at: deadlineAt }]).at(-1)!;
    expect(projectQuery(reaped.snapshot)).toMatchObject({ status: 'failed', errorCode: 'timeout' });
    expect(reaped.actions.map((a) => a.type)).toEqual(['sendCancelQuery', 'agentWorkChanged']);
  });

  test('an undelivered dispatch fails at its deadline (replica died before sending)', () => {
    const last = replay(queryMachine, input, [{ type: 'deadline', at: T + 10_000 }]).at(-1)!;
    expect(projectQuery(last.snapshot)).toMatchObject({ status: 'failed', errorCode: 'dispatch_timeout' });
  });

  test('without an agent it waits for elastic compute, then dispatches to the agent that registered', () => {
    const steps = replay(queryMachine, { ...input, agentId: null }, [{ type: 'computeReady', at: T + 20_000, agentId: 'agent-9' }]);
    expect(steps[0].snapshot.value).toBe('awaitingCompute');
    expect(projectQuery(steps[0].snapshot)).toMatchObject({ status: 'queued', agentId: null, deadlineAt: T + 300_000 });
    expect(steps[0].actions).toEqual([{ type: 'requestCompute', params: { queryId: 'q-1', workspace: 'default' } }]);
    expect(steps[1].snapshot.value).toBe('queued');
    expect(steps[1].actions[0]).toMatchObject({ type: 'sendDispatchQuery', params: { agentId: 'agent-9' } });

    const starved = replay(queryMachine, { ...input, agentId: null }, [{ type: 'deadline', at: T + 300_000 }]).at(-1)!;
    expect(projectQuery(starved.snapshot)).toMatchObject({ status: 'failed', errorCode: 'compute_unavailable' });

    const refused = replay(queryMachine, { ...input, agentId: null }, [{ type: 'computeFailed', at: T + 5_000, message: 'elastic compute could not start: no room' }]).at(-1)!;
    expect(projectQuery(refused.snapshot)).toMatchObject({ status: 'failed', errorCode: 'compute_unavailable', error: 'elastic compute could not start: no room' });
    expect(refused.actions).toEqual([]);
  });

  test('rejects non-positive durations at creation', () => {
    expect(() => replay(queryMachine, { ...input, timeoutMs: 0 }, [])).toThrow(/timeoutMs/);
  });
});
