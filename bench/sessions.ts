// SQL sessions: the round trip of a statement in an open session (SELECT 42 waited for, 200 in a row, p50/p99), and
// how many sessions one agent holds at the default settings: BENCH_SESSIONS (default 60) opened on one agent, the
// agent's resident memory per session, and what its admission budget allows on a 4 GiB machine
// (SESSION_BASELINE_BYTES each, MEMORY_HEADROOM_FRACTION held back).
// Run by hand: node bench/sessions.ts
import { readFileSync } from 'node:fs';
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, percentiles, startAgentProcess, startApiProcess } from './support.ts';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 60);
const ROUND_TRIPS = 200;
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP, SQL_SESSIONS_ENABLED: 'true' });
const token = await adminToken(api);
const agent = await startAgentProcess(api, token, 'sessions', BENCH_BOOTSTRAP);
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 'eider-bench/1' };
const post = async (path: string, body: unknown) => {
  const r = await fetch(`${api.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as any };
};
try {
  const agentId = await agentIdByName(api, token, 'sessions');
  const open = () => post('/api/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 60 });

  const first = await open();
  if (first.status !== 201) throw new Error(`open: ${first.status} ${JSON.stringify(first.body)}`);
  const stmt = () => post(`/api/sql/sessions/${first.body.id}/statements`, { sql: 'SELECT 42', wait_timeout_s: 30 });
  for (let i = 0; i < 20; i++) await stmt();
  const lat: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now();
    const r = await stmt();
    if (r.status !== 200 || r.body.first_page?.rows?.[0]?.['42'] !== 42) throw new Error(`statement: ${r.status} ${JSON.stringify(r.body)}`);
    lat.push(performance.now() - t0);
  }
  const p = percentiles(lat);
  console.log(`statement round trip in an open session (SELECT 42, waited, first page included), ${ROUND_TRIPS} in a row: p50 ${p.p50.toFixed(1)} ms   p99 ${p.p99.toFixed(1)} ms`);

  const before = rssMiB(agent.pid!);
  const ids = [first.body.id as string];
  let refused: string | null = null;
  const t0 = performance.now();
  while (ids.length < SESSIONS) {
    const r = await open();
    if (r.status !== 201) {
      refused = `${r.status} ${r.body.error}: ${r.body.message}`;
      break;
    }
    ids.push(r.body.id);
  }
  const openMs = (performance.now() - t0) / Math.max(1, ids.length - 1);
  // Every held session still answers.
  const answers = await Promise.all(ids.map((id) => post(`/api/sql/sessions/${id}/statements`, { sql: 'SELECT 1', wait_timeout_s: 60 })));
  const ok = answers.filter((a) => a.status === 200 && a.body.status === 'done').length;
  const after = rssMiB(agent.pid!);
  const perSession = (after - before) / Math.max(1, ids.length - 1);
  const baseline = 64 * 2 ** 20;
  const fourGiB = Math.floor((4 * 2 ** 30 * 0.9) / baseline);
  console.log(`sessions held by one agent: ${ids.length} open${refused ? ` (then refused: ${refused})` : ''}, ${ok} of them answered a statement; open ${openMs.toFixed(0)} ms each`);
  console.log(`agent RSS ${before.toFixed(0)} → ${after.toFixed(0)} MiB: ${perSession.toFixed(1)} MiB per session`);
  console.log(`at the defaults (SESSION_BASELINE_BYTES 64 MiB, MEMORY_HEADROOM_FRACTION 0.10) a 4 GiB agent's budget holds ${fourGiB} sessions; their resident cost at the measured rate is ${(fourGiB * perSession).toFixed(0)} MiB`);
  await Promise.all(ids.map((id) => fetch(`${api.url}/api/sql/sessions/${id}`, { method: 'DELETE', headers })));
} finally {
  agent.kill('SIGTERM');
  await api.stop();
}
