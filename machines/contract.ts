// The contract every lifecycle machine shares with the actor host (actors/): the events every machine
// accepts, the shape of a projection, and the deadline arithmetic. Machines are pure: the host supplies
// time as `at` (epoch ms) on every event and persists deadlines that its leader-elected reaper fires.

/** Sent by the reaper when a persisted `deadlineAt` has passed. An early or stale one is ignored by the guard. */
export interface DeadlineEvent {
  type: 'deadline';
  at: number;
}

/** Sent by the host's supervisor after repeated failures of a transition or effect: the entity fails. */
export interface SupervisorFailedEvent {
  type: 'supervisor.failed';
  at: number;
  reason: string;
}

/** The columns the host writes beside the snapshot. Every kind adds its own fields. */
export interface MachineProjection {
  /** The raw state name (the snapshot's value). */
  state: string;
  /** The API's status vocabulary for this kind. */
  status: string;
  deadlineAt: number | null;
  terminal: boolean;
  error: string | null;
}

/** What a run of SQL records, shared by the query and statement projections. */
export interface RunProjection {
  errorCode: string | null;
  rowCount: number | null;
  durationMs: number | null;
  resultPath: string | null;
  columns: string[] | null;
  columnSchema: ColumnType[] | null;
  startedAt: number;
  runningAt: number | null;
  finishedAt: number | null;
}

/** The context fields of a run of SQL, kept alike by the query and statement machines. */
export interface RunContext {
  /** When the run was created: the start of its projection. */
  createdAt: number;
  runningAt: number | null;
  finishedAt: number | null;
  deadlineAt: number | null;
  rowCount: number | null;
  durationMs: number | null;
  resultPath: string | null;
  columns: string[] | null;
  columnSchema: ColumnType[] | null;
  errorCode: string | null;
  error: string | null;
}

/** A new run's context fields besides its creation time: not running, no deadline yet, no result, no error. */
export function runNotStarted() {
  return {
    runningAt: null,
    finishedAt: null,
    deadlineAt: null,
    rowCount: null,
    durationMs: null,
    resultPath: null,
    columns: null,
    columnSchema: null,
    errorCode: null,
    error: null,
  };
}

/** The projected columns of a run (RunProjection) from its context. */
export function runProjectionOf(c: RunContext): RunProjection {
  return {
    errorCode: c.errorCode,
    rowCount: c.rowCount,
    durationMs: c.durationMs,
    resultPath: c.resultPath,
    columns: c.columns,
    columnSchema: c.columnSchema,
    startedAt: c.createdAt,
    runningAt: c.runningAt,
    finishedAt: c.finishedAt,
  };
}

/** The agent's report that a run of SQL finished (query_done), as query and statement machines receive it. */
export interface RunDoneEvent {
  type: 'done';
  at: number;
  rowCount: number;
  durationMs: number | null;
  resultPath: string | null;
  columns: string[] | null;
  columnSchema: ColumnType[] | null;
}

/** The context fields a finished run records. */
export function runResultOf(e: RunDoneEvent) {
  return { rowCount: e.rowCount, durationMs: e.durationMs, resultPath: e.resultPath, columns: e.columns, columnSchema: e.columnSchema };
}

/** A result column as the engine spells its type (`DECIMAL(10,2)`, `INTEGER[]`). */
export interface ColumnType {
  name: string;
  type: string;
}

/** Any JSON value: context and action params stay JSON so the persisted snapshot round-trips exactly. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The time of an event; the init event carries the input, whose `at` is the creation time. */
export function eventTime(event: { type: string }, fallback: number): number {
  const at = (event as { at?: unknown }).at;
  if (typeof at === 'number') return at;
  const input = (event as { input?: { at?: unknown } }).input;
  if (input && typeof input.at === 'number') return input.at;
  return fallback;
}

/** True when `event` is a deadline event at or after the persisted deadline (the reaper may fire early or twice). */
export function deadlinePassed(event: { type: string }, deadlineAt: number | null): boolean {
  return event.type === 'deadline' && deadlineAt !== null && (event as DeadlineEvent).at >= deadlineAt;
}

/** Validates a configured duration at machine creation: a deadline must lie in the future of its state's entry. */
export function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number of milliseconds, got ${value}`);
  return value;
}

/**
 * A context factory that answers a call without input at once. XState's pure `transition()` builds a throwaway
 * actor for every transition, and that actor evaluates the initial context with no input: a factory reading
 * `input.…` threw there, and the exception cost most of the transition's time (70 µs of a trivial one). The
 * throwaway actor's snapshot is never used, so what it gets does not matter.
 */
export function fromInput<I, C>(make: (input: I) => C): (args: { input: I }) => C {
  return ({ input }) => (input === undefined ? ({} as C) : make(input));
}
