// Schedules run a saved query on a five-field UTC cron through a named agent, as the schedule's creator; each fire
// is a run. The scheduler claims due schedules under row locks and records each fire (and the next fire time) in
// the same transaction before anything is submitted, so a fire happens once across replicas and a crash can only
// leave a run that was never submitted (failed at the next tick), never one submitted twice. No backfill: after a
// pause the next fire is computed from now.
import { Schema } from 'effect';
import type { Queryable } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { cronOrUnprocessable, nextFire, parseCron } from './cron.ts';
import { notFound } from './errors.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from './pagination.ts';

// A run's status; a schedule's last_status is its newest run's, with a submitted run read through its query.
export const RUN_STATUSES = ['queued', 'running', 'done', 'failed', 'skipped'] as const;
const RunStatus = Schema.Literals(RUN_STATUSES);
/** A schedule as the api answers it: cron times are always UTC. */
export const ScheduleOutSchema = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  saved_query_id: Schema.String,
  cron: Schema.String,
  timezone: Schema.Literal('UTC'),
  enabled: Schema.Boolean,
  agent_id: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
  next_run_at: Schema.NullOr(Schema.String),
  last_run_at: Schema.NullOr(Schema.String),
  last_status: Schema.NullOr(RunStatus),
});
export type ScheduleOut = typeof ScheduleOutSchema.Type;

/** One fire of a schedule as the api answers it. */
export const RunOutSchema = Schema.Struct({
  id: Schema.String,
  schedule_id: Schema.String,
  query_id: Schema.NullOr(Schema.String),
  status: RunStatus,
  scheduled_for: Schema.String,
  started_at: Schema.String,
  finished_at: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
});
export type RunOut = typeof RunOutSchema.Type;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

// A run's status: its query's once submitted; its own before (queued), or when skipped or failed unsubmitted. A run
// has no `cancelled`: a run whose query was cancelled did not do its work, so it failed, and its error says why.
// A submitted run's status is its query's (a cancelled query's run failed); the status filter reads the same.
const RUN_STATUS = sql`case when r.status <> 'submitted' then r.status when q.status is null or q.status = 'cancelled' then 'failed' else q.status end`;
const RUN_SELECT = sql`select r.id, r.schedule_id, r.query_id, r.scheduled_for, r.started_at, q.finished_at,
    ${RUN_STATUS} as status,
    coalesce(r.error, q.error, case when q.status = 'cancelled' then 'its query was cancelled' end) as error,
    r.started_at::text as sort_key
  from schedule_runs r left join queries q on q.id = r.query_id`;

// Row shapes at the database boundary.
const RunRow = Schema.Struct({
  id: Schema.String,
  schedule_id: Schema.String,
  query_id: Schema.NullOr(Schema.String),
  status: RunStatus,
  scheduled_for: Schema.Date,
  started_at: Schema.Date,
  finished_at: Schema.NullOr(Schema.Date),
  error: Schema.NullOr(Schema.String),
  sort_key: Schema.String,
});
type RunRow = typeof RunRow.Type;

const runOut = (r: RunRow): RunOut => ({
  id: r.id,
  schedule_id: r.schedule_id,
  query_id: r.query_id,
  status: r.status,
  scheduled_for: r.scheduled_for.toISOString(),
  started_at: r.started_at.toISOString(),
  finished_at: iso(r.finished_at),
  error: r.error,
});

const SCHEDULE_SELECT = sql`select s.id, s.workspace_id, s.saved_query_id, s.cron, s.enabled, s.agent_id, s.created_by, s.next_run_at, s.last_run_at,
    (select case when r.status <> 'submitted' then r.status when q.status is null or q.status = 'cancelled' then 'failed' else q.status end
       from schedule_runs r left join queries q on q.id = r.query_id
      where r.schedule_id = s.id order by r.started_at desc, r.id desc limit 1) as last_status
  from schedules s`;

const ScheduleRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  saved_query_id: Schema.String,
  cron: Schema.String,
  enabled: Schema.Boolean,
  agent_id: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
  next_run_at: Schema.NullOr(Schema.Date),
  last_run_at: Schema.NullOr(Schema.Date),
  last_status: Schema.NullOr(RunStatus),
});
type ScheduleRow = typeof ScheduleRow.Type;
/** What a fire needs of its schedule. */
const FireSource = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  saved_query_id: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
});
const IdRow = Schema.Struct({ id: Schema.String });

const scheduleOut = (r: ScheduleRow): ScheduleOut => ({ ...r, timezone: 'UTC', next_run_at: iso(r.next_run_at), last_run_at: iso(r.last_run_at) });

