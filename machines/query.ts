// The query lifecycle: one actor per query row, from submission to done, failed or cancelled.
//
// States: start (transient choice) → queued (agent chosen, dispatch being sent) | awaitingCompute (elastic compute,
// no agent yet) → running → done | failed | cancelled. A cancel of a query its agent has goes through cancelling
// (status still `running`): it is `cancelled` only once the agent confirms it (query_failed cancelled, or a
// cancel_ack saying it has no such query), or once the agent's own timeout has surely stopped it (the deadline).
//
// Actions the host executes after persisting (type → params):
//   sendDispatchQuery   {queryId, agentId, sql, workspace, timeoutS, extras}  push dispatch_query on the agent socket,
//                       then send `dispatched` (or `dispatchFailed` when the socket is gone)
//   sendCancelQuery     {queryId, agentId, untilAt}  push cancel_query; retried until the agent's socket is back on
//                                              some replica (a replica died with it) or untilAt passes
//   requestCompute      {queryId, workspace}   ask the elastic pool for an agent; answer with `computeReady`
//   recordProfile       {queryId, readOnly}    what a finished run leaves besides its row (tables' last write,
//                                              lineage); its best-effort profile came with `done` as an attachment
//                                              and is on the row already (profiling never fails the query).
//                                              Asked for by writes only: a read (dispatchExtras.write false)
//                                              leaves nothing to record (readOnly: outbox rows from before)
//   agentWorkChanged    {agentId}              the agent's in-flight work changed: recount for its elastic actor
//
// Deadlines (context.deadlineAt, fired by the reaper as `deadline`):
//   queued           entry + dispatchAckTimeoutMs      the dispatch was never confirmed (replica died mid-send)
//   awaitingCompute  entry + computeWaitTimeoutMs      no compute registered in time
//   running          entry + timeoutMs + graceMs       the agent enforces timeoutMs itself; past the grace its
//                                                      final frame is presumed lost (hard-killed replica, lost agent)
//   cancelling       running's deadline (from queued: entry + timeoutMs + graceMs): the agent's timeout stopped it
import { assign, setup } from 'xstate';
import { deadlinePassed, eventTime, positiveMs, runNotStarted, runProjectionOf, runResultOf, fromInput } from './contract.ts';
import type { DeadlineEvent, Json, MachineProjection, SupervisorFailedEvent, RunContext, RunProjection, RunDoneEvent } from './contract.ts';

export interface QueryInput {
  queryId: string;
  workspace: string;
  sql: string;
  /** null while waiting for elastic compute (spec: queued with null agent_id). */
  agentId: string | null;
  /** Submission time (epoch ms): started_at. */
  at: number;
  /** The query's timeout (timeout_s), enforced agent-side by interrupting the statement. */
  timeoutMs: number;
  /** How long past the timeout the control plane waits for the agent's final frame before failing the query. */
  graceMs: number;
  /** How long a dispatch may stay unconfirmed in `queued`. */
  dispatchAckTimeoutMs: number;
  /** How long to wait for elastic compute to register. */
  computeWaitTimeoutMs: number;
  /** Non-secret extra fields for dispatch_query (backend kind, catalog attach info). Never credentials. */
  dispatchExtras?: { [key: string]: Json } | null;
}

export type QueryEvent =
  | { type: 'dispatched'; at: number }
  | { type: 'dispatchFailed'; at: number; message: string }
  | { type: 'started'; at: number }
  // profile and resultInline (a small result file, base64 Parquet): attachments the entity row keeps; the machine
  // ignores them.
  | (RunDoneEvent & { profile?: Json; resultInline?: string })
  | { type: 'failed'; at: number; code: string; message: string }
  | { type: 'cancel'; at: number }
  /** The agent's cancel_ack: found false, it has no such query (nothing runs). */
  | { type: 'cancelAck'; at: number; found: boolean }
  | { type: 'agentLost'; at: number }
  | { type: 'computeReady'; at: number; agentId: string }
  | { type: 'computeFailed'; at: number; message: string }
  | DeadlineEvent
  | SupervisorFailedEvent;

export interface QueryContext extends RunContext {
  queryId: string;
  workspace: string;
  sql: string;
  agentId: string | null;
  timeoutMs: number;
  graceMs: number;
  dispatchAckTimeoutMs: number;
  computeWaitTimeoutMs: number;
  dispatchExtras: { [key: string]: Json } | null;
  enteredAt: number;
}

type Failure = { code: string; message: string };

