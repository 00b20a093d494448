// Deletes result files older than RESULT_RETENTION_HOURS (a stale query is re-run from its saved SQL), with their
// views, and partial files and exports a crash left behind.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from './logger.ts';

export async function sweepResults(resultsDir: string, maxAgeMs: number, now = Date.now()): Promise<number> {
  let names: string[];
  try {
    names = await readdir(resultsDir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.endsWith('.parquet') && !name.endsWith('.parquet.partial') && !name.includes('.export-')) continue;
    const path = join(resultsDir, name);
    try {
      const info = await stat(path);
      if (info.isFile() && now - info.mtimeMs > maxAgeMs) {
        await rm(path, { force: true });
        removed += 1;
      }
    } catch {
      // Deleted concurrently: nothing to do.
    }
  }
  return removed;
}

/** Sweep now and then periodically; returns a stop function. */
export function startRetentionSweep(resultsDir: string, retentionHours: number, logger: Logger): () => void {
  const maxAgeMs = retentionHours * 3_600_000;
  // Sweep a few times per retention period, at most hourly, at least every minute.
  const everyMs = Math.min(3_600_000, Math.max(60_000, maxAgeMs / 4));
  const sweep = () => {
    sweepResults(resultsDir, maxAgeMs)
      .then((removed) => {
        if (removed > 0) logger.info({ removed }, 'expired results deleted');
      })
      .catch((error: unknown) => logger.warn({ err: String(error) }, 'retention sweep failed'));
  };
  sweep();
  const timer = setInterval(sweep, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
