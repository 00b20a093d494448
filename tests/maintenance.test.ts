// Table maintenance on the real stack: a table written by a real agent in 50 small INSERTs is scanned (metadata
// only, through the catalog with vended credentials), scored and given recommendations under the runtime policy's
// profile; members see them, administrators dismiss them; a deep scan finds an orphan file; the scanner loop runs
// on its own when its cadence is due; applying compaction on an agent resolves its recommendation with every row
// kept.
import { beforeAll, describe, expect, it } from 'vitest';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { runDone, newUser, type Caller } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { parseS3Uri } from '../iceberg/storageUri.ts';

const TABLE = '/api/workspaces/default/catalogs/warehouse/schemas/mnt/tables/events';
let member: Caller & { id: string };

const run = (sql: string) => runDone(t, admin, agentId, sql, 60);
const rows = async (sql: string) => (await t.req('GET', `/api/queries/${(await run(sql)).id}/rows`, { as: admin })).body.rows;
const recs = async (query = '') => (await t.req('GET', `/api/maintenance/recommendations?workspace=default&table=events${query}`, { as: admin })).body.items as any[];
const scan = async (deep = false) => {
  const r = await t.req('POST', '/api/admin/maintenance/scan', { as: admin, body: { deep } });
  expect(r.status, r.text).toBe(200);
  return r.body;
};

// A scanner tick every half second: it scans on its own once (never scanned, the daily cadence is due).
const { t, admin, agentId } = await stackWithAgent({ env: { MAINTENANCE_SCAN_TICK_S: '0.5' }, agent: { name: 'maintenance-agent' } });
beforeAll(async () => {
  member = await newUser(t, admin);
  await t.req('PUT', `/api/workspaces/default/members/${member.id}`, { as: admin, body: { role: 'reader' } });
  await run('CREATE SCHEMA IF NOT EXISTS mnt');
  await run('CREATE TABLE mnt.events (id BIGINT, amount DOUBLE)');
  for (let i = 0; i < 50; i++) await run(`INSERT INTO mnt.events VALUES (${i}, ${i * 1.5})`);
}, 300_000);

