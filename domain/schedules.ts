// Schedules run a saved query on a five-field UTC cron through a named agent, as the schedule's creator; each fire
// is a run. The scheduler claims due schedules under row locks and records each fire (and the next fire time) in
// the same transaction before anything is submitted, so a fire happens once across replicas and a crash can only
// leave a run that was never submitted (failed at the next tick), never one submitted twice. No backfill: after a
// pause the next fire is computed from now.
import type { Queryable } from '../runtime/db.ts';
import { cronOrUnprocessable, nextFire } from './cron.ts';
import { notFound } from './errors.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from './pagination.ts';

export interface ScheduleOut {
  id: string;
  workspace_id: string;
  saved_query_id: string;
  cron: string;
  timezone: 'UTC';
  enabled: boolean;
  agent_id: string | null;
  created_by: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: string | null;
}

export interface RunOut {
  id: string;
  schedule_id: string;
  query_id: string | null;
  status: 'queued' | 'running' | 'done' | 'failed' | 'skipped' | 'cancelled';
  scheduled_for: string;
  started_at: string;
  finished_at: string | null;
  error: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

// A run's status: its query's once submitted; its own before (queued), or when skipped or failed unsubmitted.
const RUN_SELECT = `select r.id, r.schedule_id, r.query_id, r.scheduled_for, r.started_at, q.finished_at,
    case when r.status = 'submitted' then coalesce(q.status, 'failed') else r.status end as status,
    coalesce(r.error, q.error) as error, r.started_at::text as sort_key
  from schedule_runs r left join queries q on q.id = r.query_id`;

interface RunRow {
  id: string;
  schedule_id: string;
  query_id: string | null;
  status: RunOut['status'];
  scheduled_for: Date;
  started_at: Date;
  finished_at: Date | null;
  error: string | null;
  sort_key: string;
}

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

const SCHEDULE_SELECT = `select s.id, s.workspace_id, s.saved_query_id, s.cron, s.enabled, s.agent_id, s.created_by, s.next_run_at, s.last_run_at,
    (select case when r.status = 'submitted' then coalesce(q.status, 'failed') else r.status end
       from schedule_runs r left join queries q on q.id = r.query_id
      where r.schedule_id = s.id order by r.started_at desc, r.id desc limit 1) as last_status
  from schedules s`;

interface ScheduleRow extends Omit<ScheduleOut, 'timezone' | 'next_run_at' | 'last_run_at'> {
  next_run_at: Date | null;
  last_run_at: Date | null;
}

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
  const [row] = await q.query<{ id: string }>(
    `insert into schedules (workspace_id, saved_query_id, cron, agent_id, enabled, created_by, next_run_at)
     values ($1, $2, $3, $4, $5, $6, $7) returning id`,
    [workspaceId, input.saved_query_id, input.cron.trim(), input.agent_id, enabled, userId, enabled ? iso(nextFire(cron, now)) : null],
  );
  return getSchedule(q, workspaceId, row.id);
}

export async function getSchedule(q: Queryable, workspaceId: string, id: string): Promise<ScheduleOut> {
  const [row] = UUID.test(id) ? await q.query<ScheduleRow>(`${SCHEDULE_SELECT} where s.workspace_id = $1 and s.id = $2`, [workspaceId, id]) : [];
  if (!row) throw notFound('schedule');
  return scheduleOut(row);
}

export async function listSchedules(q: Queryable, workspaceId: string): Promise<ScheduleOut[]> {
  return (await q.query<ScheduleRow>(`${SCHEDULE_SELECT} where s.workspace_id = $1 order by s.created_at, s.id`, [workspaceId])).map(scheduleOut);
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
  await q.query(`update schedules set cron = $3, agent_id = $4, enabled = $5, next_run_at = $6 where workspace_id = $1 and id = $2`, [
    workspaceId,
    id,
    expr.trim(),
    patch.agent_id ?? current.agent_id,
    enabled,
    enabled ? iso(nextFire(cron, now)) : null,
  ]);
  return getSchedule(q, workspaceId, id);
}

export async function deleteSchedule(q: Queryable, workspaceId: string, id: string): Promise<void> {
  const rows = UUID.test(id) ? await q.query(`delete from schedules where workspace_id = $1 and id = $2 returning id`, [workspaceId, id]) : [];
  if (!rows.length) throw notFound('schedule');
}

