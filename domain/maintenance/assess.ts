// A table's health from the figures a scan read (no I/O here): a 0-100 score per dimension and overall, a grade,
// and the recommendations the profile's thresholds call for, each with its rationale, estimated impact and the
// statement that carries it out (the agent's maintenance procedures, docs/iceberg-bridge.md).
import type { Level, Thresholds } from './thresholds.ts';

export interface TableFigures {
  /** `catalog.schema.table` as statements name it (the catalog is its slug) */
  qualified: string;
  dataFiles: number;
  dataBytes: number;
  records: number;
  /** data files below the profile's small-file size, and their bytes */
  smallFiles: number;
  smallBytes: number;
  /**
   * the small files' sizes, one list per partition (of one spec): compaction never merges across partitions. Absent,
   * the table is taken as one partition.
   */
  smallFileSizesByPartition?: number[][];
  snapshots: number;
  /** snapshot timestamps (ms), any order */
  snapshotTimes: number[];
  currentSnapshotId: number | null;
  manifests: number;
  /** deep scan only: unreferenced files under the table location, and those older than the profile's minimum age */
  orphans?: { files: number; bytes: number; eligibleFiles: number; eligibleBytes: number };
  /** the previous scan's size, for growth */
  previous?: { dataBytes: number; scannedAt: number };
}

export type Kind = 'compact_small_files' | 'expire_snapshots' | 'rewrite_manifests' | 'cleanup_orphans' | 'investigate_growth';

export interface Recommendation {
  kind: Kind;
  severity: 'warning' | 'critical';
  rationale: string;
  estimated_impact: Record<string, number>;
  remediation_sql: string | null;
}

export interface Health {
  score: number;
  grade: 'A' | 'B' | 'C' | 'D' | 'F';
  dimensions: Record<string, number>;
  recommendations: Recommendation[];
}

const DAY = 86_400_000;
const WEIGHTS: Record<string, number> = { file_sizes: 0.35, snapshots: 0.2, manifests: 0.15, orphans: 0.15, growth: 0.15 };

/** 100 at zero, 75 at the warning level, 40 at critical, 0 at twice critical: monotone, so worse is never better. */
export function levelScore(value: number, level: Level): number {
  if (value <= 0) return 100;
  if (value < level.warning) return 100 - 25 * (value / level.warning);
  if (value < level.critical) return 75 - 35 * ((value - level.warning) / (level.critical - level.warning));
  return Math.max(0, 40 - 40 * Math.min(1, (value - level.critical) / level.critical));
}

const severityOf = (value: number, level: Level): 'warning' | 'critical' | null =>
  value >= level.critical ? 'critical' : value >= level.warning ? 'warning' : null;

export function gradeOf(score: number): Health['grade'] {
  return score >= 90 ? 'A' : score >= 75 ? 'B' : score >= 60 ? 'C' : score >= 40 ? 'D' : 'F';
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
// To the millisecond, as the estimate counts: a cutoff cut to the second left the snapshots of its last partial
// second unexpired when the recommendation was applied (a table written several times a second kept them).
const timestamp = (ms: number) => `TIMESTAMP '${new Date(ms).toISOString().replace('T', ' ').replace(/(\.000)?Z$/, '')}'`;
const bytes = (n: number) => (n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(1)} GiB` : n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`);

/** Snapshots older than the retention, beyond the newest `retainLast` and the current one. */
export function expirable(f: TableFigures, t: Thresholds, now: number): number {
  const cutoff = now - t.retainDays * DAY;
  const newestFirst = [...f.snapshotTimes].sort((a, b) => b - a);
  return newestFirst.slice(Math.max(1, t.retainLast)).filter((at) => at < cutoff).length;
}

/**
 * What compaction would do with these small files, as the agent's rewrite_data_files does it: per partition,
 * first-fit decreasing into bins of at most the target size, and a bin of one file left alone (so a partition with
 * one small file is never rewritten). The files read, their bytes, the files written (one per bin) and the
 * partitions touched.
 */
export function compactionPlan(sizesByPartition: readonly number[][], target: number): { rewritten: number; bytes: number; written: number; partitions: number } {
  const out = { rewritten: 0, bytes: 0, written: 0, partitions: 0 };
  for (const sizes of sizesByPartition) {
    if (sizes.length < 2) continue;
    const bins: Array<{ bytes: number; files: number }> = [];
    for (const size of [...sizes].sort((a, b) => b - a)) {
      const bin = bins.find((b) => b.bytes + size <= target);
      if (bin) {
        bin.bytes += size;
        bin.files++;
      } else bins.push({ bytes: size, files: 1 });
    }
    const merged = bins.filter((b) => b.files > 1);
    if (!merged.length) continue;
    out.partitions++;
    out.written += merged.length;
    for (const b of merged) {
      out.rewritten += b.files;
      out.bytes += b.bytes;
    }
  }
  return out;
}

