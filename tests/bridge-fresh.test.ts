// A warm agent's reads see what other writers did, from the very next query: the agent on warm sandboxed slots (as
// agent/main.ts runs queries, and bench/scan.ts measures them) repeats one query text while another agent and the
// catalog API create, fill, drop and recreate namespaces and tables. Its one-shot reads load their tables alongside
// the namespace listing (agent/iceberg/bridge.ts #loadEarly), send the schemas with their first view, keep the
// analysis of a text they saw before, and hand their slot back detached in one round trip; none of it may keep an
// answer of the catalog service from one query to the next.
import { describe, it, expect, beforeAll } from 'vitest';
import type { BridgeAgent } from './support/bridgeAgent.ts';
import { startBridgeAgent } from './support/bridgeAgent.ts';
import { catalogWithBridge } from './support/catalogWithBridge.ts';
import { loadMetadata } from './support/icebergInspect.ts';

const world = await catalogWithBridge({ bridges: 1 });
const { stack, agent: writer } = world;
let reader: BridgeAgent;

beforeAll(async () => {
  reader = await startBridgeAgent(stack, 'wh', { slots: true });
  world.defer(() => reader.close());
  await writer.exec('CREATE SCHEMA base');
  await writer.exec('CREATE TABLE base.t AS SELECT range AS id FROM range(3)');
  // Warm: the reader's slot, its cached files and manifests, and the analysis of the texts below.
  for (let i = 0; i < 3; i++) await reader.query('SELECT count(*)::INTEGER AS n FROM base.t');
});

const failure = (o: Awaited<ReturnType<BridgeAgent['run']>>) => (o.type === 'query_failed' ? o.payload.error : null);
const count = async (sql: string) => (await reader.query(sql))[0].n;

describe('a warm agent reads what other writers did, from the next query on', () => {
  it('a commit by another agent', async () => {
    const sql = 'SELECT count(*)::INTEGER AS n FROM base.t';
    expect(await count(sql)).toBe(3);
    await writer.exec('INSERT INTO base.t VALUES (10), (11)');
    expect(await count(sql)).toBe(5);
    await writer.exec('DELETE FROM base.t WHERE id >= 10');
    expect(await count(sql)).toBe(3);
  });

  it('a namespace and a table created through the catalog API', async () => {
    const sql = 'SELECT count(*)::INTEGER AS n FROM made_elsewhere.t';
    expect(failure(await reader.run(sql))?.message).toMatch(/made_elsewhere|does not exist/i);
    expect((await stack.request('POST', '/v1/wh/namespaces', { namespace: ['made_elsewhere'], properties: {} })).status).toBe(200);
    // The namespace is a schema of the very next query, empty as it is.
    expect(await reader.query(`SELECT schema_name FROM information_schema.schemata WHERE catalog_name = 'wh' AND schema_name = 'made_elsewhere'`)).toEqual([
      { schema_name: 'made_elsewhere' },
    ]);
    const created = await stack.request('POST', '/v1/wh/namespaces/made_elsewhere/tables', {
      name: 't',
      schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
    });
    expect(created.status).toBe(200);
    expect(await count(sql)).toBe(0);
    await writer.exec('INSERT INTO made_elsewhere.t VALUES (1), (2)');
    expect(await count(sql)).toBe(2);
  });

  it('a table dropped and created again with other rows, and a dropped namespace', async () => {
    await writer.exec('CREATE SCHEMA churn');
    await writer.exec('CREATE TABLE churn.t AS SELECT 1 AS v');
    const sql = 'SELECT sum(v)::INTEGER AS n FROM churn.t';
    expect(await count(sql)).toBe(1);
    await writer.exec('DROP TABLE churn.t');
    expect(failure(await reader.run(sql))?.message).toMatch(/does not exist/i);
    await writer.exec('CREATE TABLE churn.t AS SELECT 40 AS v UNION ALL SELECT 2');
    expect(await count(sql)).toBe(42);
    await writer.exec('DROP TABLE churn.t');
    await writer.exec('DROP SCHEMA churn');
    expect(failure(await reader.run(sql))?.message).toMatch(/churn|does not exist/i);
  });

  it('names resolve as before: another case, a qualified catalog, time travel', async () => {
    expect(await count('SELECT count(*)::INTEGER AS n FROM BASE.T')).toBe(3);
    expect(await count('SELECT count(*)::INTEGER AS n FROM wh.base.t')).toBe(3);
    // A namespace created in another case through the catalog API: the listing's spelling is the one loaded.
    expect((await stack.request('POST', '/v1/wh/namespaces', { namespace: ['Mixed'], properties: {} })).status).toBe(200);
    await writer.exec('CREATE TABLE "Mixed".t AS SELECT 7 AS v');
    expect(await count('SELECT sum(v)::INTEGER AS n FROM mixed.t')).toBe(7);
    const first = (await loadMetadata(stack, 'wh', 'base', 't')).metadata.snapshots[0]['snapshot-id'];
    expect(await count(`SELECT count(*)::INTEGER AS n FROM base.t__snapshot_${first}`)).toBe(3);
  });
});
