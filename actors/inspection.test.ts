import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../runtime/logger.ts';
import { freshDatabase, type TestDatabase } from '../tests/support/database.ts';
import { machineKindNames } from '../machines/index.ts';
import { createActorHost } from './host.ts';
import type { ActorHost } from './types.ts';
import { getActor, listMachineDefinitions, listTransitions } from './inspection.ts';
import { ledgerMachine, projectLedger } from './testing/ledgerMachine.ts';

let t: TestDatabase;
let host: ActorHost;
beforeAll(async () => {
  t = await freshDatabase();
  host = await createActorHost({
    db: t.db,
    replicaId: 'r1',
    logger: createLogger({ level: 'silent' }),
    kinds: { ledger: { machine: ledgerMachine, project: projectLedger, effects: { recordEntry: () => {}, announceClosed: () => {} } } },
  });
});
afterAll(async () => {
  await host?.close();
  await t?.drop();
});

describe('actor inspection', () => {
  it('lists every machine kind with its states and transitions', () => {
    const defs = listMachineDefinitions();
    expect(defs.map((d) => d.kind).sort()).toEqual([...machineKindNames].sort());
    const query = defs.find((d) => d.kind === 'query')!;
    expect(query.description.length).toBeGreaterThan(0);
    expect(query.definition.states.map((s) => s.name)).toEqual(expect.arrayContaining(['queued', 'running', 'done']));
    expect(query.definition.events).toContain('deadline');
  });

  it('shows an actor without secret-looking context keys, large integers as strings', async () => {
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'ann', apiToken: 'eid_pat_secret' });
    await host.send('ledger', id, { type: 'add', n: 2, at: 5_000 });
    await host.send('ledger', id, { type: 'arm', ms: 1_000, at: 6_000 });
    const a = await getActor(t.db, 'ledger', id);
    expect(a).toMatchObject({
      kind: 'ledger',
      id,
      state: 'open',
      status: 'open',
      version: 3,
      terminal: false,
      deadline_at: new Date(7_000).toISOString(),
      owner_replica: 'r1',
      last_error: null,
    });
    expect(a!.context).toEqual({ owner: 'ann', entries: [2], total: '18014398509481986', deadlineAt: 7_000, error: null });
    expect(JSON.stringify(a)).not.toContain('eid_pat_secret');
    expect(await getActor(t.db, 'ledger', randomUUID())).toBeNull();
    expect(await getActor(t.db, 'ledger', 'not-a-uuid')).toBeNull();
  });

  it('pages through transitions by seq with an opaque cursor', async () => {
    const id = randomUUID();
    await host.spawn('ledger', id, { owner: 'bob' });
    for (let n = 1; n <= 6; n++) await host.send('ledger', id, { type: 'add', n, at: n * 1_000 });
    const seqs: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await listTransitions(t.db, 'ledger', id, { cursor, limit: 3 });
      seqs.push(...page.items.map((i) => i.seq));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(pages).toBe(3);
    const first = await listTransitions(t.db, 'ledger', id, { limit: 2 });
    expect(first.items[1]).toEqual({
      seq: 2,
      event: 'add',
      payload: { n: 1 },
      from_state: 'open',
      to_state: 'open',
      at: new Date(1_000).toISOString(),
      replica: 'r1',
    });
    await expect(listTransitions(t.db, 'ledger', id, { cursor: 'bm9wZQ' })).rejects.toMatchObject({ code: 'invalid_cursor' });
  });
});
