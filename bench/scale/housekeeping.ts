// Housekeeping: the state `days` of traffic leave behind once housekeeping has kept up (BENCH_PER_DAY queries a day,
// default 5,000, each with its terminal query actor; the history of the last 8 days, one past the 7-day retention;
// inline results of the last 25 hours, one past the 24-hour retention; AUDIT 1,000 rows a day; a schedule firing
// every minute; ten agent connections a day), then each periodic tick's statements, EXPLAIN (ANALYZE, BUFFERS) in a
// transaction rolled back (each runs as at its tick: what is due, then nothing), and the tick functions themselves.
// A tick's cost must not grow with the days: its time and the buffers it touches are printed at both sizes.
import type { Axis, AxisContext, Figure } from './measure.ts';
import { seconds } from './measure.ts';
import { claimEffects, listDue } from '../../actors/store.ts';

const PER_DAY = Number(process.env.BENCH_PER_DAY ?? 5_000);
const RUNS = 7;

/** The tick statements as the api sends them (actors/housekeeping.ts, domain/audit.ts, domain/schedules.ts). */
const TICKS: Array<{ name: string; sql: string; params: unknown[]; setup?: string }> = [
  {
    name: 'actor history prune (a batch)',
    sql: `delete from actor_transitions t using (
            select t2.kind, t2.id, t2.seq from actor_transitions t2 join actors a on a.kind = t2.kind and a.id = t2.id
            where a.terminal and a.updated_at < now() - make_interval(secs => $1 * 86400) limit $2
          ) old where t.kind = old.kind and t.id = old.id and t.seq = old.seq returning 1`,
    params: [7, 5000],
  },
  {
    name: 'ended agent connections prune',
    sql: `delete from actors where kind = 'agentConnection' and terminal and updated_at < now() - make_interval(secs => $1 * 86400) returning 1`,
    params: [7],
  },
  {
    name: 'inline results prune',
    sql: `update queries set result_inline = null
           where result_inline is not null and finished_at < now() - make_interval(secs => $1 * 3600) returning 1`,
    params: [24],
  },
  {
    name: 'audit retention',
    setup: `select set_config('eider.audit_prune', 'on', true)`,
    sql: `with d as (delete from audit_events where at < now() - make_interval(days => $1) returning 1) select count(*)::int as n from d`,
    params: [365],
  },
  {
    name: 'scheduler: abandoned fires',
    sql: `update schedule_runs set status = 'failed', error = 'the scheduler stopped before submitting this run'
           where status = 'queued' and started_at < now() - make_interval(secs => $1)`,
    params: [120],
  },
  {
    name: 'reaper: due deadlines',
    sql: `select kind, id::text as id from actors
           where not terminal and deadline_at is not null and deadline_at <= now() and kind = any($1::text[])
           order by deadline_at limit $2`,
    params: [['query', 'statement', 'sqlSession', 'agentConnection'], 200],
  },
];

async function build(ctx: AxisContext, k: { ws: string; user: string; agent: string; schedule: string }, fromDay: number, toDay: number) {
  // Day d (0 = the last 24 hours) holds PER_DAY queries; the busiest tables are written a month at a time.
  for (let d0 = fromDay; d0 < toDay; d0 += 30) {
    const d1 = Math.min(toDay, d0 + 30);
    const lo = d0 * PER_DAY + 1;
    const hi = d1 * PER_DAY;
    const ago = (i: string) => `make_interval(secs => (${i})::float8 * 86400 / ${PER_DAY})`;
    await ctx.db.query(
      `insert into queries (id, workspace_id, agent_id, user_id, sql, status, statement_type, origin, row_count, duration_ms,
                            result_path, result_inline, started_at, running_at, finished_at)
       select md5('q' || i)::uuid, $1, $3, $2, 'select ' || i, 'done', 'select', 'api', 1, 2,
              'results/' || i || '.parquet', case when i % 10 = 0 and i <= ${25 * PER_DAY / 24} then '\\x00'::bytea end,
              now() - ${ago('i')}, now() - ${ago('i')}, now() - ${ago('i')}
         from generate_series($4::bigint, $5::bigint) i`,
      [k.ws, k.user, k.agent, lo, hi],
    );
    await ctx.db.query(
      `insert into actors (kind, id, version, state, status, terminal, snapshot, owner_replica, created_at, updated_at)
       select 'query', md5('q' || i)::uuid, 3, 'done', 'done', true, '{"value": "done", "context": {}}'::jsonb, 'gone',
              now() - ${ago('i')}, now() - ${ago('i')}
         from generate_series($1::bigint, $2::bigint) i`,
      [lo, hi],
    );
    // History is kept for 7 days after an actor ends: the 8th day is what the next prune deletes.
    const kept = Math.min(hi, 8 * PER_DAY);
    if (lo <= kept)
      await ctx.db.query(
        `insert into actor_transitions (kind, id, seq, event, from_state, to_state, at, replica)
         select 'query', md5('q' || i)::uuid, s, 'e' || s, 's' || (s - 1), 's' || s, now() - ${ago('i')}, 'gone'
           from generate_series($1::bigint, $2::bigint) i, generate_series(1, 3) s`,
        [lo, kept],
      );
    await ctx.db.query(
      `insert into actors (kind, id, version, state, status, terminal, snapshot, owner_replica, updated_at)
       select 'agentConnection', md5('c' || i)::uuid, 5, 'closed', 'closed', true, '{}'::jsonb, 'gone', now() - make_interval(secs => i * 8640)
         from generate_series($1::bigint, $2::bigint) i where i <= 80`,
      [d0 * 10 + 1, d1 * 10],
    );
    await ctx.db.query(
      `insert into audit_events (at, action, outcome, actor_kind, actor_id, replica_id)
       select now() - make_interval(secs => i * 86.4), 'auth.login', 'success', 'user', $1, 'gone'
         from generate_series($2::bigint, $3::bigint) i`,
      [k.user, d0 * 1000 + 1, d1 * 1000],
    );
    await ctx.db.query(
      `insert into schedule_runs (schedule_id, workspace_id, status, scheduled_for, started_at)
       select $1, $2, 'submitted', now() - make_interval(mins => i::int), now() - make_interval(mins => i::int)
         from generate_series($3::bigint, $4::bigint) i`,
      [k.schedule, k.ws, d0 * 1440 + 1, d1 * 1440],
    );
  }
  for (const t of ['queries', 'actors', 'actor_transitions', 'audit_events', 'schedule_runs']) await ctx.db.query(`vacuum analyze ${t}`);
}