export async function createSchedule(
  q: Queryable,
  workspaceId: string,
  userId: string,
  input: { saved_query_id: string; cron: string; agent_id: string; enabled?: boolean },
  now = new Date(),
): Promise<ScheduleOut> {
  const cron = cronOrUnprocessable(input.cron);
  const enabled = input.enabled ?? true;
  const [row] = await rows(
    q,
    IdRow,
    sql`insert into schedules (workspace_id, saved_query_id, cron, agent_id, enabled, created_by, next_run_at)
        values (${workspaceId}, ${input.saved_query_id}, ${input.cron.trim()}, ${input.agent_id}, ${enabled}, ${userId}, ${enabled ? iso(nextFire(cron, now)) : null})
        returning id`,
  );
  return getSchedule(q, workspaceId, row.id);
}

export async function getSchedule(q: Queryable, workspaceId: string, id: string): Promise<ScheduleOut> {
  const [row] = UUID.test(id) ? await rows(q, ScheduleRow, sql`${SCHEDULE_SELECT} where s.workspace_id = ${workspaceId} and s.id = ${id}`) : [];
  if (!row) throw notFound('schedule');
  return scheduleOut(row);
}

export async function listSchedules(q: Queryable, workspaceId: string): Promise<ScheduleOut[]> {
  return (await rows(q, ScheduleRow, sql`${SCHEDULE_SELECT} where s.workspace_id = ${workspaceId} order by s.created_at, s.id`)).map(scheduleOut);
}

export async function updateSchedule(
  q: Queryable,
  workspaceId: string,
  id: string,
  patch: { cron?: string; agent_id?: string; enabled?: boolean },
  now = new Date(),
): Promise<ScheduleOut> {
  const current = await getSchedule(q, workspaceId, id);
  const expr = patch.cron ?? current.cron;
  const cron = cronOrUnprocessable(expr);
  const enabled = patch.enabled ?? current.enabled;
  await exec(
    q,
    sql`update schedules set cron = ${expr.trim()}, agent_id = ${patch.agent_id ?? current.agent_id}, enabled = ${enabled},
          next_run_at = ${enabled ? iso(nextFire(cron, now)) : null}
        where workspace_id = ${workspaceId} and id = ${id}`,
  );
  return getSchedule(q, workspaceId, id);
}

export async function deleteSchedule(q: Queryable, workspaceId: string, id: string): Promise<void> {
  const deleted = UUID.test(id) ? await exec(q, sql`delete from schedules where workspace_id = ${workspaceId} and id = ${id} returning id`) : [];
  if (!deleted.length) throw notFound('schedule');
}

export async function listRuns(
  q: Queryable,
  where: { workspaceId: string; scheduleId?: string },
  f: { status?: readonly string[]; cursor?: string; limit: number },
): Promise<Page<RunOut>> {
  const sort = 'started_at:desc';
  const cond = [sql`r.workspace_id = ${where.workspaceId}`];
  if (where.scheduleId) cond.push(sql`r.schedule_id = ${where.scheduleId}`);
  if (f.status?.length) cond.push(sql`${RUN_STATUS} = any(${[...f.status]}::text[])`);
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!UUID.test(c.id) || !(await exec(q, sql`select 1 from schedule_runs where id = ${c.id}`)).length) throw staleCursor();
    cond.push(sql`(r.started_at, r.id) < (${c.k}::timestamptz, ${c.id}::uuid)`);
  }
  const found = await rows(q, RunRow, sql`${RUN_SELECT} where ${sql.join(cond, ' and ')} order by r.started_at desc, r.id desc limit ${f.limit + 1}`);
  return pageOf(found, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), runOut);
}

export async function getRun(q: Queryable, id: string): Promise<RunOut> {
  const [row] = await rows(q, RunRow, sql`${RUN_SELECT} where r.id = ${id}`);
  if (!row) throw notFound('schedule run');
  return runOut(row);
}

/** What a fire submits: the saved query, as the schedule's creator, through the schedule's agent. */
export interface Fire {
  runId: string;
  scheduleId: string;
  workspaceId: string;
  createdBy: string | null;
  agentId: string | null;
  sql: string;
  catalog: string | null;
}

/**
 * Records one fire of a schedule (due now, or fired by hand): a `skipped` run while the previous run's query is
 * still queued or running, else a `queued` run to submit. Runs in the caller's transaction, with the schedule row
 * locked (FOR UPDATE): the fire and the schedule's next time commit together.
 */
