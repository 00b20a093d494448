// The SQL session lifecycle: one actor per session (a persistent agent-held connection for external clients).
//
// States: start (transient choice) → pending (compute starting) → opening → open → closing → closed; failed.
//
// Actions the host executes after persisting (type → params):
//   requestCompute          {sessionId, workspace}               ask the elastic pool for an agent; answer `computeReady`
//   sendOpenSession         {sessionId, agentId, workspace}      ask the agent to open the session connection; it
//                           answers with an acknowledgement → `opened` (or a failure → `openFailed`); asked
//                           again on `agentReconnected` while opening
//   sendDropSession         {sessionId, agentId, reason}         tell the agent to drop the session's connection and
//                           memory reservation (opening deadline passed, or the session failed)
//   sendCloseSession        {sessionId, agentId, reason}         close the session on the agent; it answers → `closed`
//   cancelSessionStatements {sessionId}                          send `sessionClosed` to the session's unfinished
//                           statement actors
//   acceptStatement         {sessionId, statementId, agentId}    spawn the statement actor (only ever from `open`)
//   rejectStatement         {sessionId, statementId, code}       answer 409 session_not_open
//   agentWorkChanged        {agentId}                            the agent's open sessions changed (elastic recount)
//   removeStaging           {sessionId}                          delete the session's staging files (it ended)
//
// Deadlines (context.deadlineAt):
//   pending   min(lifetime end, last activity + idle)  and the compute wait (pendingTimeoutMs): the first to pass
//   opening   entry + openingDeadlineMs (SQL_SESSION_OPENING_DEADLINE_S)
//   open      lifetime end (created + SQL_SESSION_MAX_LIFETIME_S); also last activity + SQL_SESSION_IDLE_TIMEOUT_S
//             while no statement is running (idle close is reset per statement)
//   closing   entry + closeTimeoutMs (the agent's close acknowledgement; past it the session counts closed)
import { assign, setup } from 'xstate';
import { deadlinePassed, eventTime, positiveMs, fromInput } from './contract.ts';
import type { DeadlineEvent, MachineProjection, SupervisorFailedEvent } from './contract.ts';

export interface SqlSessionInput {
  sessionId: string;
  workspace: string;
  /** null while compute is starting (the open answered 202 with on_wait_timeout=continue). */
  agentId: string | null;
  at: number;
  /** SQL_SESSION_IDLE_TIMEOUT_S in ms. */
  idleTimeoutMs: number;
  /** SQL_SESSION_MAX_LIFETIME_S in ms. */
  maxLifetimeMs: number;
  /** SQL_SESSION_OPENING_DEADLINE_S in ms. */
  openingDeadlineMs: number;
  /** How long a pending session waits for compute (for example ELASTIC_PROVISIONING_DEADLINE_S). */
  pendingTimeoutMs: number;
  /** How long closing waits for the agent's acknowledgement. */
  closeTimeoutMs: number;
}

export type CloseReason = 'client' | 'admin' | 'idle' | 'lifetime';

export type SqlSessionEvent =
  | { type: 'computeReady'; at: number; agentId: string }
  | { type: 'computeFailed'; at: number; message: string }
  | { type: 'opened'; at: number }
  | { type: 'openFailed'; at: number; code: string; message: string }
  | { type: 'statementSubmitted'; at: number; statementId: string }
  | { type: 'statementFinished'; at: number; statementId: string }
  /** `byAdmin`: a query-admin closed another user's session */
  | { type: 'close'; at: number; byAdmin?: boolean }
  | { type: 'closed'; at: number }
  | { type: 'agentLost'; at: number }
  /** A new connection of the session's agent authenticated: the agent holds no session of an earlier one (it drops
   *  them with their connection), and an open sent on one may be lost with it. */
  | { type: 'agentReconnected'; at: number }
  | DeadlineEvent
  | SupervisorFailedEvent;

export interface SqlSessionContext {
  sessionId: string;
  workspace: string;
  agentId: string | null;
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  openingDeadlineMs: number;
  pendingTimeoutMs: number;
  closeTimeoutMs: number;
  createdAt: number;
  enteredAt: number;
  openedAt: number | null;
  closedAt: number | null;
  lastActivityAt: number;
  /** Ids of accepted statements not yet finished: idle close waits for them. */
  runningStatements: string[];
  statementCount: number;
  pendingUntil: number | null;
  deadlineAt: number | null;
  closeReason: CloseReason | null;
  errorCode: string | null;
  error: string | null;
}

function lifetimeEnd(c: SqlSessionContext): number {
  return c.createdAt + c.maxLifetimeMs;
}

