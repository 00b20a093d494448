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
// an answer that takes seconds (a sequential scan of 10M rows) is measured over about this long, not 100 times
const BUDGET_MS = 20_000;

async function ids(ctx: AxisContext) {
  const [ws] = await ctx.db.query<{ id: string }>(`select id from workspaces where slug = 'default'`);
  const [user] = await ctx.db.query<{ id: string }>(`select id from users where email = 'bench@example.com'`);
  const [busy] = await ctx.db.query<{ id: string }>(`insert into agents (name, status) values ('scale-busy', 'disconnected') returning id`);
  const [rare] = await ctx.db.query<{ id: string }>(`insert into agents (name, status) values ('scale-rare', 'disconnected') returning id`);
  return { ws: ws.id, user: user.id, busy: busy.id, rare: rare.id };
}

/**
 * Rows `from`+1 … `to` (row i started i × 3 s ago): set-based, a million rows a statement. A load of more than a
 * million rows is a bulk load, as a restore would be: the indexes of `queries` (the very ones the migrations created,
 * their definitions read from the catalog) are dropped first and built again after, and the foreign-key triggers are
 * off meanwhile (every id is a real row's). Inserted through all its indexes, 10M rows took about 30 minutes here; the
 * indexes built after the load are the same ones, a little denser than indexes grown row by row (a fresh B-tree's
 * leaves are 90% full; leaves split by random uuids settle near 70%).
 */
async function build(ctx: AxisContext, k: Awaited<ReturnType<typeof ids>>, from: number, to: number) {
  const bulk = to - from > 1_000_000;
  await ctx.db.tx(async (tx) => {
    // in the transaction, the api's ticks wait for the rebuilt indexes rather than scan the table while it grows
    let constraints: { name: string; def: string }[] = [];
    let indexes: { name: string; def: string }[] = [];
    if (bulk) {
      await tx.query(`set local session_replication_role = replica`);
      await tx.query(`set local maintenance_work_mem = '1GB'`);
      constraints = await tx.query(
        `select conname as name, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'queries'::regclass and contype in ('p', 'u', 'x')`,
      );
      indexes = await tx.query(
        `select i.relname as name, pg_get_indexdef(i.oid) as def
           from pg_index x join pg_class i on i.oid = x.indexrelid
          where x.indrelid = 'queries'::regclass and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)`,
      );
      for (const c of constraints) await tx.query(`alter table queries drop constraint ${c.name}`);
      for (const i of indexes) await tx.query(`drop index ${i.name}`);
    }
    for (let lo = from; lo < to; lo += 1_000_000) {
      const hi = Math.min(to, lo + 1_000_000);
      await tx.query(
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
    const t0 = performance.now();
    for (const c of constraints) await tx.query(`alter table queries add constraint ${c.name} ${c.def}`);
    for (const i of indexes) await tx.query(i.def);
    if (bulk) console.log(`  (${constraints.length + indexes.length} indexes of queries built after the load in ${seconds(t0)} s)`);
  });
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
    const deepCursor = async (qs: string) => {
      let deep = '';
      let body = await ctx.get(q(qs));
      for (let i = 0; i < 20 && body.cursor; i++) {
        deep = body.cursor;
        body = await ctx.get(q(`${qs}&cursor=${encodeURIComponent(body.cursor)}`));
      }
      return deep;
    };
    const deep = await deepCursor('');
    const deepByDuration = await deepCursor('&sort=duration');
    // a query in the middle of the history, as one pastes its id (or the 8 characters the web app shows)
    const [mid] = await ctx.db.query<{ id: string }>(`select id::text from queries where started_at < $1 order by started_at desc limit 1`, [middle]);
    const figures: Figure[] = [];
    const p = (await principalFromToken(ctx.db, ctx.token))!;
    const cases: Array<[string, string, Partial<HistoryFilters>]> = [
      ['list, newest 50', '', {}],
      ['list, status=failed', '&status=failed', { status: ['failed'] }],
      ['list, status=running (none in history)', '&status=running', { status: ['running'] }],
      ['list, statement_type=insert', '&statement_type=insert', { statement_type: ['insert'] }],
      ['list, origin=scheduled', '&origin=scheduled', { origin: ['scheduled'] }],
      ['list, q=orders_ (1% of rows)', '&q=orders_', { q: 'orders_' }],
      ['list, q=select 4321 as n (one row)', `&q=${encodeURIComponent('select 4321 as n')}`, { q: 'select 4321 as n' }],
      ['list, query_id (a whole id)', `&query_id=${mid.id}`, { query_id: mid.id }],
      ['list, query_id (its first 8 characters)', `&query_id=${mid.id.slice(0, 8)}`, { query_id: mid.id.slice(0, 8) }],
      ['list, until the middle of history', `&until=${encodeURIComponent(middle)}`, { until: middle }],
      ['list, since the middle, oldest first', `&since=${encodeURIComponent(middle)}&dir=asc`, { since: middle, dir: 'asc' }],
      ['list, slower_than_ms=1400', '&slower_than_ms=1400', { slower_than_ms: 1400 }],
      ['list, sort=duration', '&sort=duration', { sort: 'duration' }],
      ['list, sort=duration dir=asc', '&sort=duration&dir=asc', { sort: 'duration', dir: 'asc' }],
      ['list, 21st keyset page', `&cursor=${encodeURIComponent(deep)}`, { cursor: deep }],
      ['list, sort=duration, 21st keyset page', `&sort=duration&cursor=${encodeURIComponent(deepByDuration)}`, { sort: 'duration', cursor: deepByDuration }],
      ['list, session_id (one of 1,000)', `&session_id=${session}`, { session_id: session }],
      ['list, agent_id (0.1% of rows)', `&agent_id=${k.rare}`, { agent_id: k.rare }],
      ['list, user_id (the caller)', `&user_id=${k.user}`, { user_id: k.user }],
      ['list, all_workspaces', '&all_workspaces=true', { workspaceId: null }],
    ];
    for (const [name, qs, f] of cases) {
      figures.push(await timed(name, N, () => ctx.get(q(qs)), 5, BUDGET_MS));
      const filters: HistoryFilters = { workspaceId: k.ws, status: [], statement_type: [], origin: [], sort: 'started_at', dir: 'desc', limit: 50, ...f };
      figures.push(await serverSide(ctx, name, (db) => listHistory(db, p, filters), 7, BUDGET_MS));
    }
    figures.push(await timed('counts: agents metrics', N, () => ctx.get('/api/admin/agents/metrics'), 5, BUDGET_MS));
    figures.push(await serverSide(ctx, 'counts: agents metrics', (db) => agentMetrics(db, p), 7, BUDGET_MS));
    figures.push(await timed('counts: busy agent monitoring', N, () => ctx.get(`/api/admin/agents/${k.busy}/monitoring`), 5, BUDGET_MS));
    const busy = (await findAgent(ctx.db, k.busy))!;
    figures.push(await serverSide(ctx, 'counts: busy agent monitoring', (db) => agentMonitoring(db, busy, false), 7, BUDGET_MS));
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
