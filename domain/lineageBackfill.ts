// The lineage backfill (issue 17): a one-shot job per workspace deriving execution lineage from the done writes in
// its query history, as if each had been recorded when it finished. It walks the writes newest first in batches;
// each batch's edges commit together with the job's counters and checkpoint, so a job whose runner stopped (a
// restart, a crash) resumes after the last query it finished, counting nothing twice.
//
// Observations are never counted twice across jobs or against live recording either: an edge's observation
// count grows only for a write older than the edge's first observation (newest first, so each older write moves
// that mark back), and a write no older than it was already seen. Only edges whose two tables exist now (the
// catalog loads both) are recorded: a table dropped since took its edges along and must not get them back.
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../runtime/db.ts';
import type { CatalogClient, LoadedTable } from '../runtime/catalogClient.ts';
import { conflict } from './errors.ts';
import { attachedSlugs, deriveExecutionLineage, EXECUTION, type DerivedEdge, type FinishedRun, type LineageEnv } from './lineage.ts';

/** A runner that has not beaten for this long has stopped: another request may resume its job. */
export const STALL_AFTER_MS = 60_000;
const BATCH = 100;

export interface BackfillOut {
  id: string;
  status: 'running' | 'done';
  /** running, but its runner stopped: POST again resumes it */
  stalled: boolean;
  started_by: string | null;
  started_at: string;
  finished_at: string | null;
  /** the history it covers: writes finished up to here */
  cutoff: string;
  checkpoint: { finished_at: string; query_id: string } | null;
  last_error: string | null;
  report: {
    scanned: number;
    edges_created: number;
    edges_updated: number;
    failed: number;
    /** where the latest resumption started (the checkpoint then); null when the job never resumed */
    resumed_from: { finished_at: string; query_id: string } | null;
  };
}

interface Row {
  id: string;
  status: 'running' | 'done';
  started_by: string | null;
  started_at: Date;
  finished_at: Date | null;
  cutoff: Date;
  checkpoint_at: Date | null;
  checkpoint_id: string | null;
  scanned: string;
  edges_created: string;
  edges_updated: string;
  failed: string;
  resumed_from_at: Date | null;
  resumed_from_id: string | null;
  heartbeat_at: Date | null;
  last_error: string | null;
}

const point = (at: Date | null, id: string | null) => (at && id ? { finished_at: at.toISOString(), query_id: id } : null);

function toOut(r: Row): BackfillOut {
  return {
    id: r.id,
    status: r.status,
    stalled: r.status === 'running' && (!r.heartbeat_at || Date.now() - r.heartbeat_at.getTime() > STALL_AFTER_MS),
    started_by: r.started_by,
    started_at: r.started_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
    cutoff: r.cutoff.toISOString(),
    checkpoint: point(r.checkpoint_at, r.checkpoint_id),
    last_error: r.last_error,
    report: {
      scanned: Number(r.scanned),
      edges_created: Number(r.edges_created),
      edges_updated: Number(r.edges_updated),
      failed: Number(r.failed),
      resumed_from: point(r.resumed_from_at, r.resumed_from_id),
    },
  };
}

/** The workspace's latest backfill, or null when it never ran one. */
export async function latestBackfill(q: Queryable, workspaceId: string): Promise<BackfillOut | null> {
  const [r] = await q.query<Row>(`select * from lineage_backfills where workspace_id = $1 order by started_at desc limit 1`, [workspaceId]);
  return r ? toOut(r) : null;
}

/**
 * Starts a backfill, or takes over the workspace's unfinished one whose runner stopped (it resumes from its
 * checkpoint). 409 while a runner is alive. Returns the job and the token its runner holds it by.
 */
