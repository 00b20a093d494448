// Effects survive crashes (issue 10): with real effects delivered to an agent simulator that acts on each
// idempotency key once (as the agent does with a query id), a crash injected at any step, before a statement
// reached the server or after it committed with the answer lost, and the process then gone, still gives every
// committed transition's effects at least once and the simulator acts on each exactly once, and never on an
// event that did not commit; each event is applied once. Broken hosts (the outbox emptied behind the host's back;
// a restart that does not find pending effects; a lost commit answer taken as no commit) must fail the same
// property: the last tests prove it is not blind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { Db } from '../runtime/db.ts';
import { createLogger } from '../runtime/logger.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';
import { createActorHost } from '../actors/host.ts';
import type { ActorEvent, ActorKind } from '../actors/types.ts';
import { faultyDb, type FaultPoint } from '../actors/testing/faultyDb.ts';
import { ledgerMachine, projectLedger } from '../actors/testing/ledgerMachine.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const logger = createLogger({ level: 'silent' });
const supervision = { maxFailures: 3, backoffMs: 1, maxBackoffMs: 4 };

let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase();
});
afterAll(async () => {
  await t?.drop();
});

/** What an agent does with frames: every delivery is seen; each key is acted on once. */
class AgentSimulator {
  readonly received: string[] = [];
  readonly acted = new Set<string>();
  deliver(key: string) {
    this.received.push(key);
    this.acted.add(key);
  }
}

function ledgerWith(sim: AgentSimulator): ActorKind {
  return {
    machine: ledgerMachine,
    project: projectLedger,
    effects: {
      recordEntry: (ctx, p: { n: number }) => sim.deliver(`${ctx.id}:add:${p.n}`),
      announceClosed: (ctx) => sim.deliver(`${ctx.id}:closed`),
    },
  };
}

interface Plan {
  events: ActorEvent[];
  /** the event before which the fault is armed; -1: before the spawn */
  crashFrom: number;
  point: FaultPoint;
  /** the process dies with the fault (true), or only that statement fails, as in a network blip (false) */
  dead: boolean;
}

/** A Db as a broken host would see it; identity for the real one. */
type Breakage = (db: Db) => Db;

async function run(plan: Plan, broken: { first?: Breakage; second?: Breakage } = {}) {
  const sim = new AgentSimulator();
  const reg = ledgerWith(sim);
  const id = randomUUID();
  const replicaId = `r-${id}`;
  // The fault sits between the host and the database (a broken host's own behaviour sits below it).
  const fdb = faultyDb(broken.first ? broken.first(t.db) : t.db);
  const first = await createActorHost({ db: fdb, replicaId, kinds: { ledger: reg }, logger, supervision });
  // The first statement after arming fails (and, when the process dies, every later one).
  const arm = () => fdb.inject({ nth: 1, point: plan.point, dead: plan.dead });
  let crashedAt: number | null = null;
  if (plan.crashFrom < 0) arm();
  try {
    await first.spawn('ledger', id, { owner: 'ann' });
  } catch {
    crashedAt = -1;
  }
  for (let i = 0; i < plan.events.length && crashedAt === null; i++) {
    if (i === plan.crashFrom) arm();
    try {
      await first.send('ledger', id, plan.events[i]);
    } catch {
      crashedAt = i;
    }
  }
  await first.idle().catch(() => undefined);
  await first.close().catch(() => undefined);
  expect(fdb.fired, 'the crash was injected').toBe(true);

  // The process restarts as the same replica: it rehydrates (running what it committed and never ran), and the
  // sender of the event that was in flight resends it unless the history shows it landed.
  const second = await createActorHost({ db: broken.second ? broken.second(t.db) : t.db, replicaId, kinds: { ledger: reg }, logger, supervision });
  await second.rehydrate();
  const landed = async () =>
    new Set((await t.db.query<{ n: number }>(`select (event_payload->>'n')::int as n from actor_transitions where kind = 'ledger' and id = $1`, [id])).map((r) => r.n));
  if (crashedAt === -1) {
    if ((await second.get('ledger', id)) === null) await second.spawn('ledger', id, { owner: 'ann' });
  } else if (crashedAt !== null && !(await landed()).has(plan.events[crashedAt].n as number)) {
    await second.send('ledger', id, plan.events[crashedAt]);
  }
  for (let i = (crashedAt ?? plan.events.length) + 1; i < plan.events.length; i++) await second.send('ledger', id, plan.events[i]);
  await second.idle();
  await second.close();

  const history = await t.db.query<{ event: string; n: number | null }>(
    `select event, (event_payload->>'n')::int as n from actor_transitions where kind = 'ledger' and id = $1 order by seq`,
    [id],
  );
  const expected = new Set(history.filter((h) => h.event === 'add').map((h) => `${id}:add:${h.n}`));
  if (history.some((h) => h.event === 'close')) expected.add(`${id}:closed`);
  const pending = await t.db.query(`select 1 from actor_effects where kind = 'ledger' and actor_id = $1`, [id]);
  return { sim, expected, pending, delivered: history.slice(1).map((h) => h.n) };
}

