// The PostgreSQL statements a trivial query costs: `SELECT 42` submitted, awaited and its first rows page read
// through the api by `clients` concurrent clients (1: sequentially), with the server's log_statement on. Prints the statements per query, grouped by
// text, after subtracting what the background loops (reapers, heartbeats, effect recovery) sent in an idle window
// as long as the measured one. Run by hand: node bench/queryStatements.ts [queries] [clients] [query|session|connector]
// (`session`: `SELECT 42` as a statement in an open SQL session, one request that waits and carries the first page;
// `connector`: the same statement as DuckHaven's connector sends it: submitted (202), awaited, its rows read)
import { connectDb } from '../runtime/db.ts';
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, startAgentProcess, startApiProcess } from './support.ts';

const n = Number(process.argv[2] ?? 50);
const clients = Number(process.argv[3] ?? 1);
const path = process.argv[4] ?? 'query';
if (!['query', 'session', 'connector'].includes(path)) throw new Error('the third argument is query, session or connector');
const PREFIX = '@@stmt|';
let lines: string[] = [];
let collecting = false;
const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP, SQL_SESSIONS_ENABLED: 'true' }, { onPgLog: (l) => collecting && lines.push(l) });
const token = await adminToken(api);
const agent = await startAgentProcess(api, token, 'bench', BENCH_BOOTSTRAP);
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

let session: string | null = null;

async function once(agentId: string) {
  if (path === 'session') return statementOnce(agentId);
  const sub =
    path === 'connector'
      ? await fetch(`${api.url}/api/sql/sessions/${await sessionOn(agentId)}/statements`, { method: 'POST', headers, body: JSON.stringify({ sql: 'SELECT 42' }) })
      : await fetch(`${api.url}/api/workspaces/default/queries`, { method: 'POST', headers, body: JSON.stringify({ sql: 'SELECT 42', agent_id: agentId }) });
  const q = (await sub.json()) as { id: string; status: string };
  if (sub.status !== 202) throw new Error(`submit: ${sub.status} ${JSON.stringify(q)}`);
  const final = q.status === 'done' ? q : ((await (await fetch(`${api.url}/api/queries/${q.id}?wait_timeout_s=30`, { headers })).json()) as { status: string });
  if (final.status !== 'done') throw new Error(`query ${final.status}`);
  const page = (await (await fetch(`${api.url}/api/queries/${q.id}/rows?limit=1000`, { headers })).json()) as { rows: Array<Record<string, unknown>> };
  if (page.rows?.[0]?.['42'] !== 42) throw new Error(`rows: ${JSON.stringify(page)}`);
}

const post = async (route: string, body: unknown) => {
  const r = await fetch(`${api.url}/api${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const answer = (await r.json()) as any;
  if (r.status >= 300) throw new Error(`${route}: ${r.status} ${JSON.stringify(answer)}`);
  return answer;
};

/** The bench's SQL session, opened on first use. */
const sessionOn = async (agentId: string) => (session ??= (await post('/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 60 })).id as string);

/** `SELECT 42` in the bench's SQL session: one request, waited, with its first page. */
async function statementOnce(agentId: string) {
  const st = await post(`/sql/sessions/${await sessionOn(agentId)}/statements`, { sql: 'SELECT 42', wait_timeout_s: 30 });
  if (st.status !== 'done' || st.first_page?.rows?.[0]?.['42'] !== 42) throw new Error(`statement: ${JSON.stringify(st)}`);
}

/** The statements logged since `lines` was emptied, by their text with literals and whitespace folded. */
function statements(): Map<string, number> {
  const out = new Map<string, number>();
  let current: string | null = null;
  const flush = () => {
    if (current === null) return;
    const key = current.replace(/\s+/g, ' ').replace(/'[^']*'/g, "'…'").slice(0, 160);
    out.set(key, (out.get(key) ?? 0) + 1);
    current = null;
  };
  for (const line of lines) {
    if (line.startsWith(PREFIX)) {
      flush();
      // `LOG:  statement: …` (simple protocol) or `LOG:  execute <name>: …` (extended); DETAIL lines are parameters.
      const m = /LOG:\s+(?:statement|execute [^:]*): (.*)$/.exec(line);
      if (m) current = m[1];
    } else if (current !== null) {
      current += ` ${line}`;
    }
  }
  flush();
  return out;
}

const control = await connectDb({ url: api.databaseUrl, poolSize: 1, maxOverflow: 0 });
try {
  const agentId = await agentIdByName(api, token, 'bench');
  for (let i = 0; i < 20; i++) await once(agentId);
  await control.query(`alter system set log_statement = 'all'`);
  await control.query(`alter system set log_line_prefix = '${PREFIX}'`);
  await control.query(`select pg_reload_conf()`);
  await new Promise((r) => setTimeout(r, 500));
  lines = [];
  collecting = true;
  const t0 = performance.now();
  let started = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (started++ < n) await once(agentId);
  }));
  const ms = performance.now() - t0;
  collecting = false;
  const busy = statements();
  lines = [];
  collecting = true;
  await new Promise((r) => setTimeout(r, ms));
  collecting = false;
  const idle = statements();
  await control.query(`alter system reset log_statement`);
  await control.query(`select pg_reload_conf()`);
  const rows = [...busy].map(([text, count]) => ({ text, perQuery: (count - (idle.get(text) ?? 0)) / n })).filter((r) => r.perQuery > 0.01);
  rows.sort((a, b) => b.perQuery - a.perQuery);
  const total = rows.reduce((s, r) => s + r.perQuery, 0);
  console.log(`SELECT 42 as a ${path}, ${n} runs by ${clients} client(s) (submit → done → first page): ${total.toFixed(2)} statements per run`);
  console.log(`(background in an idle ${(ms / 1000).toFixed(1)} s window, subtracted: ${[...idle.values()].reduce((s, c) => s + c, 0)} statements)`);
  for (const r of rows) console.log(`${r.perQuery.toFixed(2).padStart(6)}  ${r.text}`);
} finally {
  await control.close();
  agent.kill('SIGTERM');
  await api.stop();
}
