import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectDb } from './db.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase({ empty: true });
});
afterAll(async () => {
  await t.drop();
});

describe('db.listen', () => {
  it('unsubscribed while it subscribes again after a lost connection, leaves no connection behind: close ends', async () => {
    // The window is a re-subscription in flight (its connection being reserved) when the caller unsubscribes; the
    // delays walk across the first retries' windows. A connection left reserved would keep close() waiting forever.
    for (let i = 0; i < 16; i++) {
      const app = `eider-listen-race-${i}`;
      const db = await connectDb({ url: t.url, poolSize: 2, applicationName: app });
      let lost!: () => void;
      const lostAt = new Promise<void>((res) => (lost = res));
      const unlisten = await db.listen('race', () => {}, { onError: () => lost() });
      await t.db.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, [app]);
      await lostAt;
      // The first retry starts 100 ms after the loss.
      await sleep(100 + (i % 8));
      await unlisten();
      const closed = await Promise.race([db.close().then(() => 'closed'), sleep(5_000).then(() => 'stuck')]);
      expect(closed, `iteration ${i}`).toBe('closed');
      // A backend ends a moment after its client hung up.
      await expect
        .poll(async () => (await t.db.query(`select count(*)::int as n from pg_stat_activity where application_name = $1`, [app]))[0].n, {
          timeout: 3_000,
        })
        .toBe(0);
    }
  });
});
