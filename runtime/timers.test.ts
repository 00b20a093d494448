import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDb, type Db } from './db.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';
import { loopLockKey, startLeaderLoop } from './timers.ts';

let t: TestDatabase;
let replica2: Db;
beforeAll(async () => {
  t = await freshDatabase({ empty: true });
  replica2 = await connectDb({ url: t.url, poolSize: 2 });
});
afterAll(async () => {
  await replica2?.close();
  await t?.drop();
});

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe('startLeaderLoop', () => {
  it('runs a tick on one replica at a time, and each replica can win a later tick', async () => {
    let active = 0;
    let maxActive = 0;
    const wins = { a: 0, b: 0 };
    const body = (who: 'a' | 'b') => async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      wins[who]++;
      await new Promise((r) => setTimeout(r, 5));
      active--;
    };
    const a = startLeaderLoop({ db: t.db, name: 'race', tickMs: 1, enabled: true, run: body('a') });
    const b = startLeaderLoop({ db: replica2, name: 'race', tickMs: 1, enabled: true, run: body('b') });
    const deadline = Date.now() + 10_000;
    while ((wins.a < 3 || wins.b < 3) && Date.now() < deadline) await Promise.all([a.tickNow(), b.tickNow()]);
    await Promise.all([a.stop(), b.stop()]);
    expect(maxActive).toBe(1);
    expect(wins.a).toBeGreaterThanOrEqual(3);
    expect(wins.b).toBeGreaterThanOrEqual(3);
  });

  it('skips the tick while another replica holds the loop lock', async () => {
    let runs = 0;
    const loop = startLeaderLoop({ db: t.db, name: 'held', tickMs: 60_000, enabled: true, run: async () => void runs++ });
    const held = gate();
    const release = gate();
    const holder = replica2.tx(async (tx) => {
      await tx.query('select pg_advisory_xact_lock(hashtext($1))', [loopLockKey('held')]);
      held.open();
      await release.opened;
    });
    await held.opened;
    expect(await loop.tickNow()).toBe(false);
    release.open();
    await holder;
    expect(await loop.tickNow()).toBe(true);
    expect(runs).toBe(1);
    await loop.stop();
  });

  it('never joins the election when disabled', async () => {
    let runs = 0;
    const loop = startLeaderLoop({ db: t.db, name: 'off', tickMs: 1, enabled: false, run: async () => void runs++ });
    expect(await loop.tickNow()).toBe(false);
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(0);
    await loop.stop();
  });

  it('never overlaps its own ticks, and stop() waits for the running one', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const first = gate();
    const entered = gate();
    const loop = startLeaderLoop({
      db: t.db,
      name: 'serial',
      tickMs: 1,
      enabled: true,
      run: async ({ signal }) => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs++;
        if (runs === 1) {
          entered.open();
          await first.opened;
        }
        expect(signal).toBeInstanceOf(AbortSignal);
        active--;
      },
    });
    await entered.opened;
    const extra = [loop.tickNow(), loop.tickNow()];
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(1); // the timer and tickNow calls queue behind the blocked tick
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped).toBe(false);
    first.open();
    await stopping;
    await Promise.all(extra);
    expect(maxActive).toBe(1);
    const after = runs;
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(after); // nothing runs once stopped
  });

  it('keeps ticking after a tick throws', async () => {
    let runs = 0;
    const loop = startLeaderLoop({
      db: t.db,
      name: 'flaky',
      tickMs: 60_000,
      enabled: true,
      run: async () => {
        runs++;
        if (runs === 1) throw new Error('tick failed');
      },
    });
    expect(await loop.tickNow()).toBe(false);
    expect(await loop.tickNow()).toBe(true);
    await loop.stop();
  });
});
