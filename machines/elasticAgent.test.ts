import { describe, expect, test } from 'vitest';
import { elasticAgentMachine, projectElasticAgent } from './elasticAgent.ts';
import type { ElasticAgentInput } from './elasticAgent.ts';
import { replay } from './replay.ts';

const T = 1_700_000_000_000;
const input: ElasticAgentInput = {
  elasticId: 'e-1',
  pool: 'object_store:warehouse',
  cpu: 2,
  memoryGb: 4,
  at: T,
  provisioningDeadlineMs: 300_000,
  idleTimeoutMs: 900_000,
  maxLifetimeMs: 14_400_000,
  terminateTimeoutMs: 60_000,
  maxTerminateAttempts: 3,
};
const up = [
  { type: 'provisioningStarted' as const, at: T + 1_000, providerRef: 'aci/eider-e-1' },
  { type: 'registered' as const, at: T + 60_000, agentId: 'agent-9' },
];

describe('elasticAgent machine', () => {
  test('provisions, registers, releases waiting work, and goes busy then idle with the work counts', () => {
    const steps = replay(elasticAgentMachine, input, [
      ...up,
      { type: 'workChanged', at: T + 61_000, inFlightQueries: 1, openSessions: 0 },
      { type: 'workChanged', at: T + 70_000, inFlightQueries: 0, openSessions: 0 },
    ]);
    expect(steps[0].actions).toEqual([{ type: 'provisionCompute', params: { elasticId: 'e-1', pool: 'object_store:warehouse', cpu: 2, memoryGb: 4 } }]);
    expect(steps[0].snapshot.context.deadlineAt).toBe(T + 300_000);
    expect(steps[1].snapshot.context.deadlineAt).toBe(T + 300_000);
    expect(steps[2].actions).toEqual([{ type: 'releaseWaitingWork', params: { elasticId: 'e-1', agentId: 'agent-9', pool: 'object_store:warehouse' } }]);
    expect(projectElasticAgent(steps[3].snapshot)).toMatchObject({ status: 'busy', deadlineAt: null, inFlightQueries: 1 });
    expect(projectElasticAgent(steps[4].snapshot)).toMatchObject({ status: 'idle', deadlineAt: T + 70_000 + 900_000 });
  });

  test('idle timeout terminates an idle agent; the provider confirms', () => {
    const steps = replay(elasticAgentMachine, input, [
      ...up,
      { type: 'workChanged', at: T + 61_000, inFlightQueries: 0, openSessions: 0 },
      { type: 'deadline', at: T + 61_000 + 900_000 },
      { type: 'terminationConfirmed', at: T + 61_000 + 905_000 },
    ]);
    expect(projectElasticAgent(steps[4].snapshot)).toMatchObject({ status: 'terminating', terminationReason: 'idle' });
    expect(steps[4].actions.at(-1)).toEqual({
      type: 'terminateCompute',
      params: { elasticId: 'e-1', agentId: 'agent-9', providerRef: 'aci/eider-e-1', reason: 'idle', attempt: 1 },
    });
    expect(projectElasticAgent(steps[5].snapshot)).toMatchObject({ status: 'terminated', terminal: true });
  });

  test('past the lifetime a busy agent is stopped only once its work drains', () => {
    const steps = replay(elasticAgentMachine, input, [
      ...up,
      { type: 'workChanged', at: T + 61_000, inFlightQueries: 0, openSessions: 1 },
      { type: 'deadline', at: T + 14_400_000 },
      { type: 'workChanged', at: T + 14_500_000, inFlightQueries: 0, openSessions: 0 },
    ]);
    expect(steps[4].snapshot.value).toBe('busy');
    expect(projectElasticAgent(steps[5].snapshot)).toMatchObject({ status: 'terminating', terminationReason: 'lifetime' });
  });

  test('an agent that never dials home is cleaned up and ends failed', () => {
    const steps = replay(elasticAgentMachine, input, [
      up[0],
      { type: 'deadline', at: T + 300_000 },
      { type: 'terminationConfirmed', at: T + 301_000 },
    ]);
    expect(projectElasticAgent(steps[2].snapshot)).toMatchObject({ status: 'terminating', terminationReason: 'provisioning_failed' });
    expect(projectElasticAgent(steps[3].snapshot)).toMatchObject({ status: 'failed', error: expect.stringMatching(/dial home/) });
    // The work waiting for it is told why, now, rather than at its own deadline.
    expect(steps[3].actions).toEqual([
      {
        type: 'failWaitingWork',
        params: { elasticId: 'e-1', agentId: null, pool: 'object_store:warehouse', registered: false, error: expect.stringMatching(/did not dial home within 300 s/) },
      },
    ]);
  });

  test('a refused provisioning fails at once, and so does the work waiting for it', () => {
    const last = replay(elasticAgentMachine, input, [{ type: 'provisionFailed', at: T + 500, message: 'no room on the docker host' }]).at(-1)!;
    expect(projectElasticAgent(last.snapshot)).toMatchObject({ status: 'failed', terminationReason: 'provisioning_failed', error: 'provisioning failed: no room on the docker host' });
    expect(last.actions).toEqual([
      { type: 'failWaitingWork', params: { elasticId: 'e-1', agentId: null, pool: 'object_store:warehouse', registered: false, error: 'provisioning failed: no room on the docker host' } },
    ]);
  });

  test('termination is retried on its deadline and fails after the last attempt', () => {
    const steps = replay(elasticAgentMachine, { ...input, maxTerminateAttempts: 2 }, [
      { type: 'terminate', at: T + 10 },
      { type: 'deadline', at: T + 10 + 60_000 },
      { type: 'deadline', at: T + 10 + 120_000 },
    ]);
    expect(steps[2].actions.at(-1)).toMatchObject({ type: 'terminateCompute', params: { attempt: 2, reason: 'operator' } });
    expect(projectElasticAgent(steps[3].snapshot)).toMatchObject({ status: 'failed', error: expect.stringMatching(/not confirmed after 2/) });
  });
});
