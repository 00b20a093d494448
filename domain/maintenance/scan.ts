// One maintenance scan: every table of every catalog is read (metadata only, see inspect.ts), scored against the
// profile of the runtime policy, and its health and recommendations written. A deep scan also lists storage for
// orphan files; a shallow one carries the last deep scan's orphan figures forward. A table that fails to read is
// reported and skipped; the others are scanned.
import type { Db } from '../../runtime/db.ts';
import type { CatalogClient } from '../../runtime/catalogClient.ts';
import { assess } from './assess.ts';
import { inspectTable } from './inspect.ts';
import * as store from './store.ts';
import { THRESHOLDS } from './thresholds.ts';

export interface ScanReport {
  scanned_at: string;
  deep: boolean;
  profile: string;
  catalogs: number;
  tables: number;
  recommendations_opened: number;
  recommendations_resolved: number;
  errors: Array<{ catalog: string; schema: string | null; table: string | null; message: string }>;
  duration_ms: number;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function scanTables(db: Db, client: CatalogClient, opts: { deep: boolean; now?: number; signal?: AbortSignal }): Promise<ScanReport> {
  const started = Date.now();
  const now = opts.now ?? started;
  const policy = await store.readPolicy(db);
  const t = THRESHOLDS[policy.profile];
  const report: ScanReport = {
    scanned_at: new Date(now).toISOString(),
    deep: opts.deep,
    profile: policy.profile,
    catalogs: 0,
    tables: 0,
    recommendations_opened: 0,
    recommendations_resolved: 0,
    errors: [],
    duration_ms: 0,
  };
  const catalogs = await db.query<{ id: string; slug: string }>(`select id, slug from catalogs order by slug`);
  for (const c of catalogs) {
    if (opts.signal?.aborted) break;
    report.catalogs++;
    const present: Array<{ schema: string; table: string }> = [];
    try {
      for (const ns of await client.listNamespaces(c.slug)) {
        const schema = ns.join('.');
        for (const table of await client.listTables(c.slug, ns)) {
          present.push({ schema, table });
          const key = { catalogId: c.id, schema, table };
          try {
            const figures = await inspectTable(
              client,
              { warehouse: c.slug, qualified: `${c.slug}.${schema}.${table}`, schema, table },
              t,
              { deep: opts.deep, now, previous: await store.previousFigures(db, key) },
            );
            if (!opts.deep) figures.orphans = await store.lastOrphans(db, key);
            const health = assess(figures, t, now);
            await db.tx(async (tx) => {
              await store.saveHealth(tx, key, health, figures, now, opts.deep);
              const r = await store.syncRecommendations(tx, key, health.recommendations, now);
              report.recommendations_opened += r.opened;
              report.recommendations_resolved += r.resolved;
            });
            report.tables++;
          } catch (e) {
            report.errors.push({ catalog: c.slug, schema, table, message: message(e) });
          }
        }
      }
      await store.forgetMissingTables(db, c.id, present);
    } catch (e) {
      report.errors.push({ catalog: c.slug, schema: null, table: null, message: message(e) });
    }
  }
  await store.markScanned(db, now, opts.deep);
  report.duration_ms = Date.now() - started;
  return report;
}

/** Whether the scanner's tick should scan now, and deeply, given the policy's cadence and the last scans. */
export function scanDue(p: store.Policy, now: number, deepIntervalS: number): { scan: boolean; deep: boolean } {
  if (p.cadence === 'off') return { scan: false, deep: false };
  const every = p.cadence === 'hourly' ? 3_600_000 : 86_400_000;
  const last = p.last_scan_at ? Date.parse(p.last_scan_at) : 0;
  const lastDeep = p.last_deep_scan_at ? Date.parse(p.last_deep_scan_at) : 0;
  const deep = now - lastDeep >= deepIntervalS * 1000;
  return { scan: deep || now - last >= every, deep };
}
