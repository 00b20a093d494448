import { describe, expect, it } from 'vitest';
import { AdmissionController, AdmissionError, type AdmissionOptions, type Grant } from './admission.ts';

const MiB = 2 ** 20;
const base: AdmissionOptions = {
  budgetBytes: 1000 * MiB,
  profile: 'auto',
  maxQueueDepth: 10,
  queuedTimeoutMs: 0,
  admissionWaitMs: 60_000,
  admissionFloorFraction: 0.5,
  floorBytes: 64 * MiB,
  elasticCeilingFraction: 0.85,
};

// Resolves to the grant, or to 'pending' if not admitted by the next macrotask.
async function settled(p: Promise<Grant>): Promise<Grant | 'pending' | AdmissionError> {
  return Promise.race([p.catch((e: AdmissionError) => e), new Promise<'pending'>((r) => setTimeout(() => r('pending'), 20))]);
}

describe('AdmissionController (auto)', () => {
  it('holds no more than maxRunning grants at once, whatever memory is free', async () => {
    const ac = new AdmissionController({ ...base, maxRunning: 2 });
    const a = await ac.acquire('a', MiB);
    await ac.acquire('b', MiB);
    const c = ac.acquire('c', MiB);
    expect(await settled(c)).toBe('pending');
    a.release();
    expect((await c).id).toBe('c');
  });

  it('queues a query whose estimate exceeds the free budget and runs it when memory frees', async () => {
    const ac = new AdmissionController(base);
    const a = await ac.acquire('a', 700 * MiB);
    expect(a.grantedBytes).toBe(700 * MiB);
    // An idle agent lets a statement's limit grow into idle memory (85% of the free budget), but reserves only the ask.
    expect(a.limitBytes).toBe(Math.floor(0.85 * 1000 * MiB));
    const b = ac.acquire('b', 800 * MiB); // 300 free < 50% of 800: waits
    expect(await settled(b)).toBe('pending');
    expect(ac.stats).toMatchObject({ running: 1, queued: 1, reservedBytes: 700 * MiB });
    a.release();
    const gb = await b;
    expect(gb.grantedBytes).toBe(800 * MiB);
    expect(gb.queuedMs).toBeGreaterThanOrEqual(15);
    expect(ac.stats).toMatchObject({ running: 1, queued: 0, reservedBytes: 800 * MiB });
    gb.release();
    gb.release(); // idempotent
    expect(ac.stats.reservedBytes).toBe(0);
  });

  it('grants part of the ask when at least STATEMENT_ADMISSION_FLOOR_FRACTION of it is free', async () => {
    const ac = new AdmissionController(base);
    await ac.acquire('a', 500 * MiB);
    const b = await ac.acquire('b', 800 * MiB); // 500 free >= 0.5 × 800
    expect(b.grantedBytes).toBe(500 * MiB);
    expect(ac.stats.reservedBytes).toBe(1000 * MiB);
  });

  it('after STATEMENT_ADMISSION_WAIT_S the head takes what is free (at least the floor)', async () => {
    const ac = new AdmissionController({ ...base, admissionWaitMs: 50 });
    await ac.acquire('a', 900 * MiB);
    const started = Date.now();
    const b = await ac.acquire('b', 800 * MiB); // 100 free: below the fraction, above the 64 MiB floor
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(b.grantedBytes).toBe(100 * MiB);
  });

  it('with STATEMENT_ADMISSION_WAIT_S=0 never waits while the floor is free', async () => {
    const ac = new AdmissionController({ ...base, admissionWaitMs: 0 });
    await ac.acquire('a', 900 * MiB);
    const b = await settled(ac.acquire('b', 800 * MiB));
    expect(b).not.toBe('pending');
    expect((b as Grant).grantedBytes).toBe(100 * MiB);
    // Below the floor it still queues: running on almost nothing would only thrash.
    const c = ac.acquire('c', 800 * MiB);
    expect(await settled(c)).toBe('pending');
  });

  it('admits in FIFO order so a large query is not starved by small ones', async () => {
    const ac = new AdmissionController(base);
    const a = await ac.acquire('a', 600 * MiB);
    const big = ac.acquire('big', 900 * MiB);
    const small = ac.acquire('small', 100 * MiB); // would fit, but waits behind the head
    expect(await settled(small)).toBe('pending');
    a.release();
    const gBig = await big;
    expect(gBig.grantedBytes).toBe(900 * MiB);
    const gSmall = await small;
    expect(gSmall.grantedBytes).toBe(100 * MiB);
  });

  it('an ask above the whole budget runs alone instead of deadlocking', async () => {
    const ac = new AdmissionController(base);
    const g = await ac.acquire('huge', 5000 * MiB);
    expect(g.grantedBytes).toBe(1000 * MiB);
  });

  it('fails "queue full" beyond MAX_QUEUE_DEPTH', async () => {
    const ac = new AdmissionController({ ...base, maxQueueDepth: 1 });
    await ac.acquire('a', 1000 * MiB);
    const b = ac.acquire('b', 500 * MiB);
    const c = ac.acquire('c', 500 * MiB);
    const error = await c.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdmissionError);
    expect((error as AdmissionError).code).toBe('queue_full');
    expect((error as AdmissionError).message).toBe('queue full');
    expect(await settled(b)).toBe('pending');
    // MAX_QUEUE_DEPTH=0: nothing may wait.
    const none = new AdmissionController({ ...base, maxQueueDepth: 0 });
    await none.acquire('a', 1000 * MiB);
    await expect(none.acquire('b', 1 * MiB)).rejects.toMatchObject({ code: 'queue_full' });
  });

  it('fails "queued timeout" after QUEUED_TIMEOUT_S and lets the next waiter move up', async () => {
    const ac = new AdmissionController({ ...base, queuedTimeoutMs: 50 });
    const a = await ac.acquire('a', 1000 * MiB);
    const b = ac.acquire('b', 500 * MiB);
    await expect(b).rejects.toMatchObject({ code: 'queued_timeout', message: 'queued timeout' });
    expect(ac.stats.queued).toBe(0);
    a.release();
    const c = await ac.acquire('c', 500 * MiB);
    expect(c.grantedBytes).toBe(500 * MiB);
  });

  it('cancel removes a queued query; a running one is not in the queue', async () => {
    const ac = new AdmissionController(base);
    await ac.acquire('a', 1000 * MiB);
    const b = ac.acquire('b', 500 * MiB);
    expect(ac.isQueued('b')).toBe(true);
    expect(ac.cancel('b')).toBe(true);
    await expect(b).rejects.toMatchObject({ code: 'cancelled' });
    expect(ac.cancel('a')).toBe(false);
    expect(ac.stats.queued).toBe(0);
  });
});