interface Plan {
  'Execution Time': number;
  Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
}

/** Median execution time and the buffers of one tick statement, run in a transaction that is rolled back. */
async function measure(ctx: AxisContext, t: (typeof TICKS)[number], size: number): Promise<Figure> {
  const times: number[] = [];
  let buffers = 0;
  let text = '';
  for (let i = 0; i < RUNS; i++) {
    await ctx.db
      .tx(async (tx) => {
        if (t.setup) await tx.query(t.setup);
        const [row] = await tx.query<{ 'QUERY PLAN': Plan[] }>(`explain (analyze, buffers, format json) ${t.sql}`, t.params);
        const plan = row['QUERY PLAN'][0];
        times.push(plan['Execution Time']);
        buffers = plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'];
        if (ctx.explain && i === RUNS - 1) text = (await tx.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${t.sql}`, t.params)).map((r) => r['QUERY PLAN']).join('\n');
        throw new Error('rollback');
      })
      .catch((e: Error) => {
        if (e.message !== 'rollback') throw e;
      });
  }
  if (text) console.log(`\n--- ${t.name} at ${size} days\n${text}`);
  times.sort((a, b) => a - b);
  return { name: t.name, p50: times[Math.floor(RUNS / 2)], p95: times[RUNS - 1], note: `${buffers} buffers` };
}

export const housekeepingAxis: Axis = async function* (ctx, [small, large]) {
  const [ws] = await ctx.db.query<{ id: string }>(`select id from workspaces where slug = 'default'`);
  const [user] = await ctx.db.query<{ id: string }>(`select id from users where email = 'bench@example.com'`);
  const [agent] = await ctx.db.query<{ id: string }>(`insert into agents (name, status) values ('scale-housekeeping', 'disconnected') returning id`);
  const [sq] = await ctx.db.query<{ id: string }>(`insert into saved_queries (workspace_id, name, sql) values ($1, 'every minute', 'select 1') returning id`, [ws.id]);
  const [schedule] = await ctx.db.query<{ id: string }>(`insert into schedules (workspace_id, saved_query_id, cron) values ($1, $2, '* * * * *') returning id`, [ws.id, sq.id]);
  const k = { ws: ws.id, user: user.id, agent: agent.id, schedule: schedule.id };
  let built = 0;
  for (const days of [small, large]) {
    const t0 = performance.now();
    await build(ctx, k, built, days);
    built = days;
    const [c] = await ctx.db.query<{ q: number; a: number; t: number; au: number; r: number }>(
      `select (select count(*) from queries)::int as q, (select count(*) from actors)::int as a, (select count(*) from actor_transitions)::int as t,
              (select count(*) from audit_events)::int as au, (select count(*) from schedule_runs)::int as r`,
    );
    console.log(`built ${days} days in ${seconds(t0)} s: ${c.q} queries, ${c.a} actors, ${c.t} transitions, ${c.au} audit rows, ${c.r} schedule runs`);
    const figures: Figure[] = [];
    for (const t of TICKS) figures.push(await measure(ctx, t, days));
    // The effect runner's claim (actors/store.ts), every 2 s on every replica: timed as the host calls it.
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const s = performance.now();
      await claimEffects(ctx.db, 'bench', { kinds: ['query', 'statement'], running: [], minAgeS: 5, presenceTtlS: 30, limit: 100 });
      await listDue(ctx.db, Date.now(), ['query'], 200);
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    figures.push({ name: 'effects claim + reaper list, round trips', p50: times[3], p95: times[6] });
    yield { size: days, figures };
  }
};
