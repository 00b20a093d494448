import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { assign, setup } from 'xstate';
import { connectDb } from '../runtime/db.ts';
import { createLogger } from '../runtime/logger.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';
import { createActorHost } from './host.ts';
import type { ActorKind } from './types.ts';
import { reapDue, startActorReaper } from './reaper.ts';
import { ledgerMachine, projectLedger } from './testing/ledgerMachine.ts';

const logger = createLogger({ level: 'silent' });
const ledger: ActorKind = {
  machine: ledgerMachine,
  project: projectLedger,
  effects: { recordEntry: () => {}, announceClosed: () => {} },
};

let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase();
});
afterAll(async () => {
  await t?.drop();
});

describe('actor reaper', () => {
  it('sends deadline to live actors whose deadline passed, and to no one else', async () => {
    let clock = 1_000_000;
    const host = await createActorHost({ db: t.db, replicaId: 'r1', kinds: { ledger }, logger, now: () => clock });
    const ids = { past: randomUUID(), future: randomUUID(), none: randomUUID(), closed: randomUUID() };
    for (const id of Object.values(ids)) await host.spawn('ledger', id, { owner: 'o' });
    await host.send('ledger', ids.past, { type: 'arm', ms: 10 });
    await host.send('ledger', ids.future, { type: 'arm', ms: 60_000 });
    await host.send('ledger', ids.closed, { type: 'arm', ms: 10 });
    await host.send('ledger', ids.closed, { type: 'close' });
    clock += 1_000;
    const r = await reapDue({ db: t.db, host, kinds: ['ledger'], logger, now: () => clock });
    expect(r).toEqual({ due: 1, changed: 1, failed: 0 });
    const states = await t.db.query<{ id: string; state: string }>(
      `select id::text as id, state from actors where id = any($1::uuid[])`,
      [Object.values(ids)],
    );
    const byId = Object.fromEntries(states.map((s) => [s.id, s.state]));
    expect(byId).toEqual({ [ids.past]: 'expired', [ids.future]: 'open', [ids.none]: 'open', [ids.closed]: 'closed' });
    // Kinds this host does not run are left alone.
    clock += 120_000;
    expect(await reapDue({ db: t.db, host, kinds: ['other'], logger, now: () => clock })).toEqual({ due: 0, changed: 0, failed: 0 });
    await host.close();
  });

  it('fires each deadline exactly once when two replicas reap at the same time', async () => {
    const db2 = await connectDb({ url: t.url, poolSize: 4 });
    const a = await createActorHost({ db: t.db, replicaId: 'ra', kinds: { ledger }, logger });
    const b = await createActorHost({ db: db2, replicaId: 'rb', kinds: { ledger }, logger });
    const ids = Array.from({ length: 30 }, () => randomUUID());
    for (const id of ids) {
      await a.spawn('ledger', id, { owner: 'o' });
      await a.send('ledger', id, { type: 'arm', ms: -1 });
    }
    const ra = startActorReaper({ db: t.db, host: a, kinds: ['ledger'], logger, tickMs: 60_000, batch: 7 });
    const rb = startActorReaper({ db: db2, host: b, kinds: ['ledger'], logger, tickMs: 60_000, batch: 7 });
    await Promise.all([ra.tickNow(), rb.tickNow(), ra.tickNow(), rb.tickNow()]);
    await Promise.all([ra.stop(), rb.stop()]);
    const rows = await t.db.query<{ n: bigint }>(
      `select count(*) as n from actor_transitions where event = 'deadline' and id = any($1::uuid[]) group by id`,
      [ids],
    );
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.n === 1n)).toBe(true);
    await a.close();
    await b.close();
    await db2.close();
  });

  it('sends each passed deadline once: a machine without a guard counts every firing', async () => {
    // The lifecycle machines guard `deadline` against the persisted deadline, which hides a duplicate; this one
    // counts each deadline it receives, so a second firing shows.
    const counter = setup({
      types: {} as { context: { deadlineAt: number | null; fired: number }; events: { type: 'deadline'; at: number } },
    }).createMachine({
      initial: 'waiting',
      context: { deadlineAt: 1, fired: 0 },
      states: { waiting: { on: { deadline: { actions: assign({ fired: ({ context }) => context.fired + 1, deadlineAt: null }) } } } },
    });
    const kind: ActorKind = { machine: counter, project: (s: any) => ({ status: 'waiting', deadlineAt: s.context.deadlineAt, terminal: false }), effects: {} };
    const db2 = await connectDb({ url: t.url, poolSize: 4 });
    const a = await createActorHost({ db: t.db, replicaId: 'ca', kinds: { counter: kind }, logger });
    const b = await createActorHost({ db: db2, replicaId: 'cb', kinds: { counter: kind }, logger });
    const ids = Array.from({ length: 20 }, () => randomUUID());
    for (const id of ids) await a.spawn('counter', id, undefined);
    const ra = startActorReaper({ db: t.db, host: a, kinds: ['counter'], logger, tickMs: 60_000, batch: 6 });
    const rb = startActorReaper({ db: db2, host: b, kinds: ['counter'], logger, tickMs: 60_000, batch: 6 });
    await Promise.all([ra.tickNow(), rb.tickNow(), ra.tickNow(), rb.tickNow()]);
    await Promise.all([ra.stop(), rb.stop()]);
    const fired = await t.db.query<{ fired: number }>(`select (snapshot->'context'->>'fired')::int as fired from actors where id = any($1::uuid[])`, [ids]);
    expect(fired.map((f) => f.fired)).toEqual(ids.map(() => 1));
    await a.close();
    await b.close();
    await db2.close();
  });

  it('finishes its pass when an actor ignores its passed deadline', async () => {
    const stubborn = setup({}).createMachine({ initial: 'waiting', context: { deadlineAt: 1 }, states: { waiting: {} } });
    const host = await createActorHost({
      db: t.db,
      replicaId: 'r1',
      logger,
      kinds: {
        stubborn: {
          machine: stubborn,
          project: (s: any) => ({ status: 'waiting', deadlineAt: s.context.deadlineAt, terminal: false }),
          effects: {},
        },
      },
    });
    await host.spawn('stubborn', randomUUID(), undefined);
    expect(await reapDue({ db: t.db, host, kinds: ['stubborn'], logger, batch: 1 })).toEqual({ due: 1, changed: 0, failed: 0 });
    await host.close();
  });
});
