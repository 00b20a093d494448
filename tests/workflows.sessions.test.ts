// Workflows through a SQL session, as clients run them (dbt, the DB-API connector, BI tools): a real stack (api,
// catalog service, object store), a real agent process, statements in order on one session, every statement's rows
// checked. What they walk across:
// - a dbt-like run in a second catalog: CREATE SCHEMA there, CTAS, INSERT … SELECT, DESCRIBE, the same table read
//   twice, MERGE, UPDATE, DELETE, ALTER, a read, DROP TABLE, DROP SCHEMA; the catalog service sees each change (REST
//   reads it);
// - one session reading the same table two and three times and different tables in turn (each read links the
//   table's cached files into the session's sandbox: a file read again must not collide with its earlier link);
// - CREATE / DROP SCHEMA naming a catalog (`warehouse.x`, `cat.s`) in a session and as a query; a reader is refused;
// - the dbt-like run again with its steps sent to two api replicas in turn (one holds the agent's socket).
import { beforeAll, describe, expect, it } from 'vitest';
import { newUser, secondReplica, type Caller } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const SECRET = 'internal-secret-for-the-workflows-test-0123456789';
const world = await stackWithAgent({ env: { SQL_SESSIONS_ENABLED: 'true', INTERNAL_API_SECRET: SECRET }, agent: { name: 'workflows' } });
const { t, admin, agentId } = world;
const SECOND = 'lake2';

beforeAll(async () => {
  const backends = (await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as { id: string; name: string }[];
  const bundled = backends.find((b) => b.name === 'bundled')!;
  const created = await t.req('POST', '/api/catalogs', { body: { slug: SECOND, storage_backend_id: bundled.id }, as: admin });
  expect(created.status, created.text).toBe(201);
  const attached = await t.req('PUT', `/api/workspaces/default/catalogs/${SECOND}`, { body: { make_default: false }, as: admin });
  expect(attached.status, attached.text).toBe(201);
});

async function open(who: Caller = admin): Promise<string> {
  const r = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: who, body: { agent_id: agentId, wait_timeout_s: 60 } });
  expect(r.status, r.text).toBe(201);
  expect(r.body.status).toBe('open');
  return r.body.id as string;
}

