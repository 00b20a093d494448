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
import { Schema } from 'effect';
import type { Db, Queryable } from '../../runtime/db.ts';
import { exec, rows, sql } from '../../runtime/sql.ts';
import type { CatalogClient, LoadedTable } from '../../runtime/catalogClient.ts';
import { conflict } from '../errors.ts';
import { attachedSlugs, deriveExecutionLineage, EXECUTION, type DerivedEdge, type FinishedRun, type LineageEnv } from './graph.ts';
import { BigCount } from '../rowSchemas.ts';

/** A runner that has not beaten for this long has stopped: another request may resume its job. */
const STALL_AFTER_MS = 60_000;
const BATCH = 100;

/** A point in the history walk: the write finished last and its query. */
const Point = Schema.NullOr(Schema.Struct({ finished_at: Schema.String, query_id: Schema.String }));
/** A backfill job as the api answers it. */
export const BackfillOutSchema = Schema.Struct({
  id: Schema.String,
  status: Schema.Literals(['running', 'done']),
  /** running, but its runner stopped: POST again resumes it */
  stalled: Schema.Boolean,
  started_by: Schema.NullOr(Schema.String),
  started_at: Schema.String,
  finished_at: Schema.NullOr(Schema.String),
  /** the history it covers: writes finished up to here */
  cutoff: Schema.String,
  checkpoint: Point,
  last_error: Schema.NullOr(Schema.String),
  report: Schema.Struct({
    scanned: Schema.Finite,
    edges_created: Schema.Finite,
    edges_updated: Schema.Finite,
    failed: Schema.Finite,
    /** where the latest resumption started (the checkpoint then); null when the job never resumed */
    resumed_from: Point,
  }),
});
export type BackfillOut = typeof BackfillOutSchema.Type;

// Row shapes at the database boundary.
const JobRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  status: Schema.Literals(['running', 'done']),
  started_by: Schema.NullOr(Schema.String),
  started_at: Schema.Date,
  finished_at: Schema.NullOr(Schema.Date),
  cutoff: Schema.Date,
  checkpoint_at: Schema.NullOr(Schema.Date),
  checkpoint_id: Schema.NullOr(Schema.String),
  scanned: BigCount,
  edges_created: BigCount,
  edges_updated: BigCount,
  failed: BigCount,
  resumed_from_at: Schema.NullOr(Schema.Date),
  resumed_from_id: Schema.NullOr(Schema.String),
  runner: Schema.NullOr(Schema.String),
  heartbeat_at: Schema.NullOr(Schema.Date),
  last_error: Schema.NullOr(Schema.String),
});
type Row = typeof JobRow.Type;
const JOB_COLS = sql`id, workspace_id, status, started_by, started_at, finished_at, cutoff, checkpoint_at, checkpoint_id, scanned, edges_created,
  edges_updated, failed, resumed_from_at, resumed_from_id, runner, heartbeat_at, last_error`;

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
      scanned: r.scanned,
      edges_created: r.edges_created,
      edges_updated: r.edges_updated,
      failed: r.failed,
      resumed_from: point(r.resumed_from_at, r.resumed_from_id),
    },
  };
}

/** The workspace's latest backfill, or null when it never ran one. */
export async function latestBackfill(q: Queryable, workspaceId: string): Promise<BackfillOut | null> {
  const [r] = await rows(q, JobRow, sql`select ${JOB_COLS} from lineage_backfills where workspace_id = ${workspaceId} order by started_at desc limit 1`);
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
    await exec(q, sql`select id from workspaces where id = ${workspaceId} for update`);
    const [running] = await rows(q, JobRow, sql`select ${JOB_COLS} from lineage_backfills where workspace_id = ${workspaceId} and status = 'running'`);
    if (running) {
      if (!toOut(running).stalled) throw conflict('a lineage backfill is already running in this workspace', 'backfill_running', { backfill_id: running.id });
      const [r] = await rows(
        q,
        JobRow,
        sql`update lineage_backfills set runner = ${token}, heartbeat_at = now(), resumed_from_at = checkpoint_at, resumed_from_id = checkpoint_id
             where id = ${running.id} returning ${JOB_COLS}`,
      );
      return { job: toOut(r), token, resumed: true };
    }
    const [r] = await rows(
      q,
      JobRow,
      sql`insert into lineage_backfills (id, workspace_id, status, started_by, cutoff, runner, heartbeat_at)
          values (${randomUUID()}, ${workspaceId}, 'running', ${userId}, now(), ${token}, now()) returning ${JOB_COLS}`,
    );
    return { job: toOut(r), token, resumed: false };
  });
}

