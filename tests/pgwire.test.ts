// The PostgreSQL wire endpoint with real clients against the real stack (api, catalog service, object store, a
// real agent): node-postgres, Debian's psql and pgjdbc, psycopg/SQLAlchemy/pandas. Each connection is a SQL session; the session
// policy, grants and audit apply as on /sql/sessions.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { newUser, type Caller } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

const world = await stackWithAgent({
  env: { SQL_SESSIONS_ENABLED: 'true', PG_PORT: '0', ACTOR_REAPER_TICK_S: '0.2', SQL_SESSION_REAPER_TICK_S: '0.2' },
  agent: { name: 'pgwire' },
});
const { t, admin } = world;
const port = () => t.api.pgPort!;

function client(who: Caller & { email?: string } = admin, o: { database?: string; ssl?: boolean; app?: string } = {}) {
  return new pg.Client({
    host: '127.0.0.1',
    port: port(),
    user: who.email ?? 'admin@example.com',
    password: who.token,
    database: o.database ?? 'default',
    ssl: o.ssl === false ? false : { rejectUnauthorized: false },
    application_name: o.app ?? 'pgwire-test',
  });
}

async function connected(who?: Caller & { email?: string }, o?: { database?: string; ssl?: boolean; app?: string }) {
  const c = client(who, o);
  await c.connect();
  return c;
}

const openSessions = async (who: Caller = admin) =>
  (await t.req('GET', '/api/workspaces/default/sql/sessions?status=open', { as: who })).body.items as Array<{ id: string; client_name: string }>;

