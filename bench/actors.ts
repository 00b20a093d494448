// Persisted actor transitions per second against plain single-row UPDATEs on the same database in the same run.
// Concurrently, the host commits the transitions of actors that are ready at once together (actors/groupCommit.ts);
// a plain UPDATE is its own commit, as is the raw statement the bench also times.
// Run by hand: `node bench/actors.ts` (embedded PostgreSQL in a temp dir) or with DATABASE_URL (a scratch database
// is created next to the one named and dropped afterwards). BENCH_SEQUENTIAL, BENCH_EVENTS_PER_ACTOR and
// BENCH_ROUNDS size it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { assign, setup } from 'xstate';
import { connectDb, type Db } from '../runtime/db.ts';
import { createLogger } from '../runtime/logger.ts';
import { migrate } from '../runtime/migrate.ts';
import { startEmbeddedPostgres, type EmbeddedPg } from '../runtime/postgres.ts';
import { createActorHost } from '../actors/host.ts';
import type { ActorHost, ActorKind } from '../actors/types.ts';
import { sql } from '../runtime/sql.ts';
import { insertActor, writeTransition, type TransitionWrite } from '../actors/store.ts';

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ACTORS = 200;
const PER_ACTOR = Number(process.env.BENCH_EVENTS_PER_ACTOR ?? 20);
const POOL = 20;

// A machine shaped like the lifecycle machines: context with a deadline, an assign and a named effect per event.
const counter = setup({
  types: {} as { context: { count: number; deadlineAt: number | null }; events: { type: 'tick'; at: number } },
  actions: { observe: (_, _p: { count: number }) => {} },
}).createMachine({
  initial: 'live',
  context: { count: 0, deadlineAt: null },
  states: {
    live: {
      on: {
        tick: {
          actions: [
            assign({ count: ({ context }) => context.count + 1, deadlineAt: ({ event }) => event.at + 60_000 }),
            { type: 'observe', params: ({ context }) => ({ count: context.count }) },
          ],
        },
      },
    },
  },
});

const project = (s: any) => ({ status: 'live', deadlineAt: s.context.deadlineAt, terminal: false });

function kinds(withEntity: boolean): Record<string, ActorKind> {
  return {
    counter: {
      machine: counter,
      project,
      effects: { observe: () => {} },
      ...(withEntity
        ? {
            // the way real kinds write their entity row: folded into the transition's statement
            entityWrite: (id: string, p: any) =>
              sql`update bench_entities set status = ${p.status}, deadline_at = ${p.deadlineAt === null ? null : new Date(p.deadlineAt).toISOString()}::timestamptz where id = ${id}`,
          }
        : {}),
    },
  };
}

async function timed(label: string, ops: number, fn: () => Promise<void>): Promise<number> {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await fn();
  const cpu = process.cpuUsage(cpu0);
  const perSecond = ops / ((performance.now() - started) / 1000);
  // This process's CPU per operation (the database's is not in it): what the host adds to the same writes.
  const cpuUs = ((cpu.user + cpu.system) / ops).toFixed(0);
  console.log(`  ${label.padEnd(52)} ${perSecond.toFixed(0).padStart(7)} /s  (${ops} ops, ${cpuUs.padStart(3)} µs CPU here per op)`);
  return perSecond;
}

/** The statement a transition writes (actors/store.ts), issued directly, one commit each: the database's share
 *  without the host, and without its group commit (actors/groupCommit.ts). */
async function rawTransitions(db: Db, actors: number, perActor: number): Promise<number> {
  const snapshotText = JSON.stringify({ status: 'active', value: 'live', context: { count: 0, deadlineAt: null }, historyValue: {}, children: {} });
  const write = (id: string, version: number): TransitionWrite => ({
    kind: 'raw', id, state: 'live', status: 'live', terminal: false, deadlineAt: Date.now() + 60_000, snapshotText, lastError: null,
    event: 'tick', payloadText: '{}', fromState: version === 0 ? null : 'live', at: Date.now(), replica: 'bench-raw', notifyPayload: null,
    effects: [{ effect: 'observe', paramsText: JSON.stringify({ count: version }) }], history: true,
  });
  const ids = Array.from({ length: actors }, () => randomUUID());
  for (const id of ids) await insertActor(db, write(id, 0));
  return timed('the same statement, one commit each, without the host', actors * perActor, async () => {
    await Promise.all(
      ids.map(async (id) => {
        for (let v = 1; v <= perActor; v++) if ((await writeTransition(db, v, write(id, v))) === null) throw new Error('raw transition lost its version check');
      }),
    );
  });
}

