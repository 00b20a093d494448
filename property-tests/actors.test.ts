// Properties of persisted actors over a real PostgreSQL: a crash injected anywhere (a statement lost before the
// server saw it, or committed with its answer lost; the process then gone) followed by a new host that
// rehydrates, ends in exactly the state and history of an uninterrupted run; and two replicas delivering to one
// actor at once never lose nor duplicate a transition. Run over a small machine of our own and over the six
// lifecycle machines; and many actors written at once (their transitions sharing commits) under a failure at any
// statement or COMMIT still land each event exactly once. PROPERTY_RUNS raises the number of runs (default 40 for
// the ledger, a quarter per real kind).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { AnyStateMachine } from 'xstate';
import { connectDb, type Db, type Queryable } from '../runtime/db.ts';
import { createLogger } from '../runtime/logger.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';
import { createActorHost } from '../actors/host.ts';
import type { ActorEvent, ActorKind, EffectImpl } from '../actors/types.ts';
import { faultyDb, type FaultPoint } from '../actors/testing/faultyDb.ts';
import { ledgerMachine, projectLedger } from '../actors/testing/ledgerMachine.ts';
import { machineKinds, type MachineKindName } from '../machines/index.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const logger = createLogger({ level: 'silent' });
const supervision = { maxFailures: 3, backoffMs: 1, maxBackoffMs: 4 };
const T0 = 1_700_000_000_000;

let t: TestDatabase;
let db2: Db;
beforeAll(async () => {
  t = await freshDatabase();
  db2 = await connectDb({ url: t.url, poolSize: 4 });
  await t.db.query(
    `create table actor_entities (kind text, id uuid, status text not null, deadline_at timestamptz, error text, primary key (kind, id))`,
  );
});
afterAll(async () => {
  await db2?.close();
  await t?.drop();
});

/** A no-op implementation for every named effect of a machine: these properties are about state, not effects. */
function noEffects(machine: AnyStateMachine): Record<string, EffectImpl> {
  const actions = (machine as any).implementations?.actions ?? {};
  return Object.fromEntries(
    Object.entries(actions)
      .filter(([, impl]) => typeof (impl as any)?.resolve !== 'function')
      .map(([name]) => [name, () => {}]),
  );
}

/** An entity-table hook like the real kinds have, so the transactional path is exercised too. */
const writeEntity =
  (kind: string) =>
  async (tx: Queryable, id: string, _snapshot: unknown, p: { status: string; deadlineAt: number | null; error?: unknown }) => {
    await tx.query(
      `insert into actor_entities (kind, id, status, deadline_at, error) values ($1, $2, $3, $4::timestamptz, $5)
       on conflict (kind, id) do update set status = excluded.status, deadline_at = excluded.deadline_at, error = excluded.error`,
      [kind, id, p.status, p.deadlineAt === null ? null : new Date(p.deadlineAt).toISOString(), typeof p.error === 'string' ? p.error : null],
    );
  };

function kindFor(name: string, machine: AnyStateMachine, project: (s: any) => any, withEntity: boolean): ActorKind {
  return { machine, project, effects: noEffects(machine), ...(withEntity ? { onPersist: writeEntity(name) } : {}) };
}

/** Everything the database holds about one actor, in a form two runs can be compared by. */
async function persisted(kind: string, id: string) {
  const [row] = await t.db.query<any>(
    `select version, state, status, terminal, deadline_at, snapshot, last_error from actors where kind = $1 and id = $2`,
    [kind, id],
  );
  const history = await t.db.query<any>(
    `select seq, event, event_payload, from_state, to_state, at, replica from actor_transitions
     where kind = $1 and id = $2 order by seq`,
    [kind, id],
  );
  const entity = await t.db.query<any>(`select status, deadline_at, error from actor_entities where kind = $1 and id = $2`, [kind, id]);
  return { row, history, entity };
}

interface Plan {
  input: unknown;
  events: ActorEvent[];
  /** Index of the first event delivered after the fault is armed; -1 arms it before the spawn. */
  crashFrom: number;
  nth: number;
  point: FaultPoint;
  withEntity: boolean;
}

async function uninterrupted(name: string, reg: ActorKind, plan: Plan): Promise<string> {
  const id = randomUUID();
  const host = await createActorHost({ db: t.db, replicaId: 'r1', kinds: { [name]: reg }, logger, supervision });
  await host.spawn(name, id, plan.input);
  for (const e of plan.events) await host.send(name, id, e);
  await host.close();
  return id;
}

