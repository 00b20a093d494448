// Agents connected to one replica: `size` simulated agents (bench/scale/simAgents.ts: real WebSocket clients of the
// agent protocol, heartbeating and re-sending their status at the api's interval) beside one real agent that runs
// the dispatched queries. At each size: the api's CPU while it only carries the heartbeats (kernel accounting, over
// BENCH_CPU_WINDOW_S, default 30 s), a dispatch through the real agent (SELECT 42 submitted and waited for), the
// agents list and the agents' live counts.
import type { Axis, Figure } from './measure.ts';
import { seconds, timed } from './measure.ts';
import { cpuSeconds, realAgentAndFleet } from './simAgents.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const agentsAxis: Axis = async function* (ctx, [small, large]) {
  const { realId, fleet: sims, close } = await realAgentAndFleet(ctx, { prefix: 'sim', hold: false });
  try {
    const headers = { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' };
    const windowS = Number(process.env.BENCH_CPU_WINDOW_S ?? 30);
    const pid = ctx.api.child.pid!;
    for (const size of [small, large]) {
      const t0 = performance.now();
      await sims.grow(size);
      console.log(`${size.toLocaleString('en')} simulated agents connected and authenticated in ${seconds(t0)} s`);
      // One heartbeat interval for every agent's timer to be running, then the window.
      await sleep(11_000);
      const [c0, hb0, w0] = [await cpuSeconds(pid), sims.counts.heartbeats, performance.now()];
      await sleep(windowS * 1000);
      const [c1, hb1, w1] = [await cpuSeconds(pid), sims.counts.heartbeats, performance.now()];
      const cores = (c1 - c0) / ((w1 - w0) / 1000);
      const rate = (hb1 - hb0) / ((w1 - w0) / 1000);
      // Whether the api kept up: a CPU figure of an api that fell behind (starved of a core on a loaded machine) is
      // what it got, not what it needed. Kept up: every agent healthy, its last heartbeat written within about an
      // interval.
      const [lag] = await ctx.db.query<{ healthy: number; p50: number; max: number }>(
        `select count(*) filter (where status = 'healthy')::int as healthy,
                percentile_cont(0.5) within group (order by extract(epoch from now() - last_heartbeat_at)) as p50,
                max(extract(epoch from now() - last_heartbeat_at)) as max
           from agents where version = 'bench-sim'`,
      );
      const figures: Figure[] = [
        {
          name: 'api CPU carrying the heartbeats (ms per s)',
          p50: cores * 1000,
          p95: cores * 1000,
          note: `${cores.toFixed(3)} cores; ${rate.toFixed(0)} heartbeats/s (+ as many agent_status); ${lag.healthy} of ${size} healthy, last heartbeat written ${Number(lag.p50).toFixed(1)} s ago (p50), ${Number(lag.max).toFixed(1)} s (max)`,
        },
      ];
      figures.push(
        await timed('dispatch: SELECT 42 submitted and waited for', 60, async () => {
          const sub = await fetch(`${ctx.api.url}/api/workspaces/default/queries`, { method: 'POST', headers, body: JSON.stringify({ sql: 'SELECT 42', agent_id: realId }) });
          const q = (await sub.json()) as { id: string; status: string };
          if (sub.status !== 202) throw new Error(`submit: ${sub.status} ${JSON.stringify(q)}`);
          const final = q.status === 'done' ? q : ((await (await fetch(`${ctx.api.url}/api/queries/${q.id}?wait_timeout_s=30`, { headers })).json()) as { status: string });
          if (final.status !== 'done') throw new Error(`query ${final.status}`);
        }),
      );
      let listed = 0;
      figures.push(
        await timed('GET /api/agents', 20, async () => {
          listed = ((await ctx.get('/api/agents')) as unknown[]).length;
        }),
      );
      figures[figures.length - 1].note = `${listed} agents listed`;
      figures.push(await timed('GET /api/admin/agents/metrics', 20, () => ctx.get('/api/admin/agents/metrics')));
      yield { size, figures };
    }
  } finally {
    await close();
  }
};
