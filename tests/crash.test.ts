// Nothing is lost when the api process dies: state lives in PostgreSQL. A hard-killed api leaves its running query
// behind; a new api process rehydrates it and the query still ends: failed by the agent's own timeout report on its
// new connection, or by the reaper once the persisted deadline passes, whichever comes first.
import { describe, expect, it } from 'vitest';
import { freshDatabase } from './support/database.ts';
import { adminOn, apiReady, exited, processSite, startEider, until } from './support/processes.ts';



describe('an api process killed mid-query', () => {
  it('leaves the query to the next api process, which ends it; the agent reconnects to it', () => scenario({ agentDiesToo: false }), 120_000);
  it('with the agent dead too, the next process\'s reaper fails the query past its deadline', () => scenario({ agentDiesToo: true }), 120_000);
});

async function scenario(opts: { agentDiesToo: boolean }) {
  const database = await freshDatabase({ empty: true });
  const site = await processSite(database.url, 'eider-crash-');
  const { url } = site;
  const apiEnv = {
    ...site.apiEnv,
    AGENT_BOOTSTRAP_TOKEN: 'crash-bootstrap-token-0123456789',
    ACTOR_REAPER_TICK_S: '0.2',
    AGENT_HEARTBEAT_INTERVAL_S: '0.5',
    AGENT_HEARTBEAT_TTL_S: '3',
  };
  let api = startEider('api', apiEnv);
  const agent = startEider('agent', site.agentEnv('survivor', 'crash-bootstrap-token-0123456789'));
  try {
    await apiReady(url);
    const json = { 'content-type': 'application/json' };
    const auth = { cookie: (await adminOn(url)).cookie };
    const agentId = await until(async () => {
      const list = (await (await fetch(`${url}/api/agents`, { headers: auth })).json()) as any[];
      return list.find((a) => a.name === 'survivor' && a.status === 'healthy')?.id as string | undefined;
    }, 30_000, 'agent healthy');

    const submit = await fetch(`${url}/api/workspaces/default/queries`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: JSON.stringify({ sql: 'SELECT count(*) FROM range(100000000000)', agent_id: agentId, timeout_s: 2 }),
    });
    const q = (await submit.json()) as any;
    expect(q.status).toBe('running');

    api.kill('SIGKILL');
    await exited(api);
    if (opts.agentDiesToo) {
      agent.kill('SIGKILL');
      await exited(agent);
    }
    api = startEider('api', apiEnv);
    await apiReady(url, 'api ready again');

    // the agent reports its timeout to the new process, or the query's persisted deadline passes there
    const final = await until(async () => {
      const r = (await (await fetch(`${url}/api/queries/${q.id}`, { headers: auth })).json()) as any;
      return ['failed', 'done', 'cancelled'].includes(r.status) ? r : undefined;
    }, 30_000, 'query ended');
    expect(final.status).toBe('failed');
    const history = await database.db.query<{ to_state: string; replica: string }>(
      `select to_state, replica from eider.actor_transitions where kind = 'query' and id = $1 order by seq`,
      [q.id],
    );
    expect(history.map((h) => h.to_state)).toEqual(expect.arrayContaining(['queued', 'running', 'failed']));
    if (opts.agentDiesToo) {
      // nobody reported: the deadline (agent heartbeat TTL, or the query's timeout plus grace) ended it
      expect(final.error).toMatch(/agent|deadline|time/i);
      const [row] = await database.db.query<{ status: string }>(`select status from eider.agents where id = $1`, [agentId]);
      expect(row.status).toBe('unavailable');
    } else {
      // the agent came back to the new process with its session token
      const back = await until(async () => {
        const list = (await (await fetch(`${url}/api/agents`, { headers: auth })).json()) as any[];
        return list.find((a) => a.id === agentId && a.status === 'healthy');
      }, 30_000, 'agent back');
      expect(back.name).toBe('survivor');
    }
  } finally {
    agent.kill('SIGTERM');
    api.kill('SIGTERM');
    await Promise.all([exited(agent), exited(api)]);
    await database.drop();
    site.remove();
  }
}