function failureOf(event: QueryEvent, context: QueryContext): Failure {
  switch (event.type) {
    case 'failed':
      return { code: event.code, message: event.message };
    case 'computeFailed':
      return { code: 'compute_unavailable', message: event.message };
    case 'dispatchFailed':
      return { code: 'agent_unreachable', message: `dispatch failed: ${event.message}` };
    case 'agentLost':
      // A write the agent had may have committed before the connection went: reported as unknown, never as a plain
      // failure, so a client does not run it a second time blindly.
      if (context.dispatchExtras?.write === true) {
        return { code: 'outcome_unknown', message: 'the agent disconnected while the write was in flight; it may have committed: check before running it again' };
      }
      return { code: 'agent_disconnected', message: 'the agent disconnected while the query was in flight' };
    case 'supervisor.failed':
      return { code: 'internal_error', message: event.reason };
    case 'deadline':
      if (context.runningAt !== null) {
        return {
          code: 'timeout',
          message: `no reply from the agent within the ${context.timeoutMs / 1000} s timeout plus ${context.graceMs / 1000} s grace`,
        };
      }
      if (context.agentId === null) return { code: 'compute_unavailable', message: 'no compute registered in time' };
      return { code: 'dispatch_timeout', message: 'the dispatch to the agent was never confirmed' };
    default:
      return { code: 'internal_error', message: `unexpected failure on ${event.type}` };
  }
}

// Effect references shared by several transitions (params are computed from the context at transition time).
const cancelOnAgent = {
  type: 'sendCancelQuery' as const,
  params: ({ context }: { context: QueryContext }) => ({ queryId: context.queryId, agentId: context.agentId!, untilAt: context.deadlineAt }),
};
const releaseAgentWork = {
  type: 'agentWorkChanged' as const,
  params: ({ context }: { context: QueryContext }) => ({ agentId: context.agentId! }),
};
const recordProfile = {
  type: 'recordProfile' as const,
  params: ({ context }: { context: QueryContext }) => ({ queryId: context.queryId, readOnly: context.dispatchExtras?.write === false }),
};
// The agent's report that it finished. A read (its dispatch may not write) leaves nothing for recordProfile to
// record (its profile came with `done`), so it asks for no effect: no outbox row to write and delete.
const finishRun = [
  { guard: 'readOnly' as const, target: 'done' as const, actions: ['assignResult' as const, releaseAgentWork] },
  { target: 'done' as const, actions: ['assignResult' as const, recordProfile, releaseAgentWork] },
];

