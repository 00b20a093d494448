import { describe, expect, it } from 'vitest';
import { assess, compactionPlan, expirable, gradeOf, levelScore, type TableFigures } from './assess.ts';
import { THRESHOLDS } from './thresholds.ts';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const DAY = 86_400_000;
const healthy: TableFigures = {
  qualified: 'warehouse.sales.orders',
  dataFiles: 40,
  dataBytes: 40 * 120 * 2 ** 20,
  records: 1_000_000,
  smallFiles: 2,
  smallBytes: 2 * 2 ** 20,
  snapshots: 3,
  snapshotTimes: [NOW - 3 * DAY, NOW - 2 * DAY, NOW - DAY],
  currentSnapshotId: 3,
  manifests: 3,
};

describe('table health', () => {
  it('an expiry cutoff keeps its milliseconds, so applying it expires what the estimate counted', () => {
    // Written several times a second up to the scan (at .250): cut to the second, the cutoff would leave the
    // snapshots of its last partial second (.050, .150) unexpired when applied.
    const now = NOW + 250;
    const f: TableFigures = { ...healthy, snapshots: 50, snapshotTimes: Array.from({ length: 50 }, (_, i) => now - 4_900 + i * 100) };
    const rec = assess(f, THRESHOLDS.aggressive, now).recommendations.find((r) => r.kind === 'expire_snapshots')!;
    expect(rec.estimated_impact).toMatchObject({ snapshots_expired: 49 });
    expect(rec.remediation_sql).toBe("CALL system.expire_snapshots(table => 'warehouse.sales.orders', older_than => TIMESTAMP '2026-11-26 12:00:00.250', retain_last => 1)");
  });

  it('a healthy table scores A with no recommendation', () => {
    const h = assess(healthy, THRESHOLDS.balanced, NOW);
    expect(h.recommendations).toEqual([]);
    expect(h.grade).toBe('A');
    expect(Object.keys(h.dimensions).sort()).toEqual(['file_sizes', 'manifests', 'snapshots']);
  });

  it('50 small files, 50 snapshots and 50 manifests under the aggressive profile: compact (critical), expire, rewrite manifests', () => {
    const f: TableFigures = {
      ...healthy,
      dataFiles: 50,
      smallFiles: 50,
      smallBytes: 50 * 1500,
      dataBytes: 50 * 1500,
      snapshots: 50,
      snapshotTimes: Array.from({ length: 50 }, (_, i) => NOW - (50 - i) * 60_000),
      manifests: 50,
    };
    const h = assess(f, THRESHOLDS.aggressive, NOW);
    const byKind = Object.fromEntries(h.recommendations.map((r) => [r.kind, r]));
    expect(Object.keys(byKind).sort()).toEqual(['compact_small_files', 'expire_snapshots', 'rewrite_manifests']);
    expect(byKind.compact_small_files).toMatchObject({
      severity: 'critical',
      estimated_impact: { data_files_before: 50, data_files_after: 1, small_files: 50 },
      remediation_sql: "CALL system.rewrite_data_files(table => 'warehouse.sales.orders', target_file_size_bytes => 134217728)",
    });
    // retain_last 1: every snapshot but the newest is expirable (the aggressive profile keeps 0 days).
    expect(byKind.expire_snapshots).toMatchObject({ severity: 'warning', estimated_impact: { snapshots_before: 50, snapshots_expired: 49 } });
    expect(byKind.expire_snapshots.remediation_sql).toBe("CALL system.expire_snapshots(table => 'warehouse.sales.orders', older_than => TIMESTAMP '2026-11-26 12:00:00', retain_last => 1)");
    expect(byKind.rewrite_manifests.remediation_sql).toBe("CALL system.rewrite_manifests(table => 'warehouse.sales.orders')");
    expect(h.score).toBeLessThan(60);
    // The same table under the balanced profile: compaction yes, the young snapshots are kept (7 days).
    const balanced = assess(f, THRESHOLDS.balanced, NOW);
    expect(balanced.recommendations.map((r) => r.kind)).toEqual(['compact_small_files']);
  });

  it('a partitioned table is estimated per partition: one small file per partition is nothing to compact', () => {
    const manyPartitions: TableFigures = {
      ...healthy,
      dataFiles: 81,
      smallFiles: 81,
      smallBytes: 81 * 1500,
      dataBytes: 81 * 1500,
      smallFileSizesByPartition: Array.from({ length: 81 }, () => [1500]),
    };
    const h = assess(manyPartitions, THRESHOLDS.aggressive, NOW);
    expect(h.recommendations.map((r) => r.kind)).not.toContain('compact_small_files');
    expect(h.dimensions.file_sizes).toBe(100);
    // 3 partitions of 27 small files each: three files written, one per partition, never one for the table
    const threeParts: TableFigures = { ...manyPartitions, smallFileSizesByPartition: Array.from({ length: 3 }, () => Array.from({ length: 27 }, () => 1500)) };
    const rec = assess(threeParts, THRESHOLDS.aggressive, NOW).recommendations.find((r) => r.kind === 'compact_small_files')!;
    expect(rec.estimated_impact).toMatchObject({ data_files_before: 81, data_files_after: 3, small_files: 81, rewritten_bytes: 81 * 1500 });
    expect(rec.rationale).toContain('in 3 partitions');
    // 80 partitions of one file and one of 2: only those two merge
    const onePair: TableFigures = { ...manyPartitions, dataFiles: 82, smallFiles: 82, smallFileSizesByPartition: [...Array.from({ length: 80 }, () => [1500]), [1500, 1500]] };
    expect(assess(onePair, THRESHOLDS.aggressive, NOW).recommendations.find((r) => r.kind === 'compact_small_files')).toBeUndefined();
  });

  it('compaction is planned as the agent packs it: a bin of one file is left alone', () => {
    const MiB = 2 ** 20;
    expect(compactionPlan([[60 * MiB, 60 * MiB, 60 * MiB]], 128 * MiB)).toEqual({ rewritten: 2, bytes: 120 * MiB, written: 1, partitions: 1 });
    expect(compactionPlan([[1], [2], [3]], 128 * MiB)).toEqual({ rewritten: 0, bytes: 0, written: 0, partitions: 0 });
  });

  it('orphans and growth count only past their thresholds; a quote in a name is escaped', () => {
    const f: TableFigures = {
      ...healthy,
      qualified: "warehouse.sales.o'brien",
      orphans: { files: 30, bytes: 3e6, eligibleFiles: 12, eligibleBytes: 1e6 },
      previous: { dataBytes: healthy.dataBytes / 3, scannedAt: NOW - DAY },
    };
    const h = assess(f, THRESHOLDS.balanced, NOW);
    expect(h.recommendations.map((r) => [r.kind, r.severity])).toEqual([
      ['cleanup_orphans', 'warning'],
      ['investigate_growth', 'warning'],
    ]);
    expect(h.recommendations[0].remediation_sql).toBe("CALL system.remove_orphan_files(table => 'warehouse.sales.o''brien', older_than => TIMESTAMP '2026-11-23 12:00:00')");
    expect(h.recommendations[1].remediation_sql).toBeNull();
    // A small table tripling is not growth worth a look (below growthMinBytes).
    const small = assess({ ...f, dataBytes: 3e6, previous: { dataBytes: 1e6, scannedAt: NOW - DAY }, orphans: undefined }, THRESHOLDS.balanced, NOW);
    expect(small.recommendations).toEqual([]);
  });

  it('scores fall monotonically with the figure, grades follow the score', () => {
    const level = { warning: 10, critical: 100 };
    let last = 101;
    for (const v of [0, 1, 5, 9.9, 10, 50, 99, 100, 150, 200, 1000]) {
      const s = levelScore(v, level);
      expect(s).toBeLessThanOrEqual(last);
      last = s;
    }
    expect([levelScore(0, level), levelScore(10, level), levelScore(100, level), levelScore(200, level)]).toEqual([100, 75, 40, 0]);
    expect([95, 80, 65, 45, 10].map(gradeOf)).toEqual(['A', 'B', 'C', 'D', 'F']);
    expect(expirable({ ...healthy, snapshotTimes: [NOW, NOW - 10 * DAY, NOW - 20 * DAY] }, { ...THRESHOLDS.balanced, retainLast: 1 }, NOW)).toBe(2);
  });
});
