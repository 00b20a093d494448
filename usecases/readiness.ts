// Readiness past the basics (database answers, not draining): a startup gate, so a stack that says ready can do
// what the README says next. The gate waits for the sample data when SEED_SAMPLES is on, and for the agent named by
// READY_AFTER_AGENT (eider up names its bundled agent) to be healthy. Both are read from the database, so every
// replica answers alike; once open, the gate stays open for this process (an agent that later disconnects does
// not take the api out of a load balancer).
import { AppError, unavailable } from '../domain/errors.ts';
import { isAgentHealthy } from '../domain/agents.ts';
import { samplesSeedState } from './samplesSeed.ts';
import type { AppContext } from './context.ts';

const opened = new WeakSet<AppContext>();

/** What readiness still waits for: empty once the gate is open. */
async function startupWaits(ctx: AppContext): Promise<string[]> {
  if (opened.has(ctx)) return [];
  const waits: string[] = [];
  if (ctx.config.READY_AFTER_AGENT) {
    if (!(await isAgentHealthy(ctx.db, ctx.config.READY_AFTER_AGENT))) waits.push(`agent ${ctx.config.READY_AFTER_AGENT} to connect`);
  }
  if (ctx.config.SEED_SAMPLES) {
    const seed = await samplesSeedState(ctx);
    if (seed.status === 'failed') waits.push(`the sample data (samples.trips): seed attempt ${seed.attempts} failed (${seed.error ?? 'no error given'}); retrying${seed.retry_at ? ` at ${seed.retry_at.toISOString()}` : ''}`);
    else if (seed.status !== 'done') waits.push('the sample data (samples.trips) to be seeded');
  }
  if (waits.length === 0) opened.add(ctx);
  return waits;
}

/** Readiness: not draining, the database answers within 2 s, and the startup gate is open; else 503 not_ready. */
export async function assertReady(ctx: AppContext): Promise<void> {
  if (ctx.draining.value) throw unavailable('shutting down', 'not_ready');
  try {
    await Promise.race([ctx.db.query('select 1'), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 2000).unref())]);
  } catch {
    throw unavailable('database unreachable', 'not_ready');
  }
  const waits = await startupWaits(ctx);
  if (waits.length) throw new AppError(503, 'not_ready', `starting: waiting for ${waits.join('; ')}`, { waiting_for: waits });
}