/** The open (or pending) deadline: the lifetime cap, and the idle limit while no statement runs. */
function activityDeadline(c: SqlSessionContext): number {
  const lifetime = lifetimeEnd(c);
  if (c.runningStatements.length > 0) return lifetime;
  return Math.min(lifetime, c.lastActivityAt + c.idleTimeoutMs);
}

function pendingDeadline(c: SqlSessionContext): number {
  return Math.min(activityDeadline(c), c.pendingUntil ?? Number.POSITIVE_INFINITY);
}

function reasonAt(c: SqlSessionContext, at: number): CloseReason {
  return at >= lifetimeEnd(c) ? 'lifetime' : 'idle';
}

function failureOf(event: SqlSessionEvent, c: SqlSessionContext): { code: string; message: string } {
  switch (event.type) {
    case 'openFailed':
      return { code: event.code, message: event.message };
    case 'agentLost':
    case 'agentReconnected':
      return { code: 'agent_disconnected', message: 'the agent holding the session disconnected' };
    case 'computeFailed':
      return { code: 'compute_unavailable', message: event.message };
    case 'supervisor.failed':
      return { code: 'internal_error', message: event.reason };
    case 'deadline':
      if (c.agentId === null) return { code: 'compute_unavailable', message: 'no compute registered in time' };
      return { code: 'open_timeout', message: `the agent did not acknowledge the session within ${c.openingDeadlineMs / 1000} s` };
    default:
      return { code: 'internal_error', message: `unexpected failure on ${event.type}` };
  }
}

const dropOnAgent = {
  type: 'sendDropSession' as const,
  params: ({ context }: { context: SqlSessionContext }) => ({
    sessionId: context.sessionId,
    agentId: context.agentId!,
    reason: context.errorCode ?? 'failed',
  }),
};
const sendOpen = {
  type: 'sendOpenSession' as const,
  params: ({ context }: { context: SqlSessionContext }) => ({ sessionId: context.sessionId, agentId: context.agentId!, workspace: context.workspace }),
};
const cancelStatements = {
  type: 'cancelSessionStatements' as const,
  params: ({ context }: { context: SqlSessionContext }) => ({ sessionId: context.sessionId }),
};
const removeStaging = {
  type: 'removeStaging' as const,
  params: ({ context }: { context: SqlSessionContext }) => ({ sessionId: context.sessionId }),
};
const workChanged = {
  type: 'agentWorkChanged' as const,
  params: ({ context }: { context: SqlSessionContext }) => ({ agentId: context.agentId! }),
};
const rejectStatement = {
  type: 'rejectStatement' as const,
  params: ({ context, event }: { context: SqlSessionContext; event: SqlSessionEvent }) => ({
    sessionId: context.sessionId,
    statementId: event.type === 'statementSubmitted' ? event.statementId : '',
    code: 'session_not_open' as const,
  }),
};

