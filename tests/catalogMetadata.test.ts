// Catalog metadata reachable from SQL shows what the grants show: in a workspace whose `warehouse` attachment is
// scoped to one table, information_schema, duckdb_schemas() and duckdb_tables() list no schema it has no grant on
// (a real agent, real catalog service).
import { describe, expect, it } from 'vitest';
import { stackWithAgent } from './support/stackWithAgent.ts';

const world = await stackWithAgent({ agent: { name: 'metadata' } });
const { t, admin, agentId } = world;

describe('catalog metadata in SQL under scoped grants', () => {
  it('a scoped attachment lists only the granted schemas; a full one lists them all', async () => {
    const W = '/api/workspaces/default/catalogs/warehouse/schemas';
    for (const s of ['granted_s', 'hidden_s']) expect((await t.req('POST', W, { as: admin, body: { name: s } })).status).toBe(201);
    const column = [{ name: 'x', type: 'int', nullable: true }];
    for (const s of ['granted_s', 'hidden_s']) {
      expect((await t.req('POST', `${W}/${s}/tables`, { as: admin, body: { name: 'tbl', columns: column } })).status).toBe(201);
    }
    expect((await t.req('POST', '/api/workspaces', { as: admin, body: { slug: 'scopedws', name: 'Scoped' } })).status).toBe(201);
    expect((await t.req('PUT', '/api/workspaces/scopedws/catalogs/warehouse', { as: admin, body: { make_default: true, access_mode: 'scoped' } })).status).toBeLessThan(300);
    const grant = await t.req('PUT', '/api/workspaces/scopedws/catalogs/warehouse/grants', { as: admin, body: { schema: 'granted_s', table: 'tbl', privilege: 'read' } });
    expect(grant.status, grant.text).toBeLessThan(300);

    const listed = async (workspace: string, sql: string) => {
      const q = await t.req('POST', `/api/workspaces/${workspace}/queries`, { as: admin, body: { sql, agent_id: agentId } });
      expect(q.status, q.text).toBe(202);
      const waited = (await t.req('GET', `/api/queries/${q.body.id}?wait_timeout_s=30`, { as: admin })).body;
      expect(waited.status, waited.error).toBe('done');
      return (await t.req('GET', `/api/queries/${q.body.id}/rows?limit=1000`, { as: admin })).body.rows.map((r: any) => Object.values(r)[0]);
    };
    const schemata = "SELECT schema_name FROM system.information_schema.schemata WHERE catalog_name = 'warehouse' AND schema_name LIKE '%_s' ORDER BY 1";
    // A query naming a catalog table has the catalogs attached (one naming none leaves them out altogether).
    const schemas = "SELECT schema_name FROM duckdb_schemas(), (SELECT count(*) FROM granted_s.tbl) WHERE database_name = 'warehouse' AND schema_name LIKE '%_s' ORDER BY 1";
    expect(await listed('scopedws', schemata)).toEqual(['granted_s']);
    expect(await listed('scopedws', schemas)).toEqual(['granted_s']);
    expect(await listed('default', schemata)).toEqual(['granted_s', 'hidden_s']);
    expect(await listed('default', schemas)).toEqual(['granted_s', 'hidden_s']);
  });
});
