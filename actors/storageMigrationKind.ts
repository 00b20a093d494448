// The storageMigration actor's effects and entity projection: its phases are handed to this replica's migration
// runner (migrationRunner.ts); the entity is the storage_migrations row.
import { machineKinds } from '../machines/index.ts';
import type { RunPhaseParams, StorageMigrationProjection } from '../machines/storageMigration.ts';
import type { ActorKind } from './types.ts';
import type { MigrationRunner } from './migrationRunner.ts';
import { sql } from '../runtime/sql.ts';

const STATUS_BY_STATE: Record<string, { status: string; phase: string }> = {
  pending: { status: 'pending', phase: 'pending' },
  copying: { status: 'running', phase: 'copying' },
  rewriting: { status: 'running', phase: 'copying' },
  verifying: { status: 'running', phase: 'verifying' },
  cuttingOver: { status: 'running', phase: 'cutover' },
  retained: { status: 'completed', phase: 'completed' },
  completed: { status: 'completed', phase: 'completed' },
  cancelled: { status: 'cancelled', phase: 'cancelled' },
  failed: { status: 'failed', phase: 'failed' },
};

const toTs = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export function storageMigrationKind(runner: MigrationRunner): ActorKind<StorageMigrationProjection & { retentionMs: number }> {
  return {
    machine: machineKinds.storageMigration.machine,
    project: (s) => ({ ...machineKinds.storageMigration.project(s), retentionMs: s.context.retentionMs }),
    // A progress report renews the lease: it needs no history row of its own.
    quietEvents: ['progress'],
    effects: {
      runPhase: (_ctx, p: RunPhaseParams) => runner.start(p),
      // What it wrote to its target goes, once no phase writes there any more.
      cleanupTarget: (_ctx, p: { migrationId: string }) => runner.cleanupTarget(p.migrationId),
      // The cancel route answers 409 migration_past_cutover itself; the machine's refusal needs nothing more.
      rejectCancel: () => undefined,
    },
    entityWrite: (id, pr) => {
      const s = STATUS_BY_STATE[pr.state] ?? { status: pr.status, phase: pr.state };
      // A migration is finished once it cut over (its old files go later, after the retention).
      const finishedAt = toTs(pr.cutoverAt ?? pr.finishedAt);
      const retainUntil = toTs(pr.cutoverAt === null ? null : pr.cutoverAt + pr.retentionMs);
      return sql`update storage_migrations set status = ${s.status}, phase = ${s.phase}, error = ${pr.error},
          started_at = ${toTs(pr.startedAt)}::timestamptz, finished_at = ${finishedAt}::timestamptz,
          cutover_at = ${toTs(pr.cutoverAt)}::timestamptz, retain_until = ${retainUntil}::timestamptz
        where id = ${id}`;
    },
  };
}
