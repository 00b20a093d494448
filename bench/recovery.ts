// How long each part of `eider up` (API_REPLICAS=3, HAProxy in front when installed) takes to serve again after it
// is killed under a light load, and what the clients saw meanwhile. For each kind of kill (the catalog service
// kill -9; the api replica holding the agent kill -9 and SIGTERM; the object store kill -9; the bundled agent
// kill -9), BENCH_RUNS times: the time until the part answers again (its port, or readiness 200 for a replica),
// until queries through every replica succeed again, until the agent is healthy again, and the failed client
// requests with their codes. Stops by itself; run by hand: `node bench/recovery.ts` (Node 24, from the
// repository; embedded PostgreSQL in a temp dir). BENCH_LOG=<file> keeps the stack's log (JSON, LOG_LEVEL=info)
// for finding where the time goes.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDb } from '../runtime/db.ts';
import { freePort, startEmbeddedPostgres } from '../runtime/postgres.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 60_000);
/** A part restarted less than this long ago would count towards the supervisor's crash loop: wait it out. */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 12_000);
const BASE_PORT = Number(process.env.BENCH_BASE_PORT ?? 0);
const SETUP = 'bench-setup-token-000000';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Kind = 'catalog -9' | 'api (agent holder) -9' | 'api (agent holder) TERM' | 'objectstore -9' | 'agent -9';
const KINDS: Kind[] = ['catalog -9', 'api (agent holder) -9', 'api (agent holder) TERM', 'objectstore -9', 'agent -9'];

