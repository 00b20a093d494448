// Readiness past the basics (database answers, not draining): a startup gate, so a stack that says ready can do
// what the README says next. The gate waits for the sample data when SEED_SAMPLES is on, and for the agent named by
// READY_AFTER_AGENT (eider up names its bundled agent) to be healthy. Both are read from the database, so every
// replica answers alike; once open, the gate stays open for this process (an agent that later disconnects does
// not take the api out of a load balancer).
import { samplesSeedState } from './samplesSeed.ts';
import type { AppContext } from './context.ts';

const opened = new WeakSet<AppContext>();

/** What readiness still waits for: empty once the gate is open. */
export async function startupWaits(ctx: AppContext): Promise<string[]> {
  if (opened.has(ctx)) return [];
  const waits: string[] = [];
  if (ctx.config.READY_AFTER_AGENT) {
    const [a] = await ctx.db.query<{ n: number }>(`select count(*)::int as n from agents where name = $1 and status = 'healthy'`, [ctx.config.READY_AFTER_AGENT]);
    if (!a?.n) waits.push(`agent ${ctx.config.READY_AFTER_AGENT} to connect`);
  }
  if (ctx.config.SEED_SAMPLES) {
    const seed = await samplesSeedState(ctx);
    if (seed.status === 'failed') waits.push(`the sample data (samples.trips): seed attempt ${seed.attempts} failed (${seed.error ?? 'no error given'}); retrying${seed.retry_at ? ` at ${seed.retry_at.toISOString()}` : ''}`);
    else if (seed.status !== 'done') waits.push('the sample data (samples.trips) to be seeded');
  }
  if (waits.length === 0) opened.add(ctx);
  return waits;
}
