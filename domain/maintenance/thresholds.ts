// The maintenance profiles: when a table's figures earn a recommendation (warning, then critical), what compaction
// aims at, and how much history and how young an unreferenced file is kept. docs/maintenance.md lists them.
export type Profile = 'conservative' | 'balanced' | 'aggressive';
export const PROFILES: readonly Profile[] = ['conservative', 'balanced', 'aggressive'];
export type Cadence = 'off' | 'hourly' | 'daily';
export const CADENCES: readonly Cadence[] = ['off', 'hourly', 'daily'];

export interface Level {
  warning: number;
  critical: number;
}

export interface Thresholds {
  /** a data file below this is small */
  smallFileBytes: number;
  /** what compaction writes (its target_file_size_bytes) */
  targetFileBytes: number;
  /** fewer data files than this are never worth compacting */
  minFilesToCompact: number;
  /** share of data files that are small */
  smallFileRatio: Level;
  /** snapshots that could be expired (older than `retainDays`, beyond the `retainLast` newest and the current) */
  expirableSnapshots: Level;
  retainDays: number;
  retainLast: number;
  /** manifests of the current snapshot */
  manifests: Level;
  /** unreferenced files older than `orphanMinAgeDays` (deep scan) */
  orphanFiles: Level;
  orphanMinAgeDays: number;
  /** size now ÷ size at the previous scan, when it grew by at least `growthMinBytes` */
  growthFactor: Level;
  growthMinBytes: number;
}

const MiB = 2 ** 20;

export const THRESHOLDS: Readonly<Record<Profile, Thresholds>> = {
  conservative: {
    smallFileBytes: 16 * MiB,
    targetFileBytes: 128 * MiB,
    minFilesToCompact: 100,
    smallFileRatio: { warning: 0.8, critical: 0.95 },
    expirableSnapshots: { warning: 500, critical: 2000 },
    retainDays: 30,
    retainLast: 10,
    manifests: { warning: 500, critical: 2000 },
    orphanFiles: { warning: 100, critical: 1000 },
    orphanMinAgeDays: 7,
    growthFactor: { warning: 4, critical: 10 },
    growthMinBytes: 1024 * MiB,
  },
  balanced: {
    smallFileBytes: 32 * MiB,
    targetFileBytes: 128 * MiB,
    minFilesToCompact: 20,
    smallFileRatio: { warning: 0.5, critical: 0.8 },
    expirableSnapshots: { warning: 100, critical: 500 },
    retainDays: 7,
    retainLast: 5,
    manifests: { warning: 100, critical: 500 },
    orphanFiles: { warning: 10, critical: 100 },
    orphanMinAgeDays: 3,
    growthFactor: { warning: 2, critical: 5 },
    growthMinBytes: 256 * MiB,
  },
  aggressive: {
    smallFileBytes: 64 * MiB,
    targetFileBytes: 128 * MiB,
    minFilesToCompact: 10,
    smallFileRatio: { warning: 0.3, critical: 0.6 },
    expirableSnapshots: { warning: 20, critical: 100 },
    retainDays: 0,
    retainLast: 1,
    manifests: { warning: 20, critical: 100 },
    orphanFiles: { warning: 1, critical: 50 },
    orphanMinAgeDays: 1,
    growthFactor: { warning: 1.5, critical: 3 },
    growthMinBytes: 64 * MiB,
  },
};