async function crashed(name: string, reg: ActorKind, plan: Plan): Promise<string> {
  const id = randomUUID();
  const fdb = faultyDb(t.db);
  const first = await createActorHost({ db: fdb, replicaId: 'r1', kinds: { [name]: reg }, logger, supervision });
  const arm = () => fdb.inject({ nth: plan.nth, point: plan.point, dead: true });
  let crashedAt: number | null = null;
  if (plan.crashFrom < 0) arm();
  try {
    await first.spawn(name, id, plan.input);
  } catch {
    crashedAt = -1;
  }
  for (let i = 0; i < plan.events.length && crashedAt === null; i++) {
    if (i === plan.crashFrom) arm();
    try {
      await first.send(name, id, plan.events[i]);
    } catch {
      crashedAt = i;
    }
  }
  await first.close(); // the process is gone: its memory (cache, mailboxes, pending retries) goes with it
  if (crashedAt === null) return id;

  const second = await createActorHost({ db: t.db, replicaId: 'r1', kinds: { [name]: reg }, logger, supervision });
  await second.rehydrate();
  // The sender of the event that was in flight learns from the history whether it landed, and resends if not.
  const landed = new Set(
    (await t.db.query<{ n: number }>(`select (event_payload->>'n')::int as n from actor_transitions where kind = $1 and id = $2`, [name, id]))
      .map((r) => r.n),
  );
  if (crashedAt === -1) {
    if ((await second.get(name, id)) === null) await second.spawn(name, id, plan.input);
  } else if (!landed.has(plan.events[crashedAt].n as number)) {
    await second.send(name, id, plan.events[crashedAt]);
  }
  for (let i = crashedAt + 1; i < plan.events.length; i++) await second.send(name, id, plan.events[i]);
  await second.close();
  return id;
}

async function expectSameOutcome(name: string, reg: ActorKind, plan: Plan) {
  const a = await persisted(name, await uninterrupted(name, reg, plan));
  const b = await persisted(name, await crashed(name, reg, plan));
  expect(b).toEqual(a);
  // History is contiguous and the version names its last entry.
  expect(b.history.map((h: any) => Number(h.seq))).toEqual(b.history.map((_: unknown, i: number) => i + 1));
  expect(Number(b.row.version)).toBe(b.history.length);
}

const crashArb = {
  crashFrom: fc.integer({ min: -1, max: 12 }),
  nth: fc.integer({ min: 1, max: 3 }),
  point: fc.constantFrom<FaultPoint>('before', 'after'),
  withEntity: fc.boolean(),
};

/** Numbers every event (`n`) so a history row names the delivery it came from; times never decrease. */
function stamp(templates: { type: string; [k: string]: unknown }[], gaps: number[]): ActorEvent[] {
  let at = T0;
  return templates.map((tpl, i) => {
    at += gaps[i] ?? 0;
    return { ...tpl, n: i + 1, at };
  });
}