async function plainUpdates(db: Db, rows: number, perRow: number): Promise<number> {
  await db.query('truncate bench_counters');
  await db.query('insert into bench_counters (id, n) select g, 0 from generate_series(1, $1) g', [rows]);
  const label = rows === 1 ? 'plain UPDATE, one row, sequential' : `plain UPDATE, ${rows} rows concurrently`;
  return timed(label, rows * perRow, async () => {
    await Promise.all(
      Array.from({ length: rows }, async (_, i) => {
        for (let k = 0; k < perRow; k++) await db.query('update bench_counters set n = n + 1 where id = $1', [i + 1]);
      }),
    );
  });
}

async function actorTransitions(db: Db, host: ActorHost, actors: number, perActor: number, label: string): Promise<number> {
  const ids = Array.from({ length: actors }, () => randomUUID());
  await db.query('insert into bench_entities (id, status) select unnest($1::uuid[]), $2', [ids, 'live']);
  for (const id of ids) await host.spawn('counter', id, undefined);
  return timed(label, actors * perActor, async () => {
    await Promise.all(
      ids.map(async (id) => {
        for (let k = 0; k < perActor; k++) {
          const r = await host.send('counter', id, { type: 'tick' });
          if (r.outcome !== 'persisted') throw new Error(`expected a persisted transition, got ${r.outcome}`);
        }
      }),
    );
    await host.idle();
  });
}

async function main() {
  let pg: EmbeddedPg | undefined;
  let dataDir: string | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dataDir = mkdtempSync(join(tmpdir(), 'eider-bench-'));
    pg = await startEmbeddedPostgres(dataDir);
    adminUrl = pg.url;
  }
  const name = `eider_bench_${process.pid}`;
  const admin = await connectDb({ url: adminUrl, poolSize: 1, maxOverflow: 0 });
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await connectDb({ url: url.toString(), poolSize: POOL, maxOverflow: 0 });
  try {
    await migrate(db, 'control');
    await db.query('create table bench_counters (id int primary key, n bigint not null)');
    await db.query('create table bench_entities (id uuid primary key, status text not null, deadline_at timestamptz)');
    const logger = createLogger({ level: 'warn' });
    const plain = await createActorHost({ db, replicaId: 'bench', kinds: kinds(false), logger });
    const entity = await createActorHost({ db, replicaId: 'bench-entity', kinds: kinds(true), logger });

    console.log(`actor host benchmark (pool ${POOL} connections, ${ROUNDS} interleaved rounds, median ratio)`);
    // Warm up connections and plans so neither side pays for them in its measurement.
    await plainUpdates(db, 20, 20);
    await actorTransitions(db, plain, 20, 20, 'warm-up');
    // The two sides alternate within each round, so a burst of load from other processes on a shared machine
    // lands on both rather than on whichever happened to run then; the median round is reported.
    const ratios = { seq: [] as number[], seqEntity: [] as number[], con: [] as number[], conEntity: [] as number[], conRaw: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}: one actor, sequential`);
      const seqPlain = await plainUpdates(db, 1, SEQUENTIAL);
      ratios.seq.push((await actorTransitions(db, plain, 1, SEQUENTIAL, 'actor transition (single statement)')) / seqPlain);
      ratios.seqEntity.push((await actorTransitions(db, entity, 1, SEQUENTIAL, 'actor transition + entity row (one statement)')) / seqPlain);
      console.log(`round ${round}: ${ACTORS} actors, concurrently`);
      const conPlain = await plainUpdates(db, ACTORS, PER_ACTOR);
      ratios.con.push((await actorTransitions(db, plain, ACTORS, PER_ACTOR, 'actor transition (single statement)')) / conPlain);
      ratios.conEntity.push((await actorTransitions(db, entity, ACTORS, PER_ACTOR, 'actor transition + entity row (one statement)')) / conPlain);
      ratios.conRaw.push((await rawTransitions(db, ACTORS, PER_ACTOR)) / conPlain);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)].toFixed(2);
    console.log('ratios (actor transitions / plain UPDATEs, median of rounds; aim >= 0.5):');
    console.log(`  sequential:   ${median(ratios.seq)}   with entity row ${median(ratios.seqEntity)}`);
    console.log(`  concurrent:   ${median(ratios.con)}   with entity row ${median(ratios.conEntity)}`);
    console.log(`  concurrent, the transition's statement without the host, one commit each: ${median(ratios.conRaw)}`);
    await plain.close();
    await entity.close();
  } finally {
    await db.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.close();
    if (pg) await pg.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