export const sqlSessionMachine = setup({
  types: {
    context: {} as SqlSessionContext,
    events: {} as SqlSessionEvent,
    input: {} as SqlSessionInput,
  },
  actions: {
    enterPending: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      const next = { ...context, pendingUntil: at + context.pendingTimeoutMs };
      return { enteredAt: at, pendingUntil: next.pendingUntil, deadlineAt: pendingDeadline(next) };
    }),
    enterOpening: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, pendingUntil: null, deadlineAt: at + context.openingDeadlineMs };
    }),
    enterOpen: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      const next = { ...context, lastActivityAt: at };
      return { enteredAt: at, openedAt: at, lastActivityAt: at, deadlineAt: activityDeadline(next) };
    }),
    enterClosing: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, deadlineAt: at + context.closeTimeoutMs };
    }),
    enterTerminal: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, closedAt: at, deadlineAt: null };
    }),
    assignAgent: assign({
      agentId: ({ context, event }) => (event.type === 'computeReady' ? event.agentId : context.agentId),
    }),
    assignFailure: assign(({ context, event }) => {
      const failure = failureOf(event, context);
      return { errorCode: failure.code, error: failure.message };
    }),
    assignCloseByClient: assign({ closeReason: ({ event }) => (event.type === 'close' && event.byAdmin ? 'admin' : 'client') }),
    assignCloseByLimit: assign({
      closeReason: ({ context, event }) => reasonAt(context, eventTime(event, context.createdAt)),
    }),
    recordStatementStart: assign(({ context, event }) => {
      if (event.type !== 'statementSubmitted') return {};
      const next = {
        ...context,
        lastActivityAt: event.at,
        runningStatements: [...context.runningStatements, event.statementId],
        statementCount: context.statementCount + 1,
      };
      return {
        lastActivityAt: next.lastActivityAt,
        runningStatements: next.runningStatements,
        statementCount: next.statementCount,
        deadlineAt: activityDeadline(next),
      };
    }),
    recordStatementEnd: assign(({ context, event }) => {
      if (event.type !== 'statementFinished') return {};
      const next = {
        ...context,
        lastActivityAt: event.at,
        runningStatements: context.runningStatements.filter((id) => id !== event.statementId),
      };
      return {
        lastActivityAt: next.lastActivityAt,
        runningStatements: next.runningStatements,
        deadlineAt: activityDeadline(next),
      };
    }),
    requestCompute: (_, _params: { sessionId: string; workspace: string }) => {},
    sendOpenSession: (_, _params: { sessionId: string; agentId: string; workspace: string }) => {},
    sendDropSession: (_, _params: { sessionId: string; agentId: string; reason: string }) => {},
    sendCloseSession: (_, _params: { sessionId: string; agentId: string; reason: CloseReason }) => {},
    cancelSessionStatements: (_, _params: { sessionId: string }) => {},
    acceptStatement: (_, _params: { sessionId: string; statementId: string; agentId: string }) => {},
    rejectStatement: (_, _params: { sessionId: string; statementId: string; code: 'session_not_open' }) => {},
    agentWorkChanged: (_, _params: { agentId: string }) => {},
    removeStaging: (_, _params: { sessionId: string }) => {},
  },
  guards: {
    hasAgent: ({ context }) => context.agentId !== null,
    deadlinePassed: ({ context, event }) => deadlinePassed(event, context.deadlineAt),
    /** An acknowledgement that arrives after the lifetime ended opens nothing: the session closes instead. */
    lifetimeOver: ({ context, event }) => eventTime(event, context.createdAt) >= lifetimeEnd(context),
    /** The pending deadline fired because the compute wait ran out (not the idle or lifetime limit). */
    computeWaitOver: ({ context, event }) =>
      context.pendingUntil !== null &&
      eventTime(event, context.createdAt) >= context.pendingUntil &&
      eventTime(event, context.createdAt) < activityDeadline(context),
  },
}).createMachine({
  id: 'sqlSession',
  description: 'One SQL session: an agent-held connection for an external client, with idle and lifetime limits.',
  initial: 'start',
  context: fromInput((input) => ({
    sessionId: input.sessionId,
    workspace: input.workspace,
    agentId: input.agentId,
    idleTimeoutMs: positiveMs('idleTimeoutMs', input.idleTimeoutMs),
    maxLifetimeMs: positiveMs('maxLifetimeMs', input.maxLifetimeMs),
    openingDeadlineMs: positiveMs('openingDeadlineMs', input.openingDeadlineMs),
    pendingTimeoutMs: positiveMs('pendingTimeoutMs', input.pendingTimeoutMs),
    closeTimeoutMs: positiveMs('closeTimeoutMs', input.closeTimeoutMs),
    createdAt: input.at,
    enteredAt: input.at,
    openedAt: null,
    closedAt: null,
    lastActivityAt: input.at,
    runningStatements: [],
    statementCount: 0,
    pendingUntil: null,
    deadlineAt: null,
    closeReason: null,
    errorCode: null,
    error: null,
  })),
  states: {
    start: {
      description: 'Transient choice: an agent is ready (open now) or compute is still starting.',
      always: [{ guard: 'hasAgent', target: 'opening' }, { target: 'pending' }],
    },
    pending: {
      description: 'Compute still starting (202 on open); the session opens once an agent registers.',
      entry: [
        'enterPending',
        { type: 'requestCompute', params: ({ context }) => ({ sessionId: context.sessionId, workspace: context.workspace }) },
      ],
      on: {
        computeReady: { target: 'opening', actions: 'assignAgent' },
        computeFailed: { target: 'failed', actions: 'assignFailure' },
        close: { target: 'closed', actions: 'assignCloseByClient' },
        statementSubmitted: { actions: rejectStatement },
        deadline: [
          { guard: 'computeWaitOver', target: 'failed', actions: 'assignFailure' },
          { guard: 'deadlinePassed', target: 'closed', actions: 'assignCloseByLimit' },
        ],
        'supervisor.failed': { target: 'failed', actions: 'assignFailure' },
      },
    },
    opening: {
      description: 'The agent is asked to open the session connection; waiting for its acknowledgement.',
      entry: [
        'enterOpening',
        sendOpen,
        workChanged,
      ],
      on: {
        opened: [
          { guard: 'lifetimeOver', target: 'closing', actions: 'assignCloseByLimit' },
          { target: 'open' },
        ],
        openFailed: { target: 'failed', actions: ['assignFailure', workChanged] },
        agentLost: { target: 'failed', actions: ['assignFailure', workChanged] },
        // The open may have gone on the connection that ended (or its acknowledgement was lost with it): asked
        // again on the new one, within the same opening deadline. The agent answers a repeat of one it holds.
        agentReconnected: { actions: sendOpen },
        statementSubmitted: { actions: rejectStatement },
        close: { target: 'closing', actions: 'assignCloseByClient' },
        deadline: { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', dropOnAgent, workChanged] },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', dropOnAgent, workChanged] },
      },
    },
    open: {
      description: 'Accepting statements; closes on the idle limit (reset per statement) or the lifetime cap.',
      entry: 'enterOpen',
      on: {
        statementSubmitted: [
          // Past the lifetime cap the reaper simply has not fired yet: refuse, and close now.
          { guard: 'lifetimeOver', target: 'closing', actions: [rejectStatement, 'assignCloseByLimit'] },
          {
            actions: [
              'recordStatementStart',
              {
                type: 'acceptStatement',
                params: ({ context, event }) => ({
                  sessionId: context.sessionId,
                  statementId: event.statementId,
                  agentId: context.agentId!,
                }),
              },
            ],
          },
        ],
        statementFinished: { actions: 'recordStatementEnd' },
        close: { target: 'closing', actions: 'assignCloseByClient' },
        deadline: { guard: 'deadlinePassed', target: 'closing', actions: 'assignCloseByLimit' },
        agentLost: { target: 'failed', actions: ['assignFailure', cancelStatements, workChanged] },
        // Opened on an earlier connection, which the agent dropped it with.
        agentReconnected: { target: 'failed', actions: ['assignFailure', cancelStatements, workChanged] },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cancelStatements, dropOnAgent, workChanged] },
      },
    },
    closing: {
      description: 'The agent is told to close the session; unfinished statements are cancelled.',
      entry: [
        'enterClosing',
        {
          type: 'sendCloseSession',
          params: ({ context }) => ({ sessionId: context.sessionId, agentId: context.agentId!, reason: context.closeReason! }),
        },
        cancelStatements,
      ],
      on: {
        statementSubmitted: { actions: rejectStatement },
        closed: { target: 'closed', actions: workChanged },
        agentLost: { target: 'closed', actions: workChanged },
        agentReconnected: { target: 'closed', actions: workChanged },
        deadline: { guard: 'deadlinePassed', target: 'closed', actions: workChanged },
        'supervisor.failed': { target: 'closed', actions: workChanged },
      },
    },
    closed: {
      type: 'final',
      description: 'Closed by the client, the idle limit or the lifetime cap.',
      entry: ['enterTerminal', removeStaging],
    },
    failed: {
      type: 'final',
      description: 'Compute never came, the agent never acknowledged, refused, or was lost; error is set.',
      entry: ['enterTerminal', removeStaging],
    },
  },
});

