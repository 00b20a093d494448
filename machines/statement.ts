// The SQL-session statement lifecycle: one actor per statement sent to an open session.
// The session machine decides acceptance (only an open session accepts, see sqlSession.ts); this machine starts
// once the session accepted it.
//
// States: queued → running → done | failed | cancelled. A cancel goes through cancelling (status still `running`):
// the statement is `cancelled` only once the agent confirms it (query_failed cancelled, or a cancel_ack saying it has
// no such statement), once the agent's connection is lost (the agent drops its sessions with it), or past its
// timeout and grace (the agent's own timeout stopped it), as a query's cancel (query.ts).
//
// Actions the host executes after persisting (type → params):
//   sendExecuteStatement  {statementId, sessionId, agentId, sql, timeoutS, awaitsAck}  push the statement over the
//                         agent socket, then send `dispatched` unless the agent's ack moves it on (awaitsAck)
//   sendCancelStatement   {statementId, sessionId, agentId}   interrupt it on the agent (waits a few seconds for an
//                         agent that is reconnecting; the agent answers cancel_ack or the statement's end)
//   statementFinished     {sessionId, statementId, status, readOnly}  record what a finished write leaves (table
//                         provenance, lineage; nothing for a read), then tell the session actor
//                         (`statementFinished`): it renews its idle deadline and counts the statement completed
//
// Deadlines (context.deadlineAt):
//   queued, agent acks     entry + ackDeadlineMs (SQL_STATEMENT_ACK_DEADLINE_S); only agents advertising ack support
//   queued, no ack support entry + timeout + graceMs (a backstop: a dispatch that never happened must not hang)
//   running                entry + timeout + graceMs, timeout = timeout_s or SQL_STATEMENT_DEFAULT_TIMEOUT_S
//   cancelling             running's deadline (from queued: entry + timeout + graceMs)
import { assign, setup } from 'xstate';
import { deadlinePassed, eventTime, positiveMs, runNotStarted, runProjectionOf, runResultOf, fromInput } from './contract.ts';
import type { DeadlineEvent, Json, MachineProjection, SupervisorFailedEvent, RunContext, RunProjection, RunDoneEvent } from './contract.ts';

export interface StatementInput {
  statementId: string;
  sessionId: string;
  agentId: string;
  sql: string;
  at: number;
  /** The statement's timeout_s in ms; null when none was recorded (defaultTimeoutMs applies). */
  timeoutMs: number | null;
  /** SQL_STATEMENT_DEFAULT_TIMEOUT_S in ms. */
  defaultTimeoutMs: number;
  /** SQL_STATEMENT_TIMEOUT_GRACE_S in ms. */
  graceMs: number;
  /** SQL_STATEMENT_ACK_DEADLINE_S in ms. */
  ackDeadlineMs: number;
  /** Whether the session's agent advertises statement acknowledgement. */
  ackSupported: boolean;
  /** A read (SELECT, DESCRIBE): its end leaves nothing to record besides its row. Absent (statements from before):
   *  recorded as a write's. */
  readOnly?: boolean;
}

export type StatementEvent =
  | { type: 'dispatched'; at: number }
  | { type: 'ack'; at: number }
  // profile and resultInline (a small result file, base64 Parquet): attachments the entity row keeps (as a
  // query's); the machine ignores them.
  | (RunDoneEvent & { profile?: Json; resultInline?: string })
  | { type: 'failed'; at: number; code: string; message: string }
  | { type: 'cancel'; at: number }
  /** The agent's cancel_ack: found false, it has no such statement (nothing runs). */
  | { type: 'cancelAck'; at: number; found: boolean }
  | { type: 'agentLost'; at: number }
  | { type: 'sessionClosed'; at: number }
  | DeadlineEvent
  | SupervisorFailedEvent;

export interface StatementContext extends RunContext {
  statementId: string;
  sessionId: string;
  agentId: string;
  sql: string;
  timeoutMs: number | null;
  defaultTimeoutMs: number;
  graceMs: number;
  ackDeadlineMs: number;
  ackSupported: boolean;
  readOnly?: boolean;
  enteredAt: number;
  dispatchedAt: number | null;
}

/** The timeout that applies: the recorded one, else the configured default. */
function effectiveTimeoutMs(context: StatementContext): number {
  return context.timeoutMs ?? context.defaultTimeoutMs;
}

