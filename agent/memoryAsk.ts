// How much memory a query asks admission control for (auto profile). In order of preference:
//  1. grant feedback: the largest peak remembered for the same statement text × GRANT_FEEDBACK_SAFETY_MULTIPLIER;
//  2. the EXPLAIN estimate × ESTIMATE_SAFETY_MULTIPLIER (cached per statement text for ESTIMATE_CACHE_TTL_S);
//  3. the fallback bucket (ESTIMATE_FALLBACK_BUCKET) for unestimable statements.
// Every ask is clamped to [ESTIMATE_FLOOR_BYTES, ESTIMATE_CEILING_FRACTION × budget].
import type { AgentConfig, EstimateBucket } from './config.ts';

// Buckets as fractions of the budget.
const BUCKET_FRACTIONS: Readonly<Record<EstimateBucket, number>> = { S: 1 / 16, M: 1 / 8, L: 1 / 4, XL: 1 / 2 };

type AskSource = 'feedback' | 'estimate' | 'fallback';

export interface Ask {
  readonly bytes: number;
  readonly source: AskSource;
}

type SizingConfig = Pick<
  AgentConfig,
  | 'estimateSafetyMultiplier' | 'estimateFloorBytes' | 'estimateCeilingFraction' | 'estimateFallbackBucket'
  | 'estimateCacheTtlS' | 'estimateCacheMaxEntries' | 'grantFeedbackEnabled' | 'grantFeedbackSafetyMultiplier'
>;

/** Statement text as a cache key: whitespace runs collapsed, so reformatting does not defeat the caches. */
function statementKey(sql: string): string {
  return sql.trim().replace(/\s+/g, ' ');
}

export class MemoryAsk {
  readonly #config: SizingConfig;
  readonly #budgetBytes: number;
  readonly #peaks = new Map<string, number>();
  // Insertion-ordered map used as an LRU: re-inserted on hit, oldest evicted first.
  readonly #estimates = new Map<string, { bytes: number | null; at: number }>();

  constructor(config: SizingConfig, budgetBytes: number) {
    this.#config = config;
    this.#budgetBytes = budgetBytes;
  }

  clamp(bytes: number): number {
    const ceiling = Math.max(1, Math.floor(this.#config.estimateCeilingFraction * this.#budgetBytes));
    return Math.min(ceiling, Math.max(this.#config.estimateFloorBytes, Math.ceil(bytes)));
  }

  fallback(): Ask {
    return { bytes: this.clamp(BUCKET_FRACTIONS[this.#config.estimateFallbackBucket] * this.#budgetBytes), source: 'fallback' };
  }

  /** The feedback-based ask when a peak is remembered for this statement. */
  fromFeedback(sql: string): Ask | null {
    if (!this.#config.grantFeedbackEnabled) return null;
    const peak = this.#peaks.get(statementKey(sql));
    return peak === undefined ? null : { bytes: this.clamp(peak * this.#config.grantFeedbackSafetyMultiplier), source: 'feedback' };
  }

  /** A cached EXPLAIN estimate: undefined = not cached, null = cached as unestimable. */
  cachedEstimate(sql: string, now = Date.now()): number | null | undefined {
    const key = statementKey(sql);
    const hit = this.#estimates.get(key);
    if (!hit) return undefined;
    if (now - hit.at > this.#config.estimateCacheTtlS * 1000) {
      this.#estimates.delete(key);
      return undefined;
    }
    this.#estimates.delete(key);
    this.#estimates.set(key, hit);
    return hit.bytes;
  }

  rememberEstimate(sql: string, bytes: number | null, now = Date.now()): void {
    if (this.#config.estimateCacheTtlS <= 0 || this.#config.estimateCacheMaxEntries <= 0) return;
    const key = statementKey(sql);
    this.#estimates.delete(key);
    this.#estimates.set(key, { bytes, at: now });
    while (this.#estimates.size > this.#config.estimateCacheMaxEntries) {
      const oldest = this.#estimates.keys().next().value;
      if (oldest === undefined) break;
      this.#estimates.delete(oldest);
    }
  }

  fromEstimate(estimateBytes: number | null): Ask {
    return estimateBytes === null
      ? this.fallback()
      : { bytes: this.clamp(estimateBytes * this.#config.estimateSafetyMultiplier), source: 'estimate' };
  }

  /** The ask when it is known without EXPLAIN (a remembered peak or a cached estimate), else null. */
  known(sql: string): Ask | null {
    const fed = this.fromFeedback(sql);
    if (fed !== null) return fed;
    const estimate = this.cachedEstimate(sql);
    return estimate === undefined ? null : this.fromEstimate(estimate);
  }

  /**
   * The ask for a statement, in the order above: its remembered peak, else its EXPLAIN estimate (cached; `explain`
   * runs only on a miss, and what it throws is passed on uncached), else the fallback bucket. Queries and SQL
   * session statements both size themselves here.
   */
  async askFor(sql: string, explain: () => Promise<number | null>): Promise<Ask> {
    const fed = this.fromFeedback(sql);
    if (fed !== null) return fed;
    let estimate = this.cachedEstimate(sql);
    if (estimate === undefined) {
      estimate = await explain();
      this.rememberEstimate(sql, estimate);
    }
    return this.fromEstimate(estimate);
  }

  /** What a finished run teaches: a write may change every size (forget them all), a read's peak is remembered. */
  learn(sql: string, run: { readonly wrote: boolean; readonly peakBytes: number | null | undefined }): void {
    if (run.wrote) this.clearAfterWrite();
    else if (run.peakBytes) this.rememberPeak(sql, run.peakBytes);
  }

  /** Record the measured peak of a result-set query. */
  rememberPeak(sql: string, peakBytes: number): void {
    if (!this.#config.grantFeedbackEnabled || !(peakBytes > 0)) return;
    const key = statementKey(sql);
    this.#peaks.set(key, Math.max(peakBytes, this.#peaks.get(key) ?? 0));
    // Bounded like the estimate cache, so a stream of distinct statements cannot grow memory without limit.
    while (this.#peaks.size > Math.max(1, this.#config.estimateCacheMaxEntries)) {
      const oldest = this.#peaks.keys().next().value;
      if (oldest === undefined) break;
      this.#peaks.delete(oldest);
    }
  }

  /** Any write may change data sizes: forget every remembered peak and estimate. */
  clearAfterWrite(): void {
    this.#peaks.clear();
    this.#estimates.clear();
  }
}