export type SqlSessionMachine = typeof sqlSessionMachine;

type SqlSessionStatus = 'pending' | 'opening' | 'open' | 'closing' | 'closed' | 'failed';

export interface SqlSessionProjection extends MachineProjection {
  status: SqlSessionStatus;
  agentId: string | null;
  errorCode: string | null;
  closeReason: CloseReason | null;
  statementCount: number;
  runningStatements: number;
  createdAt: number;
  openedAt: number | null;
  closedAt: number | null;
  lastActivityAt: number;
  expiresAt: number;
}

/** The session row's columns; `status` is the state name (start is never at rest: it reads as pending). */
export function projectSqlSession(snapshot: { value: unknown; context: SqlSessionContext }): SqlSessionProjection {
  const state = String(snapshot.value);
  const c = snapshot.context;
  const status = (state === 'start' ? 'pending' : state) as SqlSessionStatus;
  if (!['pending', 'opening', 'open', 'closing', 'closed', 'failed'].includes(status)) {
    throw new Error(`unknown sqlSession state ${state}`);
  }
  return {
    state,
    status,
    deadlineAt: c.deadlineAt,
    terminal: status === 'closed' || status === 'failed',
    error: c.error,
    errorCode: c.errorCode,
    agentId: c.agentId,
    closeReason: c.closeReason,
    statementCount: c.statementCount,
    runningStatements: c.runningStatements.length,
    createdAt: c.createdAt,
    openedAt: c.openedAt,
    closedAt: c.closedAt,
    lastActivityAt: c.lastActivityAt,
    expiresAt: lifetimeEnd(c),
  };
}