export const queryMachine = setup({
  types: {
    context: {} as QueryContext,
    events: {} as QueryEvent,
    input: {} as QueryInput,
  },
  actions: {
    enterQueued: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, deadlineAt: at + context.dispatchAckTimeoutMs };
    }),
    enterAwaitingCompute: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, deadlineAt: at + context.computeWaitTimeoutMs };
    }),
    enterRunning: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, runningAt: at, deadlineAt: at + context.timeoutMs + context.graceMs };
    }),
    enterCancelling: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      // From running the deadline stays (the agent's timeout), with one more grace for its final frame when it is
      // already due; from queued the query may be about to start.
      const fromRunning = context.runningAt !== null && context.deadlineAt !== null ? Math.max(context.deadlineAt, at + context.graceMs) : null;
      return { enteredAt: at, deadlineAt: fromRunning ?? at + context.timeoutMs + context.graceMs };
    }),
    enterTerminal: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, finishedAt: at, deadlineAt: null };
    }),
    assignAgent: assign({
      agentId: ({ context, event }) => (event.type === 'computeReady' ? event.agentId : context.agentId),
    }),
    assignResult: assign(({ event }) => (event.type === 'done' ? runResultOf(event) : {})),
    assignFailure: assign(({ context, event }) => {
      const failure = failureOf(event, context);
      return { errorCode: failure.code, error: failure.message };
    }),
    sendDispatchQuery: (_, _params: {
      queryId: string;
      agentId: string;
      sql: string;
      workspace: string;
      timeoutS: number;
      extras: { [key: string]: Json } | null;
    }) => {},
    sendCancelQuery: (_, _params: { queryId: string; agentId: string; untilAt: number | null }) => {},
    requestCompute: (_, _params: { queryId: string; workspace: string }) => {},
    recordProfile: (_, _params: { queryId: string; readOnly: boolean }) => {},
    agentWorkChanged: (_, _params: { agentId: string }) => {},
  },
  guards: {
    hasAgent: ({ context }) => context.agentId !== null,
    agentCancelled: ({ event }) => event.type === 'failed' && event.code === 'cancelled',
    agentHasNoSuchQuery: ({ event }) => event.type === 'cancelAck' && !event.found,
    deadlinePassed: ({ context, event }) => deadlinePassed(event, context.deadlineAt),
    readOnly: ({ context }) => context.dispatchExtras?.write === false,
  },
}).createMachine({
  id: 'query',
  description: 'One submitted query, from queued through running to done, failed or cancelled.',
  initial: 'start',
  context: fromInput((input) => ({
    queryId: input.queryId,
    workspace: input.workspace,
    sql: input.sql,
    agentId: input.agentId,
    timeoutMs: positiveMs('timeoutMs', input.timeoutMs),
    graceMs: positiveMs('graceMs', input.graceMs),
    dispatchAckTimeoutMs: positiveMs('dispatchAckTimeoutMs', input.dispatchAckTimeoutMs),
    computeWaitTimeoutMs: positiveMs('computeWaitTimeoutMs', input.computeWaitTimeoutMs),
    dispatchExtras: input.dispatchExtras ?? null,
    createdAt: input.at,
    enteredAt: input.at,
    ...runNotStarted(),
  })),
  states: {
    start: {
      description: 'Transient choice: an agent was named (dispatch now) or compute must start first.',
      always: [{ guard: 'hasAgent', target: 'queued' }, { target: 'awaitingCompute' }],
    },
    awaitingCompute: {
      description: 'Queued with no agent: elastic compute is starting (pool scaled to zero or agent idle-terminated).',
      entry: [
        'enterAwaitingCompute',
        { type: 'requestCompute', params: ({ context }) => ({ queryId: context.queryId, workspace: context.workspace }) },
      ],
      on: {
        computeReady: { target: 'queued', actions: 'assignAgent' },
        computeFailed: { target: 'failed', actions: 'assignFailure' },
        cancel: { target: 'cancelled' },
        deadline: { guard: 'deadlinePassed', target: 'failed', actions: 'assignFailure' },
        'supervisor.failed': { target: 'failed', actions: 'assignFailure' },
      },
    },
    queued: {
      description: 'Agent chosen; the dispatch_query frame is being pushed over its socket.',
      entry: [
        'enterQueued',
        {
          type: 'sendDispatchQuery',
          params: ({ context }) => ({
            queryId: context.queryId,
            agentId: context.agentId!,
            sql: context.sql,
            workspace: context.workspace,
            timeoutS: context.timeoutMs / 1000,
            extras: context.dispatchExtras,
          }),
        },
        { type: 'agentWorkChanged', params: ({ context }) => ({ agentId: context.agentId! }) },
      ],
      on: {
        dispatched: { target: 'running' },
        // query_started may overtake the host's own `dispatched` confirmation.
        started: { target: 'running' },
        done: finishRun,
        failed: { target: 'failed', actions: ['assignFailure', releaseAgentWork] },
        dispatchFailed: { target: 'failed', actions: ['assignFailure', releaseAgentWork] },
        agentLost: { target: 'failed', actions: ['assignFailure', releaseAgentWork] },
        cancel: { target: 'cancelling' },
        deadline: { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', cancelOnAgent, releaseAgentWork] },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cancelOnAgent, releaseAgentWork] },
      },
    },
    running: {
      description: 'The agent runs the statement; it reports query_done or query_failed.',
      entry: 'enterRunning',
      on: {
        done: finishRun,
        failed: { target: 'failed', actions: ['assignFailure', releaseAgentWork] },
        agentLost: { target: 'failed', actions: ['assignFailure', releaseAgentWork] },
        cancel: { target: 'cancelling' },
        deadline: { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', cancelOnAgent, releaseAgentWork] },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cancelOnAgent, releaseAgentWork] },
      },
    },
    cancelling: {
      description:
        'Cancel requested; cancel_query is delivered (retried until the agent is reachable on some replica). Shown as running until the agent confirms.',
      entry: ['enterCancelling', cancelOnAgent],
      on: {
        failed: [
          { guard: 'agentCancelled', target: 'cancelled', actions: releaseAgentWork },
          { target: 'failed', actions: ['assignFailure', releaseAgentWork] },
        ],
        cancelAck: { guard: 'agentHasNoSuchQuery', target: 'cancelled', actions: releaseAgentWork },
        // It finished before the cancel reached it.
        done: finishRun,
        // The agent may come back (to another replica) still running it: the cancel waits for it.
        cancel: { actions: cancelOnAgent },
        // Past the agent's own timeout and the grace, nothing of it runs any more.
        deadline: { guard: 'deadlinePassed', target: 'cancelled', actions: releaseAgentWork },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', releaseAgentWork] },
      },
    },
    done: {
      type: 'final',
      description: 'The agent finished; row_count and the result path are recorded.',
      entry: 'enterTerminal',
    },
    failed: {
      type: 'final',
      description: 'Agent error, agent lost, dispatch failure or timeout; error is set.',
      entry: 'enterTerminal',
    },
    cancelled: {
      type: 'final',
      description: 'Cancelled by a client: before any agent had it, or confirmed by the agent (or past its timeout).',
      entry: 'enterTerminal',
    },
  },
});

export type QueryMachine = typeof queryMachine;

type QueryStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

export interface QueryProjection extends MachineProjection, RunProjection {
  status: QueryStatus;
  agentId: string | null;
}

const queryStatusByState: Record<string, QueryStatus> = {
  start: 'queued',
  awaitingCompute: 'queued',
  queued: 'queued',
  running: 'running',
  cancelling: 'running',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** The query row's columns: status in the API's vocabulary, deadline for the reaper, the recorded result. */
export function projectQuery(snapshot: { value: unknown; context: QueryContext }): QueryProjection {
  const state = String(snapshot.value);
  const c = snapshot.context;
  const status = queryStatusByState[state];
  if (status === undefined) throw new Error(`unknown query state ${state}`);
  return {
    state,
    status,
    deadlineAt: c.deadlineAt,
    terminal: status === 'done' || status === 'failed' || status === 'cancelled',
    error: c.error,
    agentId: c.agentId,
    ...runProjectionOf(c),
  };
}