async function fireLocked(tx: Queryable, s: typeof FireSource.Type, scheduledFor: Date): Promise<Fire | null> {
  const [busy] = await exec(
    tx,
    sql`select 1 from schedule_runs r left join queries q on q.id = r.query_id
         where r.schedule_id = ${s.id} and (r.status = 'queued' or (r.status = 'submitted' and q.status in ('queued', 'running'))) limit 1`,
  );
  const [saved] = await rows(
    tx,
    Schema.Struct({ sql: Schema.String, catalog: Schema.NullOr(Schema.String) }),
    sql`select sql, catalog from saved_queries where id = ${s.saved_query_id}`,
  );
  if (busy || !saved) {
    const why = busy ? 'the previous run was still running' : 'the saved query is gone';
    await exec(
      tx,
      sql`insert into schedule_runs (schedule_id, workspace_id, status, scheduled_for, error)
          values (${s.id}, ${s.workspace_id}, 'skipped', ${scheduledFor.toISOString()}, ${why})`,
    );
    return null;
  }
  const [run] = await rows(
    tx,
    IdRow,
    sql`insert into schedule_runs (schedule_id, workspace_id, status, scheduled_for)
        values (${s.id}, ${s.workspace_id}, 'queued', ${scheduledFor.toISOString()}) returning id`,
  );
  await exec(tx, sql`update saved_queries set last_run_at = now() where id = ${s.saved_query_id}`);
  return { runId: run.id, scheduleId: s.id, workspaceId: s.workspace_id, createdBy: s.created_by, agentId: s.agent_id, sql: saved.sql, catalog: saved.catalog };
}

/** Claims every due schedule (locked rows other replicas skip), records its fire and its next time. */
export async function claimDueFires(tx: Queryable, now = new Date()): Promise<Fire[]> {
  const due = await rows(
    tx,
    Schema.Struct({ ...FireSource.fields, cron: Schema.String, next_run_at: Schema.Date }),
    sql`select id, workspace_id, saved_query_id, agent_id, created_by, cron, next_run_at from schedules
         where enabled and next_run_at <= ${now.toISOString()} order by next_run_at for update skip locked limit 100`,
  );
  const fires: Fire[] = [];
  for (const s of due) {
    const fire = await fireLocked(tx, s, s.next_run_at);
    if (fire) fires.push(fire);
    let next: Date | null = null;
    try {
      next = nextFire(parseCron(s.cron), now);
    } catch {
      next = null;
    }
    await exec(tx, sql`update schedules set next_run_at = ${iso(next)}, last_run_at = ${now.toISOString()} where id = ${s.id}`);
  }
  return fires;
}

/** A fire by hand (`…/run`): recorded like a due one, the schedule's own timing untouched. */
export async function claimManualFire(tx: Queryable, workspaceId: string, scheduleId: string, now = new Date()): Promise<{ fire: Fire | null; runId: string }> {
  if (!UUID.test(scheduleId)) throw notFound('schedule');
  const [s] = await rows(
    tx,
    FireSource,
    sql`select id, workspace_id, saved_query_id, agent_id, created_by from schedules where workspace_id = ${workspaceId} and id = ${scheduleId} for update`,
  );
  if (!s) throw notFound('schedule');
  const fire = await fireLocked(tx, s, now);
  await exec(tx, sql`update schedules set last_run_at = ${now.toISOString()} where id = ${s.id}`);
  const [latest] = await rows(tx, IdRow, sql`select id from schedule_runs where schedule_id = ${s.id} order by started_at desc, id desc limit 1`);
  return { fire, runId: fire?.runId ?? latest.id };
}

/** The fire's query exists: the run follows its status from now on. */
export const markSubmitted = (q: Queryable, runId: string, queryId: string) =>
  exec(q, sql`update schedule_runs set status = 'submitted', query_id = ${queryId} where id = ${runId}`);

/** The fire could not be submitted (the creator lost access, the agent is gone…): the run fails with why. */
export const markFailed = (q: Queryable, runId: string, error: string) =>
  exec(q, sql`update schedule_runs set status = 'failed', error = ${error.slice(0, 2000)} where id = ${runId} and status = 'queued'`);

/** Runs recorded but never submitted (the process died in between): failed, as there are no retries. */
export const failAbandonedFires = (q: Queryable, olderThanS: number) =>
  exec(
    q,
    sql`update schedule_runs set status = 'failed', error = 'the scheduler stopped before submitting this run'
         where status = 'queued' and started_at < now() - make_interval(secs => ${olderThanS})`,
  );
