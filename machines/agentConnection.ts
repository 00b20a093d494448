// The agent connection lifecycle: one actor per accepted WebSocket on /agents/connect, from the auth frame to
// the socket's end. A reconnect is a new connection actor; the agent row shows the latest one's projection.
//
// States: authenticating → registered → healthy → (draining) → unavailable.
//
// The socket handler validates the auth frame (bootstrap token: checked and deleted; or a session token on
// reconnect) before sending `authenticated`/`authFailed`: the machine never sees a credential.
//
// Actions the host executes after persisting (type → params):
//   sendAuthOk        {connectionId, agentId, heartbeatIntervalMs, heartbeatTtlMs}  reply auth_ok; the effect adds
//                     the session token the validation step issued (kept in memory, never in a snapshot)
//   sendAuthError     {connectionId, code, message}    reply auth_error before closing
//   storeCapabilities {agentId, capabilities}          write the advertised capabilities on the agent row
//   registerAgent     {agentId, connectionId}          add the socket to this replica's live registry (owner_url)
//   unregisterAgent   {agentId, connectionId}          remove it from the live registry
//   closeSocket       {connectionId, code, reason}     close the WebSocket (a no-op when it is already closed)
//   failAgentWork     {agentId, reason}                send `agentLost` to the agent's in-flight queries,
//                     statements and sessions, and to its elastic actor
//   reconnectSessions {agentId}                        send `agentReconnected` to the agent's live SQL sessions:
//                     the agent dropped those of its earlier connection (open ones fail), and an open sent on that
//                     one is asked again on this one (the socket's later frames wait for this)
//
// Deadlines (context.deadlineAt):
//   authenticating  entry + authTimeoutMs       the auth frame must come (and validate) in time
//   registered      entry + heartbeatTtlMs      agent_status must follow auth_ok
//   healthy         last heartbeat + heartbeatTtlMs, renewed by every heartbeat and agent_status
//   draining        entry + drainTimeoutMs      the agent should hang up and reconnect to a live replica
import { assign, setup } from 'xstate';
import { deadlinePassed, eventTime, positiveMs, fromInput } from './contract.ts';
import type { DeadlineEvent, Json, MachineProjection, SupervisorFailedEvent } from './contract.ts';

export interface AgentConnectionInput {
  connectionId: string;
  /** The replica holding the socket (owner_url). */
  replicaUrl: string;
  /** The agent's result-server address as recorded from the upgrade request. */
  resultAddress: string | null;
  at: number;
  authTimeoutMs: number;
  heartbeatIntervalMs: number;
  heartbeatTtlMs: number;
  drainTimeoutMs: number;
}

export type AgentConnectionEvent =
  | { type: 'authenticated'; at: number; agentId: string; name: string | null; version: string | null; resumed: boolean }
  | { type: 'authFailed'; at: number; code: string; message: string }
  | { type: 'status'; at: number; capabilities: { [key: string]: Json } }
  | { type: 'heartbeat'; at: number }
  | { type: 'disconnected'; at: number; reason?: string }
  | { type: 'credentialRevoked'; at: number }
  | { type: 'drain'; at: number }
  | DeadlineEvent
  | SupervisorFailedEvent;

export type UnavailableReason =
  | 'auth_failed'
  | 'auth_timeout'
  | 'disconnected'
  | 'heartbeat_expired'
  | 'credential_revoked'
  | 'replica_shutdown'
  | 'internal_error';

export interface AgentConnectionContext {
  connectionId: string;
  replicaUrl: string;
  resultAddress: string | null;
  authTimeoutMs: number;
  heartbeatIntervalMs: number;
  heartbeatTtlMs: number;
  drainTimeoutMs: number;
  agentId: string | null;
  name: string | null;
  version: string | null;
  resumed: boolean;
  capabilities: { [key: string]: Json } | null;
  createdAt: number;
  enteredAt: number;
  connectedAt: number | null;
  lastHeartbeatAt: number | null;
  disconnectedAt: number | null;
  deadlineAt: number | null;
  reason: UnavailableReason | null;
  error: string | null;
}

function endingOf(event: AgentConnectionEvent, c: AgentConnectionContext): { reason: UnavailableReason; error: string } {
  switch (event.type) {
    case 'authFailed':
      return { reason: 'auth_failed', error: `${event.code}: ${event.message}` };
    case 'disconnected':
      return { reason: 'disconnected', error: event.reason ?? 'the socket closed' };
    case 'credentialRevoked':
      return { reason: 'credential_revoked', error: "the agent's credential was revoked" };
    case 'supervisor.failed':
      return { reason: 'internal_error', error: event.reason };
    case 'deadline':
      if (c.agentId === null) return { reason: 'auth_timeout', error: 'no valid auth frame in time' };
      if (c.reason === 'replica_shutdown') return { reason: 'replica_shutdown', error: 'the replica shut down' };
      return { reason: 'heartbeat_expired', error: `no heartbeat within ${c.heartbeatTtlMs / 1000} s` };
    default:
      return { reason: 'internal_error', error: `unexpected ending on ${event.type}` };
  }
}

