// Chaos under load: `API_REPLICAS=3 eider up` behind HAProxy on a PostgreSQL primary with a synchronous standby
// (Debian's server programs), 32 clients submitting a mix through the load balancer (trivial queries, scans, CTAS,
// SQL-session statements, cancels), and every --interval seconds one part killed at random: an api replica (SIGKILL
// or SIGTERM), the agent, the catalog service, the object store (each brought back by `eider up`'s supervision), or
// the PostgreSQL primary (SIGKILL, then the standby promoted; once per run: no new standby is built after it).
// It stops by itself after --minutes (default 10) and a bounded settling time, and prints: acknowledged queries
// lost, queries not terminal within their timeout + 60 s, 5xx answers outside --window seconds after each kill (by
// code and route), and the time to recover after each kill: until a one-row Iceberg table is read end to end through
// the balancer (the agent, the catalog service and the object store), bounded at 120 s.
// Run by hand: `node bench/chaos.ts [--minutes 3] [--interval 30] [--window 20] [--clients 32]` (as root: it runs
// PostgreSQL as the `postgres` user). Ports 27010-27031.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { primaryWithStandby } from '../tests/support/pgStandby.ts';
import { connectDb } from '../runtime/db.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i > 0 ? Number(process.argv[i + 1]) : def;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} takes a positive number`);
  return v;
};
const MINUTES = arg('minutes', 10);
const INTERVAL_S = arg('interval', 30);
const WINDOW_S = arg('window', 20);
const CLIENTS = arg('clients', 32);
// --kinds replica-kill9,pg-primary: only those kinds of kill (all by default).
const KINDS_ARG = process.argv.includes('--kinds') ? process.argv[process.argv.indexOf('--kinds') + 1].split(',') : null;
const TIMEOUT_S = 60;
const RECOVERY_BOUND_S = 120;
const SETTLE_MS = (TIMEOUT_S + 60) * 1000;
const PORTS = { api: 27010, lb: 27020, catalog: 27021, store: 27022, results: 27023, pg: [27030, 27031] as [number, number] };
const ROOT = join(import.meta.dirname, '..');
const TERMINAL = new Set(['done', 'failed', 'cancelled']);
const KINDS = ['replica-kill9', 'replica-sigterm', 'agent', 'catalog', 'objectstore', 'pg-primary'] as const;
type Kind = (typeof KINDS)[number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => Date.now();

interface Tracked {
  id: string;
  kind: string;
  submittedAt: number;
  timeoutS: number;
  terminalAt?: number;
  status?: string;
}
const tracked: Tracked[] = [];
const answers: Array<{ at: number; status: number; code?: string; what?: string }> = [];
const networkErrors: number[] = [];
const kills: Array<{ at: number; kind: Kind; target: string; recoveredMs?: number }> = [];
let stopping = false;

/** The parts `eider up` runs: pid → command (and the replica's id for an api). */
function parts(upPid: number): Array<{ pid: number; command: string; replica?: string }> {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== upPid) continue;
      const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      const command = argv[argv.findIndex((a) => a.endsWith('eider.ts')) + 1];
      const env = readFileSync(`/proc/${d}/environ`, 'utf8').split('\0');
      const replica = env.find((e) => e.startsWith('REPLICA_ID='))?.slice('REPLICA_ID='.length);
      out.push({ pid: Number(d), command, replica });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'eider-chaos-'));
  execFileSync('sh', [join(ROOT, 'scripts/ensure-haproxy.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  console.log('starting PostgreSQL primary + synchronous standby…');
  const pg = await primaryWithStandby({ ports: PORTS.pg });
  const up = spawn(process.execPath, [join(ROOT, 'bin', 'eider.ts'), 'up'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      DATA_DIR: join(dir, 'data'),
      DATABASE_URL: pg.url,
      API_REPLICAS: '3',
      PORT: String(PORTS.api),
      LB_PORT: String(PORTS.lb),
      CATALOG_PORT: String(PORTS.catalog),
      OBJECT_STORE_PORT: String(PORTS.store),
      RESULTS_HTTP_PORT: String(PORTS.results),
      SQL_SESSIONS_ENABLED: 'true',
      SEED_SAMPLES: 'false',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  // The stack's own log (warnings and errors) is kept for reading the causes of what the figures show.
  const logFile = join(tmpdir(), `eider-chaos-${process.pid}.log`);
  up.stdout!.on('data', (d) => ((log += d), appendFileSync(logFile, d)));
  up.stderr!.on('data', (d) => ((log += d), appendFileSync(logFile, d)));
  // Whatever happens, the bench ends: setup, the run, settling and stopping are bounded as a whole.
  const hardStop = setTimeout(() => {
    console.error('chaos bench: overall deadline passed; stopping everything');
    try {
      process.kill(-up.pid!, 'SIGKILL');
    } catch {
      // gone
    }
    pg.stop();
    process.exit(1);
  }, (MINUTES * 60 + 600) * 1000);
  hardStop.unref();
  const url = `http://127.0.0.1:${PORTS.lb}`;
  try {
    for (let i = 0; !log.includes('Eider is up.'); i++) {
      if (up.exitCode !== null || i > 3000) throw new Error(`eider up did not come up: ${log.slice(-3000)}`);
      await sleep(100);
    }
    const setup = readFileSync(join(dir, 'data', 'setup-token'), 'utf8').trim();
    const json = { 'content-type': 'application/json' };
    await fetch(`${url}/api/setup/admin`, { method: 'POST', headers: { ...json, 'x-setup-token': setup }, body: JSON.stringify({ email: 'chaos@example.com', password: 'a-long-password', name: 'Chaos' }) });
    const login = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'chaos@example.com', password: 'a-long-password' }) });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const pat = (await (await fetch(`${url}/api/me/pats`, { method: 'POST', headers: { ...json, cookie }, body: JSON.stringify({ expires_in_days: 1 }) })).json()) as { token: string };
    const headers = { ...json, authorization: `Bearer ${pat.token}` };
    // Without elastic compute, work names its agent: the bundled one.
    const agentList = (await (await fetch(`${url}/api/agents`, { headers })).json()) as Array<{ id: string; name: string }>;
    const agentId = agentList.find((a) => a.name === 'bundled')?.id;
    if (!agentId) throw new Error(`no bundled agent: ${JSON.stringify(agentList)}`);

    /** One request through the balancer; every answer and network error is recorded with its time. */
    const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any } | null> => {
      try {
        const r = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(90_000) });
        const text = await r.text();
        let parsed: any = null;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          parsed = text;
        }
        const what = r.status >= 500 ? `${method} ${path.replace(/[0-9a-f-]{36}/g, ':id').replace(/\?.*/, '')}: ${typeof parsed?.message === 'string' ? parsed.message : String(text).slice(0, 80).replace(/\s+/g, ' ')}` : undefined;
        answers.push({ at: now(), status: r.status, code: typeof parsed?.error === 'string' ? parsed.error : undefined, what });
        return { status: r.status, body: parsed };
      } catch {
        networkErrors.push(now());
        return null;
      }
    };
    /** Waits for a tracked query to end, up to its timeout + 60 s after it was acknowledged. */
    const follow = async (q: Tracked) => {
      const deadline = q.submittedAt + (q.timeoutS + 60) * 1000;
      while (now() < deadline) {
        const r = await call('GET', `/api/queries/${q.id}?wait_timeout_s=10`);
        if (r?.status === 200 && TERMINAL.has(r.body?.status)) {
          q.terminalAt = now();
          q.status = r.body.status;
          return;
        }
        if (!r || r.status >= 500) await sleep(500);
      }
    };
    const submit = async (kind: string, sql: string, timeoutS = TIMEOUT_S): Promise<Tracked | null> => {
      const r = await call('POST', '/api/workspaces/default/queries', { sql, timeout_s: timeoutS, agent_id: agentId });
      if (r?.status !== 202 && r?.status !== 200) {
        if (kind === 'setup') throw new Error(`setup statement refused: ${sql}: ${r?.status} ${JSON.stringify(r?.body)}`);
        // Refused (the agent or the database away): a client backs off rather than spinning on the 503.
        await sleep(500);
        return null;
      }
      const q: Tracked = { id: r.body.id, kind, submittedAt: now(), timeoutS };
      tracked.push(q);
      return q;
    };
    const run = async (sql: string) => {
      const q = (await submit('setup', sql))!;
      await follow(q);
      if (q.status !== 'done') throw new Error(`setup statement ${q.status ?? 'not terminal'}: ${sql}`);
    };
    await run('CREATE SCHEMA IF NOT EXISTS chaos');
    await run('CREATE TABLE chaos.tiny AS SELECT 1 AS one');
    await run('CREATE TABLE chaos.big AS SELECT range AS id, range % 97 AS k, md5(range::varchar) AS s FROM range(200000)');
    console.log(`stack up (${url}); ${CLIENTS} clients for ${MINUTES} min, a kill every ${INTERVAL_S} s`);

    let seq = 0;
    const client = async (c: number) => {
      while (!stopping) {
        const pick = Math.random();
        if (pick < 0.35) {
          const q = await submit('trivial', `SELECT ${c} AS c, ${++seq} AS n`);
          if (q) await follow(q);
        } else if (pick < 0.55) {
          const q = await submit('scan', 'SELECT k, count(*) AS n, max(s) AS s FROM chaos.big GROUP BY k ORDER BY k');
          if (q) await follow(q);
        } else if (pick < 0.65) {
          const q = await submit('ctas', `CREATE TABLE chaos.c_${c}_${++seq} AS SELECT id, k FROM chaos.big WHERE k = ${seq % 97}`);
          if (q) await follow(q);
        } else if (pick < 0.85) {
          const s = await call('POST', '/api/workspaces/default/sql/sessions', { wait_timeout_s: 30, agent_id: agentId });
          if (s?.status === 201) {
            for (const sql of ['SELECT 1 AS one', `SELECT count(*) AS n FROM chaos.big WHERE k = ${c % 97}`]) {
              const st = await call('POST', `/api/sql/sessions/${s.body.id}/statements`, { sql, timeout_s: TIMEOUT_S, wait_timeout_s: 0 });
              if (st?.status !== 200 && st?.status !== 202) break;
              const q: Tracked = { id: st.body.id, kind: 'session', submittedAt: now(), timeoutS: TIMEOUT_S };
              tracked.push(q);
              await follow(q);
              if (q.status !== 'done') break;
            }
            await call('DELETE', `/api/sql/sessions/${s.body.id}`);
          } else {
            await sleep(500);
          }
        } else {
          const q = await submit('cancel', 'SELECT count(*) FROM range(100000000000) t, range(10) u', 30);
          if (q) {
            await sleep(300 + Math.random() * 700);
            await call('POST', `/api/queries/${q.id}/cancel`);
            await follow(q);
          }
        }
        if (!stopping) await sleep(Math.random() * 200);
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));

    /** Time until a scan of a one-row table (agent, catalog and object store) runs end to end through the balancer. */
    const recovery = async (kill: (typeof kills)[number], until: number) => {
      while (now() < until) {
        const r = await call('POST', '/api/workspaces/default/queries', { sql: 'SELECT count(*) AS n FROM chaos.tiny', timeout_s: 30, agent_id: agentId });
        if (r?.status === 202 || r?.status === 200) {
          const done = await call('GET', `/api/queries/${r.body.id}?wait_timeout_s=30`);
          if (done?.body?.status === 'done') {
            kill.recoveredMs = now() - kill.at;
            return;
          }
        }
        await sleep(250);
      }
    };

    // The kinds in a shuffled order, every kind once before any repeats; the primary only once.
    const order: Kind[] = [];
    let primaryKilled = false;
    const nextKind = (): Kind => {
      if (!order.length) order.push(...[...KINDS].filter((k) => (!KINDS_ARG || KINDS_ARG.includes(k)) && (k !== 'pg-primary' || !primaryKilled)).sort(() => Math.random() - 0.5));
      return order.shift() ?? 'replica-sigterm';
    };
    const end = now() + MINUTES * 60_000;
    const recoveries: Promise<void>[] = [];
    while (now() + INTERVAL_S * 1000 <= end) {
      await sleep(INTERVAL_S * 1000);
      const kind = nextKind();
      const ps = parts(up.pid!);
      let target = '';
      if (kind === 'pg-primary') {
        primaryKilled = true;
        target = `postgres ${pg.primaryPid()}`;
        process.kill(pg.primaryPid(), 'SIGKILL');
      } else {
        const candidates = ps.filter((p) => p.command === (kind.startsWith('replica') ? 'api' : kind));
        const victim = candidates[Math.floor(Math.random() * candidates.length)];
        if (!victim) {
          console.log(`  no ${kind} running to kill`);
          continue;
        }
        target = `${victim.replica ?? victim.command} ${victim.pid}`;
        process.kill(victim.pid, kind === 'replica-sigterm' ? 'SIGTERM' : 'SIGKILL');
      }
      const kill = { at: now(), kind, target };
      kills.push(kill);
      console.log(`  ${new Date(kill.at).toISOString().slice(11, 19)} killed ${kind} (${target})`);
      if (kind === 'pg-primary') pg.promoteStandby();
      recoveries.push(recovery(kill, kill.at + RECOVERY_BOUND_S * 1000));
    }
    await sleep(Math.max(0, end - now()));
    stopping = true;
    console.log('load stopped; waiting for the acknowledged queries to end…');
    await Promise.race([Promise.all([...clients, ...recoveries]), sleep(SETTLE_MS + 30_000)]);

    // Lost: acknowledged (it had an id) and unknown now (read once more, every one). Not terminal in time: no
    // terminal status seen within timeout + 60 s; the last read names where those stand.
    const answered = answers.length;
    let lost = 0;
    const late: Tracked[] = [];
    for (const q of tracked) {
      const r = await call('GET', `/api/queries/${q.id}`);
      if (r?.status === 404) {
        lost++;
        continue;
      }
      if (q.terminalAt !== undefined && q.terminalAt - q.submittedAt <= (q.timeoutS + 60) * 1000) continue;
      q.status = r?.body?.status ?? q.status;
      late.push(q);
    }
    const inWindow = (at: number) => kills.some((k) => at >= k.at && at <= k.at + WINDOW_S * 1000);
    // The run's answers only: the final reads above come after it.
    answers.length = answered;
    const fivexx = answers.filter((a) => a.status >= 500);
    const outside = fivexx.filter((a) => !inWindow(a.at));
    const netOutside = networkErrors.filter((at) => !inWindow(at));
    const byStatus = (xs: Tracked[]) => Object.entries(xs.reduce<Record<string, number>>((m, q) => ((m[q.status ?? 'unknown'] = (m[q.status ?? 'unknown'] ?? 0) + 1), m), {})).map(([k, v]) => `${k} ${v}`).join(', ');

    console.log(`\nthe stack's log: ${logFile}`);
    console.log(`chaos: ${MINUTES} min, ${CLIENTS} clients, ${kills.length} kills every ${INTERVAL_S} s, window ${WINDOW_S} s`);
    console.log(`acknowledged queries: ${tracked.length} (${byStatus(tracked)})`);
    console.log(`acknowledged queries lost: ${lost}`);
    console.log(`queries not terminal within timeout + 60 s: ${late.length}${late.length ? ` (${late.map((q) => `${q.kind} ${q.status}`).join(', ')})` : ''}`);
    console.log(`answers: ${answers.length}; 5xx: ${fivexx.length}, of which outside the ${WINDOW_S} s after a kill: ${outside.length}${outside.length ? ` (${[...new Set(outside.map((a) => a.status))].join(', ')})` : ''}`);
    const codes = (xs: typeof answers) => Object.entries(xs.reduce<Record<string, number>>((m, a) => ((m[`${a.status} ${a.code ?? '-'}`] = (m[`${a.status} ${a.code ?? '-'}`] ?? 0) + 1), m), {})).map(([k, v]) => `${k}: ${v}`).join(', ');
    if (fivexx.length) console.log(`  5xx by code: ${codes(fivexx)}`);
    if (outside.length) {
      const before = outside.filter((a) => a.at < (kills[0]?.at ?? Infinity)).length;
      console.log(`  outside the window: ${codes(outside)}; ${before} before the first kill`);
      const kinds = outside.reduce<Record<string, number>>((m, a) => ((m[`${a.status} ${a.what}`] = (m[`${a.status} ${a.what}`] ?? 0) + 1), m), {});
      for (const [k, v] of Object.entries(kinds).sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`    ${v} × ${k}`);
    }
    await sessionsNotOpened(pg.url, kills, logFile);
    const errors = fivexx.filter((a) => a.status !== 503);
    for (const a of errors.slice(0, 5)) console.log(`  ${a.status} at ${new Date(a.at).toISOString().slice(11, 19)}: ${a.what}`);
    console.log(`connection errors through the balancer: ${networkErrors.length}, outside the window: ${netOutside.length}`);
    console.log('time to recover (a one-row Iceberg table read through the balancer), per kill:');
    for (const kind of KINDS) {
      const ks = kills.filter((k) => k.kind === kind);
      if (!ks.length) continue;
      const times = ks.map((k) => (k.recoveredMs === undefined ? `not within ${RECOVERY_BOUND_S} s` : `${(k.recoveredMs / 1000).toFixed(1)} s`));
      console.log(`  ${kind.padEnd(16)} ${times.join(', ')}`);
    }
  } finally {
    stopping = true;
    try {
      process.kill(-up.pid!, 'SIGTERM');
    } catch {
      // gone
    }
    for (let i = 0; i < 600 && up.exitCode === null && up.signalCode === null; i++) await sleep(100);
    try {
      process.kill(-up.pid!, 'SIGKILL');
    } catch {
      // stopped
    }
    pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The sessions the clients gave up on (closed by the client before they opened: a 503 compute_starting) and those
 * that failed, each placed after the kill before it, with the session's transitions and the agent's connections'
 * around it written to the log: where the wait went.
 */
async function sessionsNotOpened(url: string, done: typeof kills, logFile: string) {
  const db = await connectDb({ url, poolSize: 1 });
  try {
    const rows = await db.query<{ id: string; status: string; error_code: string | null; created_at: Date; closed_at: Date | null }>(
      `select id, status, error_code, created_at, closed_at from eider.sql_sessions where opened_at is null and status in ('closed', 'failed') order by created_at`,
    );
    if (!rows.length) return;
    const after = (at: number) => {
      const k = [...done].reverse().find((x) => x.at <= at);
      return k ? `${((at - k.at) / 1000).toFixed(1)} s after the ${k.kind} kill` : 'before the first kill';
    };
    const byCause = rows.reduce<Record<string, number>>((m, r) => {
      const key = `${r.status} ${r.error_code ?? '(client gave up)'}, ${after(r.created_at.getTime()).replace(/^[\d.]+ s /, '')}`;
      return ((m[key] = (m[key] ?? 0) + 1), m);
    }, {});
    console.log(`sessions that never opened: ${rows.length}`);
    for (const [k, v] of Object.entries(byCause)) console.log(`  ${v} × ${k}`);
    for (const r of rows.filter((x) => x.status === 'closed')) {
      const t0 = r.created_at.getTime();
      const lines = [`session ${r.id} created ${new Date(t0).toISOString()} (${after(t0)}), closed ${r.closed_at?.toISOString()}`];
      const ts = await db.query<{ kind: string; id: string; event: string; from_state: string | null; to_state: string; at: Date; replica: string }>(
        `select kind, id::text, event, from_state, to_state, at, replica from eider.actor_transitions
          where (kind = 'sqlSession' and id = $1) or (kind = 'agentConnection' and at between $2::timestamptz - interval '20 seconds' and $3::timestamptz)
            and event not in ('heartbeat', 'status')
          order by at`,
        [r.id, r.created_at.toISOString(), (r.closed_at ?? r.created_at).toISOString()],
      );
      for (const t of ts) lines.push(`  ${((t.at.getTime() - t0) / 1000).toFixed(2).padStart(7)} s ${t.kind} ${t.id.slice(0, 8)} ${t.event}: ${t.from_state} → ${t.to_state} (${t.replica})`);
      appendFileSync(logFile, `${lines.join('\n')}\n`);
    }
  } finally {
    await db.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
