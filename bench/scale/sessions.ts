// Open SQL sessions with statements: `size` sessions open on simulated agents (bench/scale/simAgents.ts, spread over
// BENCH_SESSION_AGENTS, default 10), each having run a statement, beside one session on a real agent. At each size:
// a statement in the real agent's session (SELECT 42, waited for, first page included), a statement in a simulated
// agent's session (the api's own path: no engine), a session opened, and the sessions list.
import type { Axis, Figure } from './measure.ts';
import { eachConcurrently, seconds, timed } from './measure.ts';
import { realAgentAndFleet } from './simAgents.ts';

export const sessionsAxis: Axis = async function* (ctx, [small, large]) {
  const { realId, fleet: sims, close } = await realAgentAndFleet(ctx, { prefix: 'sess', hold: false });
  try {
    await sims.grow(Number(process.env.BENCH_SESSION_AGENTS ?? 10));
    const headers = { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const r = await fetch(`${ctx.api.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    const open = async (agentId: string) => {
      const r = await post('/api/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 30 });
      if (r.status !== 201) throw new Error(`open: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    };
    const statement = async (session: string, sql: string) => {
      const r = await post(`/api/sql/sessions/${session}/statements`, { sql, wait_timeout_s: 30 });
      if (r.status !== 200 || r.body.status !== 'done') throw new Error(`statement: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const mine = await open(realId);
    const held: string[] = [];
    for (const size of [small, large]) {
      const t0 = performance.now();
      await eachConcurrently(held.length, size, 8, async (i) => {
        const id = await open(sims.agents[i % sims.agents.length].id);
        await statement(id, `SELECT ${i}`);
        held.push(id);
      });
      console.log(`${size.toLocaleString('en')} sessions open, each with a statement (in ${seconds(t0)} s)`);
      const figures: Figure[] = [];
      figures.push(
        await timed('statement, real agent (SELECT 42, first page)', 60, async () => {
          const b = await statement(mine, 'SELECT 42');
          if (b.first_page?.rows?.[0]?.['42'] !== 42) throw new Error(`rows: ${JSON.stringify(b)}`);
        }),
      );
      figures.push(await timed('statement, simulated agent (no engine)', 60, (i) => statement(held[(i * 7919) % held.length], `SELECT ${i}`)));
      const opened: string[] = [];
      figures.push(await timed('open a session (201)', 20, async (i) => opened.push(await open(sims.agents[i % sims.agents.length].id))));
      await Promise.all(opened.map((id) => fetch(`${ctx.api.url}/api/sql/sessions/${id}`, { method: 'DELETE', headers }).then((r) => r.arrayBuffer())));
      let listed = 0;
      figures.push(await timed('list sessions', 20, async () => (listed = ((await ctx.get('/api/workspaces/default/sql/sessions')) as { items?: unknown[] }).items?.length ?? -1)));
      figures[figures.length - 1].note = `${listed} listed`;
      yield { size, figures };
    }
  } finally {
    await close();
  }
};