export async function claimBackfill(db: Db, workspaceId: string, userId: string | null): Promise<{ job: BackfillOut; token: string; resumed: boolean }> {
  const token = randomUUID();
  return db.tx(async (q) => {
    // One job per workspace at a time: the row lock orders two requests that race here.
    await q.query(`select id from workspaces where id = $1 for update`, [workspaceId]);
    const [running] = await q.query<Row>(`select * from lineage_backfills where workspace_id = $1 and status = 'running'`, [workspaceId]);
    if (running) {
      if (!toOut(running).stalled) throw conflict('a lineage backfill is already running in this workspace', 'backfill_running', { backfill_id: running.id });
      const [r] = await q.query<Row>(
        `update lineage_backfills set runner = $2, heartbeat_at = now(), resumed_from_at = checkpoint_at, resumed_from_id = checkpoint_id
          where id = $1 returning *`,
        [running.id, token],
      );
      return { job: toOut(r), token, resumed: true };
    }
    const [r] = await q.query<Row>(
      `insert into lineage_backfills (id, workspace_id, status, started_by, cutoff, runner, heartbeat_at)
       values ($1, $2, 'running', $3, now(), $4, now()) returning *`,
      [randomUUID(), workspaceId, userId, token],
    );
    return { job: toOut(r), token, resumed: false };
  });
}

interface QueryRow extends FinishedRun {
  id: string;
  finished_at: Date;
}

/**
 * Runs a claimed job to its end: batches of done writes, newest first, each committed with the checkpoint. Stops
 * early when another runner took the job over, or after `maxBatches` (leaving it as a stopped runner would).
 */
export async function runBackfill(
  db: Db,
  jobId: string,
  token: string,
  env: { catalog: Pick<CatalogClient, 'loadTable'>; failed?: LineageEnv['failed'] },
  opts: { batchSize?: number; maxBatches?: number } = {},
): Promise<'done' | 'stopped' | 'lost'> {
  // Many writes read the same tables: each is loaded once per run.
  const lineageEnv: LineageEnv = { catalog: memoized(env.catalog), failed: env.failed };
  for (let batches = 0; ; batches++) {
    if (opts.maxBatches !== undefined && batches >= opts.maxBatches) return 'stopped';
    const [job] = await db.query<Row & { workspace_id: string; runner: string | null }>(`select * from lineage_backfills where id = $1`, [jobId]);
    if (!job || job.runner !== token || job.status !== 'running') return 'lost';
    const batch = await db.query<QueryRow>(
      `select id, sql, tables, catalog, workspace_id, finished_at from queries
        where workspace_id = $1 and status = 'done' and statement_type in ('insert', 'merge', 'update', 'create')
          and finished_at is not null and finished_at <= $2
          and ($3::timestamptz is null or (finished_at, id) < ($3::timestamptz, $4::uuid))
        order by finished_at desc, id desc limit $5`,
      [job.workspace_id, job.cutoff, job.checkpoint_at, job.checkpoint_id, opts.batchSize ?? BATCH],
    );
    const catalogs = await attachedSlugs(db, job.workspace_id);
    // Derived before the transaction: it reads the catalog, which must not hold a connection open.
    const derived: Array<{ q: QueryRow; edges: DerivedEdge[] | null; error: string | null }> = [];
    for (const q of batch) {
      try {
        derived.push({ q, edges: await deriveExecutionLineage(q, catalogs, lineageEnv), error: null });
      } catch (e) {
        derived.push({ q, edges: null, error: `query ${q.id}: ${(e as Error).message}` });
      }
    }
    const held = await db.tx(async (tx) => {
      const [still] = await tx.query(`select 1 from lineage_backfills where id = $1 and runner = $2 and status = 'running' for update`, [jobId, token]);
      if (!still) return false;
      let created = 0;
      let updated = 0;
      for (const d of derived) {
        for (const e of d.edges ?? []) {
          if (!e.current) continue;
          const outcome = await observePast(tx, job.workspace_id, e, d.q);
          if (outcome === 'created') created++;
          if (outcome === 'updated') updated++;
        }
      }
      const last = batch.at(-1);
      const errors = derived.filter((d) => d.error !== null);
      await tx.query(
        `update lineage_backfills set scanned = scanned + $2, edges_created = edges_created + $3, edges_updated = edges_updated + $4, failed = failed + $5,
           checkpoint_at = coalesce($6, checkpoint_at), checkpoint_id = coalesce($7, checkpoint_id), heartbeat_at = now(),
           last_error = coalesce($8, last_error),
           status = case when $9 then 'done' else status end, finished_at = case when $9 then now() else finished_at end,
           runner = case when $9 then null else runner end
         where id = $1`,
        [jobId, batch.length, created, updated, errors.length, last?.finished_at ?? null, last?.id ?? null, errors.at(-1)?.error ?? null, batch.length === 0],
      );
      return true;
    });
    if (!held) return 'lost';
    if (batch.length === 0) return 'done';
  }
}

