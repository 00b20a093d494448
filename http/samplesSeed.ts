// `eider up` gives newcomers real rows to query: once, schema `samples` in the default catalog with a table of
// 1,000,000 generated trips. Like any SQL it runs on an agent through the query path (the control plane never runs
// SQL); it waits until the `default` workspace and a connected agent exist. A leader-elected loop, so several
// replicas seed once.
import { startLeaderLoop, type LeaderLoop } from '../runtime/timers.ts';
import { checkStatementPolicy } from '../domain/statementPolicy.ts';
import { DEFAULT_WORKSPACE } from '../domain/bootstrap.ts';
import { listWorkspaceCatalogs } from '../domain/catalogs.ts';
import { submitQuery } from './routes/queries.ts';
import type { AppContext } from './context.ts';

export const SAMPLES_SEED = 'samples';

export const SAMPLES_SQL = `CREATE SCHEMA IF NOT EXISTS samples;
CREATE TABLE samples.trips AS
SELECT i AS trip_id,
  TIMESTAMP '2025-01-01 00:00:00' + to_seconds(((i * 7919) % 31536000)::BIGINT) AS pickup_at,
  (1 + hash(i) % 4)::INTEGER AS passengers,
  round(0.5 + (hash(i * 7) % 3000) / 100.0, 2) AS distance_km,
  (3 + (hash(i * 13) % 9000) / 100.0)::DECIMAL(10, 2) AS fare,
  ['card', 'cash', 'app'][(1 + hash(i * 3) % 3)::INTEGER] AS payment,
  ['Harbor', 'Old Town', 'Airport', 'University', 'Riverside', 'Market'][(1 + hash(i * 5) % 6)::INTEGER] AS zone
FROM range(1000000) AS t(i)`;

export function startSamplesSeed(ctx: AppContext, opts: { tickMs?: number } = {}): LeaderLoop {
  let finished = false;
  return startLeaderLoop({
    db: ctx.db,
    name: 'samples-seed',
    tickMs: opts.tickMs ?? 2000,
    enabled: ctx.config.SEED_SAMPLES,
    logger: ctx.logger,
    run: async () => {
      if (finished) return;
      const [seed] = await ctx.db.query<{ status: string; query_id: string | null }>(`select status, query_id from seeds where name = $1`, [SAMPLES_SEED]);
      if (seed?.status === 'done' || seed?.status === 'failed') {
        finished = true;
        return;
      }
      if (seed?.status === 'running' && seed.query_id) {
        const [q] = await ctx.db.query<{ status: string; error: string | null }>(`select status, error from queries where id = $1`, [seed.query_id]);
        if (!q || q.status === 'queued' || q.status === 'running') return;
        const status = q.status === 'done' ? 'done' : 'failed';
        await ctx.db.query(`update seeds set status = $2, error = $3, updated_at = now() where name = $1`, [SAMPLES_SEED, status, q.error]);
        ctx.logger[status === 'done' ? 'info' : 'warn']({ seed: SAMPLES_SEED, status, error: q.error }, 'sample data seed finished');
        finished = true;
        return;
      }
      const [ws] = await ctx.db.query<{ id: string; slug: string }>(`select id, slug from workspaces where slug = $1`, [DEFAULT_WORKSPACE]);
      const agentId = ctx.sockets.liveAgentIds()[0];
      if (!ws || !agentId || !ctx.catalog) return; // not yet: no first admin, or no agent here
      const catalogs = await listWorkspaceCatalogs(ctx.db, ws.id);
      const target = catalogs.find((c) => c.is_default);
      if (!target) return;
      const policy = await checkStatementPolicy(SAMPLES_SQL, { mode: 'query' });
      if (!policy.ok) throw new Error(`the samples seed is refused by the statement policy: ${policy.message}`);
      const id = await submitQuery(ctx, {
        workspaceId: ws.id,
        workspaceSlug: ws.slug,
        userId: null,
        sql: SAMPLES_SQL,
        agentId,
        timeoutS: 600,
        statementType: policy.statementType,
        tables: policy.tables,
        catalog: target.slug,
        origin: 'maintenance',
      });
      await ctx.db.query(
        `insert into seeds (name, status, query_id) values ($1, 'running', $2) on conflict (name) do update set status = 'running', query_id = $2, updated_at = now()`,
        [SAMPLES_SEED, id],
      );
      ctx.logger.info({ seed: SAMPLES_SEED, queryId: id }, 'seeding sample data');
    },
  });
}