describe('maintenance', () => {
  it('the scanner loop scans on its own when its cadence is due', async () => {
    await expect.poll(async () => (await t.req('GET', '/api/admin/maintenance/policy', { as: admin })).body.last_scan_at, { timeout: 30_000 }).not.toBeNull();
    const policy = (await t.req('GET', '/api/admin/maintenance/policy', { as: admin })).body;
    expect(policy).toMatchObject({ cadence: 'daily', profile: 'balanced' });
    // Off: nothing more is scanned by the loop.
    expect((await t.req('PUT', '/api/admin/maintenance/policy', { as: admin, body: { cadence: 'off' } })).body.cadence).toBe('off');
    expect((await t.req('PUT', '/api/admin/maintenance/policy', { as: admin, body: { profile: 'reckless' } })).status).toBe(422);
  }, 60_000);

  it('50 small files and 50 snapshots: a low score and three recommendations under the aggressive profile', async () => {
    await t.req('PUT', '/api/admin/maintenance/policy', { as: admin, body: { profile: 'aggressive' } });
    const report = await scan();
    expect(report).toMatchObject({ deep: false, profile: 'aggressive', errors: [] });
    expect(report.tables).toBeGreaterThanOrEqual(1);
    const open = await recs('&status=open');
    expect(open.map((r) => r.kind).sort()).toEqual(['compact_small_files', 'expire_snapshots', 'rewrite_manifests']);
    const compact = open.find((r) => r.kind === 'compact_small_files');
    expect(compact).toMatchObject({ catalog: 'warehouse', schema: 'mnt', table: 'events', severity: 'critical', estimated_impact: { data_files_before: 50, small_files: 50 } });
    expect(compact.remediation_sql).toBe("CALL system.rewrite_data_files(table => 'warehouse.mnt.events', target_file_size_bytes => 134217728)");
    expect(open.find((r) => r.kind === 'expire_snapshots').estimated_impact).toMatchObject({ snapshots_before: 50, snapshots_expired: 49 });

    const health = await t.req('GET', `${TABLE}/health`, { as: member });
    expect(health.status, health.text).toBe(200);
    expect(health.body.score).toBeLessThan(60);
    expect(health.body.metrics).toMatchObject({ data_files: 50, records: 50, snapshots: 50, manifests: 50, small_files: 50 });
    const list = (await t.req('GET', '/api/workspaces/default/maintenance/health', { as: member })).body;
    expect(list.find((h: any) => h.table === 'events')).toMatchObject({ catalog: 'warehouse', schema: 'mnt', open: 3 });

    // Scanning again changes nothing: one live recommendation per kind.
    await scan();
    expect((await recs()).length).toBe(3);
  }, 60_000);

  it('members read recommendations; only administrators dismiss; a dismissed one stays dismissed while its condition lasts', async () => {
    const seen = await t.req('GET', '/api/maintenance/recommendations?status=open', { as: member });
    expect(seen.status).toBe(200);
    expect(seen.body.items.length).toBeGreaterThanOrEqual(3);
    const manifests = (await recs()).find((r) => r.kind === 'rewrite_manifests');
    expect((await t.req('POST', `/api/maintenance/recommendations/${manifests.id}/dismiss`, { as: member })).status).toBe(403);
    const dismissed = await t.req('POST', `/api/maintenance/recommendations/${manifests.id}/dismiss`, { as: admin });
    expect(dismissed.body.status).toBe('dismissed');
    await scan();
    expect((await recs('&status=dismissed')).map((r) => r.id)).toEqual([manifests.id]);
    expect((await t.req('GET', '/api/maintenance/recommendations?status=bogus', { as: admin })).status).toBe(422);
    expect((await t.req('POST', '/api/maintenance/recommendations/not-a-uuid/dismiss', { as: admin })).status).toBe(404);
  }, 60_000);

  it('a deep scan counts a file under the table location that nothing references', async () => {
    const location = (await t.req('GET', TABLE, { as: admin })).body.location as string;
    const { bucket, key } = parseS3Uri(location.endsWith('/') ? location : `${location}/`);
    await t.stack.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${key}data/orphan-left-by-a-crash.parquet`, Body: 'not referenced' }));
    const report = await scan(true);
    expect(report.deep).toBe(true);
    const health = (await t.req('GET', `${TABLE}/health`, { as: admin })).body;
    expect(health.metrics.orphan_files).toBe(1);
    expect(health.deep_scanned_at).toEqual(expect.any(String));
    // Young (written seconds ago): counted, not yet recommended for clean-up.
    expect((await recs()).some((r) => r.kind === 'cleanup_orphans')).toBe(false);
  }, 60_000);

  it('applying compaction and snapshot expiry runs them on the agent: rows kept, the recommendations resolved', async () => {
    const before = await rows('SELECT count(*) AS n, sum(amount) AS total FROM mnt.events');
    const open = await recs('&status=open');
    const compact = open.find((r) => r.kind === 'compact_small_files');
    const member403 = await t.req('POST', `/api/maintenance/recommendations/${compact.id}/apply`, { as: member, body: { agent_id: agentId } });
    expect(member403.status).toBe(403);
    const applied = await t.req('POST', `/api/maintenance/recommendations/${compact.id}/apply`, { as: admin, body: { agent_id: agentId } });
    expect(applied.status, applied.text).toBe(202);
    expect(applied.body).toMatchObject({ sql: compact.remediation_sql, agent_id: agentId });
    const done = (await t.req('GET', `/api/queries/${applied.body.id}?wait_timeout_s=60`, { as: admin })).body;
    expect(done.status, done.error).toBe('done');
    expect((await t.req('GET', `/api/queries/${done.id}/rows`, { as: admin })).body.rows[0]).toMatchObject({ rewritten_data_files_count: 50, added_data_files_count: 1 });
    // one of the spec's statement types: a procedure that rewrites a table's files alters the table, not its rows
    expect(done.statement_type).toBe('alter');
    // Maintenance queries are hidden from history, like samples.
    const history = (await t.req('GET', '/api/workspaces/default/queries?limit=1000', { as: admin })).body.items as any[];
    expect(history.some((q) => q.id === done.id)).toBe(false);
    expect((await recs()).find((r) => r.id === compact.id)).toMatchObject({ status: 'applied', applied_query_id: done.id });

    const expire = open.find((r) => r.kind === 'expire_snapshots');
    const exp = await t.req('POST', `/api/maintenance/recommendations/${expire.id}/apply`, { as: admin, body: { agent_id: agentId } });
    expect(exp.status, exp.text).toBe(202);
    expect((await t.req('GET', `/api/queries/${exp.body.id}?wait_timeout_s=60`, { as: admin })).body.status).toBe('done');

    expect(await rows('SELECT count(*) AS n, sum(amount) AS total FROM mnt.events')).toEqual(before);
    await scan();
    const after = await recs();
    expect(after.find((r) => r.id === compact.id).status).toBe('resolved');
    expect(after.find((r) => r.id === expire.id).status).toBe('resolved');
    const health = (await t.req('GET', `${TABLE}/health`, { as: admin })).body;
    expect(health.metrics).toMatchObject({ data_files: 1, records: 50 });
    expect(health.metrics.snapshots).toBeLessThanOrEqual(2);
    // A resolved recommendation cannot be applied again.
    expect((await t.req('POST', `/api/maintenance/recommendations/${compact.id}/apply`, { as: admin, body: { agent_id: agentId } })).status).toBe(409);
  }, 120_000);

  it('a partitioned table with one small file per partition gets no compaction: it has nothing to merge', async () => {
    await run('CREATE TABLE mnt.parts (id BIGINT, p INTEGER) PARTITIONED BY (p)');
    await run('INSERT INTO mnt.parts SELECT range AS id, range AS p FROM range(25)');
    await run('INSERT INTO mnt.parts SELECT range AS id, 0 AS p FROM range(1)');
    const report = await scan();
    expect(report.errors).toEqual([]);
    const health = (await t.req('GET', '/api/workspaces/default/catalogs/warehouse/schemas/mnt/tables/parts/health', { as: admin })).body;
    expect(health.metrics).toMatchObject({ data_files: 26, small_files: 26 });
    const parts = (await t.req('GET', '/api/maintenance/recommendations?workspace=default&table=parts', { as: admin })).body.items as any[];
    // 26 small files, but only partition 0 has two: 2 of 26 is below the profile's share, so nothing is recommended
    expect(parts.map((r) => r.kind)).not.toContain('compact_small_files');
    expect(health.dimensions.file_sizes).toBeGreaterThan(90);
  }, 120_000);
});