interface Outcome {
  replica: number;
  start: number;
  end: number;
  ok: boolean;
  code: string;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'eider-recovery-'));
  const pg = await startEmbeddedPostgres(join(dir, 'pg'));
  const port = async (i: number) => (BASE_PORT ? BASE_PORT + i : await freePort());
  const [api, store, catalog, lb] = [await port(0), await port(10), await port(11), await port(12)];
  const apis = [api, api + 1, api + 2];
  const up = spawn(process.execPath, [join(import.meta.dirname, '..', 'bin', 'eider.ts'), 'up'], {
    env: {
      ...process.env,
      DATABASE_URL: pg.url,
      DATA_DIR: join(dir, 'data'),
      API_REPLICAS: '3',
      PORT: String(api),
      LB_PORT: String(lb),
      OBJECT_STORE_PORT: String(store),
      CATALOG_PORT: String(catalog),
      RESULTS_HTTP_PORT: '0',
      SEED_SAMPLES: 'false',
      SETUP_TOKEN: SETUP,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const log = process.env.BENCH_LOG ? createWriteStream(process.env.BENCH_LOG) : null;
  const mark = (what: string) => log?.write(`${JSON.stringify({ time: Date.now(), bench: what })}\n`);
  for (const s of [up.stdout!, up.stderr!]) {
    s.on('data', (d) => {
      out = (out + d).slice(-200_000);
      log?.write(d);
    });
  }
  const db = await connectDb({ url: pg.url, poolSize: 2 });
  let stopping = false;
  // Ctrl-C stops the stack and the database too.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      up.kill('SIGTERM');
      up.once('exit', () => void pg.stop().finally(() => process.exit(130)));
    });
  }
  try {
    for (let i = 0; !out.includes('Eider is up'); i++) {
      if (up.exitCode !== null) throw new Error(`eider up exited: ${out.slice(-2000)}`);
      if (i > 6000) throw new Error('eider up did not come up in 10 minutes');
      await sleep(100);
    }
    const base = (i: number) => `http://127.0.0.1:${apis[i]}`;
    const json = { 'content-type': 'application/json' };
    await fetch(`${base(0)}/api/setup/admin`, {
      method: 'POST',
      headers: { ...json, 'x-setup-token': SETUP },
      body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password', name: 'Bench' }),
    });
    const login = await fetch(`${base(0)}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }) });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const { token } = (await (await fetch(`${base(0)}/api/me/pats`, { method: 'POST', headers: { ...json, cookie }, body: JSON.stringify({ expires_in_days: 1 }) })).json()) as { token: string };
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const agentRow = async () =>
      (await db.query<{ id: string; owner: string | null; status: string; connected: Date | null }>(
        `select id, owner_replica as owner, status, connected_at as connected from eider.agents where name = 'bundled'`,
      ))[0];
    const agentId = (await agentRow()).id;

    /** One query through replica i, to its end: ok, or the HTTP status and error code that refused or failed it. */
    const query = async (i: number, sql: string): Promise<{ ok: boolean; code: string }> => {
      try {
        const signal = AbortSignal.timeout(20_000);
        const sub = await fetch(`${base(i)}/api/workspaces/default/queries`, { method: 'POST', headers, signal, body: JSON.stringify({ sql, agent_id: agentId }) });
        const q = (await sub.json()) as any;
        if (sub.status !== 202) return { ok: false, code: `${sub.status} ${q.error ?? ''}` };
        let final = q;
        // A draining replica answers a long-poll at once with where the query stands: poll again until the end.
        for (let first = true; final.status !== 'done' && final.status !== 'failed' && final.status !== 'cancelled'; first = false) {
          if (!first) await sleep(100);
          const r = await fetch(`${base(i)}/api/queries/${q.id}?wait_timeout_s=10`, { headers, signal });
          if (r.status !== 200) return { ok: false, code: `poll ${r.status} ${((await r.json()) as any).error ?? ''}` };
          final = await r.json();
        }
        return final.status === 'done' ? { ok: true, code: 'done' } : { ok: false, code: `${final.status} ${final.error_code ?? ''}` };
      } catch (e) {
        return { ok: false, code: `network ${(e as Error).name}` };
      }
    };
    const first = await query(0, 'CREATE TABLE recovery_t AS SELECT range AS id, range % 7 AS k FROM range(1000)');
    if (!first.ok) throw new Error(`CTAS: ${first.code}`);

    // The load: one client per replica, alternating SELECT 42 and an aggregate over the Iceberg table (it goes
    // through the catalog service and the object store).
    const outcomes: Outcome[] = [];
    const clients = apis.map(async (_, i) => {
      for (let n = 0; !stopping; n++) {
        const start = Date.now();
        const r = await query(i, n % 2 ? 'SELECT 42' : 'SELECT k, count(*) AS n, sum(id) AS s FROM recovery_t GROUP BY k');
        outcomes.push({ replica: i, start, end: Date.now(), ...r });
        await sleep(150);
      }
    });

    const children = () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .flatMap((p) => {
          try {
            const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
            if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== up.pid) return [];
            const args = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean);
            const env = readFileSync(`/proc/${p}/environ`, 'utf8').split('\0');
            return [{ pid: Number(p), command: args.at(-1)!, replica: env.find((e) => e.startsWith('REPLICA_ID='))?.slice(11) }];
          } catch {
            return [];
          }
        });
    const pidOf = (command: string, replica?: string) => children().find((c) => c.command === command && (!replica || c.replica === replica))?.pid;
    const answers = (p: number) =>
      new Promise<boolean>((res) => {
        const s = connect(p, '127.0.0.1');
        s.once('connect', () => (s.destroy(), res(true)));
        s.once('error', () => res(false));
      });
    const httpOk = (url: string, any = false) => fetch(url, { signal: AbortSignal.timeout(2_000) }).then((r) => any || r.ok, () => false);

    const rows: { kind: Kind; gone: number; back: number; queries: number; agent: number; failed: number; codes: string }[] = [];
    await sleep(5_000);
    for (let run = 0; run < RUNS; run++) {
      for (const kind of KINDS) {
        const holder = (await agentRow()).owner ?? 'api-1';
        const replicaIndex = Number(holder.replace('api-', '')) - 1;
        const target =
          kind === 'catalog -9' ? pidOf('catalog') : kind === 'objectstore -9' ? pidOf('objectstore') : kind === 'agent -9' ? pidOf('agent') : pidOf('api', holder);
        if (!target) throw new Error(`no process for ${kind}: ${JSON.stringify(children())}`);
        const partBack: () => Promise<boolean> =
          kind === 'catalog -9'
            ? () => httpOk(`http://127.0.0.1:${catalog}/v1/config`, true)
            : kind === 'objectstore -9'
              ? () => answers(store)
              : kind === 'agent -9'
                ? async () => {
                    const pid = pidOf('agent');
                    return pid !== undefined && pid !== target;
                  }
                : () => httpOk(`${base(replicaIndex)}/api/readyz`);
        const connectedBefore = (await agentRow()).connected?.getTime() ?? 0;
        const t0 = Date.now();
        mark(`kill ${kind} pid ${target}`);
        process.kill(target, kind.endsWith('TERM') ? 'SIGTERM' : 'SIGKILL');
        // The part is gone before "back" counts (a SIGTERMed replica drains first): `eider up` has reaped it.
        while (existsSync(`/proc/${target}`) && Date.now() - t0 < 40_000) await sleep(10);
        const gone = Date.now() - t0;
        let back = NaN;
        let agentBack = NaN;
        // The agent's socket must be a new one after its own death or its replica's; otherwise it must be healthy.
        const needsNewSocket = kind === 'agent -9' || kind.startsWith('api');
        while (Date.now() - t0 < WINDOW_MS) {
          const now = Date.now();
          if (Number.isNaN(back) && (await partBack())) back = now - t0;
          const a = await agentRow();
          const newSocket = (a.connected?.getTime() ?? 0) > connectedBefore;
          if (a.status !== 'healthy') agentBack = NaN;
          else if (Number.isNaN(agentBack) && (newSocket || !needsNewSocket)) agentBack = now - t0;
          // Recovered: the part and the agent back, and every replica's client succeeded since the last failure.
          const recovered = apis.every((_, i) => {
            const mine = outcomes.filter((o) => o.replica === i && o.start >= t0);
            const lastFail = mine.findLastIndex((o) => !o.ok);
            return mine.slice(lastFail + 1).filter((o) => o.ok).length >= 2;
          });
          if (!Number.isNaN(back) && !Number.isNaN(agentBack) && recovered) break;
          await sleep(50);
        }
        // Per replica: the end of its first success that started after the kill and after its last failure.
        const mine = outcomes.filter((o) => o.end >= t0);
        const queries = Math.max(
          ...apis.map((_, i) => {
            const own = mine.filter((o) => o.replica === i);
            const lastFail = own.findLastIndex((o) => !o.ok);
            const ok = own.slice(lastFail + 1).find((o) => o.ok && o.start >= t0);
            return ok ? ok.end - t0 : NaN;
          }),
        );
        const failed = mine.filter((o) => !o.ok);
        const codes = [...failed.reduce((m, o) => m.set(o.code.trim(), (m.get(o.code.trim()) ?? 0) + 1), new Map<string, number>())]
          .map(([c, n]) => `${n}× ${c}`)
          .join(', ');
        rows.push({ kind, gone, back, queries, agent: agentBack, failed: failed.length, codes });
        mark(`recovered ${kind}: back ${back} queries ${queries} agent ${agentBack}`);
        console.log(`${kind}: gone ${gone} ms, back ${back} ms, queries ok ${queries} ms, agent ${agentBack} ms, ${failed.length} failed (${codes})`);
        await sleep(SETTLE_MS);
      }
    }
    stopping = true;
    await Promise.all(clients);
    const sec = (ms: number) => (Number.isNaN(ms) ? '   >window' : `${(ms / 1000).toFixed(1).padStart(8)} s`);
    console.log(`\n${'kill'.padEnd(26)} ${'gone'.padStart(10)} ${'part back'.padStart(10)} ${'queries ok'.padStart(10)} ${'agent ok'.padStart(10)}  failed requests`);
    for (const r of rows) console.log(`${r.kind.padEnd(26)} ${sec(r.gone)} ${sec(r.back)} ${sec(r.queries)} ${sec(r.agent)}  ${r.failed}${r.codes ? ` (${r.codes})` : ''}`);
  } finally {
    stopping = true;
    await db.close();
    if (up.exitCode === null) {
      up.kill('SIGTERM');
      await new Promise((r) => up.once('exit', r));
    }
    log?.end();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
