// The elastic agent lifecycle: one actor per agent provisioned on demand (ELASTIC_COMPUTE_ENABLED), from the
// provider call to termination.
//
// States: requested → provisioning → registered → idle ⇄ busy → terminating → terminated; failed.
//
// Work is reported as absolute counts (`workChanged` {inFlightQueries, openSessions}), recounted by the host from
// the database whenever a query or session of this agent changes (their `agentWorkChanged` action), so a lost or
// repeated report cannot skew it.
//
// Actions the host executes after persisting (type → params):
//   provisionCompute   {elasticId, pool, cpu, memoryGb}                  call the provider (cloud container / docker);
//                      answer `provisioningStarted` {providerRef} or `provisionFailed`
//   terminateCompute   {elasticId, agentId, providerRef, reason, attempt} delete the container; answer
//                      `terminationConfirmed` or `terminationFailed`
//   releaseWaitingWork {elasticId, agentId, pool}                        send `computeReady` to the queries and
//                      sessions waiting for this pool's compute, then report `workChanged`
//   stopAgent          {elasticId, agentId}                              ask the agent to stop taking work (drain)
//   failWaitingWork    {elasticId, agentId, pool, registered, error}     on failure: work waiting for this compute
//                      fails now (when nothing else in its pool can serve it) instead of at its own deadline
//
// Deadlines (context.deadlineAt):
//   requested, provisioning  requested + provisioningDeadlineMs (ELASTIC_PROVISIONING_DEADLINE_S: dial home in time)
//   registered, idle         min(idle since + idleTimeoutMs (ELASTIC_IDLE_TIMEOUT_S), requested + maxLifetimeMs)
//   busy                     none: never terminated with in-flight work; past the lifetime it drains and stops
//   terminating              entry + terminateTimeoutMs, then retried (maxTerminateAttempts) before failing
import { assign, setup } from 'xstate';
import { deadlinePassed, eventTime, positiveMs, fromInput } from './contract.ts';
import type { DeadlineEvent, MachineProjection, SupervisorFailedEvent } from './contract.ts';

export interface ElasticAgentInput {
  elasticId: string;
  /** The storage shape the agent serves (one pool per shape, ELASTIC_MAX_AGENTS_PER_POOL). */
  pool: string;
  cpu: number;
  memoryGb: number;
  at: number;
  provisioningDeadlineMs: number;
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  terminateTimeoutMs: number;
  maxTerminateAttempts: number;
}

export type TerminationReason = 'idle' | 'lifetime' | 'operator' | 'agent_lost' | 'provisioning_failed';

export type ElasticAgentEvent =
  | { type: 'provisioningStarted'; at: number; providerRef: string }
  | { type: 'provisionFailed'; at: number; message: string }
  | { type: 'registered'; at: number; agentId: string }
  | { type: 'workChanged'; at: number; inFlightQueries: number; openSessions: number }
  | { type: 'agentLost'; at: number }
  | { type: 'terminate'; at: number }
  | { type: 'terminationConfirmed'; at: number }
  | { type: 'terminationFailed'; at: number; message: string }
  | DeadlineEvent
  | SupervisorFailedEvent;

export interface ElasticAgentContext {
  elasticId: string;
  pool: string;
  cpu: number;
  memoryGb: number;
  provisioningDeadlineMs: number;
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  terminateTimeoutMs: number;
  maxTerminateAttempts: number;
  providerRef: string | null;
  agentId: string | null;
  createdAt: number;
  enteredAt: number;
  registeredAt: number | null;
  idleSince: number | null;
  terminatedAt: number | null;
  inFlightQueries: number;
  openSessions: number;
  terminateAttempts: number;
  deadlineAt: number | null;
  terminationReason: TerminationReason | null;
  /** Set when the agent ends in `failed` once the cleanup is confirmed (provisioning failed, supervisor gave up). */
  failing: boolean;
  error: string | null;
}

function lifetimeEnd(c: ElasticAgentContext): number {
  return c.createdAt + c.maxLifetimeMs;
}

function provisioningEnd(c: ElasticAgentContext): number {
  return c.createdAt + c.provisioningDeadlineMs;
}

function hasWork(c: { inFlightQueries: number; openSessions: number }): boolean {
  return c.inFlightQueries > 0 || c.openSessions > 0;
}

