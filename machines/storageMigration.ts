// The catalog storage migration lifecycle: one actor per migration of a catalog to another storage backend.
//
// States: pending → copying → rewriting → verifying → cuttingOver → retained → completed; cancelled (only
// before cutover); failed.
//
// Each phase is run by the leader-elected migration runner as an idempotent, checkpointed step: the machine emits
// `runPhase` on entering the phase, the runner reports `progress` (which renews the phase lease), then `phaseDone`
// or `phaseFailed`. A crash anywhere is resumed from the persisted phase: the runner sends `resume` on startup, and
// if nobody does, the lapsed lease (`deadline`) re-runs the phase, up to maxPhaseAttempts.
//
// Actions the host executes after persisting (type → params):
//   runPhase       {migrationId, catalogId, sourceBackendId, targetBackendId, phase, attempt}
//                  phase: copy (data files to the target), rewrite (metadata paths), verify (compare), cutover
//                  (rebind the catalog to the target in one transaction), purge (drop the old data and source
//                  catalog after retention)
//   cleanupTarget  {migrationId, catalogId, targetBackendId}   delete what was copied (cancelled or failed before
//                  the catalog moved)
//   rejectCancel   {migrationId, code: 'migration_past_cutover'}   answer 409: cancel is allowed only before cutover
//
// Deadlines (context.deadlineAt):
//   copying … cuttingOver  entry + phaseLeaseMs, renewed by each `progress`
//   retained               cutover + retentionMs (MIGRATION_RETENTION_DAYS), then purge leases of phaseLeaseMs;
//                          `expireRetention` starts the purge at once (a later migration reuses the old root)
import { assign, setup } from 'xstate';
import { deadlinePassed, eventTime, positiveMs, fromInput } from './contract.ts';
import type { DeadlineEvent, MachineProjection, SupervisorFailedEvent } from './contract.ts';

export type MigrationPhase = 'copy' | 'rewrite' | 'verify' | 'cutover' | 'purge';

/** What the runPhase effect carries: which migration, which phase, and which attempt at it. */
export interface RunPhaseParams {
  migrationId: string;
  catalogId: string;
  sourceBackendId: string;
  targetBackendId: string;
  phase: MigrationPhase;
  attempt: number;
}

export interface StorageMigrationInput {
  migrationId: string;
  catalogId: string;
  sourceBackendId: string;
  targetBackendId: string;
  at: number;
  /** How long a phase may run without reporting progress before it is presumed crashed and re-run. */
  phaseLeaseMs: number;
  /** MIGRATION_RETENTION_DAYS in ms. */
  retentionMs: number;
  maxPhaseAttempts: number;
}

export type StorageMigrationEvent =
  | { type: 'begin'; at: number }
  | { type: 'progress'; at: number; phase: MigrationPhase; tablesTotal?: number; tablesDone?: number; bytesCopied?: number }
  | { type: 'phaseDone'; at: number; phase: MigrationPhase }
  | { type: 'phaseFailed'; at: number; phase: MigrationPhase; message: string; retryable: boolean }
  | { type: 'resume'; at: number }
  | { type: 'cancel'; at: number }
  /** A later migration of the catalog copies onto this one's retained source root: the retention ends now. */
  | { type: 'expireRetention'; at: number }
  | DeadlineEvent
  | SupervisorFailedEvent;

export interface StorageMigrationContext {
  migrationId: string;
  catalogId: string;
  sourceBackendId: string;
  targetBackendId: string;
  phaseLeaseMs: number;
  retentionMs: number;
  maxPhaseAttempts: number;
  phase: MigrationPhase | null;
  attempt: number;
  tablesTotal: number;
  tablesDone: number;
  bytesCopied: number;
  createdAt: number;
  enteredAt: number;
  startedAt: number | null;
  cutoverAt: number | null;
  finishedAt: number | null;
  deadlineAt: number | null;
  lastError: string | null;
  error: string | null;
}

function phaseEntry(phase: MigrationPhase, context: StorageMigrationContext, event: StorageMigrationEvent) {
  const at = eventTime(event, context.createdAt);
  return {
    enteredAt: at,
    startedAt: context.startedAt ?? at,
    phase,
    // A new phase starts at attempt 1; re-entering the same phase (retry, resume) counts up.
    attempt: context.phase === phase ? context.attempt + 1 : 1,
    deadlineAt: at + context.phaseLeaseMs,
  };
}

