import { describe, expect, test } from 'vitest';
import { agentConnectionMachine, projectAgentConnection } from './agentConnection.ts';
import type { AgentConnectionInput } from './agentConnection.ts';
import { replay } from './replay.ts';

const T = 1_700_000_000_000;
const input: AgentConnectionInput = {
  connectionId: 'c-1',
  replicaUrl: 'http://replica-1:8000',
  resultAddress: 'http://10.0.0.5:8001',
  at: T,
  authTimeoutMs: 10_000,
  heartbeatIntervalMs: 15_000,
  heartbeatTtlMs: 45_000,
  drainTimeoutMs: 5_000,
};
const authenticated = { type: 'authenticated' as const, at: T + 10, agentId: 'agent-1', name: 'bundled', version: '0.1.0', resumed: false };
const status = { type: 'status' as const, at: T + 20, capabilities: { engine_version: 'v1.5.6', memory_limit_bytes: 4_294_967_296 } };

describe('agentConnection machine', () => {
  test('auth → registered (auth_ok) → healthy on agent_status; heartbeats renew the deadline', () => {
    const steps = replay(agentConnectionMachine, input, [authenticated, status, { type: 'heartbeat', at: T + 15_020 }]);
    expect(steps[0].snapshot.context.deadlineAt).toBe(T + 10_000);
    expect(steps[1].snapshot.value).toBe('registered');
    expect(steps[1].actions).toEqual([
      { type: 'sendAuthOk', params: { connectionId: 'c-1', agentId: 'agent-1', heartbeatIntervalMs: 15_000, heartbeatTtlMs: 45_000 } },
      { type: 'registerAgent', params: { agentId: 'agent-1', connectionId: 'c-1' } },
      // The agent holds no SQL session of an earlier connection.
      { type: 'reconnectSessions', params: { agentId: 'agent-1' } },
    ]);
    expect(projectAgentConnection(steps[1].snapshot).status).toBe('unavailable');
    expect(projectAgentConnection(steps[2].snapshot)).toMatchObject({ status: 'healthy', ownerUrl: 'http://replica-1:8000', capabilities: status.capabilities });
    expect(steps[2].actions).toEqual([{ type: 'storeCapabilities', params: { agentId: 'agent-1', capabilities: status.capabilities } }]);
    expect(steps[3].snapshot.context.deadlineAt).toBe(T + 15_020 + 45_000);
  });

  test('disconnect makes it unavailable, leaves the registry and fails in-flight work', () => {
    const last = replay(agentConnectionMachine, input, [authenticated, status, { type: 'disconnected', at: T + 30 }]).at(-1)!;
    expect(projectAgentConnection(last.snapshot)).toMatchObject({ status: 'unavailable', terminal: true, reason: 'disconnected', ownerUrl: null });
    expect(last.actions.map((a) => a.type)).toEqual(['unregisterAgent', 'failAgentWork']);
  });

  test('heartbeat expiry and credential revocation close the socket', () => {
    const expired = replay(agentConnectionMachine, input, [authenticated, status, { type: 'deadline', at: T + 20 + 45_000 }]).at(-1)!;
    expect(projectAgentConnection(expired.snapshot)).toMatchObject({ status: 'unavailable', reason: 'heartbeat_expired' });
    expect(expired.actions[0]).toEqual({ type: 'closeSocket', params: { connectionId: 'c-1', code: 1000, reason: 'heartbeat_expired' } });
    const revoked = replay(agentConnectionMachine, input, [authenticated, status, { type: 'credentialRevoked', at: T + 30 }]).at(-1)!;
    expect(revoked.actions[0]).toEqual({ type: 'closeSocket', params: { connectionId: 'c-1', code: 1008, reason: 'credential_revoked' } });
  });

  test('a bad auth frame is answered with auth_error and the socket closed', () => {
    const last = replay(agentConnectionMachine, input, [{ type: 'authFailed', at: T + 1, code: 'invalid_token', message: 'token already used' }]).at(-1)!;
    expect(last.snapshot.value).toBe('unavailable');
    expect(last.actions.map((a) => a.type)).toEqual(['sendAuthError', 'closeSocket']);
  });

  test('replica shutdown drains: the socket closes with 1012 and in-flight work is not failed', () => {
    const steps = replay(agentConnectionMachine, input, [authenticated, status, { type: 'drain', at: T + 30 }, { type: 'disconnected', at: T + 40 }]);
    expect(steps[3].snapshot.value).toBe('draining');
    expect(steps[3].actions).toEqual([
      { type: 'closeSocket', params: { connectionId: 'c-1', code: 1012, reason: 'replica_shutdown' } },
      { type: 'unregisterAgent', params: { agentId: 'agent-1', connectionId: 'c-1' } },
    ]);
    expect(projectAgentConnection(steps[4].snapshot)).toMatchObject({ status: 'unavailable', reason: 'replica_shutdown' });
    expect(steps[4].actions).toEqual([]);
  });
});
