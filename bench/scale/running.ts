// Concurrently running queries: `size` queries held running by simulated agents (bench/scale/simAgents.ts: they
// answer a dispatch with query_started and hold the query until the api cancels it), spread over BENCH_HOLDERS
// agents (default 10), beside one real agent. At each size: the api's resident memory per running query (the
// growth from none running, divided by the count), and with them all running: a submit (answered, the query then
// held), a status read of a running query, a cancel (answered; the query ends cancelled), and a SELECT 42 through
// the real agent, waited for.
import type { Axis, Figure } from './measure.ts';
import { eachConcurrently, seconds, timed } from './measure.ts';
import { rssBytes, realAgentAndFleet } from './simAgents.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const runningAxis: Axis = async function* (ctx, [small, large]) {
  const { realId, fleet: holders, close } = await realAgentAndFleet(ctx, { prefix: 'hold', hold: true });
  try {
    await holders.grow(Number(process.env.BENCH_HOLDERS ?? 10));
    const headers = { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' };
    const pid = ctx.api.child.pid!;
    let n = 0;
    const submit = async (agentId: string, sql = `SELECT ${++n}`) => {
      const r = await fetch(`${ctx.api.url}/api/workspaces/default/queries`, { method: 'POST', headers, body: JSON.stringify({ sql, agent_id: agentId }) });
      const q = (await r.json()) as { id: string; status: string };
      if (r.status !== 202) throw new Error(`submit: ${r.status} ${JSON.stringify(q)}`);
      return q;
    };
    const running = async () => Number((await ctx.db.query<{ n: string }>(`select count(*) as n from queries where status = 'running'`))[0].n);
    const held: string[] = [];
    // Warm the path, and let the api's memory settle before the baseline.
    for (let i = 0; i < 20; i++) await submit(realId, 'SELECT 42');
    await sleep(3000);
    let last = { rss: await rssBytes(pid), size: 0 };
    for (const size of [small, large]) {
      const t0 = performance.now();
      await eachConcurrently(held.length, size, 8, async (i) => {
        held.push((await submit(holders.agents[i % holders.agents.length].id)).id);
      });
      for (const until = Date.now() + 120_000; (await running()) < size; ) {
        if (Date.now() > until) throw new Error(`only ${await running()} of ${size} queries running`);
        await sleep(200);
      }
      console.log(`${size.toLocaleString('en')} queries running (submitted and started in ${seconds(t0)} s)`);
      await sleep(3000);
      // At the first size against the baseline (an upper bound: the api's own warm-up is in it); at the next, the
      // growth from the size before over the queries added.
      const rss = await rssBytes(pid);
      const perQuery = (rss - last.rss) / (size - last.size);
      const note = `RSS ${(last.rss / 2 ** 20).toFixed(0)} → ${(rss / 2 ** 20).toFixed(0)} MiB over ${(size - last.size).toLocaleString('en')} queries`;
      last = { rss, size };
      const figures: Figure[] = [{ name: 'api RSS per running query (KiB)', p50: perQuery / 1024, p95: perQuery / 1024, note }];
      const extra: string[] = [];
      figures.push(await timed('submit (202), the query then held', 40, async (i) => extra.push((await submit(holders.agents[i % holders.agents.length].id)).id)));
      figures.push(
        await timed('status of a running query', 40, async (i) => {
          const q = (await ctx.get(`/api/queries/${held[(i * 7919) % held.length]}`)) as { status: string };
          if (q.status !== 'running') throw new Error(`status ${q.status}`);
        }),
      );
      figures.push(
        await timed('cancel (202)', 40, async () => {
          const id = extra.pop()!;
          const r = await fetch(`${ctx.api.url}/api/queries/${id}/cancel`, { method: 'POST', headers, body: '{}' });
          await r.arrayBuffer();
          if (r.status !== 202) throw new Error(`cancel: ${r.status}`);
        }),
      );
      figures.push(
        await timed('SELECT 42 on the real agent, waited for', 40, async () => {
          const q = await submit(realId, 'SELECT 42');
          const final = q.status === 'done' ? q : ((await ctx.get(`/api/queries/${q.id}?wait_timeout_s=30`)) as { status: string });
          if (final.status !== 'done') throw new Error(`query ${final.status}`);
        }),
      );
      // the extras left (the warm-up's) are cancelled, so `size` stay running
      await Promise.all(extra.splice(0).map((id) => fetch(`${ctx.api.url}/api/queries/${id}/cancel`, { method: 'POST', headers, body: '{}' }).then((r) => r.arrayBuffer())));
      yield { size, figures };
    }
  } finally {
    await close();
  }
};