const QueryRowSchema = Schema.Struct({
  id: Schema.String,
  sql: Schema.String,
  /** the statement's tables as the policy check found them (jsonb, read as stored) */
  tables: Schema.NullOr(Schema.Array(Schema.Unknown)),
  catalog: Schema.NullOr(Schema.String),
  workspace_id: Schema.String,
  finished_at: Schema.Date,
});
type QueryRow = FinishedRun & { id: string; finished_at: Date };

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
    const [job] = await rows(db, JobRow, sql`select ${JOB_COLS} from lineage_backfills where id = ${jobId}`);
    if (!job || job.runner !== token || job.status !== 'running') return 'lost';
    const batch: QueryRow[] = (await rows(
      db,
      QueryRowSchema,
      sql`select id, sql, tables, catalog, workspace_id, finished_at from queries
           where workspace_id = ${job.workspace_id} and status = 'done' and statement_type in ('insert', 'merge', 'update', 'create')
             and finished_at is not null and finished_at <= ${job.cutoff}
             ${job.checkpoint_at ? sql`and (finished_at, id) < (${job.checkpoint_at}::timestamptz, ${job.checkpoint_id}::uuid)` : sql``}
           order by finished_at desc, id desc limit ${opts.batchSize ?? BATCH}`,
    )) as QueryRow[];
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
      const [still] = await exec(tx, sql`select 1 from lineage_backfills where id = ${jobId} and runner = ${token} and status = 'running' for update`);
      if (!still) return false;
      let created = 0;
      let updated = 0;
      for (const d of derived) {
        for (const e of d.edges ?? []) {
          if (!e.current) continue;
          const outcome = await observePast(tx, e, d.q);
          if (outcome === 'created') created++;
          if (outcome === 'updated') updated++;
        }
      }
      const last = batch.at(-1);
      const errors = derived.filter((d) => d.error !== null);
      const done = batch.length === 0;
      await exec(
        tx,
        sql`update lineage_backfills set scanned = scanned + ${batch.length}, edges_created = edges_created + ${created},
              edges_updated = edges_updated + ${updated}, failed = failed + ${errors.length},
              checkpoint_at = coalesce(${last?.finished_at ?? null}, checkpoint_at), checkpoint_id = coalesce(${last?.id ?? null}, checkpoint_id), heartbeat_at = now(),
              last_error = coalesce(${errors.at(-1)?.error ?? null}, last_error)
              ${done ? sql`, status = 'done', finished_at = now(), runner = null` : sql``}
            where id = ${jobId}`,
      );
      return true;
    });
    if (!held) return 'lost';
    if (batch.length === 0) return 'done';
  }
}

/** Records a past write's observation of an edge: created, counted (older than its first observation), or seen. */
async function observePast(q: Queryable, e: DerivedEdge, run: QueryRow): Promise<'created' | 'updated' | 'seen'> {
  const edgeIs = sql`source_key = ${e.source} and target_key = ${e.target} and provider = ${EXECUTION}`;
  const [cur] = await rows(
    q,
    Schema.Struct({ first_seen_at: Schema.Date, column_lineage: Schema.String }),
    sql`select first_seen_at, column_lineage from lineage_edges where ${edgeIs} for update`,
  );
  const at = run.finished_at;
  if (!cur) {
    await exec(
      q,
      sql`insert into lineage_edges (source_key, target_key, provider, first_seen_at, last_seen_at, columns, column_lineage, last_query_id, source_uuid, target_uuid)
          values (${e.source}, ${e.target}, ${EXECUTION}, ${at}, ${at}, ${JSON.stringify(e.columns)}::jsonb, ${e.columnLineage}, ${run.id},
                  ${e.sourceUuid}::uuid, ${e.targetUuid}::uuid)`,
    );
    return 'created';
  }
  const older = at.getTime() < cur.first_seen_at.getTime();
  // Columns from a later observation stand, unless it never tried them (recorded before column lineage).
  const columns = cur.column_lineage === 'unknown' && e.columnLineage !== 'unknown';
  if (!older && !columns) return 'seen';
  await exec(
    q,
    sql`update lineage_edges set
          observation_count = observation_count + ${older ? 1 : 0}, first_seen_at = least(first_seen_at, ${at}),
          ${columns ? sql`columns = ${JSON.stringify(e.columns)}::jsonb, column_lineage = ${e.columnLineage},` : sql``}
          source_uuid = coalesce(source_uuid, ${e.sourceUuid}::uuid), target_uuid = coalesce(target_uuid, ${e.targetUuid}::uuid)
        where ${edgeIs}`,
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
  await exec(q, sql`update lineage_backfills set runner = null, heartbeat_at = null, last_error = ${error.slice(0, 2000)} where id = ${jobId} and runner = ${token}`);
}