function failureOf(event: StatementEvent, context: StatementContext): { code: string; message: string } {
  switch (event.type) {
    case 'failed':
      return { code: event.code, message: event.message };
    case 'agentLost':
      return { code: 'agent_disconnected', message: 'the agent disconnected while the statement was in flight' };
    case 'supervisor.failed':
      return { code: 'internal_error', message: event.reason };
    case 'deadline':
      if (context.runningAt === null && context.ackSupported) {
        return { code: 'ack_timeout', message: `the agent did not acknowledge the statement within ${context.ackDeadlineMs / 1000} s` };
      }
      return {
        code: 'timeout',
        message: `no reply within the ${effectiveTimeoutMs(context) / 1000} s timeout plus ${context.graceMs / 1000} s grace`,
      };
    default:
      return { code: 'internal_error', message: `unexpected failure on ${event.type}` };
  }
}

const cancelOnAgent = {
  type: 'sendCancelStatement' as const,
  params: ({ context }: { context: StatementContext }) => ({
    statementId: context.statementId,
    sessionId: context.sessionId,
    agentId: context.agentId,
  }),
};

function finished(status: 'done' | 'failed' | 'cancelled') {
  return {
    type: 'statementFinished' as const,
    params: ({ context }: { context: StatementContext }) => ({
      sessionId: context.sessionId,
      statementId: context.statementId,
      status,
      readOnly: context.readOnly === true,
    }),
  };
}