describe('AdmissionController (static ladders)', () => {
  it('decaying_3 hands out 1/2, 1/3, 1/6 of the budget, largest free slot first, then queues', async () => {
    const ac = new AdmissionController({ ...base, profile: 'decaying_3', budgetBytes: 600 * MiB });
    const g1 = await ac.acquire('1', 0);
    const g2 = await ac.acquire('2', 0);
    const g3 = await ac.acquire('3', 0);
    expect([g1.grantedBytes, g2.grantedBytes, g3.grantedBytes]).toEqual([300 * MiB, 200 * MiB, 100 * MiB]);
    expect(g1.limitBytes).toBe(g1.grantedBytes);
    const g4 = ac.acquire('4', 0);
    expect(await settled(g4)).toBe('pending');
    g2.release();
    expect((await g4).grantedBytes).toBe(200 * MiB);
  });

  it('single runs one query at a time with the whole budget; equal_2 and decaying_2 split it', async () => {
    const single = new AdmissionController({ ...base, profile: 'single' });
    const s1 = await single.acquire('1', 1);
    expect(s1.grantedBytes).toBe(1000 * MiB);
    expect(await settled(single.acquire('2', 1))).toBe('pending');
    const equal = new AdmissionController({ ...base, profile: 'equal_2' });
    expect([(await equal.acquire('1', 0)).grantedBytes, (await equal.acquire('2', 0)).grantedBytes]).toEqual([500 * MiB, 500 * MiB]);
    const decaying = new AdmissionController({ ...base, profile: 'decaying_2', budgetBytes: 900 * MiB });
    expect([(await decaying.acquire('1', 0)).grantedBytes, (await decaying.acquire('2', 0)).grantedBytes]).toEqual([600 * MiB, 300 * MiB]);
  });
});
