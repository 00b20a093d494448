// Reusable sandboxed instances: a slot serves the next query only when it is provably empty, keeps its sandbox and
// its lock, and its scratch directory is cleared between queries.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SandboxSlots, slotSize } from './sandboxSlots.ts';

let root: string;
let slots: SandboxSlots;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'eider-slots-'));
  slots = new SandboxSlots({ scratchRoot: join(root, 'tmp'), extensionDir: join(root, 'ext'), disabledFilesystems: [], extraReadableDirs: [], profilingEnabled: true, lockConfiguration: true });
});
afterEach(async () => {
  await slots.close();
  rmSync(root, { recursive: true, force: true });
});

async function run(limit: number, sql: string): Promise<{ dir: string; rows: unknown[][] }> {
  const slot = await slots.take(limit);
  const c = await slot.connect();
  try {
    return { dir: slot.dir, rows: (await c.runAndReadAll(sql)).getRows() };
  } finally {
    c.closeSync();
    await slots.give(slot);
  }
}

describe('sandbox slots', () => {
  it('sizes slots down a √2 ladder', () => {
    expect(slotSize(64 * 2 ** 20)).toBe(64 * 2 ** 20);
    expect(slotSize(100 * 2 ** 20)).toBe(90 * 2 ** 20);
    expect(slotSize(1)).toBe(2 ** 20);
    expect(slotSize(3 * 2 ** 30)).toBeLessThanOrEqual(3 * 2 ** 30);
    expect(slotSize(3 * 2 ** 30)).toBeGreaterThan(2 * 2 ** 30);
  });

  it('reuses an emptied slot: same instance, cleared scratch directory, detached catalogs', async () => {
    const first = await run(64 * 2 ** 20, `SELECT 42`);
    writeFileSync(join(first.dir, 'left-behind.bin'), 'x');
    expect(slots.idleCount).toBe(1);
    // A catalog the bridge would attach, with a view in it: detached before the next query.
    const attached = await slots.take(64 * 2 ** 20);
    expect(attached.dir).toBe(first.dir);
    const c = await attached.connect();
    await c.run(`ATTACH ':memory:' AS cat1; CREATE VIEW cat1.main.v AS SELECT 1 AS one`);
    c.closeSync();
    await slots.give(attached);
    const next = await run(64 * 2 ** 20, `SELECT count(*) FROM duckdb_databases() WHERE database_name = 'cat1'`);
    expect(next.dir).toBe(first.dir);
    expect(next.rows[0][0]).toBe(0n);
    expect(readdirSync(first.dir).filter((f) => f === 'left-behind.bin')).toEqual([]);
  });

  it('a query that follows another at once waits for its slot to be emptied instead of creating an instance', async () => {
    const slot = await slots.take(64 * 2 ** 20);
    const c = await slot.connect();
    await c.run(`ATTACH ':memory:' AS cat1`);
    c.closeSync();
    const giving = slots.give(slot);
    // Taken while the slot is still being emptied: the same slot, handed over empty (its catalog detached).
    const next = await slots.take(64 * 2 ** 20);
    await giving;
    expect(next.dir).toBe(slot.dir);
    expect(slots.idleCount).toBe(0);
    const c2 = await next.connect();
    expect((await c2.runAndReadAll(`SELECT count(*) FROM duckdb_databases() WHERE database_name = 'cat1'`)).getRows()[0][0]).toBe(0n);
    c2.closeSync();
    await slots.give(next);
    // One that cannot be proven empty is closed, and the waiting query gets a new instance.
    const dirty = await slots.take(64 * 2 ** 20);
    const c3 = await dirty.connect();
    await c3.run(`CREATE TABLE memory.main.leftover AS SELECT 1 AS v`);
    c3.closeSync();
    const closing = slots.give(dirty);
    const fresh = await slots.take(64 * 2 ** 20);
    await closing;
    expect(fresh.dir).not.toBe(dirty.dir);
    await slots.give(fresh);
  });

  it.each([
    ['a table', `CREATE TABLE memory.main.secret_of_workspace_a AS SELECT 'a' AS v`],
    ['a view', `CREATE VIEW memory.main.secret_of_workspace_a AS SELECT 'a' AS v`],
    ['a schema', `CREATE SCHEMA memory.secret_of_workspace_a`],
  ])('closes a slot a query left %s in, instead of reusing it', async (_what, create) => {
    // (The engine never hands back the slot of a CREATE; this is the check behind that.)
    const slot = await slots.take(64 * 2 ** 20);
    const c = await slot.connect();
    await c.run(create);
    c.closeSync();
    await slots.give(slot);
    expect(slots.idleCount).toBe(0);
    expect(existsSync(slot.dir)).toBe(false);
    const other = await run(
      64 * 2 ** 20,
      `SELECT (SELECT count(*) FROM duckdb_tables() WHERE table_name = 'secret_of_workspace_a') + (SELECT count(*) FROM duckdb_views() WHERE view_name = 'secret_of_workspace_a') + (SELECT count(*) FROM duckdb_schemas() WHERE schema_name = 'secret_of_workspace_a')`,
    );
    expect(other.dir).not.toBe(slot.dir);
    expect(other.rows[0][0]).toBe(0n);
  });

  it('keeps temporary objects to their connection, and a slot of another size apart', async () => {
    const slot = await slots.take(64 * 2 ** 20);
    const c = await slot.connect();
    await c.run(`CREATE TEMP TABLE t AS SELECT 1 AS one; SET VARIABLE v = 'x'`);
    c.closeSync();
    await slots.give(slot);
    expect(slots.idleCount).toBe(1);
    const again = await run(64 * 2 ** 20, `SELECT (SELECT count(*) FROM duckdb_tables() WHERE table_name = 't'), getvariable('v')`);
    expect(again.rows[0]).toEqual([0n, null]);
    const bigger = await run(256 * 2 ** 20, `SELECT current_setting('memory_limit')`);
    expect(bigger.dir).not.toBe(slot.dir);
    expect(String(bigger.rows[0][0])).toMatch(/^256\.0 MiB$/);
  });

  it('detaches the catalogs its caller names in the round trip of the check, and still finds the others', async () => {
    const slot = await slots.take(64 * 2 ** 20);
    // The bridge's catalogs, one made current, with a view in it; a third attached behind the caller's back.
    await slot.connection.run(`ATTACH ':memory:' AS cat1; ATTACH ':memory:' AS cat2; ATTACH ':memory:' AS cat3; CREATE VIEW cat1.main.v AS SELECT 1 AS one; USE cat1`);
    await slots.give(slot, ['cat1', 'cat2', 'never_attached']);
    expect(slots.idleCount).toBe(1);
    const again = await slots.take(64 * 2 ** 20);
    expect(again.connection).toBe(slot.connection);
    expect((await again.connection.runAndReadAll(`SELECT current_database(), (SELECT count(*) FROM duckdb_databases() WHERE database_name LIKE 'cat%')`)).getRows()).toEqual([['memory', 0n]]);
    // Named catalogs or not, a slot left holding an object of its own is closed.
    await again.connection.run(`ATTACH ':memory:' AS cat1; USE cat1; CREATE TABLE memory.main.leftover AS SELECT 1 AS v`);
    await slots.give(again, ['cat1']);
    expect(slots.idleCount).toBe(0);
    expect(existsSync(again.dir)).toBe(false);
  });

  it('keeps its own connection across queries: resets the current database, closes the slot over what it could carry', async () => {
    const slot = await slots.take(64 * 2 ** 20);
    // A catalog made current (the bridge's USE): reset and detached, the slot and its connection serve the next query.
    await slot.connection.run(`ATTACH ':memory:' AS cat1; USE cat1`);
    await slots.give(slot);
    expect(slots.idleCount).toBe(1);
    const again = await slots.take(64 * 2 ** 20);
    expect(again.connection).toBe(slot.connection);
    expect((await again.connection.runAndReadAll(`SELECT current_database(), (SELECT count(*) FROM duckdb_databases() WHERE database_name = 'cat1')`)).getRows()).toEqual([['memory', 0n]]);
    await slots.give(again);
    // A temporary object would outlive the query on the kept connection: the slot is closed, the next query gets a
    // new one. (Variables and prepared statements need a SET or a PREPARE, after which the engine closes the slot.)
    for (const leave of [`CREATE TEMP TABLE t AS SELECT 1 AS one`, `CREATE TEMP VIEW v AS SELECT 1 AS one`]) {
      const used = await slots.take(64 * 2 ** 20);
      await used.connection.run(leave);
      await slots.give(used);
      expect(slots.idleCount, leave).toBe(0);
      expect(existsSync(used.dir), leave).toBe(false);
      const fresh = await slots.take(64 * 2 ** 20);
      expect(fresh.dir).not.toBe(used.dir);
      expect((await fresh.connection.runAndReadAll(`SELECT (SELECT count(*) FROM duckdb_tables() WHERE database_name = 'temp') + (SELECT count(*) FROM duckdb_views() WHERE database_name = 'temp' AND NOT internal)`)).getRows()[0][0]).toBe(0n);
      await slots.give(fresh);
    }
  });

  it('holds the sandbox and the lock for every query it serves', async () => {
    const outside = join(root, 'outside.csv');
    writeFileSync(outside, 'a\n1\n');
    for (let i = 0; i < 2; i++) {
      const slot = await slots.take(64 * 2 ** 20);
      const c = await slot.connect();
      await expect(c.run(`SELECT * FROM read_csv('${outside}')`)).rejects.toThrow(/Permission Error|disabled/);
      await expect(c.run(`SET memory_limit='8GiB'`)).rejects.toThrow(/locked/);
      await expect(c.run(`SET enable_external_access=true`)).rejects.toThrow();
      c.closeSync();
      await slots.give(slot);
    }
    expect(slots.idleCount).toBe(1);
  });
});
