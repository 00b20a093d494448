import { describe, expect, test } from 'vitest';
import { projectStorageMigration, storageMigrationMachine } from './storageMigration.ts';
import type { StorageMigrationEvent, StorageMigrationInput } from './storageMigration.ts';
import { replay } from './replay.ts';

const T = 1_700_000_000_000;
const DAY = 86_400_000;
const input: StorageMigrationInput = {
  migrationId: 'm-1',
  catalogId: 'cat-1',
  sourceBackendId: 'b-old',
  targetBackendId: 'b-new',
  at: T,
  phaseLeaseMs: 120_000,
  retentionMs: 7 * DAY,
  maxPhaseAttempts: 3,
};
const toCutover: StorageMigrationEvent[] = [
  { type: 'begin', at: T + 1 },
  { type: 'phaseDone', at: T + 2, phase: 'copy' },
  { type: 'phaseDone', at: T + 3, phase: 'rewrite' },
  { type: 'phaseDone', at: T + 4, phase: 'verify' },
];

describe('storageMigration machine', () => {
  test('runs copy, rewrite, verify, cutover, keeps the old data for the retention window, then purges', () => {
    const steps = replay(storageMigrationMachine, input, [
      ...toCutover,
      { type: 'phaseDone', at: T + 5, phase: 'cutover' },
      { type: 'deadline', at: T + 5 + 7 * DAY },
      { type: 'phaseDone', at: T + 6 + 7 * DAY, phase: 'purge' },
    ]);
    expect(projectStorageMigration(steps[0].snapshot)).toMatchObject({ status: 'pending', catalogReadOnly: true, cancellable: true });
    expect(steps.slice(1, 6).map((s) => s.actions.map((a) => (a.params as { phase: string }).phase))).toEqual([
      ['copy'],
      ['rewrite'],
      ['verify'],
      ['cutover'],
      [],
    ]);
    expect(projectStorageMigration(steps[4].snapshot)).toMatchObject({ status: 'running', phase: 'cutover', cancellable: false, catalogReadOnly: true });
    expect(projectStorageMigration(steps[5].snapshot)).toMatchObject({ status: 'retained', catalogReadOnly: false, deadlineAt: T + 5 + 7 * DAY });
    expect(steps[6].actions).toEqual([
      { type: 'runPhase', params: { migrationId: 'm-1', catalogId: 'cat-1', sourceBackendId: 'b-old', targetBackendId: 'b-new', phase: 'purge', attempt: 1 } },
    ]);
    expect(projectStorageMigration(steps[7].snapshot)).toMatchObject({ status: 'completed', terminal: true });
  });

  test('cancel before cutover removes the copy; from cutover on it is refused', () => {
    const cancelled = replay(storageMigrationMachine, input, [{ type: 'begin', at: T + 1 }, { type: 'cancel', at: T + 2 }]).at(-1)!;
    expect(cancelled.snapshot.value).toBe('cancelled');
    expect(cancelled.actions).toEqual([{ type: 'cleanupTarget', params: { migrationId: 'm-1', catalogId: 'cat-1', targetBackendId: 'b-new' } }]);
    const refused = replay(storageMigrationMachine, input, [...toCutover, { type: 'cancel', at: T + 5 }]).at(-1)!;
    expect(refused.snapshot.value).toBe('cuttingOver');
    expect(refused.actions).toEqual([{ type: 'rejectCancel', params: { migrationId: 'm-1', code: 'migration_past_cutover' } }]);
  });

  test('a crashed phase resumes: a lapsed lease re-runs it, then it fails after the last attempt', () => {
    const steps = replay(storageMigrationMachine, input, [
      { type: 'begin', at: T + 1 },
      { type: 'progress', at: T + 60_000, phase: 'copy', tablesTotal: 10, tablesDone: 4, bytesCopied: 1_000_000 },
      { type: 'deadline', at: T + 60_000 + 120_000 },
      { type: 'resume', at: T + 200_000 },
      { type: 'deadline', at: T + 200_000 + 120_000 },
    ]);
    expect(steps[2].snapshot.context.deadlineAt).toBe(T + 60_000 + 120_000);
    expect(steps[3].actions).toEqual([expect.objectContaining({ type: 'runPhase', params: expect.objectContaining({ phase: 'copy', attempt: 2 }) })]);
    expect(projectStorageMigration(steps[3].snapshot)).toMatchObject({ tablesDone: 4, lastError: expect.stringMatching(/lease/) });
    expect(steps[4].actions).toEqual([expect.objectContaining({ params: expect.objectContaining({ attempt: 3 }) })]);
    expect(projectStorageMigration(steps[5].snapshot)).toMatchObject({ status: 'failed', error: 'copy did not complete after 3 attempts' });
    expect(steps[5].actions.map((a) => a.type)).toEqual(['cleanupTarget']);
  });

  test('a stale report from an earlier phase is ignored', () => {
    const steps = replay(storageMigrationMachine, input, [
      { type: 'begin', at: T + 1 },
      { type: 'phaseDone', at: T + 2, phase: 'copy' },
      { type: 'phaseDone', at: T + 3, phase: 'copy' },
      { type: 'phaseFailed', at: T + 4, phase: 'copy', message: 'late', retryable: false },
    ]);
    expect(steps.slice(2).map((s) => s.snapshot.value)).toEqual(['rewriting', 'rewriting', 'rewriting']);
  });

  test('a later migration onto the retained root ends the retention at once; repeating it starts no second purge', () => {
    const steps = replay(storageMigrationMachine, input, [
      ...toCutover,
      { type: 'phaseDone', at: T + 5, phase: 'cutover' },
      { type: 'expireRetention', at: T + 6 },
      { type: 'expireRetention', at: T + 7 },
      { type: 'phaseDone', at: T + 8, phase: 'purge' },
    ]);
    expect(steps[6].actions).toEqual([expect.objectContaining({ type: 'runPhase', params: expect.objectContaining({ phase: 'purge', attempt: 1 }) })]);
    expect(steps[7].actions).toEqual([]);
    expect(projectStorageMigration(steps[8].snapshot)).toMatchObject({ status: 'completed' });
  });
});