async function close(id: string, who: Caller = admin) {
  expect((await t.req('DELETE', `/api/sql/sessions/${id}`, { as: who })).status).toBe(204);
  await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${id}`, { as: who })).body.status, { timeout: 15_000 }).toBe('closed');
}

/** One statement as a client sends it: waited for, then all its rows (also for DDL, which has none). */
async function run(session: string, sql: string, who: Caller = admin) {
  const sub = await t.req('POST', `/api/sql/sessions/${session}/statements`, { as: who, body: { sql, wait_timeout_s: 60 } });
  expect(sub.status, `${sql}: ${sub.text}`).toBe(200);
  expect(sub.body.status, `${sql}: ${sub.body.error}`).toBe('done');
  const rows = await t.req('GET', `/api/queries/${sub.body.id}/rows?limit=1000`, { as: who });
  expect(rows.status, rows.text).toBe(200);
  return { q: sub.body, rows: rows.body.rows as Record<string, unknown>[] };
}

const schemasOf = async (catalog: string) =>
  ((await t.req('GET', `/api/workspaces/default/catalogs/${catalog}/schemas`, { as: admin })).body as { name: string }[]).map((s) => s.name);
const tablesOf = async (catalog: string, schema: string) =>
  ((await t.req('GET', `/api/workspaces/default/catalogs/${catalog}/schemas/${schema}/tables`, { as: admin })).body as { name: string }[]).map((s) => s.name);

describe('workflows through a SQL session', () => {
  it('a dbt-like run in a second catalog: schema, CTAS, INSERT … SELECT, DESCRIBE, two reads, MERGE, UPDATE, DELETE, ALTER, a read, DROP TABLE, DROP SCHEMA', { timeout: 240_000 }, async () => {
    const s = await open();
    const T = `${SECOND}.dbt.orders`;

    expect((await run(s, `CREATE SCHEMA ${SECOND}.dbt`)).rows).toEqual([]);
    expect(await schemasOf(SECOND)).toContain('dbt');

    const ctas = await run(s, `CREATE TABLE ${T} AS SELECT range::INTEGER AS id, (range % 3)::INTEGER AS k, (range * 10)::BIGINT AS amount FROM range(6)`);
    expect(ctas.q).toMatchObject({ statement_type: 'create', row_count: 6 });
    expect(await tablesOf(SECOND, 'dbt')).toEqual(['orders']);

    const insert = await run(s, `INSERT INTO ${T} SELECT id + 6, k, amount + 1 FROM ${T} WHERE k = 0`);
    expect(insert.q).toMatchObject({ statement_type: 'insert', row_count: 2 });

    const described = await run(s, `DESCRIBE ${T}`);
    expect(described.rows.map((r) => [r.column_name, r.column_type])).toEqual([
      ['id', 'INTEGER'],
      ['k', 'INTEGER'],
      ['amount', 'BIGINT'],
    ]);

    // The same table twice: the second read links the same cached files again.
    const totals = `SELECT count(*)::INTEGER AS n, sum(amount)::INTEGER AS total FROM ${T}`;
    expect((await run(s, totals)).rows).toEqual([{ n: 8, total: 150 + 1 + 31 }]);
    expect((await run(s, totals)).rows).toEqual([{ n: 8, total: 182 }]);

    const merge = await run(
      s,
      `MERGE INTO ${T} AS t USING (SELECT 1 AS id, 1000 AS amount UNION ALL SELECT 42, 7) AS src ON t.id = src.id
       WHEN MATCHED THEN UPDATE SET amount = src.amount WHEN NOT MATCHED THEN INSERT VALUES (src.id, 9, src.amount)`,
    );
    expect(merge.q).toMatchObject({ statement_type: 'merge', row_count: 2 });
    const update = await run(s, `UPDATE ${T} SET amount = amount * 2 WHERE k = 2`);
    expect(update.q).toMatchObject({ statement_type: 'update', row_count: 2 });
    expect((await run(s, `DELETE FROM ${T} WHERE id = 42`)).q).toMatchObject({ statement_type: 'delete', row_count: 1 });
    expect((await run(s, `ALTER TABLE ${T} ADD COLUMN note VARCHAR`)).q).toMatchObject({ statement_type: 'alter' });
    expect((await run(s, `UPDATE ${T} SET note = 'big' WHERE amount >= 100`)).q.row_count).toBe(2);

    expect((await run(s, `SELECT id, k, amount::INTEGER AS amount, note FROM ${T} ORDER BY id`)).rows).toEqual([
      { id: 0, k: 0, amount: 0, note: null },
      { id: 1, k: 1, amount: 1000, note: 'big' },
      { id: 2, k: 2, amount: 40, note: null },
      { id: 3, k: 0, amount: 30, note: null },
      { id: 4, k: 1, amount: 40, note: null },
      { id: 5, k: 2, amount: 100, note: 'big' },
      { id: 6, k: 0, amount: 1, note: null },
      { id: 9, k: 0, amount: 31, note: null },
    ]);

    expect((await run(s, `DROP TABLE ${T}`)).rows).toEqual([]);
    expect(await tablesOf(SECOND, 'dbt')).toEqual([]);
    expect((await run(s, `DROP SCHEMA ${SECOND}.dbt`)).rows).toEqual([]);
    expect(await schemasOf(SECOND)).not.toContain('dbt');
    await close(s);
  });

  it('the dbt-like run with its steps sent to two replicas in turn: open, statements, rows and close each on the other one', { timeout: 240_000 }, async () => {
    const other = await secondReplica(t, 'workflows-second', { SQL_SESSIONS_ENABLED: 'true', INTERNAL_API_SECRET: SECRET });
    try {
      const replicas = [other, t];
      let turn = 0;
      const next = () => replicas[turn++ % 2];
      const opened = await next().req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, wait_timeout_s: 60 } });
      expect(opened.status, opened.text).toBe(201);
      const s = opened.body.id as string;
      const step = async (sql: string) => {
        const sub = await next().req('POST', `/api/sql/sessions/${s}/statements`, { as: admin, body: { sql, wait_timeout_s: 60 } });
        expect(sub.status, `${sql}: ${sub.text}`).toBe(200);
        expect(sub.body.status, `${sql}: ${sub.body.error}`).toBe('done');
        const rows = await next().req('GET', `/api/queries/${sub.body.id}/rows?limit=1000`, { as: admin });
        expect(rows.status, rows.text).toBe(200);
        return { q: sub.body, rows: rows.body.rows as Record<string, unknown>[] };
      };
      const T = `${SECOND}.dbt2.orders`;
      await step(`CREATE SCHEMA ${SECOND}.dbt2`);
      expect((await step(`CREATE TABLE ${T} AS SELECT range::INTEGER AS id, (range * 10)::BIGINT AS amount FROM range(4)`)).q.row_count).toBe(4);
      expect((await step(`INSERT INTO ${T} SELECT id + 4, amount + 1 FROM ${T}`)).q.row_count).toBe(4);
      const totals = `SELECT count(*)::INTEGER AS n, sum(amount)::INTEGER AS total FROM ${T}`;
      expect((await step(totals)).rows).toEqual([{ n: 8, total: 124 }]);
      expect((await step(totals)).rows).toEqual([{ n: 8, total: 124 }]);
      expect((await step(`MERGE INTO ${T} AS t USING (SELECT 0 AS id, 500 AS amount) AS src ON t.id = src.id WHEN MATCHED THEN UPDATE SET amount = src.amount`)).q.row_count).toBe(1);
      expect((await step(`UPDATE ${T} SET amount = amount * 2 WHERE id >= 4`)).q.row_count).toBe(4);
      expect((await step(totals)).rows).toEqual([{ n: 8, total: 500 + 10 + 20 + 30 + 2 * (0 + 10 + 20 + 30 + 4) }]);
      await step(`DROP TABLE ${T}`);
      await step(`DROP SCHEMA ${SECOND}.dbt2`);
      expect(await schemasOf(SECOND)).not.toContain('dbt2');
      expect((await next().req('DELETE', `/api/sql/sessions/${s}`, { as: admin })).status).toBe(204);
      await expect.poll(async () => (await next().req('GET', `/api/sql/sessions/${s}`, { as: admin })).body.status, { timeout: 15_000 }).toBe('closed');
    } finally {
      await other.close();
    }
  });

  it('one session reads the same table two and three times, and different tables in turn', { timeout: 240_000 }, async () => {
    await world.sql('CREATE SCHEMA IF NOT EXISTS reads');
    await world.sql('CREATE OR REPLACE TABLE reads.a AS SELECT range::INTEGER AS id FROM range(5)');
    await world.sql(`CREATE OR REPLACE TABLE reads.b AS SELECT range::INTEGER AS id, 'b' || range AS v FROM range(3)`);
    // a second file in a: one table of two files
    await world.sql('INSERT INTO reads.a VALUES (100)');
    const s = await open();
    const sumA = 'SELECT count(*)::INTEGER AS n, sum(id)::INTEGER AS s FROM reads.a';
    const a = [{ n: 6, s: 110 }];
    expect((await run(s, sumA)).rows).toEqual(a);
    expect((await run(s, sumA)).rows).toEqual(a);
    expect((await run(s, 'SELECT v FROM reads.b ORDER BY id')).rows).toEqual([{ v: 'b0' }, { v: 'b1' }, { v: 'b2' }]);
    expect((await run(s, sumA)).rows).toEqual(a);
    // both at once, each already read, and a self-join
    expect((await run(s, 'SELECT count(*)::INTEGER AS n FROM reads.a JOIN reads.b USING (id)')).rows).toEqual([{ n: 3 }]);
    expect((await run(s, 'SELECT count(*)::INTEGER AS n FROM reads.a x JOIN reads.a y ON x.id < y.id')).rows).toEqual([{ n: 15 }]);
    // valid DuckDB the agent once failed on: a PIVOT without an IN list over an Iceberg table (DuckDB runs it as
    // two statements), VARIANT in a list, a TYPE value
    const pivot = await run(s, 'PIVOT (SELECT id % 2 AS parity FROM reads.a) ON parity USING count(*)::INTEGER');
    expect(pivot.rows).toEqual([{ 0: 4, 1: 2 }]);
    expect((await run(s, `SELECT [1::VARIANT, 'x'::VARIANT] AS l, get_type(1) AS t`)).rows).toEqual([{ l: [1, 'x'], t: 'INTEGER' }]);
    // a write between reads: the next read sees the new file and the old ones
    expect((await run(s, 'INSERT INTO reads.b VALUES (3, \'b3\')')).q.row_count).toBe(1);
    expect((await run(s, 'SELECT count(*)::INTEGER AS n FROM reads.b')).rows).toEqual([{ n: 4 }]);
    expect((await run(s, 'SELECT count(*)::INTEGER AS n FROM reads.b')).rows).toEqual([{ n: 4 }]);
    expect((await run(s, 'SELECT count(*)::INTEGER AS n FROM reads.a JOIN reads.b USING (id)')).rows).toEqual([{ n: 4 }]);
    await close(s);
  });

  it('CREATE / DROP SCHEMA naming its catalog, also `warehouse`, in a session and as a query; a reader is refused', { timeout: 240_000 }, async () => {
    const s = await open();
    expect((await run(s, 'CREATE SCHEMA warehouse.wf_x')).rows).toEqual([]);
    expect(await schemasOf('warehouse')).toContain('wf_x');
    expect((await run(s, `CREATE SCHEMA IF NOT EXISTS ${SECOND}.wf_y`)).rows).toEqual([]);
    expect((await run(s, 'CREATE TABLE warehouse.wf_x.t AS SELECT 1 AS a')).q.row_count).toBe(1);
    expect((await run(s, 'SELECT a FROM warehouse.wf_x.t')).rows).toEqual([{ a: 1 }]);

    const reader = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/default/members/${reader.id}`, { body: { role: 'reader' }, as: admin });
    await t.req('PUT', `/api/admin/agents/${agentId}/grants`, { body: { user_id: reader.id, tier: 'use' }, as: admin });
    const theirs = await open(reader);
    for (const sql of ['CREATE SCHEMA warehouse.wf_z', `DROP SCHEMA ${SECOND}.wf_y`, 'DROP SCHEMA warehouse.wf_x CASCADE']) {
      const refused = await t.req('POST', `/api/sql/sessions/${theirs}/statements`, { as: reader, body: { sql } });
      expect(refused.status, `${sql}: ${refused.text}`).toBe(403);
    }
    await close(theirs, reader);
    expect(await schemasOf('warehouse')).not.toContain('wf_z');
    expect(await schemasOf(SECOND)).toContain('wf_y');

    expect((await run(s, 'DROP SCHEMA warehouse.wf_x CASCADE')).rows).toEqual([]);
    expect(await schemasOf('warehouse')).not.toContain('wf_x');
    await close(s);
    // As a query too.
    await world.sql(`DROP SCHEMA IF EXISTS ${SECOND}.wf_y`);
    expect(await schemasOf(SECOND)).not.toContain('wf_y');
    await world.sql('CREATE SCHEMA warehouse.wf_q');
    expect(await schemasOf('warehouse')).toContain('wf_q');
    await world.sql('DROP SCHEMA warehouse.wf_q');
    expect(await schemasOf('warehouse')).not.toContain('wf_q');
  });
});