export function assess(f: TableFigures, t: Thresholds, now: number): Health {
  const dimensions: Record<string, number> = {};
  const recommendations: Recommendation[] = [];
  const table = quote(f.qualified);

  // Only the small files compaction can merge count: those that share a partition with another small file. A table
  // with one small file per partition (81 files in 81 partitions) has nothing to compact, so nothing is recommended
  // (applying it would rewrite nothing and the next scan would reopen it).
  const plan = compactionPlan(f.smallFileSizesByPartition ?? [Array.from({ length: f.smallFiles }, () => f.smallFiles ? f.smallBytes / f.smallFiles : 0)], t.targetFileBytes);
  const compactable = f.dataFiles >= t.minFilesToCompact;
  const smallRatio = f.dataFiles > 0 ? plan.rewritten / f.dataFiles : 0;
  dimensions.file_sizes = Math.round(compactable ? levelScore(smallRatio, t.smallFileRatio) : 100);
  const smallSeverity = compactable ? severityOf(smallRatio, t.smallFileRatio) : null;
  if (smallSeverity && plan.rewritten > plan.written) {
    const partitions = f.smallFileSizesByPartition && f.smallFileSizesByPartition.length > 1 ? ` in ${plan.partitions} partitions` : '';
    recommendations.push({
      kind: 'compact_small_files',
      severity: smallSeverity,
      rationale: `${plan.rewritten} of ${f.dataFiles} data files (${Math.round(smallRatio * 100)}%) are smaller than ${bytes(t.smallFileBytes)} and share a partition with another${partitions}; reading many small files costs a request and a footer each`,
      estimated_impact: { data_files_before: f.dataFiles, data_files_after: f.dataFiles - plan.rewritten + plan.written, small_files: f.smallFiles, rewritten_bytes: plan.bytes },
      remediation_sql: `CALL system.rewrite_data_files(table => ${table}, target_file_size_bytes => ${t.targetFileBytes})`,
    });
  }

  const expirableCount = expirable(f, t, now);
  dimensions.snapshots = Math.round(levelScore(expirableCount, t.expirableSnapshots));
  const snapshotSeverity = severityOf(expirableCount, t.expirableSnapshots);
  if (snapshotSeverity) {
    const olderThan = now - t.retainDays * DAY;
    recommendations.push({
      kind: 'expire_snapshots',
      severity: snapshotSeverity,
      rationale: `${expirableCount} of ${f.snapshots} snapshots are older than ${t.retainDays} days and beyond the newest ${t.retainLast}; each keeps its files in storage and its entry in the metadata`,
      estimated_impact: { snapshots_before: f.snapshots, snapshots_expired: expirableCount },
      remediation_sql: `CALL system.expire_snapshots(table => ${table}, older_than => ${timestamp(olderThan)}, retain_last => ${Math.max(1, t.retainLast)})`,
    });
  }

  dimensions.manifests = Math.round(levelScore(f.manifests, t.manifests));
  const manifestSeverity = severityOf(f.manifests, t.manifests);
  if (manifestSeverity && f.manifests >= 2) {
    recommendations.push({
      kind: 'rewrite_manifests',
      severity: manifestSeverity,
      rationale: `the current snapshot has ${f.manifests} manifests; planning a scan reads every one`,
      estimated_impact: { manifests_before: f.manifests, manifests_after: 1 },
      remediation_sql: `CALL system.rewrite_manifests(table => ${table})`,
    });
  }

  if (f.orphans) {
    dimensions.orphans = Math.round(levelScore(f.orphans.eligibleFiles, t.orphanFiles));
    const orphanSeverity = severityOf(f.orphans.eligibleFiles, t.orphanFiles);
    if (orphanSeverity) {
      recommendations.push({
        kind: 'cleanup_orphans',
        severity: orphanSeverity,
        rationale: `${f.orphans.eligibleFiles} files (${bytes(f.orphans.eligibleBytes)}) under the table location are referenced by no snapshot or metadata file and older than ${t.orphanMinAgeDays} days`,
        estimated_impact: { orphan_files: f.orphans.eligibleFiles, orphan_bytes: f.orphans.eligibleBytes },
        remediation_sql: `CALL system.remove_orphan_files(table => ${table}, older_than => ${timestamp(now - t.orphanMinAgeDays * DAY)})`,
      });
    }
  }

  if (f.previous && f.previous.dataBytes > 0) {
    const factor = f.dataBytes / f.previous.dataBytes;
    const grew = f.dataBytes - f.previous.dataBytes;
    const counted = grew >= t.growthMinBytes ? factor : 1;
    dimensions.growth = Math.round(levelScore(Math.max(0, counted - 1), { warning: t.growthFactor.warning - 1, critical: t.growthFactor.critical - 1 }));
    const growthSeverity = grew >= t.growthMinBytes ? severityOf(factor, t.growthFactor) : null;
    if (growthSeverity) {
      const hours = Math.max(1, Math.round((now - f.previous.scannedAt) / 3_600_000));
      recommendations.push({
        kind: 'investigate_growth',
        severity: growthSeverity,
        rationale: `the table grew ${factor.toFixed(1)}× (from ${bytes(f.previous.dataBytes)} to ${bytes(f.dataBytes)}) in about ${hours} h`,
        estimated_impact: { bytes_before: f.previous.dataBytes, bytes_now: f.dataBytes },
        remediation_sql: null,
      });
    }
  }

  let weighted = 0;
  let total = 0;
  for (const [name, value] of Object.entries(dimensions)) {
    weighted += WEIGHTS[name] * value;
    total += WEIGHTS[name];
  }
  const score = Math.round(weighted / total);
  return { score, grade: gradeOf(score), dimensions, recommendations };
}
