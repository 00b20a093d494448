// Query history: `size` queries rows of one workspace over a year (one every 3 s back from now), with the shares a
// busy deployment has (5% failed, 10% inserts, 10% session statements over 1,000 sessions, 2% hidden sample runs,
// 1% naming `orders_`, 0.1% on a second agent), then the history list with each filter, a deep keyset page, a
// session's statements and the agent counts.
import type { Axis, AxisContext, Figure } from './measure.ts';
import { explain, seconds, serverSide, timed } from './measure.ts';
import { listHistory, type HistoryFilters } from '../../domain/queries.ts';
import { principalFromToken } from '../../domain/identity.ts';
import { agentMetrics, agentMonitoring, findAgent } from '../../domain/agents.ts';

const N = 100;

async function ids(ctx: AxisContext) {
  const [ws] = await ctx.db.query<{ id: string }>(`select id from workspaces where slug = 'default'`);
  const [user] = await ctx.db.query<{ id: string }>(`select id from users where email = 'bench@example.com'`);
  const [busy] = await ctx.db.query<{ id: string }>(`insert into agents (name, status) values ('scale-busy', 'disconnected') returning id`);
  const [rare] = await ctx.db.query<{ id: string }>(`insert into agents (name, status) values ('scale-rare', 'disconnected') returning id`);
  return { ws: ws.id, user: user.id, busy: busy.id, rare: rare.id };
}

/** Rows `from`+1 … `to` (row i started i × 3 s ago): set-based, in batches of a million so a batch's WAL stays bounded. */
async function build(ctx: AxisContext, k: Awaited<ReturnType<typeof ids>>, from: number, to: number) {
  for (let lo = from; lo < to; lo += 1_000_000) {
    const hi = Math.min(to, lo + 1_000_000);
    await ctx.db.query(
      `insert into queries (id, workspace_id, agent_id, user_id, sql, status, statement_type, origin, session_id, row_count,
                            duration_ms, error, error_code, columns, result_path, started_at, running_at, finished_at)
       select gen_random_uuid(), $1, case when i % 1000 = 7 then $4::uuid else $3::uuid end, $2,
              case when i % 100 = 3 then 'select * from orders_' || (i % 50) else 'select ' || i || ' as n from t' || (i % 100) end,
              case when i % 20 = 1 then 'failed' when i % 100 = 2 then 'cancelled' else 'done' end,
              case when i % 10 = 4 then 'insert' else 'select' end,
              case when i % 50 = 5 then 'sample' when i % 10 = 6 then 'session' when i % 25 = 8 then 'scheduled' else 'api' end,
              case when i % 10 = 6 then md5('session' || (i % 1000))::uuid end,
              i % 1000, (i % 997) * 1.5,
              case when i % 20 = 1 then 'boom' end, case when i % 20 = 1 then 'engine_error' end,
              '["n"]'::jsonb, case when i % 20 <> 1 then 'results/' || i || '.parquet' end,
              now() - make_interval(secs => i * 3), now() - make_interval(secs => i * 3) + interval '5 ms',
              now() - make_interval(secs => i * 3) + make_interval(secs => (i % 997) * 0.0015)
         from generate_series($5::bigint, $6::bigint) i`,
      [k.ws, k.user, k.busy, k.rare, lo + 1, hi],
    );
  }
  await ctx.db.query(`vacuum analyze queries`);
}

export const historyAxis: Axis = async function* (ctx, [small, large]) {
  const k = await ids(ctx);
  const q = (qs: string) => `/api/workspaces/default/queries?limit=50${qs}`;
  const session = (await ctx.db.query<{ id: string }>(`select md5('session' || 16)::uuid::text as id`))[0].id;
  let built = 0;
  for (const size of [small, large]) {
    const t0 = performance.now();
    await build(ctx, k, built, size);
    built = size;
    console.log(`built ${size.toLocaleString('en')} queries rows in ${seconds(t0)} s`);
    // the middle of the history: a keyset page there is as deep as any
    const middle = new Date(Date.now() - (size / 2) * 3000).toISOString();
    let deep = '';
    {
      let body = await ctx.get(q(''));
      for (let i = 0; i < 20 && body.cursor; i++) {
        deep = body.cursor;
        body = await ctx.get(q(`&cursor=${encodeURIComponent(body.cursor)}`));
      }
    }
    const figures: Figure[] = [];
    const p = (await principalFromToken(ctx.db, ctx.token))!;
    const cases: Array<[string, string, Partial<HistoryFilters>]> = [
      ['list, newest 50', '', {}],
      ['list, status=failed', '&status=failed', { status: ['failed'] }],
      ['list, statement_type=insert', '&statement_type=insert', { statement_type: ['insert'] }],
      ['list, origin=scheduled', '&origin=scheduled', { origin: ['scheduled'] }],
      ['list, q=orders_ (1% of rows)', '&q=orders_', { q: 'orders_' }],
      ['list, until the middle of history', `&until=${encodeURIComponent(middle)}`, { until: middle }],
      ['list, slower_than_ms=1400', '&slower_than_ms=1400', { slower_than_ms: 1400 }],
      ['list, sort=duration', '&sort=duration', { sort: 'duration' }],
      ['list, 21st keyset page', `&cursor=${encodeURIComponent(deep)}`, { cursor: deep }],
      ['list, session_id (one of 1,000)', `&session_id=${session}`, { session_id: session }],
      ['list, agent_id (0.1% of rows)', `&agent_id=${k.rare}`, { agent_id: k.rare }],
    ];
    for (const [name, qs, f] of cases) {
      figures.push(await timed(name, N, () => ctx.get(q(qs))));
      const filters: HistoryFilters = { workspaceId: k.ws, status: [], statement_type: [], origin: [], sort: 'started_at', dir: 'desc', limit: 50, ...f };
      figures.push(await serverSide(ctx, name, (db) => listHistory(db, p, filters)));
    }
    figures.push(await timed('counts: agents metrics', N, () => ctx.get('/api/admin/agents/metrics')));
    figures.push(await serverSide(ctx, 'counts: agents metrics', (db) => agentMetrics(db, p)));
    figures.push(await timed('counts: busy agent monitoring', N, () => ctx.get(`/api/admin/agents/${k.busy}/monitoring`)));
    const busy = (await findAgent(ctx.db, k.busy))!;
    figures.push(await serverSide(ctx, 'counts: busy agent monitoring', (db) => agentMonitoring(db, busy, false)));
    await explain(
      ctx,
      `an agent's monitoring counts (domain/agents.ts agentMonitoring) at ${size}`,
      `select count(*) filter (where status = 'running')::int as running, count(*) filter (where status = 'queued')::int as queued,
              count(*) filter (where status = 'done' and finished_at > now() - interval '1 hour')::int as done_last_hour,
              percentile_cont(0.5) within group (order by duration_ms) filter (where finished_at > now() - interval '1 hour') as p50
         from queries where agent_id = $1 and (status in ('queued', 'running') or finished_at > now() - interval '1 hour')`,
      [k.busy],
    );
    yield { size, figures };
  }
};