function failureOf(event: ElasticAgentEvent, context: ElasticAgentContext): Partial<ElasticAgentContext> {
  switch (event.type) {
    case 'provisionFailed':
      return { terminationReason: 'provisioning_failed' as const, error: `provisioning failed: ${event.message}` };
    case 'deadline':
    case 'provisioningStarted':
      if (event.type === 'deadline' && context.terminateAttempts > 0) {
        const earlier = context.error === null ? '' : ` (${context.error})`;
        return { error: `termination not confirmed after ${context.terminateAttempts} attempts${earlier}` };
      }
      if (context.registeredAt === null) {
        return {
          terminationReason: 'provisioning_failed' as const,
          error: `the agent did not dial home within ${context.provisioningDeadlineMs / 1000} s`,
        };
      }
      return { error: 'provisioning did not complete' };
    case 'terminationFailed':
      return { error: `termination failed: ${event.message}` };
    case 'supervisor.failed':
      return { error: event.reason };
    default:
      return {};
  }
}

const terminateCompute = {
  type: 'terminateCompute' as const,
  params: ({ context }: { context: ElasticAgentContext }) => ({
    elasticId: context.elasticId,
    agentId: context.agentId,
    providerRef: context.providerRef,
    reason: context.terminationReason ?? 'operator',
    attempt: context.terminateAttempts,
  }),
};


/** The agent dialing home, before or after the provider said it started the container (past its lifetime: ended). */
const dialedHome = [
  { guard: 'lifetimeOver', target: 'terminating', actions: ['assignRegistration', 'assignReason'] },
  { target: 'registered', actions: 'assignRegistration' },
] as const;

