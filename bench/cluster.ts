// The HA cluster as `eider up` runs it with API_REPLICAS=2: how long an agent takes to be healthy on another replica
// after the replica holding it is killed (-9), p50 and max over BENCH_FAILOVERS runs (the killed replica is brought
// back by `eider up`'s supervision between runs), and how many history rows an agent's connection writes a day.
// Run by hand: `node bench/cluster.ts` (Node 24, from the repository; embedded PostgreSQL in a temp dir).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDb } from '../runtime/db.ts';
import { freePort, startEmbeddedPostgres } from '../runtime/postgres.ts';

const RUNS = Number(process.env.BENCH_FAILOVERS ?? 10);
const HEARTBEAT_S = 1;
const HISTORY_WINDOW_S = Number(process.env.BENCH_HISTORY_WINDOW_S ?? 30);
const DEFAULT_HEARTBEAT_S = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'eider-cluster-'));
  const pg = await startEmbeddedPostgres(join(dir, 'pg'));
  const [port, store, catalog, lb] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const up = spawn(process.execPath, [join(import.meta.dirname, '..', 'bin', 'eider.ts'), 'up'], {
    env: {
      ...process.env,
      DATABASE_URL: pg.url,
      DATA_DIR: join(dir, 'data'),
      API_REPLICAS: '2',
      PORT: String(port),
      LB_PORT: String(lb),
      OBJECT_STORE_PORT: String(store),
      CATALOG_PORT: String(catalog),
      AGENT_HEARTBEAT_INTERVAL_S: String(HEARTBEAT_S),
      AGENT_HEARTBEAT_TTL_S: String(HEARTBEAT_S * 3),
      AGENT_PRESENCE_TTL_S: '10',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  up.stdout!.on('data', (d) => (out += d));
  up.stderr!.on('data', (d) => (out += d));
  const db = await connectDb({ url: pg.url, poolSize: 2 });
  try {
    for (let i = 0; !out.includes('Eider is up'); i++) {
      if (up.exitCode !== null) throw new Error(`eider up exited: ${out.slice(-2000)}`);
      if (i > 6000) throw new Error('eider up did not come up in 10 minutes');
      await sleep(100);
    }
    const holder = async () => {
      const [row] = await db.query<{ id: string; owner: string | null; status: string; pid: number | null; beat: Date | null }>(
        `select a.id, a.owner_replica as owner, a.status, r.pid, a.last_heartbeat_at as beat
           from eider.agents a left join eider.replicas r on r.id = a.owner_replica where a.name = 'bundled'`,
      );
      return row;
    };

    // History rows an agent's connection writes while it only heartbeats.
    const count = async () =>
      Number((await db.query<{ n: string }>(`select count(*)::text as n from eider.actor_transitions where kind = 'agentConnection'`))[0].n);
    const before = await count();
    await sleep(HISTORY_WINDOW_S * 1000);
    const rowsPerBeat = (await count() - before) / (HISTORY_WINDOW_S / HEARTBEAT_S);
    const rowsPerDay = rowsPerBeat * (86_400 / DEFAULT_HEARTBEAT_S);

    const failovers: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const h = await holder();
      if (!h?.pid || h.status !== 'healthy') throw new Error(`no healthy holder: ${JSON.stringify(h)}`);
      const killedAt = Date.now();
      process.kill(h.pid, 'SIGKILL');
      for (;;) {
        const now = await holder();
        if (now && now.status === 'healthy' && now.owner !== h.owner && now.beat && now.beat.getTime() >= killedAt - 50) break;
        if (Date.now() - killedAt > 120_000) throw new Error(`the agent did not move within 120 s: ${JSON.stringify(now)}\n${out.slice(-3000)}`);
        await sleep(20);
      }
      failovers.push(Date.now() - killedAt);
      // `eider up` restarts the killed replica; the next kill waits until it has run 10 s (a part killed sooner
      // counts as a crash loop, and `eider up` gives up on those).
      for (;;) {
        const [r] = await db.query<{ pid: number }>(
          `select pid from eider.replicas where id = $1 and heartbeat_at > now() - interval '3 seconds' and started_at < now() - interval '11 seconds'`,
          [h.owner],
        );
        if (r && r.pid !== h.pid) break;
        await sleep(100);
      }
    }
    console.log('\nHA cluster (eider up, API_REPLICAS=2)');
    console.log(`  history rows per heartbeat                      ${rowsPerBeat.toFixed(2)}`);
    console.log(`  history rows per agent per day (heartbeat ${DEFAULT_HEARTBEAT_S} s)  ${rowsPerDay.toFixed(0)}`);
    console.log(`  failover, kill -9 → agent healthy elsewhere     p50 ${percentile(failovers, 50)} ms, max ${Math.max(...failovers)} ms (${RUNS} runs)`);
  } finally {
    if (up.exitCode === null && up.signalCode === null) {
      up.kill('SIGTERM');
      await new Promise((r) => up.once('exit', r));
    }
    await db.close();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