describe('PostgreSQL wire endpoint (node-postgres)', () => {
  it('connects over TLS as a SQL session, runs simple queries with exact types, and closes the session on end', async () => {
    const c = await connected();
    const s = await openSessions();
    expect(s.map((x) => x.client_name)).toContain('pgwire-test');
    const r = await c.query(`SELECT 42 AS answer, 9007199254740993::BIGINT AS big, 12.30::DECIMAL(10,2) AS price, 'hé' AS name, [1, 2] AS list, DATE '2024-02-29' AS d, true AS ok, NULL::INTEGER AS nothing`);
    expect(r.rows).toEqual([{ answer: 42, big: '9007199254740993', price: '12.30', name: 'hé', list: [1, 2], d: expect.any(Date), ok: true, nothing: null }]);
    expect(r.fields.map((f) => f.dataTypeID)).toEqual([23, 20, 1700, 25, 114, 1082, 16, 23]);
    expect(r.command).toBe('SELECT');
    // Session state: a temp table lives on the connection.
    await c.query('CREATE TEMP TABLE scratch AS SELECT range AS n FROM range(5)');
    expect((await c.query('SELECT sum(n)::INTEGER AS s FROM scratch')).rows).toEqual([{ s: 10 }]);
    const ins = await c.query('INSERT INTO scratch VALUES (5), (6)');
    expect(ins).toMatchObject({ command: 'INSERT', rowCount: 2 });
    // What drivers send on connect is accepted here.
    await c.query('SET extra_float_digits = 3');
    await c.query("SET application_name = 'x'");
    expect((await c.query('SHOW transaction isolation level')).rows[0]).toEqual({ transaction_isolation: 'read committed' });
    expect((await c.query('SELECT version()')).rows[0].version).toMatch(/^PostgreSQL 15/);
    expect((await c.query('SELECT current_schema()')).rows[0].current_schema).toBe('main');
    const id = s.find((x) => x.client_name === 'pgwire-test')!.id;
    await c.end();
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${id}`, { as: admin })).body.status, { timeout: 20_000 }).toMatch(/closed/);
  });

  it('binds $n parameters as values through the extended protocol, never spliced into the SQL', async () => {
    const c = await connected();
    try {
      await c.query(`CREATE TEMP TABLE people AS SELECT * FROM (VALUES (1, 'Ann'), (2, 'O''Brien')) AS v(id, name)`);
      const byName = await c.query('SELECT id FROM people WHERE name = $1', ["O'Brien"]);
      expect(byName.rows).toEqual([{ id: 2 }]);
      // A value that would be SQL if spliced stays a value.
      expect((await c.query('SELECT count(*)::INTEGER AS n FROM people WHERE name = $1', ["x' OR '1'='1"])).rows).toEqual([{ n: 0 }]);
      expect((await c.query({ name: 'by-id', text: 'SELECT name FROM people WHERE id = $1', values: [1] })).rows).toEqual([{ name: 'Ann' }]);
      expect((await c.query({ name: 'by-id', text: 'SELECT name FROM people WHERE id = $1', values: [2] })).rows).toEqual([{ name: "O'Brien" }]);
      expect((await c.query('SELECT $1::INTEGER + 1 AS n, $2::VARCHAR IS NULL AS missing', [41, null])).rows).toEqual([{ n: 42, missing: true }]);
      const stored = (await t.req('GET', '/api/workspaces/default/queries?origin=session&limit=50', { as: admin })).body.items.map((q: { sql: string }) => q.sql);
      expect(stored).toContain('SELECT id FROM people WHERE name = $1');
      expect(stored.join('\n')).not.toContain("O'Brien'");
    } finally {
      await c.end();
    }
  });

  it('maps errors to SQLSTATE codes and refuses what the session policy refuses', async () => {
    const c = await connected();
    try {
      await expect(c.query('SELECT * FROM no_such_table')).rejects.toMatchObject({ code: '42P01' });
      await expect(c.query('SELEC 1')).rejects.toMatchObject({ code: '42601' });
      await expect(c.query("SET memory_limit = '100GB'")).rejects.toMatchObject({ code: '42501' });
      await expect(c.query("SELECT * FROM read_csv('/etc/passwd')")).rejects.toMatchObject({ code: '42501' });
      // The connection is still usable after errors.
      expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      const audit = await t.req('GET', '/api/admin/audit?action=policy.reject&limit=20', { as: admin });
      expect(audit.status).toBe(200);
      expect(JSON.stringify(audit.body)).toContain('sql_not_allowed');
    } finally {
      await c.end();
    }
  });

  it('refuses a bad token and an unknown workspace', async () => {
    await expect(connected({ ...admin, token: 'eid_pat_wrong' })).rejects.toMatchObject({ code: '28P01' });
    await expect(connected(admin, { database: 'nowhere' })).rejects.toMatchObject({ code: '3D000' });
  });

  it('authenticates with SCRAM-SHA-256 without TLS once the token has been used over TLS', async () => {
    const who = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/default/members/${who.id}`, { body: { role: 'reader' }, as: admin });
    await expect(connected(who, { ssl: false })).rejects.toMatchObject({ code: '28P01' });
    await (await connected(who)).end();
    const c = await connected(who, { ssl: false });
    expect((await c.query('SELECT 7 AS n')).rows).toEqual([{ n: 7 }]);
    await c.end();
    await expect(connected({ ...who, token: 'eid_pat_wrong' }, { ssl: false })).rejects.toMatchObject({ code: '28P01' });
  });

  it('shows another workspace’s tables to no one outside it and a reader cannot write', async () => {
    await world.sql('CREATE SCHEMA IF NOT EXISTS wire');
    await world.sql('CREATE TABLE IF NOT EXISTS wire.visible AS SELECT 1 AS x');
    const outsider = await newUser(t, admin);
    // Not a member of `default`: the database is refused.
    await expect(connected(outsider)).rejects.toMatchObject({ code: '3D000' });
    const reader = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/default/members/${reader.id}`, { body: { role: 'reader' }, as: admin });
    const c = await connected(reader);
    try {
      expect((await c.query('SELECT x FROM wire.visible')).rows).toEqual([{ x: 1 }]);
      await expect(c.query('INSERT INTO wire.visible VALUES (2)')).rejects.toMatchObject({ code: '42501' });
      const tables = await c.query(`SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = 'wire'`);
      expect(tables.rows).toContainEqual({ table_schema: 'wire', table_name: 'visible' });
    } finally {
      await c.end();
    }
  });

  it('a dropped connection leaves no open session', async () => {
    const c = await connected(admin, { app: 'dropped' });
    const mine = (await openSessions()).filter((s) => s.client_name === 'dropped');
    expect(mine).toHaveLength(1);
    c.on('error', () => undefined);
    // The socket goes without a Terminate message.
    (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${mine[0].id}`, { as: admin })).body.status, { timeout: 20_000 }).toBe('closed');
  });

  it('a CancelRequest cancels the running statement', async () => {
    const c = await connected();
    try {
      const running = new pg.Query('SELECT count(*) FROM range(100000000000) a, range(10) b');
      const outcome = new Promise((resolve, reject) => {
        running.on('error', reject);
        running.on('end', resolve);
      });
      c.query(running);
      await expect
        .poll(async () => (await t.req('GET', '/api/workspaces/default/queries?origin=session&status=running&limit=5', { as: admin })).body.items.length, { timeout: 20_000 })
        .toBeGreaterThan(0);
      // node-postgres sends CancelRequest on a new (plain TCP) connection with the BackendKeyData it got.
      const canceller = client(admin, { ssl: false });
      (canceller as unknown as { cancel(c: pg.Client, q: unknown): void }).cancel(c, running);
      await expect(outcome).rejects.toMatchObject({ code: '57014' });
      expect((await c.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    } finally {
      await c.end();
    }
  });
});