/** How a start ends before the agent dialed home, requested or provisioning alike. */
const startEnds = {
  terminate: { target: 'terminating', actions: 'assignReason' },
  deadline: { guard: 'deadlinePassed', target: 'terminating', actions: 'assignFailure' },
  'supervisor.failed': { target: 'terminating', actions: 'assignFailure' },
} as const;
export const elasticAgentMachine = setup({
  types: {
    context: {} as ElasticAgentContext,
    events: {} as ElasticAgentEvent,
    input: {} as ElasticAgentInput,
  },
  actions: {
    enterProvisioningWindow: assign(({ context, event }) => ({
      enteredAt: eventTime(event, context.createdAt),
      deadlineAt: provisioningEnd(context),
    })),
    enterIdleWindow: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, idleSince: at, deadlineAt: Math.min(at + context.idleTimeoutMs, lifetimeEnd(context)) };
    }),
    enterBusy: assign(({ context, event }) => ({ enteredAt: eventTime(event, context.createdAt), idleSince: null, deadlineAt: null })),
    enterTerminating: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, terminateAttempts: context.terminateAttempts + 1, deadlineAt: at + context.terminateTimeoutMs };
    }),
    enterTerminal: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, terminatedAt: at, deadlineAt: null };
    }),
    assignProviderRef: assign({
      providerRef: ({ context, event }) => (event.type === 'provisioningStarted' ? event.providerRef : context.providerRef),
    }),
    assignRegistration: assign(({ event }) => {
      if (event.type !== 'registered') return {};
      return { agentId: event.agentId, registeredAt: event.at };
    }),
    assignWork: assign(({ event }) => {
      if (event.type !== 'workChanged') return {};
      return { inFlightQueries: Math.max(0, event.inFlightQueries), openSessions: Math.max(0, event.openSessions) };
    }),
    assignReason: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      switch (event.type) {
        case 'terminate':
          return { terminationReason: 'operator' as const };
        case 'agentLost':
          return { terminationReason: 'agent_lost' as const, error: 'the agent disconnected' };
        case 'deadline':
        case 'workChanged':
        case 'registered':
          return { terminationReason: at >= lifetimeEnd(context) ? ('lifetime' as const) : ('idle' as const) };
        default:
          return {};
      }
    }),
    assignFailure: assign(({ context, event }) => ({ failing: true, ...failureOf(event, context) })),
    provisionCompute: (_, _params: { elasticId: string; pool: string; cpu: number; memoryGb: number }) => {},
    terminateCompute: (
      _,
      _params: { elasticId: string; agentId: string | null; providerRef: string | null; reason: TerminationReason; attempt: number },
    ) => {},
    releaseWaitingWork: (_, _params: { elasticId: string; agentId: string; pool: string }) => {},
    stopAgent: (_, _params: { elasticId: string; agentId: string | null }) => {},
    failWaitingWork: (
      _,
      _params: { elasticId: string; agentId: string | null; pool: string; registered: boolean; error: string | null },
    ) => {},
  },
  guards: {
    deadlinePassed: ({ context, event }) => deadlinePassed(event, context.deadlineAt),
    provisioningOver: ({ context, event }) => eventTime(event, context.createdAt) >= provisioningEnd(context),
    lifetimeOver: ({ context, event }) => eventTime(event, context.createdAt) >= lifetimeEnd(context),
    reportsWork: ({ event }) =>
      event.type === 'workChanged' && hasWork({ inFlightQueries: event.inFlightQueries, openSessions: event.openSessions }),
    retriesLeft: ({ context }) => context.terminateAttempts < context.maxTerminateAttempts,
    retryDue: ({ context, event }) =>
      deadlinePassed(event, context.deadlineAt) && context.terminateAttempts < context.maxTerminateAttempts,
    failing: ({ context }) => context.failing,
  },
}).createMachine({
  id: 'elasticAgent',
  description: 'One agent provisioned on demand: dial-home deadline, idle termination, lifetime backstop.',
  initial: 'requested',
  context: fromInput((input) => ({
    elasticId: input.elasticId,
    pool: input.pool,
    cpu: input.cpu,
    memoryGb: input.memoryGb,
    provisioningDeadlineMs: positiveMs('provisioningDeadlineMs', input.provisioningDeadlineMs),
    idleTimeoutMs: positiveMs('idleTimeoutMs', input.idleTimeoutMs),
    maxLifetimeMs: positiveMs('maxLifetimeMs', input.maxLifetimeMs),
    terminateTimeoutMs: positiveMs('terminateTimeoutMs', input.terminateTimeoutMs),
    maxTerminateAttempts: Math.max(1, Math.floor(input.maxTerminateAttempts)),
    providerRef: null,
    agentId: null,
    createdAt: input.at,
    enteredAt: input.at,
    registeredAt: null,
    idleSince: null,
    terminatedAt: null,
    inFlightQueries: 0,
    openSessions: 0,
    terminateAttempts: 0,
    deadlineAt: null,
    terminationReason: null,
    failing: false,
    error: null,
  })),
  states: {
    requested: {
      description: 'Compute requested from the provider; waiting for it to accept.',
      entry: [
        'enterProvisioningWindow',
        {
          type: 'provisionCompute',
          params: ({ context }) => ({ elasticId: context.elasticId, pool: context.pool, cpu: context.cpu, memoryGb: context.memoryGb }),
        },
      ],
      on: {
        provisioningStarted: [
          // Accepted after the dial-home deadline: the container exists but is already too late.
          { guard: 'provisioningOver', target: 'terminating', actions: ['assignProviderRef', 'assignFailure'] },
          { target: 'provisioning', actions: 'assignProviderRef' },
        ],
        registered: dialedHome,
        provisionFailed: { target: 'failed', actions: 'assignFailure' },
        ...startEnds,
      },
    },
    provisioning: {
      description: 'The provider is starting the container; the agent must dial home before the deadline.',
      entry: 'enterProvisioningWindow',
      on: {
        registered: dialedHome,
        provisionFailed: { target: 'terminating', actions: 'assignFailure' },
        ...startEnds,
      },
    },
    registered: {
      description: 'The agent dialed home; work waiting for this pool is released to it.',
      entry: [
        'enterIdleWindow',
        {
          type: 'releaseWaitingWork',
          params: ({ context }) => ({ elasticId: context.elasticId, agentId: context.agentId!, pool: context.pool }),
        },
      ],
      on: {
        workChanged: [
          { guard: 'reportsWork', target: 'busy', actions: 'assignWork' },
          { guard: 'lifetimeOver', target: 'terminating', actions: ['assignWork', 'assignReason'] },
          { target: 'idle', actions: 'assignWork' },
        ],
        agentLost: { target: 'terminating', actions: 'assignReason' },
        terminate: { target: 'terminating', actions: 'assignReason' },
        deadline: { guard: 'deadlinePassed', target: 'terminating', actions: 'assignReason' },
        'supervisor.failed': { target: 'terminating', actions: 'assignFailure' },
      },
    },
    idle: {
      description: 'No in-flight queries and no open sessions; terminated after the idle timeout or at the lifetime cap.',
      entry: 'enterIdleWindow',
      on: {
        workChanged: [
          { guard: 'reportsWork', target: 'busy', actions: 'assignWork' },
          // A recount of zero while idle changes nothing: the idle clock keeps running.
          { actions: 'assignWork' },
        ],
        agentLost: { target: 'terminating', actions: 'assignReason' },
        terminate: { target: 'terminating', actions: 'assignReason' },
        deadline: { guard: 'deadlinePassed', target: 'terminating', actions: 'assignReason' },
        'supervisor.failed': { target: 'terminating', actions: 'assignFailure' },
      },
    },
    busy: {
      description: 'Running queries or holding sessions: never idle-terminated; past the lifetime it stops once work drains.',
      entry: 'enterBusy',
      on: {
        workChanged: [
          { guard: 'reportsWork', actions: 'assignWork' },
          { guard: 'lifetimeOver', target: 'terminating', actions: ['assignWork', 'assignReason'] },
          { target: 'idle', actions: 'assignWork' },
        ],
        agentLost: { target: 'terminating', actions: 'assignReason' },
        terminate: { target: 'terminating', actions: 'assignReason' },
        'supervisor.failed': { target: 'terminating', actions: 'assignFailure' },
      },
    },
    terminating: {
      description: 'The provider is asked to delete the container; retried until confirmed or out of attempts.',
      entry: [
        'enterTerminating',
        { type: 'stopAgent', params: ({ context }) => ({ elasticId: context.elasticId, agentId: context.agentId }) },
        terminateCompute,
      ],
      on: {
        terminationConfirmed: [{ guard: 'failing', target: 'failed' }, { target: 'terminated' }],
        terminationFailed: [
          { guard: 'retriesLeft', target: 'terminating', reenter: true },
          { target: 'failed', actions: 'assignFailure' },
        ],
        deadline: [
          { guard: 'retryDue', target: 'terminating', reenter: true },
          { guard: 'deadlinePassed', target: 'failed', actions: 'assignFailure' },
        ],
        'supervisor.failed': { target: 'failed', actions: 'assignFailure' },
      },
    },
    terminated: {
      type: 'final',
      description: 'The container is gone.',
      entry: 'enterTerminal',
    },
    failed: {
      type: 'final',
      description: 'Provisioning failed, or termination could not be confirmed; error is set (operator attention).',
      entry: [
        'enterTerminal',
        {
          type: 'failWaitingWork',
          params: ({ context }) => ({
            elasticId: context.elasticId,
            agentId: context.agentId,
            pool: context.pool,
            registered: context.registeredAt !== null,
            error: context.error,
          }),
        },
      ],
    },
  },
});

