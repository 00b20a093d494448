// The scheduler: a leader-elected loop (one tick at a time across replicas, SCHEDULER_TICK_S) that fires due
// schedules. Each fire is recorded, with the schedule's next time, and committed before its query is submitted;
// the query is then submitted as the schedule's creator through every check a REST submission gets, re-checked at
// every fire (a creator who lost access gets a failed run saying why). No retries, no backfill.
import { AppError, forbidden } from '../domain/errors.ts';
import { findUser } from '../domain/identity.ts';
import { resolveWorkspace } from '../domain/workspaces.ts';
import { claimDueFires, claimManualFire, failAbandonedFires, getRun, markFailed, markSubmitted, type Fire } from '../domain/schedules.ts';
import { startLeaderLoop, type LeaderLoop } from '../runtime/timers.ts';
import type { Queryable } from '../runtime/db.ts';
import type { AppContext } from './context.ts';
import { submitChecked } from './querySubmission.ts';

/** Submits a recorded fire as the schedule's creator; the run follows the query, or fails with the reason. */
async function submitFire(ctx: AppContext, fire: Fire): Promise<void> {
  try {
    const user = fire.createdBy ? await findUser(ctx.db, fire.createdBy) : undefined;
    if (!user || !user.is_active) throw forbidden('the schedule’s creator is no longer an active user');
    const principal = { user, via: 'token' as const, tokenId: null };
    const ws = await resolveWorkspace(ctx.db, principal, fire.workspaceId);
    const { id: queryId } = await submitChecked(ctx, principal, ws, { sql: fire.sql, agent_id: fire.agentId, catalog: fire.catalog }, { origin: 'scheduled', scheduleId: fire.scheduleId });
    await markSubmitted(ctx.db, fire.runId, queryId);
  } catch (e) {
    const reason = e instanceof AppError ? `${e.code}: ${e.message}` : 'the run could not be submitted (internal error)';
    if (!(e instanceof AppError)) ctx.logger.error({ scheduleId: fire.scheduleId, err: (e as Error).message }, 'scheduled run failed to submit');
    await markFailed(ctx.db, fire.runId, reason);
  }
}

/** Fires a schedule now, by hand: its run (skipped while its last run still runs), submitted as a tick would. */
/** Fires a schedule now; `record` writes in the claim's transaction (the route's audit row). */
export async function runScheduleNow(ctx: AppContext, workspaceId: string, scheduleId: string, record?: (tx: Queryable) => Promise<unknown>) {
  const { fire, runId } = await ctx.db.tx(async (tx) => {
    const claimed = await claimManualFire(tx, workspaceId, scheduleId);
    await record?.(tx);
    return claimed;
  });
  if (fire) await submitFire(ctx, fire);
  return getRun(ctx.db, runId);
}

export function startScheduler(ctx: AppContext): LeaderLoop {
  return startLeaderLoop({
    db: ctx.db,
    name: 'scheduler',
    tickMs: ctx.config.SCHEDULER_TICK_S * 1000,
    enabled: ctx.config.SCHEDULER_ENABLED,
    logger: ctx.logger,
    // The loop's transaction holds the leader lock; the fires commit in their own, before anything is submitted.
    run: async () => {
      await failAbandonedFires(ctx.db, Math.max(120, ctx.config.SCHEDULER_TICK_S * 4));
      const fires = await ctx.db.tx((tx) => claimDueFires(tx));
      for (const fire of fires) await submitFire(ctx, fire);
      if (fires.length) ctx.logger.info({ fires: fires.length }, 'schedules fired');
    },
  });
}
