// `eider up` gives newcomers real rows to query: once, schema `samples` in the default catalog with a table of
// 1,000,000 generated trips. Like any SQL it runs on an agent through the query path (the control plane never runs
// SQL); it waits for a connected agent, not for the first admin. A leader-elected loop, so several replicas seed
// once; a failure is logged, shown by readiness, and retried with backoff (CREATE OR REPLACE: a retry never keeps a
// half-written table).
import { startLeaderLoop, type LeaderLoop } from '../runtime/timers.ts';
import { checkStatementPolicy } from '../domain/statementPolicy/policy.ts';
import { DEFAULT_WORKSPACE, ensureDefaultWorkspace } from '../domain/bootstrap.ts';
import { listWorkspaceCatalogs } from '../domain/catalogs/attachments.ts';
import { markSeedDone, markSeedFailed, seedAttempt, seedState, startSeedAttempt, type SeedState } from '../domain/seeds.ts';
import { submitQuery } from './querySubmission.ts';
import type { AppContext } from './context.ts';

const SAMPLES_SEED = 'samples';

const SAMPLES_SQL = `CREATE SCHEMA IF NOT EXISTS samples;
CREATE OR REPLACE TABLE samples.trips AS
SELECT i AS trip_id,
  TIMESTAMP '2025-01-01 00:00:00' + to_seconds(((i * 7919) % 31536000)::BIGINT) AS pickup_at,
  (1 + hash(i) % 4)::INTEGER AS passengers,
  round(0.5 + (hash(i * 7) % 3000) / 100.0, 2) AS distance_km,
  (3 + (hash(i * 13) % 9000) / 100.0)::DECIMAL(10, 2) AS fare,
  ['card', 'cash', 'app'][(1 + hash(i * 3) % 3)::INTEGER] AS payment,
  ['Harbor', 'Old Town', 'Airport', 'University', 'Riverside', 'Market'][(1 + hash(i * 5) % 6)::INTEGER] AS zone
FROM range(1000000) AS t(i)`;

/** Seconds before attempt n+1 after n failures: 5, 10, 20, … capped at five minutes. */
const seedRetryDelayS = (attempts: number) => Math.min(300, 5 * 2 ** Math.max(0, attempts - 1));

/** The samples seed as the database records it (every replica reads the same row). */
export const samplesSeedState = (ctx: Pick<AppContext, 'db'>): Promise<SeedState> => seedState(ctx.db, SAMPLES_SEED);

export function startSamplesSeed(ctx: AppContext, opts: { tickMs?: number } = {}): LeaderLoop {
  // A quarter of a second between looks: the seed is what a first start waits for before it says "Eider is up"
  // (issue #36), and each look at a second's pace cost up to a second to start it and another to see it done. Once
  // the seed is done the loop ends, so the pace costs nothing after the start.
  const finish = () => void loop.stop();
  const loop = startLeaderLoop({
    db: ctx.db,
    name: 'samples-seed',
    tickMs: opts.tickMs ?? 250,
    enabled: ctx.config.SEED_SAMPLES,
    logger: ctx.logger,
    run: async () => {
      const seed = await seedAttempt(ctx.db, SAMPLES_SEED);
      if (seed?.status === 'done') return finish();
      if (seed?.status === 'running' && seed.query_id) {
        const q = seed.query;
        if (q && (q.status === 'queued' || q.status === 'running')) return;
        if (q?.status === 'done') {
          await markSeedDone(ctx.db, SAMPLES_SEED);
          ctx.logger.info({ seed: SAMPLES_SEED, attempts: seed.attempts }, 'sample data seeded');
          return finish();
        }
        // Failed (or its query vanished): visible in the log and in readiness, and tried again after a backoff.
        const error = q?.error ?? 'the seed query was lost';
        const delay = seedRetryDelayS(seed.attempts);
        await markSeedFailed(ctx.db, SAMPLES_SEED, error, delay);
        ctx.logger.warn({ seed: SAMPLES_SEED, attempts: seed.attempts, error, retryInS: delay }, 'sample data seed failed; it will be retried');
        return;
      }
      if (seed?.status === 'failed' && !seed.due) return;
      // The `default` workspace is created here if no admin made it yet, so the sample table is in place before the
      // stack says ready; the first admin becomes its owner.
      const agentId = ctx.sockets.liveAgentIds()[0];
      if (!agentId || !ctx.catalog) return; // not yet: no agent on this replica
      const wsId = await ctx.db.tx((tx) => ensureDefaultWorkspace(tx));
      const catalogs = await listWorkspaceCatalogs(ctx.db, wsId);
      const target = catalogs.find((c) => c.is_default);
      if (!target) return;
      const policy = await checkStatementPolicy(SAMPLES_SQL, { mode: 'query' });
      if (!policy.ok) throw new Error(`the samples seed is refused by the statement policy: ${policy.message}`);
      const id = await submitQuery(ctx, {
        workspaceId: wsId,
        workspaceSlug: DEFAULT_WORKSPACE,
        userId: null,
        sql: SAMPLES_SQL,
        agentId,
        timeoutS: 600,
        statementType: policy.statementType,
        tables: policy.tables,
        schemas: policy.schemas,
        catalog: target.slug,
        origin: 'maintenance',
      });
      await startSeedAttempt(ctx.db, SAMPLES_SEED, id);
      ctx.logger.info({ seed: SAMPLES_SEED, queryId: id }, 'seeding sample data');
    },
  });
  return loop;
}