const runPhase = {
  type: 'runPhase' as const,
  params: ({ context }: { context: StorageMigrationContext }) => ({
    migrationId: context.migrationId,
    catalogId: context.catalogId,
    sourceBackendId: context.sourceBackendId,
    targetBackendId: context.targetBackendId,
    phase: context.phase!,
    attempt: context.attempt,
  }),
};
const cleanupTarget = {
  type: 'cleanupTarget' as const,
  params: ({ context }: { context: StorageMigrationContext }) => ({
    migrationId: context.migrationId,
    catalogId: context.catalogId,
    targetBackendId: context.targetBackendId,
  }),
};
const rejectCancel = {
  type: 'rejectCancel' as const,
  params: ({ context }: { context: StorageMigrationContext }) => ({
    migrationId: context.migrationId,
    code: 'migration_past_cutover' as const,
  }),
};

export const storageMigrationMachine = setup({
  types: {
    context: {} as StorageMigrationContext,
    events: {} as StorageMigrationEvent,
    input: {} as StorageMigrationInput,
  },
  actions: {
    enterCopy: assign(({ context, event }) => phaseEntry('copy', context, event)),
    enterRewrite: assign(({ context, event }) => phaseEntry('rewrite', context, event)),
    enterVerify: assign(({ context, event }) => phaseEntry('verify', context, event)),
    enterCutover: assign(({ context, event }) => phaseEntry('cutover', context, event)),
    enterRetained: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, phase: null, attempt: 0, cutoverAt: at, deadlineAt: at + context.retentionMs };
    }),
    startPurge: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { phase: 'purge' as const, attempt: context.phase === 'purge' ? context.attempt + 1 : 1, deadlineAt: at + context.phaseLeaseMs };
    }),
    enterTerminal: assign(({ context, event }) => {
      const at = eventTime(event, context.createdAt);
      return { enteredAt: at, finishedAt: at, deadlineAt: null };
    }),
    recordProgress: assign(({ context, event }) => {
      if (event.type !== 'progress') return {};
      return {
        tablesTotal: event.tablesTotal ?? context.tablesTotal,
        tablesDone: event.tablesDone ?? context.tablesDone,
        bytesCopied: event.bytesCopied ?? context.bytesCopied,
        deadlineAt: event.at + context.phaseLeaseMs,
      };
    }),
    recordRetryableError: assign(({ context, event }) => {
      if (event.type === 'phaseFailed') return { lastError: `${event.phase}: ${event.message}` };
      if (event.type === 'deadline') return { lastError: `${context.phase}: no progress within the ${context.phaseLeaseMs / 1000} s lease` };
      return {};
    }),
    deferPurge: assign(({ context, event }) => {
      if (event.type !== 'phaseFailed') return {};
      return { lastError: `purge: ${event.message}`, deadlineAt: event.at + context.phaseLeaseMs };
    }),
    assignFailure: assign(({ context, event }) => {
      switch (event.type) {
        case 'phaseFailed':
          return { error: `${event.phase} failed: ${event.message}` };
        case 'deadline':
        case 'resume':
          return { error: `${context.phase} did not complete after ${context.attempt} attempts` };
        case 'supervisor.failed':
          return { error: event.reason };
        default:
          return { error: `unexpected failure on ${event.type}` };
      }
    }),
    runPhase: (
      _,
      _params: RunPhaseParams,
    ) => {},
    cleanupTarget: (_, _params: { migrationId: string; catalogId: string; targetBackendId: string }) => {},
    rejectCancel: (_, _params: { migrationId: string; code: 'migration_past_cutover' }) => {},
  },
  guards: {
    currentPhase: ({ context, event }) =>
      (event.type === 'progress' || event.type === 'phaseDone' || event.type === 'phaseFailed') && event.phase === context.phase,
    retryableFailure: ({ context, event }) =>
      event.type === 'phaseFailed' && event.phase === context.phase && event.retryable && context.attempt < context.maxPhaseAttempts,
    retryDue: ({ context, event }) => deadlinePassed(event, context.deadlineAt) && context.attempt < context.maxPhaseAttempts,
    deadlinePassed: ({ context, event }) => deadlinePassed(event, context.deadlineAt),
    attemptsLeft: ({ context }) => context.attempt < context.maxPhaseAttempts,
    purging: ({ context }) => context.phase === 'purge',
    notPurging: ({ context }) => context.phase !== 'purge',
  },
}).createMachine({
  id: 'storageMigration',
  description: "One catalog's move to another storage backend: copy, path rewrite, verify, atomic cutover, retention.",
  initial: 'pending',
  context: fromInput((input) => ({
    migrationId: input.migrationId,
    catalogId: input.catalogId,
    sourceBackendId: input.sourceBackendId,
    targetBackendId: input.targetBackendId,
    phaseLeaseMs: positiveMs('phaseLeaseMs', input.phaseLeaseMs),
    retentionMs: positiveMs('retentionMs', input.retentionMs),
    maxPhaseAttempts: Math.max(1, Math.floor(input.maxPhaseAttempts)),
    phase: null,
    attempt: 0,
    tablesTotal: 0,
    tablesDone: 0,
    bytesCopied: 0,
    createdAt: input.at,
    enteredAt: input.at,
    startedAt: null,
    cutoverAt: null,
    finishedAt: null,
    deadlineAt: null,
    lastError: null,
    error: null,
  })),
  states: {
    pending: {
      description: 'Accepted (202); waiting for the migration runner to pick it up. The catalog is read-only.',
      on: {
        begin: { target: 'copying' },
        cancel: { target: 'cancelled' },
        'supervisor.failed': { target: 'failed', actions: 'assignFailure' },
      },
    },
    copying: {
      description: 'Copying data and metadata files to the target backend (resumable per file).',
      entry: ['enterCopy', runPhase],
      on: {
        progress: { guard: 'currentPhase', actions: 'recordProgress' },
        phaseDone: { guard: 'currentPhase', target: 'rewriting' },
        phaseFailed: [
          { guard: 'retryableFailure', target: 'copying', reenter: true, actions: 'recordRetryableError' },
          { guard: 'currentPhase', target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        resume: [
          { guard: 'attemptsLeft', target: 'copying', reenter: true },
          { target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        deadline: [
          { guard: 'retryDue', target: 'copying', reenter: true, actions: 'recordRetryableError' },
          { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        cancel: { target: 'cancelled', actions: cleanupTarget },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cleanupTarget] },
      },
    },
    rewriting: {
      description: 'Rewriting table metadata so every location derives from the target root_uri.',
      entry: ['enterRewrite', runPhase],
      on: {
        progress: { guard: 'currentPhase', actions: 'recordProgress' },
        phaseDone: { guard: 'currentPhase', target: 'verifying' },
        phaseFailed: [
          { guard: 'retryableFailure', target: 'rewriting', reenter: true, actions: 'recordRetryableError' },
          { guard: 'currentPhase', target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        resume: [
          { guard: 'attemptsLeft', target: 'rewriting', reenter: true },
          { target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        deadline: [
          { guard: 'retryDue', target: 'rewriting', reenter: true, actions: 'recordRetryableError' },
          { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        cancel: { target: 'cancelled', actions: cleanupTarget },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cleanupTarget] },
      },
    },
    verifying: {
      description: 'Comparing the target against the source (files, sizes, row counts).',
      entry: ['enterVerify', runPhase],
      on: {
        progress: { guard: 'currentPhase', actions: 'recordProgress' },
        phaseDone: { guard: 'currentPhase', target: 'cuttingOver' },
        phaseFailed: [
          { guard: 'retryableFailure', target: 'verifying', reenter: true, actions: 'recordRetryableError' },
          { guard: 'currentPhase', target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        resume: [
          { guard: 'attemptsLeft', target: 'verifying', reenter: true },
          { target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        deadline: [
          { guard: 'retryDue', target: 'verifying', reenter: true, actions: 'recordRetryableError' },
          { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        cancel: { target: 'cancelled', actions: cleanupTarget },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cleanupTarget] },
      },
    },
    cuttingOver: {
      description: 'Rebinding the catalog to the target backend in one transaction. Cancel is refused from here on.',
      entry: ['enterCutover', runPhase],
      on: {
        progress: { guard: 'currentPhase', actions: 'recordProgress' },
        phaseDone: { guard: 'currentPhase', target: 'retained' },
        // The cutover is one transaction: a failed attempt left the catalog on the source, so cleanup is safe.
        phaseFailed: [
          { guard: 'retryableFailure', target: 'cuttingOver', reenter: true, actions: 'recordRetryableError' },
          { guard: 'currentPhase', target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        resume: [
          { guard: 'attemptsLeft', target: 'cuttingOver', reenter: true },
          { target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        deadline: [
          { guard: 'retryDue', target: 'cuttingOver', reenter: true, actions: 'recordRetryableError' },
          { guard: 'deadlinePassed', target: 'failed', actions: ['assignFailure', cleanupTarget] },
        ],
        cancel: { actions: rejectCancel },
        'supervisor.failed': { target: 'failed', actions: ['assignFailure', cleanupTarget] },
      },
    },
    retained: {
      description: 'Cut over; the old data is kept for the retention window, then purged with the source catalog.',
      entry: 'enterRetained',
      on: {
        deadline: { guard: 'deadlinePassed', actions: ['startPurge', runPhase] },
        resume: { guard: 'purging', actions: ['startPurge', runPhase] },
        expireRetention: { guard: 'notPurging', actions: ['startPurge', runPhase] },
        progress: { guard: 'currentPhase', actions: 'recordProgress' },
        phaseDone: { guard: 'currentPhase', target: 'completed' },
        // The move itself succeeded: a failed purge is retried after another lease rather than failing the migration.
        phaseFailed: { guard: 'currentPhase', actions: 'deferPurge' },
        cancel: { actions: rejectCancel },
      },
    },
    completed: {
      type: 'final',
      description: 'Old data and the source catalog are gone.',
      entry: 'enterTerminal',
    },
    cancelled: {
      type: 'final',
      description: 'Cancelled before cutover; the copied data is removed and the catalog stays on the source.',
      entry: 'enterTerminal',
    },
    failed: {
      type: 'final',
      description: 'A phase failed for good before the catalog moved; the catalog stays on the source.',
      entry: 'enterTerminal',
    },
  },
});

export type StorageMigrationMachine = typeof storageMigrationMachine;

type StorageMigrationStatus = 'pending' | 'running' | 'retained' | 'completed' | 'cancelled' | 'failed';

export interface StorageMigrationProjection extends MachineProjection {
  status: StorageMigrationStatus;
  phase: MigrationPhase | null;
  attempt: number;
  /** Writes to the catalog are refused (409 catalog_read_only) while this is true. */
  catalogReadOnly: boolean;
  /** Whether POST …/cancel can still succeed. */
  cancellable: boolean;
  tablesTotal: number;
  tablesDone: number;
  bytesCopied: number;
  createdAt: number;
  startedAt: number | null;
  cutoverAt: number | null;
  finishedAt: number | null;
  lastError: string | null;
}

const migrationStatusByState: Record<string, StorageMigrationStatus> = {
  pending: 'pending',
  copying: 'running',
  rewriting: 'running',
  verifying: 'running',
  cuttingOver: 'running',
  retained: 'retained',
  completed: 'completed',
  cancelled: 'cancelled',
  failed: 'failed',
};

export function projectStorageMigration(snapshot: { value: unknown; context: StorageMigrationContext }): StorageMigrationProjection {
  const state = String(snapshot.value);
  const c = snapshot.context;
  const status = migrationStatusByState[state];
  if (status === undefined) throw new Error(`unknown storageMigration state ${state}`);
  const beforeCutover = state === 'pending' || state === 'copying' || state === 'rewriting' || state === 'verifying';
  return {
    state,
    status,
    deadlineAt: c.deadlineAt,
    terminal: status === 'completed' || status === 'cancelled' || status === 'failed',
    error: c.error,
    phase: c.phase,
    attempt: c.attempt,
    catalogReadOnly: beforeCutover || state === 'cuttingOver',
    cancellable: beforeCutover,
    tablesTotal: c.tablesTotal,
    tablesDone: c.tablesDone,
    bytesCopied: c.bytesCopied,
    createdAt: c.createdAt,
    startedAt: c.startedAt,
    cutoverAt: c.cutoverAt,
    finishedAt: c.finishedAt,
    lastError: c.lastError,
  };
}