const closeSocket = {
  type: 'closeSocket' as const,
  params: ({ context }: { context: AgentConnectionContext }) => ({
    connectionId: context.connectionId,
    code: context.reason === 'replica_shutdown' ? 1012 : context.reason === 'auth_failed' || context.reason === 'credential_revoked' ? 1008 : 1000,
    reason: context.reason ?? 'closed',
  }),
};
const unregister = {
  type: 'unregisterAgent' as const,
  params: ({ context }: { context: AgentConnectionContext }) => ({ agentId: context.agentId!, connectionId: context.connectionId }),
};
const failWork = {
  type: 'failAgentWork' as const,
  params: ({ context }: { context: AgentConnectionContext }) => ({ agentId: context.agentId!, reason: context.reason ?? 'disconnected' }),
};
const storeCapabilities = {
  type: 'storeCapabilities' as const,
  params: ({ context }: { context: AgentConnectionContext }) => ({ agentId: context.agentId!, capabilities: context.capabilities ?? {} }),
};


/** How a registered or healthy connection ends: the same from both states (draining ends on its own terms). */
const connectionEnds = {
  disconnected: { target: 'unavailable', actions: ['assignEnding', unregister, failWork] },
  credentialRevoked: { target: 'unavailable', actions: ['assignEnding', closeSocket, unregister, failWork] },
  drain: { target: 'draining' },
  deadline: { guard: 'deadlinePassed', target: 'unavailable', actions: ['assignEnding', closeSocket, unregister, failWork] },
  'supervisor.failed': { target: 'unavailable', actions: ['assignEnding', closeSocket, unregister, failWork] },
} as const;
export const agentConnectionMachine = setup({
  types: {
    context: {} as AgentConnectionContext,
    events: {} as AgentConnectionEvent,
    input: {} as AgentConnectionInput,
  },
  actions: {
    enterAuthenticating: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, deadlineAt: at + context.authTimeoutMs };
    }),
    enterRegistered: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, connectedAt: at, lastHeartbeatAt: at, deadlineAt: at + context.heartbeatTtlMs };
    }),
    enterHealthy: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, lastHeartbeatAt: at, deadlineAt: at + context.heartbeatTtlMs };
    }),
    enterDraining: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, reason: 'replica_shutdown' as const, error: 'the replica shut down', deadlineAt: at + context.drainTimeoutMs };
    }),
    assignShutdown: assign({ reason: 'replica_shutdown' as const, error: 'the replica shut down' }),
    enterUnavailable: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, disconnectedAt: at, deadlineAt: null };
    }),
    assignIdentity: assign(({ event }) => {
      if (event.type !== 'authenticated') return {};
      return { agentId: event.agentId, name: event.name, version: event.version, resumed: event.resumed };
    }),
    assignCapabilities: assign(({ context, event }) => {
      if (event.type !== 'status') return {};
      return { capabilities: event.capabilities, lastHeartbeatAt: event.at, deadlineAt: event.at + context.heartbeatTtlMs };
    }),
    renewHeartbeat: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { lastHeartbeatAt: at, deadlineAt: at + context.heartbeatTtlMs };
    }),
    assignEnding: assign(({ context, event }) => endingOf(event, context)),
    sendAuthOk: (_, _params: { connectionId: string; agentId: string; heartbeatIntervalMs: number; heartbeatTtlMs: number }) => {},
    sendAuthError: (_, _params: { connectionId: string; code: string; message: string }) => {},
    storeCapabilities: (_, _params: { agentId: string; capabilities: { [key: string]: Json } }) => {},
    registerAgent: (_, _params: { agentId: string; connectionId: string }) => {},
    unregisterAgent: (_, _params: { agentId: string; connectionId: string }) => {},
    closeSocket: (_, _params: { connectionId: string; code: number; reason: string }) => {},
    failAgentWork: (_, _params: { agentId: string; reason: string }) => {},
    reconnectSessions: (_, _params: { agentId: string }) => {},
  },
  guards: {
    deadlinePassed: ({ context, event }) => deadlinePassed(event, context.deadlineAt),
  },
}).createMachine({
  id: 'agentConnection',
  description: "One agent socket: authentication, registration, heartbeats, and the socket's end.",
  initial: 'authenticating',
  context: fromInput((input) => ({
    connectionId: input.connectionId,
    replicaUrl: input.replicaUrl,
    resultAddress: input.resultAddress,
    authTimeoutMs: positiveMs('authTimeoutMs', input.authTimeoutMs),
    heartbeatIntervalMs: positiveMs('heartbeatIntervalMs', input.heartbeatIntervalMs),
    heartbeatTtlMs: positiveMs('heartbeatTtlMs', input.heartbeatTtlMs),
    drainTimeoutMs: positiveMs('drainTimeoutMs', input.drainTimeoutMs),
    agentId: null,
    name: null,
    version: null,
    resumed: false,
    capabilities: null,
    createdAt: input.at,
    enteredAt: input.at,
    connectedAt: null,
    lastHeartbeatAt: null,
    disconnectedAt: null,
    deadlineAt: null,
    reason: null,
    error: null,
  })),
  states: {
    authenticating: {
      description: 'Socket open; waiting for a valid auth frame (bootstrap token, or session token on reconnect).',
      entry: 'enterAuthenticating',
      on: {
        authenticated: {
          target: 'registered',
          actions: [
            'assignIdentity',
            {
              type: 'sendAuthOk',
              params: ({ context }) => ({
                connectionId: context.connectionId,
                agentId: context.agentId!,
                heartbeatIntervalMs: context.heartbeatIntervalMs,
                heartbeatTtlMs: context.heartbeatTtlMs,
              }),
            },
            {
              type: 'registerAgent',
              params: ({ context }) => ({ agentId: context.agentId!, connectionId: context.connectionId }),
            },
            { type: 'reconnectSessions', params: ({ context }) => ({ agentId: context.agentId! }) },
          ],
        },
        authFailed: {
          target: 'unavailable',
          actions: [
            'assignEnding',
            {
              type: 'sendAuthError',
              params: ({ context, event }) => ({ connectionId: context.connectionId, code: event.code, message: event.message }),
            },
            closeSocket,
          ],
        },
        disconnected: { target: 'unavailable', actions: 'assignEnding' },
        drain: { target: 'unavailable', actions: ['assignShutdown', closeSocket] },
        deadline: { guard: 'deadlinePassed', target: 'unavailable', actions: ['assignEnding', closeSocket] },
        'supervisor.failed': { target: 'unavailable', actions: ['assignEnding', closeSocket] },
      },
    },
    registered: {
      description: 'auth_ok sent, session credential issued; waiting for agent_status with capabilities.',
      entry: 'enterRegistered',
      on: {
        status: { target: 'healthy', actions: ['assignCapabilities', storeCapabilities] },
        heartbeat: { actions: 'renewHeartbeat' },
        ...connectionEnds,
      },
    },
    healthy: {
      description: 'Capabilities stored; heartbeats (each re-advertising agent_status) keep it alive. Work is dispatched here.',
      entry: 'enterHealthy',
      on: {
        // The agents row takes the capabilities with the transition (the entity write): a re-advertised status
        // is presence, written without an effect.
        status: { actions: ['assignCapabilities'] },
        heartbeat: { actions: 'renewHeartbeat' },
        ...connectionEnds,
      },
    },
    draining: {
      description: 'This replica is shutting down: no new work; the socket is closed so the agent reconnects elsewhere.',
      // In-flight work is not failed: its final frames reach the agent's new owner replica, or its deadline reaps it.
      entry: ['enterDraining', closeSocket, unregister],
      on: {
        disconnected: { target: 'unavailable' },
        credentialRevoked: { target: 'unavailable', actions: 'assignEnding' },
        deadline: { guard: 'deadlinePassed', target: 'unavailable' },
        'supervisor.failed': { target: 'unavailable', actions: 'assignEnding' },
      },
    },
    unavailable: {
      type: 'final',
      description: 'The connection ended (disconnect, heartbeat expiry, revoked credential, auth failure, shutdown).',
      entry: 'enterUnavailable',
    },
  },
});