function check({ sim, expected, pending, delivered }: Awaited<ReturnType<typeof run>>) {
  // each event applied once: a lost commit answer never makes the host apply it again
  expect(new Set(delivered).size).toBe(delivered.length);
  // every effect of every committed transition reached the agent (at least once) and nothing else did
  expect([...sim.acted].sort()).toEqual([...expected].sort());
  for (const k of expected) expect(sim.received.filter((r) => r === k).length).toBeGreaterThanOrEqual(1);
  expect(pending).toEqual([]);
}

/** Adds numbered 1…k (each an effect), then perhaps a close (its own effect). */
const planArb = fc
  .record({ adds: fc.integer({ min: 1, max: 8 }), close: fc.boolean(), point: fc.constantFrom<FaultPoint>('before', 'after'), dead: fc.boolean() })
  .chain(({ adds, close, point, dead }) =>
    fc.integer({ min: -1, max: adds + (close ? 1 : 0) - 1 }).map((crashFrom) => {
      const events: ActorEvent[] = Array.from({ length: adds }, (_, i) => ({ type: 'add', n: i + 1 }));
      if (close) events.push({ type: 'close', n: adds + 1 });
      return { events, crashFrom, point, dead };
    }),
  );

describe('effects across crashes', () => {
  it('a crash at any step: every committed effect reaches the agent at least once, is acted on once, none for what did not commit', async () => {
    await fc.assert(
      fc.asyncProperty(planArb, async (plan) => check(await run(plan))),
      { numRuns: RUNS },
    );
  });

  it('every step, both fault points, dying or not, explicitly (a crash before the spawn through a crash at the close)', async () => {
    const events: ActorEvent[] = [{ type: 'add', n: 1 }, { type: 'add', n: 2 }, { type: 'close', n: 3 }];
    for (let crashFrom = -1; crashFrom < events.length; crashFrom++) {
      for (const point of ['before', 'after'] as const) {
        for (const dead of [true, false]) check(await run({ events, crashFrom, point, dead }));
      }
    }
  });
});

describe('the property is not blind', () => {
  // After every write of a transition, its outbox rows are deleted: effects then live only in memory, as they did
  // before the outbox. A crash after a commit loses them.
  const forgetfulOutbox: Breakage = (db) => ({
    ...db,
    query: async (text, params) => {
      const rows = await db.query(text, params);
      // The actor's id is the statement's first uuid parameter (the kind's comes before it: ledger is the only kind here).
      const id = params?.find((p) => typeof p === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(p));
      if (/insert into actor_effects/.test(text) && id) await db.query(`delete from actor_effects where kind = 'ledger' and actor_id = $1::uuid`, [id]);
      return rows as any;
    },
  });
  // A restart that finds no pending effect (as if rehydration only warmed a cache).
  const blindRestart: Breakage = (db) => ({
    ...db,
    query: async (text, params) => (/from actor_effects|update actor_effects/.test(text) && !/insert into/.test(text) ? ([] as any) : db.query(text, params)),
  });

  // A commit whose answer was lost is taken as not committed (the host cannot find its history row), so the event
  // is applied a second time.
  const forgetfulHistory: Breakage = (db) => ({
    ...db,
    query: async (text, params) => (/from actor_transitions where kind = \$1 and id = \$2::uuid and seq = \$3/.test(text) ? ([] as any) : db.query(text, params)),
  });

  for (const [name, broken, dead] of [
    ['effects not written with their transition', { first: forgetfulOutbox }, true],
    ['rehydration that does not run pending effects', { second: blindRestart }, true],
    ['a lost commit answer taken as no commit', { first: forgetfulHistory }, false],
  ] as const) {
    it(`catches a host with ${name}`, async () => {
      const events: ActorEvent[] = [{ type: 'add', n: 1 }, { type: 'add', n: 2 }];
      let caught = 0;
      for (let crashFrom = 0; crashFrom < events.length; crashFrom++) {
        // The run itself completes (the crash fired); only the property's verdict may fail.
        const outcome = await run({ events, crashFrom, point: 'after', dead }, broken);
        try {
          check(outcome);
        } catch {
          caught++;
        }
      }
      expect(caught).toBeGreaterThan(0);
    });
  }
});