/** Records a past write's observation of an edge: created, counted (older than its first observation), or seen. */
async function observePast(q: Queryable, workspaceId: string, e: DerivedEdge, run: QueryRow): Promise<'created' | 'updated' | 'seen'> {
  const [cur] = await q.query<{ first_seen_at: Date; column_lineage: string }>(
    `select first_seen_at, column_lineage from lineage_edges where workspace_id = $1 and source_key = $2 and target_key = $3 and provider = $4 for update`,
    [workspaceId, e.source, e.target, EXECUTION],
  );
  const at = run.finished_at;
  if (!cur) {
    await q.query(
      `insert into lineage_edges (workspace_id, source_key, target_key, provider, first_seen_at, last_seen_at, columns, column_lineage, last_query_id, source_uuid, target_uuid)
       values ($1, $2, $3, $4, $5, $5, $6::jsonb, $7, $8, $9::uuid, $10::uuid)`,
      [workspaceId, e.source, e.target, EXECUTION, at, JSON.stringify(e.columns), e.columnLineage, run.id, e.sourceUuid, e.targetUuid],
    );
    return 'created';
  }
  const older = at.getTime() < cur.first_seen_at.getTime();
  // Columns from a later observation stand, unless it never tried them (recorded before column lineage).
  const columns = cur.column_lineage === 'unknown' && e.columnLineage !== 'unknown';
  if (!older && !columns) return 'seen';
  await q.query(
    `update lineage_edges set
       observation_count = observation_count + $5, first_seen_at = least(first_seen_at, $6),
       columns = case when $7 then $8::jsonb else columns end, column_lineage = case when $7 then $9 else column_lineage end,
       source_uuid = coalesce(source_uuid, $10::uuid), target_uuid = coalesce(target_uuid, $11::uuid)
     where workspace_id = $1 and source_key = $2 and target_key = $3 and provider = $4`,
    [workspaceId, e.source, e.target, EXECUTION, older ? 1 : 0, at, columns, JSON.stringify(e.columns), e.columnLineage, e.sourceUuid, e.targetUuid],
  );
  return 'updated';
}

function memoized(catalog: Pick<CatalogClient, 'loadTable'>): Pick<CatalogClient, 'loadTable'> {
  const seen = new Map<string, Promise<LoadedTable<unknown>>>();
  return {
    loadTable<M>(warehouse: string, ns: readonly string[], name: string) {
      const key = JSON.stringify([warehouse, ns, name]);
      if (!seen.has(key)) seen.set(key, catalog.loadTable<unknown>(warehouse, ns, name));
      return seen.get(key)! as Promise<LoadedTable<M>>;
    },
  };
}

/** A runner that failed lets go of its job at once (resumable by the next request) and leaves the reason. */
export async function releaseBackfill(q: Queryable, jobId: string, token: string, error: string): Promise<void> {
  await q.query(`update lineage_backfills set runner = null, heartbeat_at = null, last_error = $3 where id = $1 and runner = $2`, [jobId, token, error.slice(0, 2000)]);
}