const PSQL = '/usr/bin/psql';
if (!existsSync(PSQL)) console.log(`psql tests skipped: ${PSQL} is not installed (apt-get install postgresql-client)`);

/** psql as a user runs it: sslmode=require, the token as the password, one command per -c. */
async function psql(...commands: string[]): Promise<string> {
  const args = [`host=127.0.0.1 port=${port()} dbname=default user=admin@example.com sslmode=require application_name=psql-test`, '-X', '-v', 'ON_ERROR_STOP=1'];
  for (const c of commands) args.push('-c', c);
  const r = await promisify(execFile)(PSQL, args, { env: { ...process.env, PGPASSWORD: admin.token, PGCONNECT_TIMEOUT: '30' }, timeout: 60_000 });
  return r.stdout;
}

describe.skipIf(!existsSync(PSQL))('PostgreSQL wire endpoint (psql)', () => {
  it('\\dt lists the catalog’s tables, \\d describes one, a query answers', async () => {
    await world.sql('CREATE SCHEMA IF NOT EXISTS wire');
    await world.sql('CREATE TABLE IF NOT EXISTS wire.orders AS SELECT range::BIGINT AS id, (range * 1.5)::DECIMAL(12,2) AS amount, $$c$$ || range AS customer FROM range(3)');
    const dt = await psql('\\dt wire.*');
    expect(dt).toMatch(/wire\s*\|\s*orders\s*\|\s*table/);
    const d = await psql('\\d wire.orders');
    expect(d).toMatch(/id\s*\|\s*bigint/);
    expect(d).toMatch(/amount\s*\|\s*numeric\(12,2\)/);
    expect(d).toMatch(/customer\s*\|\s*(text|character varying)/);
    const q = await psql('SELECT id, amount FROM wire.orders ORDER BY id');
    expect(q).toMatch(/2 \|\s+3\.00/);
    expect(q).toContain('(3 rows)');
  });

  it('\\l lists the workspace as the database, \\du the connection’s user', async () => {
    const l = await psql('\\l');
    expect(l).toMatch(/^\s*default\s*\|\s*admin@example\.com\s*\|\s*UTF8/m);
    expect(l).toContain('(1 row)');
    const du = await psql('\\du');
    expect(du).toMatch(/^\s*admin@example\.com\s*\|/m);
  });

  it('\\copy … to writes the query’s rows to a local file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgwire-copy-'));
    try {
      const file = join(dir, 'out.csv');
      const out = await psql(`\\copy (SELECT range AS n, 'a,b' AS s, NULL AS z FROM range(3)) to '${file}' with (format csv, header)`);
      expect(out).toContain('COPY 3');
      expect(readFileSync(file, 'utf8')).toBe('n,s,z\n0,"a,b",\n1,"a,b",\n2,"a,b",\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// psycopg, SQLAlchemy (reflection) and pandas, from a virtual environment the setup script makes (local wheel index).
const python = await promisify(execFile)('sh', [join(import.meta.dirname, '..', 'scripts', 'ensure-python-clients.sh')], { timeout: 600_000 }).then(
  (r) => r.stdout.trim(),
  (e: Error & { stderr?: string }) => {
    console.log(`psycopg/SQLAlchemy tests skipped: ${(e.stderr || e.message).trim()}`);
    return null;
  },
);

describe.skipIf(!python)('PostgreSQL wire endpoint (psycopg, SQLAlchemy, pandas)', () => {
  it('connects, binds parameters, reflects the catalog and reads a frame', async () => {
    await world.sql('CREATE SCHEMA IF NOT EXISTS wire');
    await world.sql('CREATE TABLE IF NOT EXISTS wire.orders AS SELECT range::BIGINT AS id, (range * 1.5)::DECIMAL(12,2) AS amount, $$c$$ || range AS customer FROM range(3)');
    const r = await promisify(execFile)(python!, [join(import.meta.dirname, 'fixtures', 'pgwire_clients.py'), '127.0.0.1', String(port()), 'default', 'admin@example.com', admin.token!], {
      timeout: 120_000,
    });
    const seen = JSON.parse(r.stdout);
    expect(seen.params).toEqual([42, "O'Brien"]);
    expect(seen.declared).toEqual([42, 2.5, true]);
    expect(seen.typed).toEqual([2, '3.00', 'Decimal']);
    expect(seen.undefined_table).toBe('42P01');
    expect(seen.tables).toContain('orders');
    expect(seen.columns).toEqual([
      ['id', 'BIGINT', true],
      ['amount', 'NUMERIC(12, 2)', true],
      ['customer', 'TEXT', true],
    ]);
    expect(seen.sqlalchemy).toBe(2);
    expect(seen.pandas).toEqual({ id: [0, 1, 2], customer: ['c0', 'c1', 'c2'] });
  });
});

// pgjdbc (Debian's libpostgresql-jdbc-java) from a single-file Java program the test writes and launches.
const jdbcJar = await promisify(execFile)('sh', [join(import.meta.dirname, '..', 'scripts', 'ensure-jdbc.sh')], { timeout: 600_000 }).then(
  (r) => r.stdout.trim(),
  (e: Error & { stderr?: string }) => {
    console.log(`pgjdbc tests skipped: ${(e.stderr || e.message).trim()}`);
    return null;
  },
);

const JDBC_PROGRAM = String.raw`
import java.sql.*;
import java.util.*;

public class PgwireJdbc {
  static String q(String s) { return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""; }
  public static void main(String[] a) throws Exception {
    String url = "jdbc:postgresql://" + a[0] + ":" + a[1] + "/" + a[2] + "?sslmode=require&ApplicationName=jdbc-test";
    Properties p = new Properties();
    p.setProperty("user", a[3]);
    p.setProperty("password", a[4]);
    List<String> out = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url, p)) {
      DatabaseMetaData md = c.getMetaData();
      out.add("\"product\":" + q(md.getDatabaseProductName() + " " + md.getDatabaseMajorVersion()));
      List<String> tables = new ArrayList<>();
      try (ResultSet r = md.getTables(null, "wire", "%", new String[] { "TABLE" })) {
        while (r.next()) tables.add("[" + q(r.getString("TABLE_SCHEM")) + "," + q(r.getString("TABLE_NAME")) + "," + q(r.getString("TABLE_TYPE")) + "]");
      }
      out.add("\"tables\":[" + String.join(",", tables) + "]");
      List<String> cols = new ArrayList<>();
      try (ResultSet r = md.getColumns(null, "wire", "orders", "%")) {
        while (r.next()) cols.add("[" + q(r.getString("COLUMN_NAME")) + "," + r.getInt("DATA_TYPE") + "," + q(r.getString("TYPE_NAME")) + "," + r.getInt("ORDINAL_POSITION") + "]");
      }
      out.add("\"columns\":[" + String.join(",", cols) + "]");
      try (PreparedStatement ps = c.prepareStatement("SELECT id, amount, customer FROM wire.orders WHERE id >= ? AND customer <> ? ORDER BY id")) {
        // pgjdbc switches to a named server-side statement after prepareThreshold (5) runs: run past it.
        List<String> runs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          ps.setLong(1, 1);
          ps.setString(2, "x' OR '1'='1");
          List<String> rows = new ArrayList<>();
          try (ResultSet r = ps.executeQuery()) {
            while (r.next()) rows.add("[" + r.getLong(1) + "," + q(r.getBigDecimal(2).toPlainString()) + "," + q(r.getString(3)) + "]");
          }
          runs.add("[" + String.join(",", rows) + "]");
        }
        out.add("\"prepared\":[" + String.join(",", runs) + "]");
      }
      // Types pgjdbc reads in binary once the statement is server-side: each as the driver decodes it.
      try (PreparedStatement ps = c.prepareStatement("SELECT DATE '2024-02-29' AS d, TIMESTAMP '2024-02-29 12:34:56.789' AS ts, TIMESTAMPTZ '2024-02-29 12:34:56+00' AS tz, TIME '01:02:03.5' AS t, 2.5::DOUBLE AS x, 1.25::FLOAT AS f, true AS b, -12345678.0001::DECIMAL(18,4) AS n, 0.00::DECIMAL(5,2) AS z, 12::SMALLINT AS s, 7 AS i, 'f0e1d2c3-b4a5-4697-8879-6a5b4c3d2e1f'::UUID AS u, 'hé'::VARCHAR AS v")) {
        String last = null;
        for (int i = 0; i < 6; i++) {
          try (ResultSet r = ps.executeQuery()) {
            r.next();
            last = "[" + q(r.getDate(1).toString()) + "," + q(r.getTimestamp(2).toString()) + "," + r.getTimestamp(3).getTime() + "," + q(r.getTime(4).toString()) + "," + r.getDouble(5) + "," + r.getFloat(6) + "," + r.getBoolean(7) + "," + q(r.getBigDecimal(8).toPlainString()) + "," + q(r.getBigDecimal(9).toPlainString()) + "," + r.getShort(10) + "," + r.getInt(11) + "," + q(r.getObject(12).toString()) + "," + q(r.getString(13)) + "]";
          }
        }
        out.add("\"typed\":" + last);
      }
      try (Statement s = c.createStatement()) {
        Thread t = new Thread(() -> {
          try {
            Thread.sleep(Long.parseLong(a[5]));
            s.cancel();
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        });
        t.start();
        String state = "none";
        try {
          s.executeQuery("SELECT count(*) FROM range(100000000000) a, range(10) b");
        } catch (SQLException e) {
          state = e.getSQLState();
        }
        t.join();
        out.add("\"cancel\":" + q(state));
        try (ResultSet r = s.executeQuery("SELECT 2 AS two")) {
          r.next();
          out.add("\"after_cancel\":" + r.getInt(1));
        }
      }
    }
    System.out.println("{" + String.join(",", out) + "}");
  }
}
`;

describe.skipIf(!jdbcJar)('PostgreSQL wire endpoint (pgjdbc)', () => {
  it('connects, browses DatabaseMetaData, runs a prepared statement with parameters and cancels a statement', async () => {
    await world.sql('CREATE SCHEMA IF NOT EXISTS wire');
    await world.sql('CREATE TABLE IF NOT EXISTS wire.orders AS SELECT range::BIGINT AS id, (range * 1.5)::DECIMAL(12,2) AS amount, $$c$$ || range AS customer FROM range(3)');
    const dir = mkdtempSync(join(tmpdir(), 'pgwire-jdbc-'));
    try {
      const src = join(dir, 'PgwireJdbc.java');
      writeFileSync(src, JDBC_PROGRAM);
      const r = await promisify(execFile)('java', ['-Duser.timezone=UTC', '-cp', jdbcJar!, src, '127.0.0.1', String(port()), 'default', 'admin@example.com', admin.token!, '3000'], {
        timeout: 180_000,
      });
      const seen = JSON.parse(r.stdout);
      expect(seen.product).toBe('PostgreSQL 15');
      expect(seen.tables).toContainEqual(['wire', 'orders', 'TABLE']);
      // java.sql.Types: BIGINT -5, NUMERIC 2, VARCHAR 12.
      expect(seen.columns).toEqual([
        ['id', -5, 'int8', 1],
        ['amount', 2, 'numeric', 2],
        ['customer', 12, 'text', 3],
      ]);
      expect(seen.prepared).toHaveLength(6);
      for (const run of seen.prepared) expect(run).toEqual([[1, '1.50', 'c1'], [2, '3.00', 'c2']]);
      expect(seen.typed).toEqual(['2024-02-29', '2024-02-29 12:34:56.789', Date.UTC(2024, 1, 29, 12, 34, 56), '01:02:03', 2.5, 1.25, true, '-12345678.0001', '0.00', 12, 7, 'f0e1d2c3-b4a5-4697-8879-6a5b4c3d2e1f', 'hé']);
      expect(seen.cancel).toBe('57014');
      expect(seen.after_cancel).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
