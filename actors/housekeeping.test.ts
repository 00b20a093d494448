import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../runtime/logger.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';
import { createActorHost } from './host.ts';
import type { ActorKind, EffectImpl } from './types.ts';
import { pruneActorHistory, sweepGoneReplicas } from './housekeeping.ts';
import { ledgerMachine, projectLedger } from './testing/ledgerMachine.ts';

const logger = createLogger({ level: 'silent' });
const ledger = (effects: Partial<Record<string, EffectImpl>> = {}): ActorKind => ({
  machine: ledgerMachine,
  project: projectLedger,
  effects: { recordEntry: () => {}, announceClosed: () => {}, ...effects } as Record<string, EffectImpl>,
});

let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const historyOf = async (id: string) =>
  Number((await t.db.query<{ n: string }>(`select count(*) as n from actor_transitions where id = $1`, [id]))[0].n);

describe('actor housekeeping', () => {
  it('prunes the history of actors that ended before the retention, and only theirs', async () => {
    const host = await createActorHost({ db: t.db, replicaId: 'hk1', kinds: { ledger: ledger() }, logger });
    const ids = { endedOld: randomUUID(), endedRecent: randomUUID(), liveOld: randomUUID(), liveRecent: randomUUID() };
    for (const id of Object.values(ids)) {
      await host.spawn('ledger', id, { owner: 'o' });
      await host.send('ledger', id, { type: 'add', n: 1 });
    }
    await host.send('ledger', ids.endedOld, { type: 'close' });
    await host.send('ledger', ids.endedRecent, { type: 'close' });
    // A live actor untouched for longer than the retention (a long-lived session, an agent connection) keeps its history.
    await t.db.query(`update actors set updated_at = now() - interval '8 days' where id = any($1::uuid[])`, [[ids.endedOld, ids.liveOld]]);
    const before = await Promise.all(Object.values(ids).map(historyOf));
    expect(before.every((n) => n >= 2)).toBe(true);

    await pruneActorHistory(t.db, 7);
    expect(await historyOf(ids.endedOld)).toBe(0);
    expect(await historyOf(ids.endedRecent)).toBe(before[1]);
    expect(await historyOf(ids.liveOld)).toBe(before[2]);
    expect(await historyOf(ids.liveRecent)).toBe(before[3]);
    await host.close();
  });

  it("sweeps a gone replica: its live actors are adopted and its pending effects stay to be run, a live replica's are untouched", async () => {
    // A replica that committed a transition and died before running its effect, and whose heartbeat then aged out.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const dead = await createActorHost({
      db: t.db,
      replicaId: 'hk-dead',
      kinds: { ledger: ledger({ recordEntry: async () => { await gate; throw new Error('the process died'); } }) },
      logger,
    });
    const id = randomUUID();
    await dead.spawn('ledger', id, { owner: 'o' });
    await dead.send('ledger', id, { type: 'add', n: 9 });
    const closing = dead.close();
    release();
    await closing;
    await t.db.query(
      `insert into replicas (id, instance, internal_url, heartbeat_at) values ('hk-dead', gen_random_uuid(), 'http://d', now() - interval '5 minutes'),
         ('hk-live', gen_random_uuid(), 'http://l', now())`,
    );

    const seen: number[] = [];
    const sweeper = await createActorHost({ db: t.db, replicaId: 'hk-sweeper', kinds: { ledger: ledger({ recordEntry: (_c, p: { n: number }) => void seen.push(p.n) }) }, logger });
    const r = await sweepGoneReplicas(t.db, 'hk-sweeper', 60);
    expect(r).toEqual({ gone: ['hk-dead'], adoptedActors: 1 });
    const [actor] = await t.db.query<{ owner_replica: string }>(`select owner_replica from actors where id = $1`, [id]);
    expect(actor.owner_replica).toBe('hk-sweeper');
    expect(await t.db.query(`select id from replicas where id in ('hk-dead', 'hk-live') order by id`)).toEqual([{ id: 'hk-live' }]);
    // The effect the dead replica committed is still pending, and recovery runs it.
    expect(await t.db.query(`select effect from actor_effects where actor_id = $1`, [id])).toEqual([{ effect: 'recordEntry' }]);
    expect(await sweeper.recoverEffects({ presenceTtlS: 60, minAgeS: 0 })).toBe(1);
    await sweeper.idle();
    expect(seen).toEqual([9]);
    await t.db.query(`delete from replicas where id = 'hk-live'`);
    await sweeper.close();
  });
});
