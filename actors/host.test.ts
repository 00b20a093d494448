import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { assign, setup } from 'xstate';
import { connectDb, type Queryable } from '../runtime/db.ts';
import { createLogger } from '../runtime/logger.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';
import { createActorHost } from './host.ts';
import type { ActorKind, EffectImpl } from './types.ts';
import { ledgerMachine, projectLedger } from './testing/ledgerMachine.ts';
import { faultyDb } from './testing/faultyDb.ts';
import { sql } from '../runtime/sql.ts';

const logger = createLogger({ level: 'silent' });
const fast = { maxFailures: 3, backoffMs: 1, maxBackoffMs: 5 };

let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase();
});
afterAll(async () => {
  await t?.drop();
});

function ledgerKind(over: Partial<ActorKind> = {}, effects: Partial<Record<string, EffectImpl>> = {}): ActorKind {
  return {
    machine: ledgerMachine,
    project: projectLedger,
    effects: { recordEntry: () => {}, announceClosed: () => {}, ...effects } as Record<string, EffectImpl>,
    ...over,
  };
}

/** Two replicas of the ledger kind on one database, `ra` on the shared pool and `rb` on a pool of its own. */
async function twoReplicas(opts: { applicationName?: string } = {}) {
  const db2 = await connectDb({ url: t.url, poolSize: 2, ...opts });
  const a = await createActorHost({ db: t.db, replicaId: 'ra', kinds: { ledger: ledgerKind() }, logger });
  const b = await createActorHost({ db: db2, replicaId: 'rb', kinds: { ledger: ledgerKind() }, logger });
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      await db2.close();
    },
  };
}

async function history(db: Queryable, id: string) {
  return db.query<{ seq: bigint; event: string; event_payload: any; from_state: string | null; to_state: string; replica: string }>(
    `select seq, event, event_payload, from_state, to_state, replica from actor_transitions where kind = 'ledger' and id = $1 order by seq`,
    [id],
  );
}

async function row(db: Queryable, id: string) {
  const [r] = await db.query<any>(`select *, snapshot::text as snap from actors where kind = 'ledger' and id = $1`, [id]);
  return r;
}

