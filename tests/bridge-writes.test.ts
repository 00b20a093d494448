// The bridge's write path under concurrency and failure: eight concurrent appends all land (409s retried against
// the new metadata) without losing or duplicating rows; a write aborted between uploading its data files and
// committing leaves the table unchanged and readable, and a CTAS failed there leaves no table; refused credentials
// and tokens fail with catalog_error.
import { createServer, connect, type Socket } from 'node:net';
import { describe, it, expect, beforeAll } from 'vitest';
import { freePort } from '../runtime/postgres.ts';
import type { BridgeAgent } from './support/bridgeAgent.ts';
import { catalogWithBridge, startCatalogWithBridge } from './support/catalogWithBridge.ts';
import { liveFiles, loadMetadata } from './support/icebergInspect.ts';

const { stack, agent } = await catalogWithBridge({ bridges: 1 });

beforeAll(async () => {
  await agent.exec('CREATE SCHEMA app');
});

const failure = (o: Awaited<ReturnType<BridgeAgent['run']>>) => (o.type === 'query_failed' ? o.payload.error : null);

describe('bridge writes', () => {
  it('eight concurrent appends to one table all land, no row lost or duplicated', async () => {
    await agent.exec('CREATE TABLE app.events (writer INTEGER, n INTEGER)');
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, w) => agent.run(`INSERT INTO app.events SELECT ${w}, range FROM range(100)`)),
    );
    for (const o of outcomes) {
      expect(failure(o)).toBeNull();
      expect(o.type === 'query_done' && o.payload.row_count).toBe(100);
    }
    const rows = await agent.query('SELECT count(*)::INTEGER AS c, count(DISTINCT (writer, n))::INTEGER AS d, count(DISTINCT writer)::INTEGER AS w FROM app.events');
    expect(rows).toEqual([{ c: 800, d: 800, w: 8 }]);
    const { metadata } = await loadMetadata(stack, 'wh', 'app', 'events');
    expect(metadata.snapshots.filter((s) => s.summary.operation === 'append')).toHaveLength(8);
  });

  it('a write aborted after uploading its data files leaves the table unchanged and readable', async () => {
    await agent.exec('CREATE TABLE app.safe (id INTEGER)');
    await agent.exec('INSERT INTO app.safe VALUES (1), (2)');
    const before = await loadMetadata(stack, 'wh', 'app', 'safe');
    const filesBefore = await liveFiles(stack, 'wh', 'app', 'safe');
    agent.setBeforeCommit(async () => {
      throw new Error('agent killed before commit');
    });
    try {
      expect(failure(await agent.run('INSERT INTO app.safe VALUES (3)'))).toMatchObject({ message: expect.stringContaining('killed') });
      expect(failure(await agent.run('DELETE FROM app.safe WHERE id = 1'))).not.toBeNull();
    } finally {
      agent.setBeforeCommit(undefined);
    }
    const after = await loadMetadata(stack, 'wh', 'app', 'safe');
    expect(after.metadata['current-snapshot-id']).toEqual(before.metadata['current-snapshot-id']);
    expect(await liveFiles(stack, 'wh', 'app', 'safe')).toEqual(filesBefore);
    expect(await agent.query('SELECT id FROM app.safe ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('a CREATE TABLE … AS SELECT failed after its create leaves no table: created and filled in one catalog commit', async () => {
    const status = async (table: string) => (await stack.request('GET', `/v1/wh/namespaces/app/tables/${table}`)).status;
    let seenWhileWriting: number | null = null;
    agent.setBeforeCommit(async () => {
      // The data files are uploaded: the table must not exist yet (an agent killed here leaves nothing behind).
      seenWhileWriting = await status('made');
      throw new Error('agent killed before commit');
    });
    try {
      const err = failure(await agent.run('CREATE TABLE app.made AS SELECT range AS n FROM range(10)'));
      expect(err?.message).toContain('killed');
    } finally {
      agent.setBeforeCommit(undefined);
    }
    expect(seenWhileWriting).toBe(404);
    expect(await status('made')).toBe(404);
    // Nothing is in the way of running it again, and then it holds its rows.
    expect(await agent.exec('CREATE TABLE app.made AS SELECT range AS n FROM range(10)')).toBe(10);
    expect(await agent.query('SELECT count(*)::INTEGER AS c FROM app.made')).toEqual([{ c: 10 }]);
    expect((await loadMetadata(stack, 'wh', 'app', 'made')).metadata.snapshots).toHaveLength(1);
    // An empty result still creates the (empty) table, in one commit too.
    expect(await agent.exec('CREATE TABLE app.none AS SELECT range AS n FROM range(0)')).toBe(0);
    expect(await agent.query('SELECT count(*)::INTEGER AS c FROM app.none')).toEqual([{ c: 0 }]);
    // Another statement creating the table meanwhile: this one fails and leaves that table alone.
    agent.setBeforeCommit(async () => {
      agent.setBeforeCommit(undefined);
      expect(await agent.exec('CREATE TABLE app.raced (n BIGINT)')).toBe(0);
    });
    try {
      const raced = failure(await agent.run('CREATE TABLE app.raced AS SELECT range AS n FROM range(3)'));
      expect(raced).toMatchObject({ code: 'catalog_error', message: expect.stringContaining('created by another statement') });
    } finally {
      agent.setBeforeCommit(undefined);
    }
    expect(await agent.query('SELECT count(*)::INTEGER AS c FROM app.raced')).toEqual([{ c: 0 }]);
  });

  it('a revoked vended credential fails the query with catalog_error naming the credential', async () => {
    await agent.exec('CREATE TABLE app.rev (id INTEGER)');
    agent.setBeforeCommit(async () => {
      const res = await stack.request('POST', '/management/v1/warehouses/wh/revoke-credentials', {});
      expect(res.status).toBeLessThan(300);
    });
    try {
      const err = failure(await agent.run('INSERT INTO app.rev VALUES (1)'));
      expect(err).toMatchObject({ code: 'catalog_error', message: expect.stringMatching(/credential.*(revoked|InvalidAccessKeyId)/i) });
    } finally {
      agent.setBeforeCommit(undefined);
    }
    // Fresh credentials are vended per query: the table is still usable.
    expect(await agent.exec('INSERT INTO app.rev VALUES (2)')).toBe(1);
    expect(await agent.query('SELECT id FROM app.rev')).toEqual([{ id: 2 }]);
  });

  it('an expired vended credential fails the query with catalog_error naming the expiry', async () => {
    const short = await startCatalogWithBridge({ warehouses: ['wh2'], credentialTtlSeconds: 1, bridges: 1 });
    const a2 = short.agent;
    try {
      await a2.exec('CREATE SCHEMA s');
      await a2.exec('CREATE TABLE s.t (id INTEGER)');
      // Held past the 1 s credential's lifetime: time itself must pass before the commit.
      a2.setBeforeCommit(() => new Promise((r) => setTimeout(r, 1600)));
      const err = failure(await a2.run('INSERT INTO s.t VALUES (1)'));
      expect(err).toMatchObject({ code: 'catalog_error', message: expect.stringMatching(/credential.*(ExpiredToken|expired)/i) });
    } finally {
      await short.close();
    }
  });

  it('a catalog service that refuses connections while it restarts is waited for, not a failed query', async () => {
    await agent.exec('CREATE TABLE app.restarting AS SELECT 7 AS x');
    // The catalog's address refuses connections for a second (the service is restarting), then forwards to it.
    const port = await freePort();
    const target = new URL(stack.catalog.url);
    const sockets = new Set<Socket>();
    const proxy = createServer((c) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [c, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
      }
      c.pipe(upstream).pipe(c);
    });
    const listening = setTimeout(() => proxy.listen(port, '127.0.0.1'), 1_000);
    try {
      const catalogs = [{ name: 'wh', default: true, catalog_url: `http://127.0.0.1:${port}`, warehouse: 'wh', token: stack.token, access_mode: 'full' }];
      const o = await agent.run('SELECT x FROM app.restarting', { catalogs });
      expect(failure(o)).toBeNull();
      expect(o.type === 'query_done' && o.payload.row_count).toBe(1);
    } finally {
      clearTimeout(listening);
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('a refused catalog token and an unknown catalog are catalog errors', async () => {
    const err = failure(await agent.run('SELECT * FROM app.events', { token: 'not-a-token' }));
    expect(err).toMatchObject({ code: 'catalog_error', message: expect.stringContaining('refused the query') });
    expect(err?.message).not.toContain('not-a-token');
    const unreachable = [{ name: 'wh', catalog_url: 'http://127.0.0.1:1', warehouse: 'wh', token: 't' }];
    const bad = failure(await agent.run('SELECT * FROM wh.s.t', { catalogs: unreachable }));
    expect(bad).toMatchObject({ code: 'catalog_error', message: expect.stringContaining('unreachable') });
    // a read that names no table never asks the catalog service
    expect(failure(await agent.run('SELECT 1', { catalogs: unreachable }))).toBeNull();
    const malformed = failure(await agent.run('SELECT 1', { catalogs: [{ name: 'wh' }] }));
    expect(malformed?.code).toBe('catalog_error');
  });

  it('DuckDB still cannot read outside its sandbox with catalogs attached', async () => {
    const err = failure(await agent.run(`SELECT * FROM read_csv('/etc/passwd')`));
    expect(err?.code).toBe('sql_error');
    expect(err?.message).toMatch(/permission|not allowed|disabled/i);
  });
});