export type ElasticAgentMachine = typeof elasticAgentMachine;

type ElasticAgentStatus =
  | 'requested'
  | 'provisioning'
  | 'registered'
  | 'idle'
  | 'busy'
  | 'terminating'
  | 'terminated'
  | 'failed';

export interface ElasticAgentProjection extends MachineProjection {
  status: ElasticAgentStatus;
  agentId: string | null;
  pool: string;
  providerRef: string | null;
  terminationReason: TerminationReason | null;
  inFlightQueries: number;
  openSessions: number;
  createdAt: number;
  registeredAt: number | null;
  terminatedAt: number | null;
}

export function projectElasticAgent(snapshot: { value: unknown; context: ElasticAgentContext }): ElasticAgentProjection {
  const state = String(snapshot.value);
  const c = snapshot.context;
  const states: ElasticAgentStatus[] = ['requested', 'provisioning', 'registered', 'idle', 'busy', 'terminating', 'terminated', 'failed'];
  if (!states.includes(state as ElasticAgentStatus)) throw new Error(`unknown elasticAgent state ${state}`);
  const status = state as ElasticAgentStatus;
  return {
    state,
    status,
    deadlineAt: c.deadlineAt,
    terminal: status === 'terminated' || status === 'failed',
    error: c.error,
    agentId: c.agentId,
    pool: c.pool,
    providerRef: c.providerRef,
    terminationReason: c.terminationReason,
    inFlightQueries: c.inFlightQueries,
    openSessions: c.openSessions,
    createdAt: c.createdAt,
    registeredAt: c.registeredAt,
    terminatedAt: c.terminatedAt,
  };
}