describe('actor host', () => {
  it('persists the spawn and each transition with projected columns, history, and exact large integers', async () => {
    const host = await createActorHost({ db: t.db, replicaId: 'r1', kinds: { ledger: ledgerKind() }, logger });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann', apiToken: 'sekret-token' });
    await host.send('ledger', id, { type: 'add', n: 1, at: 1_000 });
    const r = await host.send('ledger', id, { type: 'arm', ms: 500, at: 2_000 });
    expect(r.outcome).toBe('persisted');
    expect(r.actor.version).toBe(3);

    const a = await row(t.db, id);
    expect(a.version).toBe(3n);
    expect(a.state).toBe('open');
    expect(a.status).toBe('open');
    expect(a.terminal).toBe(false);
    expect(a.deadline_at.getTime()).toBe(2_500);
    expect(a.owner_replica).toBe('r1');

    const h = await history(t.db, id);
    expect(h.map((x) => [Number(x.seq), x.event, x.from_state, x.to_state])).toEqual([
      [1, 'xstate.init', null, 'open'],
      [2, 'add', 'open', 'open'],
      [3, 'arm', 'open', 'open'],
    ]);
    expect(h[0].event_payload).toEqual({ owner: 'ann' }); // the token never reaches the history
    expect(h[1].event_payload).toEqual({ n: 1 });

    // A fresh host restores the snapshot from the database, BigInt included.
    const other = await createActorHost({ db: t.db, replicaId: 'r2', kinds: { ledger: ledgerKind() }, logger });
    const view = await other.get('ledger', id);
    expect(view!.snapshot.context.total).toBe(9007199254740993n);
    expect(view!.snapshot.context.apiToken).toBe('sekret-token');
    await other.close();
    await host.close();
  });

  it('does not persist an event the machine ignores', async () => {
    const host = await createActorHost({ db: t.db, replicaId: 'r1', kinds: { ledger: ledgerKind() }, logger });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    const r = await host.send('ledger', id, { type: 'poke' });
    expect(r.outcome).toBe('unchanged');
    const d = await host.send('ledger', id, { type: 'deadline' }); // no deadline armed: the guard refuses it
    expect(d.outcome).toBe('unchanged');
    expect((await row(t.db, id)).version).toBe(1n);
    expect(await history(t.db, id)).toHaveLength(1);
    await host.close();
  });

  it('runs effects after the commit, in order, with their params', async () => {
    const seen: { n: number; version: bigint }[] = [];
    const host = await createActorHost({
      db: t.db,
      replicaId: 'r1',
      logger,
      kinds: {
        ledger: ledgerKind({}, {
          recordEntry: async (ctx, params: { n: number }) => {
            // The transition that asked for this effect is already committed and visible to other connections.
            const r = await row(t.db, ctx.id);
            seen.push({ n: params.n, version: r.version });
          },
        }),
      },
    });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    const results = await Promise.all([1, 2, 3].map((n) => host.send('ledger', id, { type: 'add', n })));
    await Promise.all(results.map((r) => r.effectsDone));
    expect(seen.map((s) => s.n)).toEqual([1, 2, 3]);
    for (const s of seen) expect(s.version).toBeGreaterThanOrEqual(BigInt(s.n + 1));
    await host.close();
  });

  it('lets an effect send to its own actor and await it without deadlocking', async () => {
    const host = await createActorHost({
      db: t.db,
      replicaId: 'r1',
      logger,
      kinds: {
        ledger: ledgerKind({}, {
          recordEntry: async (ctx, params: { n: number }) => {
            if (params.n === 42) {
              const r = await ctx.send({ type: 'close' });
              expect(r.outcome).toBe('persisted');
            }
          },
        }),
      },
    });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    const sent = await host.send('ledger', id, { type: 'add', n: 42 });
    await sent.effectsDone;
    expect((await host.get('ledger', id))!.state).toBe('closed');
    await host.close();
  });

  it('reloads and re-delivers after losing the version check to another replica', async () => {
    const { a, b, close } = await twoReplicas();
    const id = randomUUID();
    await a.spawn('ledger', id, { owner: 'ann' });
    await b.send('ledger', id, { type: 'add', n: 1 }); // b now caches version 2
    await a.send('ledger', id, { type: 'add', n: 2 }); // a's cache (version 1) is stale: conflict, reload, retry
    await b.send('ledger', id, { type: 'add', n: 3 });
    const view = await a.get('ledger', id);
    expect(view!.snapshot.context.entries).toEqual([1, 2, 3]);
    expect((await history(t.db, id)).map((h) => [Number(h.seq), h.replica])).toEqual([
      [1, 'ra'],
      [2, 'rb'],
      [3, 'ra'],
      [4, 'rb'],
    ]);
    await close();
  });

  it('moves an actor whose transition keeps throwing to failed through its machine', async () => {
    const host = await createActorHost({ db: t.db, replicaId: 'r1', kinds: { ledger: ledgerKind() }, logger, supervision: fast });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    const r = await host.send('ledger', id, { type: 'explode' });
    expect(r.outcome).toBe('failed');
    const a = await row(t.db, id);
    expect([a.state, a.status, a.terminal]).toEqual(['failed', 'failed', true]);
    expect(a.last_error).toMatch(/transition on explode threw: ledger exploded/);
    expect((await history(t.db, id)).map((h) => h.event)).toEqual(['xstate.init', 'supervisor.failed']);
    // A terminal actor ignores further events.
    expect((await host.send('ledger', id, { type: 'add', n: 1 })).outcome).toBe('unchanged');
    await host.close();
  });

  it('writes failed directly when the machine does not accept supervisor.failed', async () => {
    const bare = setup({ types: {} as { events: { type: 'boom' } | { type: 'ok' } } }).createMachine({
      initial: 'idle',
      context: { n: 0 },
      states: {
        idle: {
          on: {
            ok: { actions: assign({ n: ({ context }) => context.n + 1 }) },
            boom: {
              actions: assign(() => {
                throw new Error('bare exploded');
              }),
            },
          },
        },
      },
    });
    const project = () => ({ status: 'idle', deadlineAt: null, terminal: false });
    const host = await createActorHost({
      db: t.db,
      replicaId: 'r1',
      kinds: { bare: { machine: bare, project, effects: {} } },
      logger,
      supervision: fast,
    });
    const id = randomUUID();
    await host.spawn('bare', id, undefined);
    const r = await host.send('bare', id, { type: 'boom' });
    expect(r.outcome).toBe('failed');
    const [a] = await t.db.query<any>(`select * from actors where kind = 'bare' and id = $1`, [id]);
    expect([a.state, a.status, a.terminal, a.version]).toEqual(['idle', 'failed', true, 2n]);
    expect(a.last_error).toMatch(/bare exploded/);
    await host.close();
  });

  it('fails an actor whose effect keeps failing directly when its machine ignores supervisor.failed', async () => {
    const bare = setup({ actions: { ring: () => {} } }).createMachine({
      initial: 'idle',
      context: { n: 0 },
      states: { idle: { on: { ring: { actions: [assign({ n: ({ context }) => context.n + 1 }), 'ring'] } } } },
    });
    const host = await createActorHost({
      db: t.db,
      replicaId: 'r1',
      kinds: {
        bell: {
          machine: bare,
          project: () => ({ status: 'idle', deadlineAt: null, terminal: false }),
          effects: {
            ring: () => {
              throw new Error('bell broken');
            },
          },
        },
      },
      logger,
      supervision: fast,
    });
    const id = randomUUID();
    await host.spawn('bell', id, undefined);
    const failed = host.waitForTerminal('bell', id, 5_000);
    await host.send('bell', id, { type: 'ring' });
    expect(await failed).toMatchObject({ status: 'failed', terminal: true, version: 3 });
    const [a] = await t.db.query<any>(`select last_error from actors where kind = 'bell' and id = $1`, [id]);
    expect(a.last_error).toBe('effect ring failed: bell broken');
    await host.close();
  });

  it('retries a failing effect with backoff and fails the actor when it keeps failing', async () => {
    let calls = 0;
    const host = await createActorHost({
      db: t.db,
      replicaId: 'r1',
      logger,
      supervision: fast,
      kinds: {
        ledger: ledgerKind({}, {
          recordEntry: (_ctx, params: { n: number }) => {
            calls++;
            if (params.n === 99 || calls === 1) throw new Error('agent unreachable');
          },
        }),
      },
    });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    const ok = await host.send('ledger', id, { type: 'add', n: 1 });
    await ok.effectsDone;
    expect(calls).toBe(2); // failed once, succeeded on the retry
    const done = host.waitForTerminal('ledger', id, 5_000);
    await host.send('ledger', id, { type: 'add', n: 99 });
    const failed = await done;
    expect(failed.state).toBe('failed');
    expect((await row(t.db, id)).last_error).toBe('effect recordEntry failed: agent unreachable');
    await host.close();
  });

  it("retries a kind's durable effect past maxFailures until it succeeds, and the actor keeps its end", async () => {
    // A terminal state's cleanup whose part is away for twice the failures an ordinary effect is given up after.
    let calls = 0;
    const host = await createActorHost({
      db: t.db,
      replicaId: 'r1',
      logger,
      supervision: fast,
      kinds: {
        ledger: ledgerKind({ durableEffects: ['announceClosed'] }, {
          announceClosed: () => {
            if (++calls <= 2 * fast.maxFailures) throw new Error('store unreachable');
          },
        }),
      },
    });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    await (await host.send('ledger', id, { type: 'close' })).effectsDone;
    expect(calls).toBe(2 * fast.maxFailures + 1);
    await host.close();
    const a = await row(t.db, id);
    expect([a.state, a.status, a.last_error]).toEqual(['closed', 'closed', null]);
    expect(await t.db.query(`select effect from actor_effects where kind = 'ledger' and actor_id = $1`, [id])).toEqual([]);
  });

  it('writes entity columns in the same transaction, and persists nothing when that write fails', async () => {
    await t.db.query(`create table if not exists ledger_entities (id uuid primary key, status text not null, deadline_at timestamptz)`);
    let refuse = false;
    const kind = ledgerKind({
      onPersist: async (tx, id, _snapshot, p) => {
        if (refuse) throw new Error('entity write refused');
        await tx.query(
          `insert into ledger_entities (id, status, deadline_at) values ($1, $2, $3::timestamptz)
           on conflict (id) do update set status = excluded.status, deadline_at = excluded.deadline_at`,
          [id, p.status, p.deadlineAt === null ? null : new Date(p.deadlineAt).toISOString()],
        );
      },
    });
    const host = await createActorHost({ db: t.db, replicaId: 'r1', kinds: { ledger: kind }, logger, supervision: fast });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    await host.send('ledger', id, { type: 'arm', ms: 10, at: 100 });
    expect(await t.db.query(`select status, deadline_at from ledger_entities where id = $1`, [id])).toEqual([
      { status: 'open', deadline_at: new Date(110) },
    ]);
    refuse = true;
    await expect(host.send('ledger', id, { type: 'close' })).rejects.toMatchObject({ code: 'unavailable' });
    expect((await row(t.db, id)).version).toBe(2n);
    refuse = false;
    await host.send('ledger', id, { type: 'close' });
    expect(await t.db.query(`select status from ledger_entities where id = $1`, [id])).toEqual([{ status: 'closed' }]);
    await host.close();
  });

  it('spawns inside a caller transaction and starts effects only when asked after the commit', async () => {
    const effects: string[] = [];
    const traced = setup({ actions: { hello: (_, _p: { who: string }) => {} } }).createMachine({
      initial: 'a',
      entry: { type: 'hello', params: { who: 'world' } },
      states: { a: {} },
    });
    const host = await createActorHost({
      db: t.db,
      replicaId: 'r1',
      logger,
      kinds: {
        traced: {
          machine: traced,
          project: () => ({ status: 'a', deadlineAt: null, terminal: false }),
          effects: { hello: (_c, p: { who: string }) => void effects.push(p.who) },
        },
      },
    });
    const id = randomUUID();
    const spawned = await t.db.tx(async (tx) => {
      const s = await host.spawn('traced', id, undefined, { tx });
      expect(await t.db.query(`select 1 from actors where id = $1`, [id])).toHaveLength(0);
      return s;
    });
    expect(effects).toEqual([]);
    await spawned.start();
    await spawned.start();
    expect(effects).toEqual(['world']);
    await expect(host.spawn('traced', id, undefined)).rejects.toMatchObject({ code: 'conflict' });
    await host.close();
  });

  it('does not apply an event twice when the commit happened but its answer was lost', async () => {
    const fdb = faultyDb(t.db);
    const host = await createActorHost({ db: fdb, replicaId: 'r1', kinds: { ledger: ledgerKind() }, logger, supervision: fast });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    fdb.inject({ nth: 1, point: 'after', match: /update actors/ });
    const r = await host.send('ledger', id, { type: 'add', n: 7 });
    expect(fdb.fired).toBe(true);
    expect(r.outcome).toBe('persisted');
    expect((await history(t.db, id)).map((h) => h.event)).toEqual(['xstate.init', 'add']);
    expect((await host.get('ledger', id))!.snapshot.context.entries).toEqual([7]);
    await host.close();
  });

  it('rehydrates the live actors its replica owns', async () => {
    const replicaId = `r-${randomUUID()}`;
    const first = await createActorHost({ db: t.db, replicaId, kinds: { ledger: ledgerKind() }, logger });
    const live = randomUUID();
    const closed = randomUUID();
    await first.spawn('ledger', live, { owner: 'ann' });
    await first.spawn('ledger', closed, { owner: 'bob' });
    await first.send('ledger', closed, { type: 'close' });
    await first.close();
    const second = await createActorHost({ db: t.db, replicaId, kinds: { ledger: ledgerKind() }, logger });
    expect(await second.rehydrate()).toBe(1);
    expect((await second.send('ledger', live, { type: 'add', n: 5 })).actor.version).toBe(2);
    await second.close();
  });

  it('keeps external context keys out of the snapshot and the spawn history, and reads them back on load', async () => {
    // The owner lives in an entity table of its own, the way a query's SQL lives in its queries row.
    await t.db.query(`create table if not exists ledger_owners (id uuid primary key, owner text not null)`);
    const kind = () =>
      ledgerKind({ externalContext: { keys: ['owner'], select: `select jsonb_build_object('owner', o.owner) from ledger_owners o where o.id = a.id` } });
    const replicaId = `r-${randomUUID()}`;
    const first = await createActorHost({ db: t.db, replicaId, kinds: { ledger: kind() }, logger });
    const id = randomUUID();
    await t.db.query(`insert into ledger_owners values ($1, 'zed-the-owner')`, [id]);
    await first.spawn('ledger', id, { owner: 'zed-the-owner' });
    await first.send('ledger', id, { type: 'add', n: 2 });
    expect((await row(t.db, id)).snap).not.toContain('zed-the-owner');
    for (const h of await history(t.db, id)) expect(JSON.stringify(h.event_payload)).not.toContain('zed-the-owner');
    await first.close();
    // A new host (after a restart) has the key back, from the entity row, both when loading one and rehydrating.
    for (const load of ['get', 'rehydrate'] as const) {
      const again = await createActorHost({ db: t.db, replicaId, kinds: { ledger: kind() }, logger });
      if (load === 'rehydrate') await again.rehydrate();
      const r = await again.send('ledger', id, { type: 'add', n: 3 });
      expect(r.outcome).toBe('persisted');
      // The host's in-memory snapshot: what the machine decides with.
      const context = (again as any).cache.get(`ledger:${id}`)?.snapshot.context;
      expect(context?.owner, load).toBe('zed-the-owner');
      expect(context?.entries).toEqual(load === 'get' ? [2, 3] : [2, 3, 3]);
      expect((await row(t.db, id)).snap).not.toContain('zed-the-owner');
      await again.close();
    }
  });

  it('wakes a waiter on another replica through NOTIFY, and returns the current state on timeout', async () => {
    const { a, b, close } = await twoReplicas();
    const id = randomUUID();
    await a.spawn('ledger', id, { owner: 'ann' });
    const timedOut = await b.waitForTerminal('ledger', id, 50);
    expect(timedOut.terminal).toBe(false);
    const started = Date.now();
    const waiting = b.waitForTerminal('ledger', id, 30_000);
    const notices: string[] = [];
    b.subscribe('ledger', id, (n) => notices.push(`${n.replica}:${n.version}:${n.status}`));
    await a.send('ledger', id, { type: 'close' });
    const done = await waiting;
    expect(done.status).toBe('closed');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(notices).toEqual(['ra:2:closed']);
    await close();
  });

  for (const across of ['status', 'terminal'] as const) {
    it(`announces to other replicas ${across === 'status' ? 'every change of status' : 'only the end, for a kind that asks so (announceAcross)'}; a local notice carries the projection`, async () => {
      // queued → running → done: two changes of status, the second terminal.
      const steps = setup({ types: {} as { context: Record<string, never>; events: { type: 'next' } } }).createMachine({
        initial: 'queued',
        context: {},
        states: { queued: { on: { next: 'running' } }, running: { on: { next: 'done' } }, done: { type: 'final' } },
      });
      const kind: ActorKind = {
        machine: steps,
        project: (snap: any) => ({ status: String(snap.value), deadlineAt: null, terminal: snap.value === 'done', step: String(snap.value) }),
        effects: {},
        announceAcross: across,
      };
      const db2 = await connectDb({ url: t.url, poolSize: 2 });
      const a = await createActorHost({ db: t.db, replicaId: 'ra', kinds: { steps: kind }, logger });
      const b = await createActorHost({ db: db2, replicaId: 'rb', kinds: { steps: kind }, logger });
      const id = randomUUID();
      await a.spawn('steps', id, {});
      const heard: string[] = [];
      const ended = new Promise<void>((resolve) => b.subscribe('steps', id, (n) => (heard.push(`${n.replica}:${n.version}:${n.status}:${n.projection ? 'projection' : 'none'}`), n.terminal && resolve())));
      const local: unknown[] = [];
      a.subscribe('steps', id, (n) => local.push(n.projection));
      await a.send('steps', id, { type: 'next' });
      await a.send('steps', id, { type: 'next' });
      // NOTIFYs arrive in commit order: once the end is heard, an earlier one would have been too.
      await ended;
      expect(heard).toEqual([...(across === 'status' ? ['ra:2:running:none'] : []), 'ra:3:done:none']);
      expect(local).toEqual([
        { status: 'running', deadlineAt: null, terminal: false, step: 'running' },
        { status: 'done', deadlineAt: null, terminal: true, step: 'done' },
      ]);
      await a.close();
      await b.close();
      await db2.close();
    });
  }

  it('a watch hears a transition that lands between its registration and its wait, and times out like waitFor', async () => {
    const { a, b, close } = await twoReplicas();
    const id = randomUUID();
    await a.spawn('ledger', id, { owner: 'ann' });
    // Nothing heard: the wait passes and answers the current state, as waitFor does.
    const idle = b.watchTerminal(['other', 'ledger'], id);
    expect((await idle.wait('ledger', 50)).terminal).toBe(false);
    // The caller's own read would be here; the close commits (on another replica) before `wait` is called.
    const watch = b.watchTerminal(['other', 'ledger'], id);
    const closed = new Promise<void>((resolve) => b.subscribe('ledger', id, (n) => n.terminal && resolve()));
    await a.send('ledger', id, { type: 'close' });
    await closed;
    const started = Date.now();
    expect((await watch.wait('ledger', 30_000)).status).toBe('closed');
    expect(Date.now() - started).toBeLessThan(1_000);
    // Cancelled without a wait: no listener is left behind.
    b.watchTerminal(['ledger'], id).cancel();
    expect((b as any).r.notifications.notices.listenerCount(`ledger:${id}`)).toBe(1);
    await close();
  });

  it('still wakes a waiter on another replica after its LISTEN connection was killed', async () => {
    const { a, b, close } = await twoReplicas({ applicationName: 'eider-listen-victim' });
    const id = randomUUID();
    await a.spawn('ledger', id, { owner: 'ann' });
    const waiting = b.waitForTerminal('ledger', id, 60_000);
    const killed = await t.db.query<{ ok: boolean }>(
      `select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'eider-listen-victim' and query ilike 'listen%'`,
    );
    expect(killed.map((k) => k.ok)).toEqual([true]);
    // The close is announced while b has no LISTEN: b learns of it by re-reading once it subscribed again.
    const started = Date.now();
    await a.send('ledger', id, { type: 'close' });
    expect((await waiting).status).toBe('closed');
    expect(Date.now() - started).toBeLessThan(10_000);
    // And later notifications arrive again on the new connection.
    const id2 = randomUUID();
    await a.spawn('ledger', id2, { owner: 'bob' });
    const second = b.waitForTerminal('ledger', id2, 60_000);
    const t2 = Date.now();
    await a.send('ledger', id2, { type: 'close' });
    expect((await second).status).toBe('closed');
    expect(Date.now() - t2).toBeLessThan(5_000);
    await close();
  });

  it('refuses a kind whose machine has an action without an effect implementation', async () => {
    await expect(
      createActorHost({
        db: t.db,
        replicaId: 'r1',
        logger,
        kinds: { ledger: { machine: ledgerMachine, project: projectLedger, effects: { recordEntry: () => {} } } },
      }),
    ).rejects.toThrow(/announceClosed/);
  });

  it('handles the events of one actor one at a time in arrival order, even when the first one is slow to write', async () => {
    // The first event's write is held back: serialised, the others wait for it; unserialised, they would commit
    // first and the version check would only hide the reordering.
    const fdb = faultyDb(t.db);
    const effects: number[] = [];
    const host = await createActorHost({ db: fdb, replicaId: 'mb1', kinds: { ledger: ledgerKind({}, { recordEntry: async (_c, p: { n: number }) => void effects.push(p.n) }) }, logger });
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann' });
    fdb.inject({ nth: 1, point: 'delay', delayMs: 300, match: /update actors set version/ });
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => host.send('ledger', id, { type: 'add', n })));
    await Promise.all(results.map((r) => r.effectsDone));
    expect(fdb.fired).toBe(true);
    expect(results.map((r) => r.actor.version)).toEqual([2, 3, 4, 5, 6]);
    expect((await host.get('ledger', id))!.snapshot.context.entries).toEqual([1, 2, 3, 4, 5]);
    expect((await history(t.db, id)).slice(1).map((h) => h.event_payload.n)).toEqual([1, 2, 3, 4, 5]);
    expect(effects).toEqual([1, 2, 3, 4, 5]);
    await host.close();
  });

  it('persists and runs an effect-only transition (state and context unchanged, an action asked for)', async () => {
    const echo = setup({
      types: {} as { context: { n: number }; events: { type: 'ping'; at?: number } },
      actions: { pong: (_, _p: { n: number }) => {} },
    }).createMachine({ initial: 'idle', context: { n: 1 }, states: { idle: { on: { ping: { actions: [{ type: 'pong', params: ({ context }) => ({ n: context.n }) }] } } } } });
    const pongs: number[] = [];
    const host = await createActorHost({
      db: t.db,
      replicaId: 'eo1',
      logger,
      kinds: { echo: { machine: echo, project: () => ({ status: 'idle', terminal: false, deadlineAt: null }), effects: { pong: (_c, p: { n: number }) => void pongs.push(p.n) } } },
    });
    const id = randomUUID();
    await host.spawn('echo', id, undefined);
    const r = await host.send('echo', id, { type: 'ping' });
    expect(r.outcome).toBe('persisted');
    await r.effectsDone;
    expect(pongs).toEqual([1]);
    const [a] = await t.db.query<{ version: bigint }>(`select version from actors where kind = 'echo' and id = $1`, [id]);
    expect(a.version).toBe(2n);
    await host.close();
  });

  it('keeps Date values in a snapshot exact through the database', async () => {
    const stamped = setup({
      types: {} as { context: { at: Date; dates: Date[] }; events: { type: 'stamp'; ms: number; at?: number } },
    }).createMachine({
      initial: 'open',
      context: { at: new Date(0), dates: [] },
      states: { open: { on: { stamp: { actions: assign({ at: ({ event }) => new Date(event.ms), dates: ({ context, event }) => [...context.dates, new Date(event.ms + 1)] }) } } } },
    });
    const kind: ActorKind = { machine: stamped, project: () => ({ status: 'open', terminal: false, deadlineAt: null }), effects: {} };
    const host = await createActorHost({ db: t.db, replicaId: 'dt1', kinds: { stamped: kind }, logger });
    const id = randomUUID();
    await host.spawn('stamped', id, undefined);
    await host.send('stamped', id, { type: 'stamp', ms: 1_700_000_000_123 });
    await host.close();
    // A fresh host reads the snapshot back from its row.
    const other = await createActorHost({ db: t.db, replicaId: 'dt2', kinds: { stamped: kind }, logger });
    const ctx = (await other.get('stamped', id))!.snapshot.context;
    expect(ctx.at).toBeInstanceOf(Date);
    expect(ctx.at.getTime()).toBe(1_700_000_000_123);
    expect(ctx.dates[0]).toBeInstanceOf(Date);
    expect(ctx.dates[0].getTime()).toBe(1_700_000_000_124);
    await other.close();
  });

  for (const how of ['entityWrite', 'onPersist'] as const) {
    it(`writes no entity projection (${how}) for a transition that lost the version check`, async () => {
      await t.db.query(`create table if not exists ledger_entities (id uuid primary key, status text not null, deadline_at timestamptz)`);
      const entity: Partial<ActorKind> =
        how === 'entityWrite'
          ? { entityWrite: (id, p) => sql`update ledger_entities set status = ${p.status} where id = ${id}::uuid` }
          : {
              onPersist: async (tx, id, _s, p) => {
                await tx.query(`update ledger_entities set status = $2 where id = $1`, [id, p.status]);
              },
            };
      const db2 = await connectDb({ url: t.url, poolSize: 2 });
      const slow = faultyDb(db2);
      const a = await createActorHost({ db: t.db, replicaId: 'ev-a', kinds: { ledger: ledgerKind(entity) }, logger });
      const b = await createActorHost({ db: slow, replicaId: 'ev-b', kinds: { ledger: ledgerKind(entity) }, logger });
      const id = randomUUID();
      await a.spawn('ledger', id, { owner: 'ann' });
      await t.db.query(`insert into ledger_entities (id, status) values ($1, 'open')`, [id]);
      // b decides `add` on the open ledger; its write is held back while a closes the ledger, so it loses the version
      // check, reloads, and the closed ledger ignores the event.
      slow.inject({ nth: 1, point: 'delay', delayMs: 300, match: /update actors set version/ });
      const late = b.send('ledger', id, { type: 'add', n: 1 });
      await expect.poll(() => slow.fired).toBe(true);
      await a.send('ledger', id, { type: 'close' });
      expect((await late).outcome).toBe('unchanged');
      const [e] = await t.db.query<{ status: string }>(`select status from ledger_entities where id = $1`, [id]);
      expect(e.status).toBe('closed');
      await a.close();
      await b.close();
      await db2.close();
    });
  }

  describe('the effects outbox', () => {
    const pending = (id: string) =>
      t.db.query<{ effect: string; owner_replica: string }>(`select effect, owner_replica from actor_effects where actor_id = $1 order by version, idx`, [id]);
    const until = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
    };
    /** An effect that fails only once its host is closing: the host stops before it ran (as a killed process). */
    function dyingEffect() {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      return {
        impl: async () => {
          await gate;
          throw new Error('the process died');
        },
        kill: async (host: { close(): Promise<void> }) => {
          const closing = host.close();
          release();
          await closing;
        },
      };
    }

    it('records a transition and its effects in one statement, and clears them once they ran', async () => {
      const seen: number[] = [];
      const host = await createActorHost({ db: t.db, replicaId: 'ob1', kinds: { ledger: ledgerKind({}, { recordEntry: (_c, p: { n: number }) => void seen.push(p.n) }) }, logger });
      const id = randomUUID();
      await host.spawn('ledger', id, { owner: 'ann' });
      const r = await host.send('ledger', id, { type: 'add', n: 4 });
      await r.effectsDone;
      expect(seen).toEqual([4]);
      await until(async () => (await pending(id)).length === 0);
      expect(await pending(id)).toEqual([]);
      await host.close();
    });

    it('runs, after a restart, the effects a process committed but died before running', async () => {
      // The first process commits `add` and dies inside its effect (it never returns): the outbox keeps the effect.
      const dying = dyingEffect();
      const crashed = await createActorHost({ db: t.db, replicaId: 'ob2', kinds: { ledger: ledgerKind({}, { recordEntry: dying.impl }) }, logger });
      const id = randomUUID();
      await crashed.spawn('ledger', id, { owner: 'ann' });
      await crashed.send('ledger', id, { type: 'add', n: 7 });
      await dying.kill(crashed);
      expect(await pending(id)).toEqual([{ effect: 'recordEntry', owner_replica: 'ob2' }]);

      const seen: number[] = [];
      const restarted = await createActorHost({ db: t.db, replicaId: 'ob2', kinds: { ledger: ledgerKind({}, { recordEntry: (_c, p: { n: number }) => void seen.push(p.n) }) }, logger });
      await restarted.rehydrate();
      await restarted.idle();
      expect(seen).toEqual([7]);
      await until(async () => (await pending(id)).length === 0);
      expect(await pending(id)).toEqual([]);
      await restarted.close();
    });

    it('keeps several effects of one transition in order, with exact params, through a crash', async () => {
      // Two effects on one event, the second with a 64-bit param: the outbox's many-effects form.
      const pair = setup({
        types: {} as { context: Record<string, never>; events: { type: 'go'; big: bigint } },
        actions: { first: (_, _p: { n: number }) => {}, second: (_, _p: { big: bigint; at: Date }) => {} },
      }).createMachine({
        initial: 'idle',
        context: {},
        states: {
          idle: {
            on: {
              go: {
                target: 'went',
                actions: [{ type: 'first', params: { n: 1 } }, { type: 'second', params: ({ event }) => ({ big: event.big, at: new Date(5_000) }) }],
              },
            },
          },
          went: {},
        },
      });
      const kind = (first: EffectImpl, second: EffectImpl): ActorKind => ({
        machine: pair,
        project: (s) => ({ status: String(s.value), terminal: false, deadlineAt: null }),
        effects: { first, second },
      });
      const dying = dyingEffect();
      const crashed = await createActorHost({ db: t.db, replicaId: 'ob-pair', kinds: { pair: kind(dying.impl, () => {}) }, logger });
      const id = randomUUID();
      await crashed.spawn('pair', id, undefined);
      await crashed.send('pair', id, { type: 'go', big: 9_007_199_254_740_993n });
      await dying.kill(crashed);
      expect(await pending(id)).toEqual([
        { effect: 'first', owner_replica: 'ob-pair' },
        { effect: 'second', owner_replica: 'ob-pair' },
      ]);

      const ran: unknown[] = [];
      const restarted = await createActorHost({
        db: t.db,
        replicaId: 'ob-pair',
        kinds: { pair: kind((_c, p) => void ran.push(['first', p]), (_c, p) => void ran.push(['second', p])) },
        logger,
      });
      await restarted.rehydrate();
      await restarted.idle();
      expect(ran).toEqual([
        ['first', { n: 1 }],
        ['second', { big: 9_007_199_254_740_993n, at: new Date(5_000) }],
      ]);
      await until(async () => (await pending(id)).length === 0);
      await restarted.close();
    });

    it("adopts a gone replica's pending effects, and leaves a live replica's alone", async () => {
      const id = randomUUID();
      const dying = dyingEffect();
      const gone = await createActorHost({ db: t.db, replicaId: 'ob-gone', kinds: { ledger: ledgerKind({}, { recordEntry: dying.impl }) }, logger });
      await gone.spawn('ledger', id, { owner: 'ann' });
      await gone.send('ledger', id, { type: 'add', n: 3 });
      await dying.kill(gone);
      // While ob-gone heartbeats, its effects are its own.
      await t.db.query(`insert into replicas (id, instance, internal_url) values ('ob-gone', gen_random_uuid(), 'http://x')`);
      const seen: number[] = [];
      const adopter = await createActorHost({ db: t.db, replicaId: 'ob-adopter', kinds: { ledger: ledgerKind({}, { recordEntry: (_c, p: { n: number }) => void seen.push(p.n) }) }, logger });
      expect(await adopter.recoverEffects({ presenceTtlS: 60, minAgeS: 0 })).toBe(0);
      // Once its heartbeat is older than the presence TTL, another replica runs them.
      await t.db.query(`update replicas set heartbeat_at = now() - interval '2 minutes' where id = 'ob-gone'`);
      expect(await adopter.recoverEffects({ presenceTtlS: 60, minAgeS: 0 })).toBe(1);
      await adopter.idle();
      expect(seen).toEqual([3]);
      await until(async () => (await pending(id)).length === 0);
      expect(await pending(id)).toEqual([]);
      await t.db.query(`delete from replicas where id = 'ob-gone'`);
      await adopter.close();
    });

    /** A kind whose every transition asks for two effects, `first` and `second`, each recorded when it runs. */
    function pairKind(replica: string, ran: string[]): ActorKind {
      const record = (name: string) => async (ctx: { id: string; version: number }) => {
        await new Promise((r) => setTimeout(r, 2));
        ran.push(`${replica} ${ctx.id} v${ctx.version} ${name}`);
      };
      return ledgerKind({}, { first: record('first'), second: record('second') });
    }
    /** Outbox rows a crashed `owner` left: `versions` two-effect transitions of each actor, older versions first. */
    async function leftInOutbox(owner: string, ids: string[], versions: number[]) {
      let age = 1_000;
      for (const v of versions)
        for (const id of ids) {
          age--;
          await t.db.query(
            `insert into actor_effects (kind, actor_id, version, idx, effect, params, owner_replica, created_at)
             values ('pair', $1, $2, 0, 'first', null, $3, now() - make_interval(secs => $4 / 1000.0)),
                    ('pair', $1, $2, 1, 'second', null, $3, now() - make_interval(secs => $4 / 1000.0))`,
            [id, v, owner, age],
          );
        }
    }
    const pendingPairs = async (ids: string[]) =>
      Number((await t.db.query<{ n: string }>(`select count(*) as n from actor_effects where kind = 'pair' and actor_id = any($1::uuid[])`, [ids]))[0].n);

    it('keeps the outbox row of an effect waiting in its retry backoff when the host closes, and runs it after a restart', async () => {
      let calls = 0;
      const slow = { maxFailures: 5, backoffMs: 60_000, maxBackoffMs: 60_000 };
      const host = await createActorHost({
        db: t.db,
        replicaId: 'ob-backoff',
        supervision: slow,
        kinds: {
          ledger: ledgerKind({}, {
            recordEntry: () => {
              calls++;
              throw new Error('store briefly unreachable');
            },
          }),
        },
        logger,
      });
      const id = randomUUID();
      await host.spawn('ledger', id, { owner: 'ann' });
      await host.send('ledger', id, { type: 'add', n: 5 });
      await expect.poll(() => calls).toBe(1); // now in its 60 s backoff
      await host.close();
      expect(await pending(id)).toEqual([{ effect: 'recordEntry', owner_replica: 'ob-backoff' }]);
      const seen: number[] = [];
      const restarted = await createActorHost({ db: t.db, replicaId: 'ob-backoff', kinds: { ledger: ledgerKind({}, { recordEntry: (_c, p: { n: number }) => void seen.push(p.n) }) }, logger });
      await restarted.rehydrate();
      await restarted.idle();
      expect(seen).toEqual([5]);
      await restarted.close();
    });

    it("deletes only the finished transition's outbox rows, not those of the actor's later transitions", async () => {
      // `add 1` runs its effect; `add 2`'s effect hangs until the process dies: its row (a later version) must stay.
      const dying = dyingEffect();
      const host = await createActorHost({
        db: t.db,
        replicaId: 'ob-later',
        kinds: { ledger: ledgerKind({}, { recordEntry: (_c, p: { n: number }) => (p.n === 2 ? dying.impl() : undefined) }) },
        logger,
      });
      const id = randomUUID();
      await host.spawn('ledger', id, { owner: 'ann' });
      await host.send('ledger', id, { type: 'add', n: 1 });
      await host.send('ledger', id, { type: 'add', n: 2 });
      // The first transition's rows go in the next batch deletion; the second's effect is still running.
      await expect.poll(async () => (await t.db.query(`select version from actor_effects where actor_id = $1 order by version`, [id])).map((r: any) => Number(r.version))).toEqual([3]);
      await dying.kill(host);
      expect(await pending(id)).toEqual([{ effect: 'recordEntry', owner_replica: 'ob-later' }]);
      const seen: number[] = [];
      const restarted = await createActorHost({ db: t.db, replicaId: 'ob-later', kinds: { ledger: ledgerKind({}, { recordEntry: (_c, p: { n: number }) => void seen.push(p.n) }) }, logger });
      await restarted.rehydrate();
      await restarted.idle();
      expect(seen).toEqual([2]);
      await restarted.close();
    });

    for (const point of ['before', 'after'] as const) {
      it(`deletes finished outbox rows with the next transition's statement, and again with a later one when that statement ${point === 'before' ? 'failed' : 'lost its answer'}`, async () => {
        const fdb = faultyDb(t.db);
        const deletes: string[] = [];
        const spied: typeof fdb = { ...fdb, query: (text, params) => (/^delete from actor_effects/.test(text) && deletes.push(text), fdb.query(text, params)) };
        // No statement of their own while the test runs: only a transition's statement can delete them.
        const host = await createActorHost({ db: spied, replicaId: `ob-carry-${point}`, kinds: { ledger: ledgerKind() }, logger, supervision: fast, outboxDeleteWaitMs: 60_000 });
        const [a, b] = [randomUUID(), randomUUID()];
        await host.spawn('ledger', a, { owner: 'ann' });
        await host.spawn('ledger', b, { owner: 'bob' });
        await (await host.send('ledger', a, { type: 'add', n: 1 })).effectsDone;
        expect(await pending(a)).toEqual([{ effect: 'recordEntry', owner_replica: `ob-carry-${point}` }]);
        // B's transition carries A's finished rows; its first attempt fails (or commits without an answer) and is
        // delivered again, which carries them again; the event lands once.
        fdb.inject({ nth: 1, point, match: /^with u as/ });
        const r = await host.send('ledger', b, { type: 'add', n: 2 });
        expect(fdb.fired).toBe(true);
        expect(r.outcome).toBe('persisted');
        expect(await pending(a)).toEqual([]);
        expect((await host.get('ledger', b))!.snapshot.context.entries).toHaveLength(1);
        await r.effectsDone;
        expect(deletes).toEqual([]);
        // B's own finished row goes with the next statement, here the flush of a closing host.
        expect(await pending(b)).toHaveLength(1);
        await host.close();
        expect(await pending(b)).toEqual([]);
        expect(deletes).toHaveLength(1);
      });
    }

    it('claims a transition whole at the limit\'s edge: a two-effect transition with limit 1 runs both effects', async () => {
      const ids = [randomUUID(), randomUUID()];
      await leftInOutbox('ob-edge', ids, [2, 3]);
      const ran: string[] = [];
      const host = await createActorHost({ db: t.db, replicaId: 'ob-edge', kinds: { pair: pairKind('ob-edge', ran) }, logger });
      // One actor per claim; its finished transitions' rows go in the next batch deletion, so claim until none is left.
      for (let round = 0; round < 200 && (await pendingPairs(ids)) > 0; round++) {
        await host.recoverEffects({ presenceTtlS: null, minAgeS: 0, limit: 1 });
        await host.idle();
        await new Promise((r) => setTimeout(r, 5));
      }
      for (const id of ids)
        expect(ran.filter((r) => r.includes(id)).map((r) => r.split(' ').slice(2).join(' '))).toEqual(['v2 first', 'v2 second', 'v3 first', 'v3 second']);
      expect(await pendingPairs(ids)).toBe(0);
      await host.close();
    });

    it("two replicas adopting a gone replica's outbox at once run every transition whole, on one replica, in each actor's order", async () => {
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      await leftInOutbox('ob-dead', ids, [2, 3, 4, 5]);
      // Both adopters heartbeat (a claim they committed is theirs); the dead replica has no registry row.
      await t.db.query(`insert into replicas (id, instance, internal_url) values ('ob-ra', gen_random_uuid(), 'http://a'), ('ob-rb', gen_random_uuid(), 'http://b')`);
      const db2 = await connectDb({ url: t.url, poolSize: 3 });
      const ran: string[] = [];
      const a = await createActorHost({ db: t.db, replicaId: 'ob-ra', kinds: { pair: pairKind('ob-ra', ran) }, logger });
      const b = await createActorHost({ db: db2, replicaId: 'ob-rb', kinds: { pair: pairKind('ob-rb', ran) }, logger });
      const adopt = async (host: typeof a) => {
        for (let round = 0; round < 200 && (await pendingPairs(ids)) > 0; round++) {
          await host.recoverEffects({ presenceTtlS: 60, minAgeS: 0, limit: 1 });
          await new Promise((r) => setTimeout(r, 1));
        }
      };
      await Promise.all([adopt(a), adopt(b)]);
      await a.idle();
      await b.idle();
      expect(await pendingPairs(ids)).toBe(0);
      for (const id of ids) {
        const mine = ran.filter((r) => r.includes(id)).map((r) => r.split(' '));
        expect(mine.map((r) => `${r[2]} ${r[3]}`)).toEqual(['v2 first', 'v2 second', 'v3 first', 'v3 second', 'v4 first', 'v4 second', 'v5 first', 'v5 second']);
        // A transition's two effects ran on the replica that claimed it.
        for (let i = 0; i < mine.length; i += 2) expect(mine[i][0]).toBe(mine[i + 1][0]);
      }
      await t.db.query(`delete from replicas where id in ('ob-ra', 'ob-rb')`);
      await a.close();
      await b.close();
      await db2.close();
    });

    it('writes a quiet event (a heartbeat) without a history row', async () => {
      const host = await createActorHost({ db: t.db, replicaId: 'ob3', kinds: { ledger: ledgerKind({ quietEvents: ['arm'] }) }, logger });
      const id = randomUUID();
      await host.spawn('ledger', id, { owner: 'ann' });
      await host.send('ledger', id, { type: 'arm', ms: 500, at: 2_000 });
      await host.send('ledger', id, { type: 'arm', ms: 500, at: 3_000 });
      const a = await row(t.db, id);
      expect(a.version).toBe(3n);
      expect(a.deadline_at.getTime()).toBe(3_500);
      expect((await history(t.db, id)).map((h) => h.event)).toEqual(['xstate.init']);
      await host.close();
    });
  });

  describe('group commit', () => {
    /** Spawns `n` ledger actors on `host`, then sends each one `add` at once; the sends' results, by actor. */
    async function addToMany(host: Awaited<ReturnType<typeof createActorHost>>, n: number) {
      const ids = Array.from({ length: n }, () => randomUUID());
      for (const id of ids) await host.spawn('ledger', id, { owner: 'ann' });
      const results = await Promise.allSettled(ids.map((id, i) => host.send('ledger', id, { type: 'add', n: i + 1 })));
      return { ids, results };
    }

    /** The history rows of `ids` after their spawn, and how many transactions wrote them (a row's xmin). */
    async function added(ids: string[]) {
      const rows = await t.db.query<{ id: string; event: string; n: number; tx: string }>(
        `select id::text as id, event, (event_payload->>'n')::int as n, xmin::text as tx from actor_transitions
         where kind = 'ledger' and id = any($1::uuid[]) and seq > 1`,
        [ids],
      );
      return { rows, transactions: new Set(rows.map((r) => r.tx)).size };
    }

    it("commits the transitions of actors that are ready at once together, and each actor's alone", async () => {
      const host = await createActorHost({ db: t.db, replicaId: 'gc1', kinds: { ledger: ledgerKind() }, logger, groupCommit: { writers: 2 } });
      const { ids, results } = await addToMany(host, 40);
      expect(results.every((r) => r.status === 'fulfilled' && r.value.outcome === 'persisted')).toBe(true);
      const many = await added(ids);
      expect(many.rows).toHaveLength(40);
      // Two go at once, alone; the 38 that arrive meanwhile wait for a writer and share its commit.
      expect(many.transactions).toBeLessThanOrEqual(4);
      // One actor's events, one after another, each commit alone.
      const id = ids[0];
      for (let n = 100; n < 105; n++) await host.send('ledger', id, { type: 'add', n });
      const one = await added([id]);
      expect(one.transactions).toBe(6);
      await host.close();
    });

    it("fails only the actor whose statement failed, and writes the others' transitions once", async () => {
      await t.db.query(`create table if not exists ledger_entities (id uuid primary key, status text not null, deadline_at timestamptz)`);
      let refused = '';
      const kind = ledgerKind({
        onPersist: async (tx, id, _snapshot, p) => {
          if (id === refused) throw new Error('entity write refused');
          await tx.query(`insert into ledger_entities (id, status) values ($1, $2) on conflict (id) do update set status = excluded.status`, [id, p.status]);
        },
      });
      const host = await createActorHost({ db: t.db, replicaId: 'gc2', kinds: { ledger: kind }, logger, supervision: fast, groupCommit: { writers: 1 } });
      const ids = Array.from({ length: 20 }, () => randomUUID());
      for (const id of ids) await host.spawn('ledger', id, { owner: 'ann' });
      refused = ids[7];
      const results = await Promise.allSettled(ids.map((id, i) => host.send('ledger', id, { type: 'add', n: i + 1 })));
      results.forEach((r, i) => {
        if (i === 7) expect(r).toMatchObject({ status: 'rejected', reason: { code: 'unavailable' } });
        else expect(r).toMatchObject({ status: 'fulfilled', value: { outcome: 'persisted' } });
      });
      const { rows } = await added(ids);
      expect(rows.map((r) => r.n).sort((a, b) => a - b)).toEqual(ids.map((_, i) => i + 1).filter((n) => n !== 8));
      expect((await row(t.db, refused)).version).toBe(1n);
      await host.close();
    });

    for (const point of ['after', 'before'] as const) {
      it(`applies no event twice when a group's COMMIT ${point === 'after' ? 'happened but its answer was lost' : 'failed'}`, async () => {
        const fdb = faultyDb(t.db);
        const host = await createActorHost({ db: fdb, replicaId: `gc-${point}`, kinds: { ledger: ledgerKind() }, logger, supervision: fast, groupCommit: { writers: 1 } });
        const ids = Array.from({ length: 12 }, () => randomUUID());
        for (const id of ids) await host.spawn('ledger', id, { owner: 'ann' });
        // The first send goes alone (one statement, no COMMIT); the eleven behind it form the group that fails.
        fdb.inject({ nth: 1, point, match: /^COMMIT$/ });
        const results = await Promise.all(ids.map((id, i) => host.send('ledger', id, { type: 'add', n: i + 1 })));
        expect(fdb.fired).toBe(true);
        expect(results.every((r) => r.outcome === 'persisted')).toBe(true);
        const { rows } = await added(ids);
        expect(rows.map((r) => r.n).sort((a, b) => a - b)).toEqual(ids.map((_, i) => i + 1));
        for (const id of ids) expect((await host.get('ledger', id))!.snapshot.context.entries).toHaveLength(1);
        await host.close();
      });
    }
  });
});
