import { describe, it, expect } from 'vitest';
import { binPack, snapshotsToExpire } from './maintenance.ts';
import type { Snapshot, TableMetadata } from '../../iceberg/metadata.ts';

const snap = (id: number, parent: number | null, ts: number): Snapshot => ({
  'snapshot-id': id,
  ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
  'timestamp-ms': ts,
  'manifest-list': `s3://b/t/metadata/snap-${id}.avro`,
  summary: { operation: 'append' },
});

function table(snapshots: Snapshot[], refs: TableMetadata['refs']): TableMetadata {
  return { snapshots, refs, 'current-snapshot-id': refs.main?.['snapshot-id'] ?? null } as unknown as TableMetadata;
}

describe('maintenance planning', () => {
  it('expires snapshots older than older_than except the retain_last newest ancestors of main and every ref', () => {
    // 1 ← 2 ← 3 ← 4 (main); 5 is a tag on a side snapshot of 2; 6 an unreferenced side snapshot.
    const m = table([snap(1, null, 100), snap(2, 1, 200), snap(3, 2, 300), snap(4, 3, 400), snap(5, 2, 250), snap(6, 1, 150)], {
      main: { 'snapshot-id': 4, type: 'branch' },
      audit: { 'snapshot-id': 5, type: 'tag' },
    });
    const ids = (s: Snapshot[]) => s.map((x) => Number(x['snapshot-id']));
    expect(ids(snapshotsToExpire(m, 1000, 1))).toEqual([1, 2, 3, 6]);
    expect(ids(snapshotsToExpire(m, 1000, 3))).toEqual([1, 6]);
    expect(ids(snapshotsToExpire(m, 250, 1))).toEqual([1, 2, 6]);
    expect(ids(snapshotsToExpire(m, 0, 1))).toEqual([]);
    expect(ids(snapshotsToExpire(table([], {}), 1000, 1))).toEqual([]);
  });

  it('packs small files into bins of at most the target size', () => {
    const f = (size: number) => ({ file: { file_size_in_bytes: BigInt(size) } });
    const bins = binPack([f(60), f(10), f(30), f(50), f(20)], 100);
    expect(bins.map((b) => b.map((x) => Number(x.file.file_size_in_bytes)))).toEqual([[60, 30, 10], [50, 20]]);
    for (const b of bins) expect(b.reduce((a, x) => a + Number(x.file.file_size_in_bytes), 0)).toBeLessThanOrEqual(100);
  });
});
