import { describe, expect, test } from 'vitest';
import { projectStatement, statementMachine } from './statement.ts';
import type { StatementInput } from './statement.ts';
import { replay } from './replay.ts';

const T = 1_700_000_000_000;
const input: StatementInput = {
  statementId: 'st-1',
  sessionId: 's-1',
  agentId: 'agent-1',
  sql: 'select 1',
  at: T,
  timeoutMs: 20_000,
  defaultTimeoutMs: 600_000,
  graceMs: 30_000,
  ackDeadlineMs: 15_000,
  ackSupported: true,
};

describe('statement machine', () => {
  test('with ack support: queued until the agent acknowledges, then done; the session is told', () => {
    const steps = replay(statementMachine, input, [
      { type: 'dispatched', at: T + 1 },
      { type: 'ack', at: T + 3 },
      { type: 'done', at: T + 9, rowCount: 1, durationMs: 4, resultPath: 'results/st-1.parquet', columns: ['1'], columnSchema: [{ name: '1', type: 'INTEGER' }] },
    ]);
    expect(steps[0].actions).toEqual([
      { type: 'sendExecuteStatement', params: { statementId: 'st-1', sessionId: 's-1', agentId: 'agent-1', sql: 'select 1', timeoutS: 20, awaitsAck: true } },
    ]);
    expect(steps[0].snapshot.context.deadlineAt).toBe(T + 15_000);
    expect(steps[1].snapshot.value).toBe('queued');
    expect(steps[2].snapshot.value).toBe('running');
    expect(steps[2].snapshot.context.deadlineAt).toBe(T + 3 + 20_000 + 30_000);
    expect(projectStatement(steps[3].snapshot)).toMatchObject({ status: 'done', rowCount: 1, terminal: true });
    expect(steps[3].actions).toEqual([{ type: 'statementFinished', params: { sessionId: 's-1', statementId: 'st-1', status: 'done', readOnly: false } }]);
  });

  test('a read says so to its end (nothing to record besides its row); the ack alone moves it to running', () => {
    const steps = replay(statementMachine, { ...input, readOnly: true }, [
      { type: 'ack', at: T + 3 },
      { type: 'done', at: T + 9, rowCount: 1, durationMs: 4, resultPath: 'results/st-1.parquet', columns: ['1'], columnSchema: [{ name: '1', type: 'INTEGER' }] },
    ]);
    expect(steps[1].snapshot.value).toBe('running');
    expect(steps[1].snapshot.context.dispatchedAt).toBe(T + 3);
    expect(steps[2].actions).toEqual([{ type: 'statementFinished', params: { sessionId: 's-1', statementId: 'st-1', status: 'done', readOnly: true } }]);
  });

  test('fails a statement queued past SQL_STATEMENT_ACK_DEADLINE_S', () => {
    const last = replay(statementMachine, input, [{ type: 'dispatched', at: T + 1 }, { type: 'deadline', at: T + 15_000 }]).at(-1)!;
    expect(projectStatement(last.snapshot)).toMatchObject({ status: 'failed', errorCode: 'ack_timeout' });
    expect(last.actions.map((a) => a.type)).toEqual(['sendCancelStatement', 'statementFinished']);
  });

  test('without ack support the sent frame starts it; no timeout recorded uses the default timeout plus grace', () => {
    const steps = replay(statementMachine, { ...input, ackSupported: false, timeoutMs: null }, [
      { type: 'dispatched', at: T + 2 },
      { type: 'deadline', at: T + 2 + 600_000 + 30_000 - 1 },
      { type: 'deadline', at: T + 2 + 600_000 + 30_000 },
    ]);
    expect(steps[1].snapshot.value).toBe('running');
    expect(steps[2].snapshot.value).toBe('running');
    expect(projectStatement(steps[3].snapshot)).toMatchObject({ status: 'failed', errorCode: 'timeout' });
  });

  test('a cancel is cancelled only once the agent confirms it (its failed cancelled, a cancel_ack found false, its connection lost, or past the timeout)', () => {
    const cancelling = [{ type: 'ack', at: T + 1 }, { type: 'cancel', at: T + 2 }] as const;
    const steps = replay(statementMachine, input, [...cancelling]);
    expect(steps[2].snapshot.value).toBe('cancelling');
    expect(projectStatement(steps[2].snapshot)).toMatchObject({ status: 'running', terminal: false });
    expect(steps[2].actions).toEqual([{ type: 'sendCancelStatement', params: { statementId: 'st-1', sessionId: 's-1', agentId: 'agent-1' } }]);
    // The running deadline stays: the agent's own timeout stops it at the latest.
    expect(steps[2].snapshot.context.deadlineAt).toBe(T + 1 + 20_000 + 30_000);
    const endsWith = (event: Parameters<typeof replay>[2][number]) => replay(statementMachine, input, [...cancelling, event]).at(-1)!;
    for (const event of [
      { type: 'failed', at: T + 3, code: 'cancelled', message: 'statement cancelled' },
      { type: 'cancelAck', at: T + 3, found: false },
      { type: 'agentLost', at: T + 3 },
      { type: 'deadline', at: T + 1 + 20_000 + 30_000 },
    ] as const) {
      const last = endsWith(event);
      expect(projectStatement(last.snapshot), event.type).toMatchObject({ status: 'cancelled', terminal: true });
      expect(last.actions).toEqual([{ type: 'statementFinished', params: { sessionId: 's-1', statementId: 'st-1', status: 'cancelled', readOnly: false } }]);
    }
    expect(endsWith({ type: 'cancelAck', at: T + 3, found: true }).snapshot.value).toBe('cancelling');
    expect(endsWith({ type: 'deadline', at: T + 3 }).snapshot.value).toBe('cancelling');
    expect(projectStatement(endsWith({ type: 'done', at: T + 3, rowCount: 1, durationMs: 1, resultPath: null, columns: null, columnSchema: null }).snapshot).status).toBe('done');
    // From queued too: the agent may have it already.
    expect(replay(statementMachine, input, [{ type: 'dispatched', at: T + 1 }, { type: 'cancel', at: T + 2 }]).at(-1)!.snapshot.value).toBe('cancelling');
  });

  test('a closing session cancels it', () => {
    const last = replay(statementMachine, input, [{ type: 'ack', at: T + 1 }, { type: 'sessionClosed', at: T + 2 }]).at(-1)!;
    expect(projectStatement(last.snapshot)).toMatchObject({ status: 'cancelled', errorCode: 'session_closed' });
  });
});