export const statementMachine = setup({
  types: {
    context: {} as StatementContext,
    events: {} as StatementEvent,
    input: {} as StatementInput,
  },
  actions: {
    enterQueued: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      const wait = context.ackSupported ? context.ackDeadlineMs : effectiveTimeoutMs(context) + context.graceMs;
      return { enteredAt: at, deadlineAt: at + wait };
    }),
    markDispatched: assign(({ event }) => ({ dispatchedAt: eventTime(event, 0) })),
    enterRunning: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return {
        enteredAt: at,
        runningAt: at,
        dispatchedAt: context.dispatchedAt ?? at,
        deadlineAt: at + effectiveTimeoutMs(context) + context.graceMs,
      };
    }),
    enterCancelling: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      // From running the deadline stays (the agent's timeout), with one more grace when it is already due.
      const fromRunning = context.runningAt !== null && context.deadlineAt !== null ? Math.max(context.deadlineAt, at + context.graceMs) : null;
      return { enteredAt: at, deadlineAt: fromRunning ?? at + effectiveTimeoutMs(context) + context.graceMs };
    }),
    enterTerminal: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, finishedAt: at, deadlineAt: null };
    }),
    assignResult: assign(({ event }) => (event.type === 'done' ? runResultOf(event) : {})),
    assignFailure: assign(({ context, event }) => {
      const failure = failureOf(event, context);
      return { errorCode: failure.code, error: failure.message };
    }),
    assignSessionClosed: assign({ errorCode: 'session_closed', error: 'the session closed before the statement finished' }),
    sendExecuteStatement: (_, _params: {
      statementId: string;
      sessionId: string;
      agentId: string;
      sql: string;
      timeoutS: number;
      awaitsAck: boolean;
    }) => {},
    sendCancelStatement: (_, _params: { statementId: string; sessionId: string; agentId: string }) => {},
    statementFinished: (_, _params: { sessionId: string; statementId: string; status: 'done' | 'failed' | 'cancelled'; readOnly: boolean }) => {},
  },
  guards: {
    deadlinePassed: ({ context, event }) => deadlinePassed(event, context.deadlineAt),
    awaitsAck: ({ context }) => context.ackSupported,
    agentCancelled: ({ event }) => event.type === 'failed' && event.code === 'cancelled',
    agentHasNoSuchStatement: ({ event }) => event.type === 'cancelAck' && !event.found,
  },
}).createMachine({
  id: 'statement',
  description: 'One statement of a SQL session, from queued to done, failed or cancelled.',
  initial: 'queued',
  context: fromInput((input) => ({
    statementId: input.statementId,
    sessionId: input.sessionId,
    agentId: input.agentId,
    sql: input.sql,
    timeoutMs: input.timeoutMs === null ? null : positiveMs('timeoutMs', input.timeoutMs),
    defaultTimeoutMs: positiveMs('defaultTimeoutMs', input.defaultTimeoutMs),
    graceMs: positiveMs('graceMs', input.graceMs),
    ackDeadlineMs: positiveMs('ackDeadlineMs', input.ackDeadlineMs),
    ackSupported: input.ackSupported,
    ...(input.readOnly ? { readOnly: true } : {}),
    createdAt: input.at,
    enteredAt: input.at,
    dispatchedAt: null,
    ...runNotStarted(),
  })),
  states: {
    queued: {
      description: 'Accepted by the open session; waiting to be dispatched (and acknowledged, when the agent acks).',
      entry: [
        'enterQueued',
        {
          type: 'sendExecuteStatement',
          params: ({ context }) => ({
            statementId: context.statementId,
            sessionId: context.sessionId,
            agentId: context.agentId,
            sql: context.sql,
            timeoutS: effectiveTimeoutMs(context) / 1000,
            awaitsAck: context.ackSupported,
          }),
        },
      ],
      on: {
        // With ack support the statement runs only once the agent says so; otherwise the sent frame is enough. (An
        // effect told `awaitsAck` sends no `dispatched`: it would only record the time; effects from before do.)
        dispatched: [{ guard: 'awaitsAck', actions: 'markDispatched' }, { target: 'running' }],
        ack: { target: 'running' },
        done: { target: 'done', actions: ['assignResult', finished('done')] },
        failed: { target: 'failed', actions: ['assignFailure', finished('failed')] },
        agentLost: { target: 'failed', actions: ['assignFailure', finished('failed')] },
        cancel: { target: 'cancelling' },
        sessionClosed: { target: 'cancelled', actions: ['assignSessionClosed', cancelOnAgent, finished('cancelled')] },
        deadline: { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', cancelOnAgent, finished('failed')] },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cancelOnAgent, finished('failed')] },
      },
    },
    running: {
      description: 'The agent executes the statement on the session connection.',
      entry: 'enterRunning',
      on: {
        done: { target: 'done', actions: ['assignResult', finished('done')] },
        failed: { target: 'failed', actions: ['assignFailure', finished('failed')] },
        agentLost: { target: 'failed', actions: ['assignFailure', finished('failed')] },
        cancel: { target: 'cancelling' },
        sessionClosed: { target: 'cancelled', actions: ['assignSessionClosed', cancelOnAgent, finished('cancelled')] },
        deadline: { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', cancelOnAgent, finished('failed')] },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cancelOnAgent, finished('failed')] },
      },
    },
    cancelling: {
      description: 'Cancel requested; cancel_query is sent to the agent. Shown as running until the agent confirms.',
      entry: ['enterCancelling', cancelOnAgent],
      on: {
        failed: [
          { guard: 'agentCancelled', target: 'cancelled', actions: finished('cancelled') },
          { target: 'failed', actions: ['assignFailure', finished('failed')] },
        ],
        cancelAck: { guard: 'agentHasNoSuchStatement', target: 'cancelled', actions: finished('cancelled') },
        // It finished before the cancel reached it.
        done: { target: 'done', actions: ['assignResult', finished('done')] },
        // The agent drops its sessions, and their statements, with its connection.
        agentLost: { target: 'cancelled', actions: finished('cancelled') },
        sessionClosed: { target: 'cancelled', actions: ['assignSessionClosed', finished('cancelled')] },
        cancel: { actions: cancelOnAgent },
        // Past the agent's own timeout and the grace, nothing of it runs any more.
        deadline: { guard: 'deadlinePassed', target: 'cancelled', actions: finished('cancelled') },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cancelOnAgent, finished('failed')] },
      },
    },
    done: { type: 'final', description: 'Finished; row_count and the result are recorded.', entry: 'enterTerminal' },
    failed: { type: 'final', description: 'Failed (counts as completed); error is set.', entry: 'enterTerminal' },
    cancelled: { type: 'final', description: 'Cancelled by the client or by its session closing.', entry: 'enterTerminal' },
  },
});

export type StatementMachine = typeof statementMachine;

type StatementStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

export interface StatementProjection extends MachineProjection, RunProjection {
  status: StatementStatus;
}

/** The statement row's columns. */
export function projectStatement(snapshot: { value: unknown; context: StatementContext }): StatementProjection {
  const state = String(snapshot.value);
  const c = snapshot.context;
  if (!['queued', 'running', 'cancelling', 'done', 'failed', 'cancelled'].includes(state)) throw new Error(`unknown statement state ${state}`);
  // Cancelling shows as running: the agent has not confirmed that nothing of it runs.
  const status = (state === 'cancelling' ? 'running' : state) as StatementStatus;
  return {
    state,
    status,
    deadlineAt: c.deadlineAt,
    terminal: status === 'done' || status === 'failed' || status === 'cancelled',
    error: c.error,
    ...runProjectionOf(c),
  };
}
