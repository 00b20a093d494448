import { describe, expect, test } from 'vitest';
import { projectSqlSession, sqlSessionMachine } from './sqlSession.ts';
import type { SqlSessionInput } from './sqlSession.ts';
import { replay } from './replay.ts';

const T = 1_700_000_000_000;
const input: SqlSessionInput = {
  sessionId: 's-1',
  workspace: 'default',
  agentId: 'agent-1',
  at: T,
  idleTimeoutMs: 900_000,
  maxLifetimeMs: 14_400_000,
  openingDeadlineMs: 120_000,
  pendingTimeoutMs: 300_000,
  closeTimeoutMs: 30_000,
};

describe('sqlSession machine', () => {
  test('opens on acknowledgement, accepts statements, and renews the idle deadline per statement', () => {
    const steps = replay(sqlSessionMachine, input, [
      { type: 'opened', at: T + 100 },
      { type: 'statementSubmitted', at: T + 1_000, statementId: 'st-1' },
      { type: 'statementFinished', at: T + 2_000, statementId: 'st-1' },
    ]);
    expect(steps[0].snapshot.value).toBe('opening');
    expect(steps[0].actions[0]).toEqual({ type: 'sendOpenSession', params: { sessionId: 's-1', agentId: 'agent-1', workspace: 'default' } });
    expect(steps[0].snapshot.context.deadlineAt).toBe(T + 120_000);
    expect(projectSqlSession(steps[1].snapshot)).toMatchObject({ status: 'open', deadlineAt: T + 100 + 900_000 });
    expect(steps[2].actions).toEqual([{ type: 'acceptStatement', params: { sessionId: 's-1', statementId: 'st-1', agentId: 'agent-1' } }]);
    // While a statement runs only the lifetime cap applies.
    expect(steps[2].snapshot.context.deadlineAt).toBe(T + 14_400_000);
    expect(steps[3].snapshot.context.deadlineAt).toBe(T + 2_000 + 900_000);
  });

  test('a statement sent to a session that is not open is refused with session_not_open', () => {
    const step = replay(sqlSessionMachine, input, [{ type: 'statementSubmitted', at: T + 5, statementId: 'st-1' }]).at(-1)!;
    expect(step.snapshot.value).toBe('opening');
    expect(step.actions).toEqual([{ type: 'rejectStatement', params: { sessionId: 's-1', statementId: 'st-1', code: 'session_not_open' } }]);
  });

  test('idle limit closes through closing; the agent is told and unfinished statements cancelled', () => {
    const steps = replay(sqlSessionMachine, input, [
      { type: 'opened', at: T + 100 },
      { type: 'deadline', at: T + 100 + 900_000 },
      { type: 'closed', at: T + 100 + 900_050 },
    ]);
    expect(projectSqlSession(steps[2].snapshot)).toMatchObject({ status: 'closing', closeReason: 'idle' });
    expect(steps[2].actions).toEqual([
      { type: 'sendCloseSession', params: { sessionId: 's-1', agentId: 'agent-1', reason: 'idle' } },
      { type: 'cancelSessionStatements', params: { sessionId: 's-1' } },
    ]);
    expect(projectSqlSession(steps[3].snapshot)).toMatchObject({ status: 'closed', terminal: true });
  });

  test('the lifetime cap closes a busy session', () => {
    const steps = replay(sqlSessionMachine, input, [
      { type: 'opened', at: T + 100 },
      { type: 'statementSubmitted', at: T + 200, statementId: 'st-1' },
      { type: 'deadline', at: T + 14_400_000 },
    ]);
    expect(projectSqlSession(steps[3].snapshot)).toMatchObject({ status: 'closing', closeReason: 'lifetime' });
  });

  test('no acknowledgement within the opening deadline fails it and drops the reservation', () => {
    const last = replay(sqlSessionMachine, input, [{ type: 'deadline', at: T + 120_000 }]).at(-1)!;
    expect(projectSqlSession(last.snapshot)).toMatchObject({ status: 'failed', errorCode: 'open_timeout' });
    expect(last.actions).toContainEqual({ type: 'sendDropSession', params: { sessionId: 's-1', agentId: 'agent-1', reason: 'open_timeout' } });
  });

  test('pending while compute starts, then opening on the registered agent', () => {
    const steps = replay(sqlSessionMachine, { ...input, agentId: null }, [{ type: 'computeReady', at: T + 40_000, agentId: 'agent-7' }]);
    expect(projectSqlSession(steps[0].snapshot)).toMatchObject({ status: 'pending', agentId: null, deadlineAt: T + 300_000 });
    expect(steps[0].actions).toEqual([{ type: 'requestCompute', params: { sessionId: 's-1', workspace: 'default' } }]);
    expect(steps[1].snapshot.value).toBe('opening');
    expect(steps[1].actions[0]).toMatchObject({ type: 'sendOpenSession', params: { agentId: 'agent-7' } });
    const starved = replay(sqlSessionMachine, { ...input, agentId: null }, [{ type: 'deadline', at: T + 300_000 }]).at(-1)!;
    expect(projectSqlSession(starved.snapshot)).toMatchObject({ status: 'failed', errorCode: 'compute_unavailable' });
    const refused = replay(sqlSessionMachine, { ...input, agentId: null }, [{ type: 'computeFailed', at: T + 5_000, message: 'elastic compute could not start: no room' }]).at(-1)!;
    expect(projectSqlSession(refused.snapshot)).toMatchObject({ status: 'failed', errorCode: 'compute_unavailable', error: 'elastic compute could not start: no room' });
  });

  test('losing the agent fails an open session', () => {
    const last = replay(sqlSessionMachine, input, [{ type: 'opened', at: T + 1 }, { type: 'agentLost', at: T + 2 }]).at(-1)!;
    expect(projectSqlSession(last.snapshot)).toMatchObject({ status: 'failed', errorCode: 'agent_disconnected' });
  });

  test('the agent connecting anew: an opening session asks again within its deadline, an open one fails, a closing one is closed', () => {
    const opening = replay(sqlSessionMachine, input, [{ type: 'agentReconnected', at: T + 5_000 }]).at(-1)!;
    expect(opening.snapshot.value).toBe('opening');
    expect(opening.actions).toEqual([{ type: 'sendOpenSession', params: { sessionId: 's-1', agentId: 'agent-1', workspace: 'default' } }]);
    expect(opening.snapshot.context.deadlineAt).toBe(T + 120_000);
    const open = replay(sqlSessionMachine, input, [{ type: 'opened', at: T + 1 }, { type: 'agentReconnected', at: T + 2 }]).at(-1)!;
    expect(projectSqlSession(open.snapshot)).toMatchObject({ status: 'failed', errorCode: 'agent_disconnected', closeReason: null });
    expect(open.actions).toContainEqual({ type: 'cancelSessionStatements', params: { sessionId: 's-1' } });
    const closing = replay(sqlSessionMachine, input, [{ type: 'opened', at: T + 1 }, { type: 'close', at: T + 2 }, { type: 'agentReconnected', at: T + 3 }]).at(-1)!;
    expect(projectSqlSession(closing.snapshot)).toMatchObject({ status: 'closed', closeReason: 'client' });
    const pending = replay(sqlSessionMachine, { ...input, agentId: null }, [{ type: 'agentReconnected', at: T + 3 }]).at(-1)!;
    expect(pending.snapshot.value).toBe('pending');
    expect(pending.actions).toEqual([]);
  });
});