describe('persisted ledger actors', () => {
  const template = fc.oneof(
    { weight: 6, arbitrary: fc.constant({ type: 'add' }) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 5_000 }).map((ms) => ({ type: 'arm', ms })) },
    { weight: 2, arbitrary: fc.constant({ type: 'deadline' }) },
    { weight: 1, arbitrary: fc.constant({ type: 'poke' }) },
    { weight: 1, arbitrary: fc.constant({ type: 'close' }) },
  );

  it('a crash at any point, then rehydration, ends as an uninterrupted run does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(template, fc.integer({ min: 0, max: 3_000 })), { maxLength: 12 }),
        fc.record(crashArb),
        async (steps, crash) => {
          const events = stamp(steps.map(([tpl]) => tpl), steps.map(([, gap]) => gap));
          const reg = kindFor('ledger', ledgerMachine, projectLedger, crash.withEntity);
          await expectSameOutcome('ledger', reg, { input: { owner: 'ann', at: T0 }, events, ...crash });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('two replicas delivering to one actor at once never lose or duplicate a transition', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.boolean(), fc.constantFrom('add', 'add', 'add', 'poke')), { minLength: 1, maxLength: 24 }),
        fc.boolean(),
        async (deliveries, withEntity) => {
          const reg = kindFor('ledger', ledgerMachine, projectLedger, withEntity);
          const a = await createActorHost({ db: t.db, replicaId: 'ra', kinds: { ledger: reg }, logger, supervision });
          const b = await createActorHost({ db: db2, replicaId: 'rb', kinds: { ledger: reg }, logger, supervision });
          const id = randomUUID();
          await a.spawn('ledger', id, { owner: 'ann' });
          await b.get('ledger', id);
          const results = await Promise.allSettled(
            deliveries.map(([onA, type], i) => (onA ? a : b).send('ledger', id, { type, n: i + 1 })),
          );
          await Promise.all([a.close(), b.close()]);

          const accepted = new Set<number>();
          results.forEach((r, i) => {
            if (r.status === 'fulfilled' && r.value.outcome === 'persisted') accepted.add(i + 1);
            // The only acceptable refusal is the bounded conflict retry running out; it must leave no trace.
            if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'conflict' });
            if (deliveries[i][1] === 'add') expect(r.status === 'rejected' || accepted.has(i + 1)).toBe(true);
          });
          const { row, history } = await persisted('ledger', id);
          expect(history.map((h: any) => Number(h.seq))).toEqual(history.map((_: unknown, i: number) => i + 1));
          const delivered = history.slice(1).map((h: any) => h.event_payload.n as number);
          expect(new Set(delivered).size).toBe(delivered.length);
          expect([...delivered].sort((x, y) => x - y)).toEqual([...accepted].sort((x, y) => x - y));
          expect(Number(row.version)).toBe(history.length);
          expect([...row.snapshot.context.entries].sort((x: number, y: number) => x - y)).toEqual([...accepted].sort((x, y) => x - y));
        },
      ),
      { numRuns: Math.max(10, Math.floor(RUNS / 2)) },
    );
  });

  it('many actors at once, their transitions committed in groups, a statement or COMMIT failing anywhere: each event lands once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        fc.record({ at: fc.nat(), point: fc.constantFrom<FaultPoint>('before', 'after'), commit: fc.boolean() }),
        fc.boolean(),
        async (actors, eventsEach, fault, withEntity) => {
          const reg = kindFor('ledger', ledgerMachine, projectLedger, withEntity);
          const fdb = faultyDb(t.db);
          // One writer: the first send goes alone, the ones arriving meanwhile form a group (so a COMMIT always comes).
          const host = await createActorHost({ db: fdb, replicaId: 'rg', kinds: { ledger: reg }, logger, supervision, groupCommit: { writers: 1 } });
          const ids = Array.from({ length: actors }, () => randomUUID());
          for (const id of ids) await host.spawn('ledger', id, { owner: 'ann' });
          // One transient failure (not a crash): the delivery loop retries, so every send still lands, exactly once.
          // Every send runs at least one statement, so the nth of them always comes.
          if (fault.commit) fdb.inject({ nth: 1, point: fault.point, match: /^COMMIT$/ });
          else fdb.inject({ nth: 1 + (fault.at % (actors * eventsEach)), point: fault.point });
          const results = await Promise.all(
            ids.map(async (id) => {
              const outcomes: string[] = [];
              for (let n = 1; n <= eventsEach; n++) outcomes.push((await host.send('ledger', id, { type: 'add', n })).outcome);
              return outcomes;
            }),
          );
          await host.close();
          expect(fdb.fired).toBe(true);
          expect(results.flat().every((o) => o === 'persisted')).toBe(true);
          for (const id of ids) {
            const { row, history } = await persisted('ledger', id);
            expect(history.slice(1).map((h: any) => h.event_payload.n)).toEqual(Array.from({ length: eventsEach }, (_, i) => i + 1));
            expect(Number(row.version)).toBe(eventsEach + 1);
            expect(row.snapshot.context.entries).toEqual(Array.from({ length: eventsEach }, (_, i) => i + 1));
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});

// Compact models of the six lifecycle machines: one input each and the events their actors receive.
const realModels: Record<MachineKindName, { input: unknown; alphabet: { type: string; [k: string]: unknown }[] }> = {
  query: {
    input: {
      queryId: 'q-1', workspace: 'default', sql: 'select 1', agentId: 'agent-1', at: T0,
      timeoutMs: 60_000, graceMs: 5_000, dispatchAckTimeoutMs: 15_000, computeWaitTimeoutMs: 60_000,
    },
    alphabet: [
      { type: 'dispatched' }, { type: 'started' }, { type: 'cancel' }, { type: 'agentLost' },
      { type: 'done', rowCount: 3, durationMs: 12, resultPath: 'results/q-1.parquet', columns: ['a'], columnSchema: [{ name: 'a', type: 'INTEGER' }] },
      { type: 'failed', code: 'engine_error', message: 'Binder Error' },
      { type: 'dispatchFailed', message: 'socket closed' },
    ],
  },
  sqlSession: {
    input: {
      sessionId: 's-1', workspace: 'default', agentId: 'agent-1', at: T0, idleTimeoutMs: 50_000,
      maxLifetimeMs: 1_000_000, openingDeadlineMs: 20_000, pendingTimeoutMs: 30_000, closeTimeoutMs: 10_000,
    },
    alphabet: [
      { type: 'opened' }, { type: 'statementSubmitted', statementId: 'st-1' }, { type: 'statementFinished', statementId: 'st-1' },
      { type: 'close' }, { type: 'closed' }, { type: 'agentLost' }, { type: 'agentReconnected' }, { type: 'openFailed', code: 'queue_full', message: 'queue full' },
    ],
  },
  statement: {
    input: {
      statementId: 'st-1', sessionId: 's-1', agentId: 'agent-1', sql: 'select 1', at: T0, timeoutMs: null,
      defaultTimeoutMs: 100_000, graceMs: 10_000, ackDeadlineMs: 15_000, ackSupported: true,
    },
    alphabet: [
      { type: 'dispatched' }, { type: 'ack' }, { type: 'cancel' }, { type: 'agentLost' }, { type: 'sessionClosed' },
      { type: 'done', rowCount: 1, durationMs: 3, resultPath: 'results/st-1.parquet', columns: ['x'], columnSchema: [{ name: 'x', type: 'INTEGER' }] },
      { type: 'failed', code: 'engine_error', message: 'boom' },
    ],
  },
  agentConnection: {
    input: {
      connectionId: 'c-1', replicaUrl: 'http://replica-1:8000', resultAddress: 'http://10.0.0.5:8001', at: T0,
      authTimeoutMs: 10_000, heartbeatIntervalMs: 5_000, heartbeatTtlMs: 15_000, drainTimeoutMs: 10_000,
    },
    alphabet: [
      { type: 'authenticated', agentId: 'agent-1', name: 'bundled', version: '0.1.0', resumed: false },
      { type: 'status', capabilities: { engine_version: 'v1.5.6', memory_limit_bytes: 1024 } },
      { type: 'heartbeat' }, { type: 'heartbeat' }, { type: 'disconnected' }, { type: 'drain' },
      { type: 'authFailed', code: 'invalid_token', message: 'unknown bootstrap token' },
    ],
  },
  elasticAgent: {
    input: {
      elasticId: 'e-1', pool: 'object_store:warehouse', cpu: 2, memoryGb: 4, at: T0, provisioningDeadlineMs: 30_000,
      idleTimeoutMs: 20_000, maxLifetimeMs: 1_000_000, terminateTimeoutMs: 10_000, maxTerminateAttempts: 2,
    },
    alphabet: [
      { type: 'provisioningStarted', providerRef: 'container-1' }, { type: 'registered', agentId: 'agent-9' },
      { type: 'workChanged', inFlightQueries: 2, openSessions: 0 }, { type: 'workChanged', inFlightQueries: 0, openSessions: 0 },
      { type: 'terminate' }, { type: 'terminationConfirmed' }, { type: 'terminationFailed', message: 'provider 500' },
    ],
  },
  storageMigration: {
    input: {
      migrationId: 'm-1', catalogId: 'cat-1', sourceBackendId: 'b-1', targetBackendId: 'b-2', at: T0,
      phaseLeaseMs: 10_000, retentionMs: 100_000, maxPhaseAttempts: 2,
    },
    alphabet: [
      { type: 'begin' }, { type: 'resume' }, { type: 'cancel' },
      ...(['copy', 'rewrite', 'verify', 'cutover', 'purge'] as const).flatMap((phase) => [
        { type: 'progress', phase, tablesTotal: 4, tablesDone: 2, bytesCopied: 1024 },
        { type: 'phaseDone', phase },
        { type: 'phaseFailed', phase, message: 'S3 503', retryable: true },
      ]),
    ],
  },
};

describe('persisted lifecycle machines', () => {
  for (const name of Object.keys(machineKinds) as MachineKindName[]) {
    it(`${name}: a crash at any point, then rehydration, ends as an uninterrupted run does`, async () => {
      const { machine, project } = machineKinds[name];
      const model = realModels[name];
      const common = [{ type: 'deadline' }, { type: 'supervisor.failed', reason: 'effect kept failing' }];
      const gap = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_000 }), fc.integer({ min: 1, max: 400_000 }));
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.constantFrom(...model.alphabet, ...common), gap), { maxLength: 12 }),
          fc.record(crashArb),
          async (steps, crash) => {
            const events = stamp(steps.map(([tpl]) => tpl), steps.map(([, g]) => g));
            const reg = kindFor(name, machine, project, crash.withEntity);
            await expectSameOutcome(name, reg, { input: model.input, events, ...crash });
          },
        ),
        { numRuns: Math.max(5, Math.floor(RUNS / 4)) },
      );
    });
  }
});