export type AgentConnectionMachine = typeof agentConnectionMachine;

export interface AgentConnectionProjection extends MachineProjection {
  /** The agent API's vocabulary: healthy only while heartbeats flow; anything else is unavailable. */
  status: 'healthy' | 'unavailable';
  agentId: string | null;
  reason: UnavailableReason | null;
  capabilities: { [key: string]: Json } | null;
  ownerUrl: string | null;
  resultAddress: string | null;
  connectedAt: number | null;
  lastHeartbeatAt: number | null;
  disconnectedAt: number | null;
}

/** The connection's columns, and what the agent row shows while this is its latest connection. */
export function projectAgentConnection(snapshot: {
  value: unknown;
  context: AgentConnectionContext;
}): AgentConnectionProjection {
  const state = String(snapshot.value);
  const c = snapshot.context;
  if (!['authenticating', 'registered', 'healthy', 'draining', 'unavailable'].includes(state)) {
    throw new Error(`unknown agentConnection state ${state}`);
  }
  const terminal = state === 'unavailable';
  return {
    state,
    status: state === 'healthy' ? 'healthy' : 'unavailable',
    deadlineAt: c.deadlineAt,
    terminal,
    error: c.error,
    agentId: c.agentId,
    reason: c.reason,
    capabilities: c.capabilities,
    ownerUrl: terminal || state === 'draining' ? null : c.replicaUrl,
    resultAddress: c.resultAddress,
    connectedAt: c.connectedAt,
    lastHeartbeatAt: c.lastHeartbeatAt,
    disconnectedAt: c.disconnectedAt,
  };
}