export async function listRuns(q: Queryable, where: { workspaceId: string; scheduleId?: string }, f: { cursor?: string; limit: number }): Promise<Page<RunOut>> {
  const sort = 'started_at:desc';
  const params: unknown[] = [where.workspaceId];
  const cond = ['r.workspace_id = $1'];
  if (where.scheduleId) {
    params.push(where.scheduleId);
    cond.push(`r.schedule_id = $${params.length}`);
  }
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!UUID.test(c.id) || !(await q.query(`select 1 from schedule_runs where id = $1`, [c.id])).length) throw staleCursor();
    params.push(c.k, c.id);
    cond.push(`(r.started_at, r.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(f.limit + 1);
  const rows = await q.query<RunRow>(`${RUN_SELECT} where ${cond.join(' and ')} order by r.started_at desc, r.id desc limit $${params.length}`, params);
  return pageOf(rows, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), runOut);
}

export async function getRun(q: Queryable, id: string): Promise<RunOut> {
  const [row] = await q.query<RunRow>(`${RUN_SELECT} where r.id = $1`, [id]);
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
async function fireLocked(tx: Queryable, s: { id: string; workspace_id: string; saved_query_id: string; agent_id: string | null; created_by: string | null }, scheduledFor: Date): Promise<Fire | null> {
  const [busy] = await tx.query(
    `select 1 from schedule_runs r left join queries q on q.id = r.query_id
      where r.schedule_id = $1 and (r.status = 'queued' or (r.status = 'submitted' and q.status in ('queued', 'running'))) limit 1`,
    [s.id],
  );
  const [saved] = await tx.query<{ sql: string; catalog: string | null }>(`select sql, catalog from saved_queries where id = $1`, [s.saved_query_id]);
  if (busy || !saved) {
    await tx.query(`insert into schedule_runs (schedule_id, workspace_id, status, scheduled_for, error) values ($1, $2, 'skipped', $3, $4)`, [
      s.id,
      s.workspace_id,
      scheduledFor.toISOString(),
      busy ? 'the previous run was still running' : 'the saved query is gone',
    ]);
    return null;
  }
  const [run] = await tx.query<{ id: string }>(
    `insert into schedule_runs (schedule_id, workspace_id, status, scheduled_for) values ($1, $2, 'queued', $3) returning id`,
    [s.id, s.workspace_id, scheduledFor.toISOString()],
  );
  await tx.query(`update saved_queries set last_run_at = now() where id = $1`, [s.saved_query_id]);
  return { runId: run.id, scheduleId: s.id, workspaceId: s.workspace_id, createdBy: s.created_by, agentId: s.agent_id, sql: saved.sql, catalog: saved.catalog };
}

/** Claims every due schedule (locked rows other replicas skip), records its fire and its next time. */
export async function claimDueFires(tx: Queryable, now = new Date()): Promise<Fire[]> {
  const due = await tx.query<{ id: string; workspace_id: string; saved_query_id: string; agent_id: string | null; created_by: string | null; cron: string; next_run_at: Date }>(
    `select id, workspace_id, saved_query_id, agent_id, created_by, cron, next_run_at from schedules
      where enabled and next_run_at <= $1 order by next_run_at for update skip locked limit 100`,
    [now.toISOString()],
  );
  const fires: Fire[] = [];
  for (const s of due) {
    const fire = await fireLocked(tx, s, s.next_run_at);
    if (fire) fires.push(fire);
    let next: Date | null = null;
    try {
      next = nextFire(cronOrUnprocessable(s.cron), now);
    } catch {
      next = null;
    }
    await tx.query(`update schedules set next_run_at = $2, last_run_at = $3 where id = $1`, [s.id, iso(next), now.toISOString()]);
  }
  return fires;
}

/** A fire by hand (`…/run`): recorded like a due one, the schedule's own timing untouched. */
export async function claimManualFire(tx: Queryable, workspaceId: string, scheduleId: string, now = new Date()): Promise<{ fire: Fire | null; runId: string }> {
  if (!UUID.test(scheduleId)) throw notFound('schedule');
  const [s] = await tx.query<{ id: string; workspace_id: string; saved_query_id: string; agent_id: string | null; created_by: string | null }>(
    `select id, workspace_id, saved_query_id, agent_id, created_by from schedules where workspace_id = $1 and id = $2 for update`,
    [workspaceId, scheduleId],
  );
  if (!s) throw notFound('schedule');
  const fire = await fireLocked(tx, s, now);
  await tx.query(`update schedules set last_run_at = $2 where id = $1`, [s.id, now.toISOString()]);
  const [latest] = await tx.query<{ id: string }>(`select id from schedule_runs where schedule_id = $1 order by started_at desc, id desc limit 1`, [s.id]);
  return { fire, runId: fire?.runId ?? latest.id };
}

/** The fire's query exists: the run follows its status from now on. */
export const markSubmitted = (q: Queryable, runId: string, queryId: string) =>
  q.query(`update schedule_runs set status = 'submitted', query_id = $2 where id = $1`, [runId, queryId]);

/** The fire could not be submitted (the creator lost access, the agent is gone…): the run fails with why. */
export const markFailed = (q: Queryable, runId: string, error: string) =>
  q.query(`update schedule_runs set status = 'failed', error = $2 where id = $1 and status = 'queued'`, [runId, error.slice(0, 2000)]);

/** Runs recorded but never submitted (the process died in between): failed, as there are no retries. */
export const failAbandonedFires = (q: Queryable, olderThanS: number) =>
  q.query(
    `update schedule_runs set status = 'failed', error = 'the scheduler stopped before submitting this run'
      where status = 'queued' and started_at < now() - make_interval(secs => $1)`,
    [olderThanS],
  );
