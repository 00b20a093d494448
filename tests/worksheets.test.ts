// Worksheets on the server (domain/worksheets.ts, http/routes/worksheets.ts) against a real api and PostgreSQL:
// each member's own, private unless shared with the workspace; shared ones readable by every member and changed
// only by their owner; sharing audited; bad input answered with the error envelope, never a 500.
import { describe, expect } from 'vitest';
import { newUser, type Caller, type TestApi } from './support/api.ts';
import { apiTest as it } from './support/fixtures.ts';

const W = '/api/workspaces/default';

/** A member of `default` with `role`, added by the admin. */
async function member(t: TestApi, admin: Caller, role: 'reader' | 'writer' = 'reader') {
  const u = await newUser(t, admin);
  const r = await t.req('PUT', `${W}/members/${u.id}`, { body: { role }, as: admin });
  expect(r.status, r.text).toBe(201);
  return u;
}

describe('worksheets', () => {
  it('create (201, private by default), read, change, list mine newest first, page, delete', async ({ api: t, admin }) => {
    const me = await member(t, admin);
    const a = await t.req('POST', `${W}/worksheets`, { body: { title: 'Trips by zone', sql: 'SELECT 1 AS one' }, as: me });
    expect(a.status, a.text).toBe(201);
    expect(a.body).toMatchObject({ title: 'Trips by zone', sql: 'SELECT 1 AS one', agent_id: null, catalog: null, visibility: 'private', owner_id: me.id, editable: true });
    expect(a.body.owner_name).toEqual(expect.any(String));
    const b = await t.req('POST', `${W}/worksheets`, { body: { title: 'Empty' }, as: me });
    expect(b.body).toMatchObject({ sql: '', visibility: 'private' });

    expect((await t.req('GET', `${W}/worksheets/${a.body.id}`, { as: me })).body).toMatchObject({ id: a.body.id, sql: 'SELECT 1 AS one' });
    const changed = await t.req('PATCH', `${W}/worksheets/${a.body.id}`, { body: { sql: 'SELECT 2 AS two', catalog: null }, as: me });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ title: 'Trips by zone', sql: 'SELECT 2 AS two' });
    expect(Date.parse(changed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(a.body.updated_at));

    // The one changed last comes first; a page of one carries a cursor to the next.
    const first = await t.req('GET', `${W}/worksheets?scope=mine&limit=1`, { as: me });
    expect(first.body).toMatchObject({ items: [{ id: a.body.id }], has_more: true });
    const second = await t.req('GET', `${W}/worksheets?scope=mine&limit=1&cursor=${first.body.cursor}`, { as: me });
    expect(second.body).toMatchObject({ items: [{ id: b.body.id }], has_more: false, cursor: null });

    expect((await t.req('DELETE', `${W}/worksheets/${b.body.id}`, { as: me })).status).toBe(204);
    expect((await t.req('GET', `${W}/worksheets/${b.body.id}`, { as: me })).status).toBe(404);
    expect((await t.req('GET', `${W}/worksheets?scope=mine`, { as: me })).body.items.map((w: { id: string }) => w.id)).toEqual([a.body.id]);
  });

  it('private worksheets are invisible to other members; shared ones are readable by all and changed only by their owner', async ({ api: t, admin }) => {
    const owner = await member(t, admin, 'writer');
    const other = await member(t, admin);
    const priv = (await t.req('POST', `${W}/worksheets`, { body: { title: 'Mine only', sql: 'SELECT 1' }, as: owner })).body;
    const shared = (await t.req('POST', `${W}/worksheets`, { body: { title: 'For the team', sql: 'SELECT 2' }, as: owner })).body;
    const share = await t.req('PATCH', `${W}/worksheets/${shared.id}`, { body: { visibility: 'workspace' }, as: owner });
    expect(share.body).toMatchObject({ visibility: 'workspace', editable: true });

    // The other member: a private worksheet does not exist for them (404 on every route), a shared one reads.
    for (const [method, body] of [['GET'], ['PATCH', { sql: 'x' }], ['DELETE']] as const) {
      expect((await t.req(method, `${W}/worksheets/${priv.id}`, { body, as: other })).status, method).toBe(404);
    }
    const seen = await t.req('GET', `${W}/worksheets/${shared.id}`, { as: other });
    expect(seen.body).toMatchObject({ id: shared.id, sql: 'SELECT 2', owner_id: owner.id, editable: false });
    const list = (await t.req('GET', `${W}/worksheets?scope=shared`, { as: other })).body.items.map((w: { id: string }) => w.id);
    expect(list).toContain(shared.id);
    expect(list).not.toContain(priv.id);
    expect((await t.req('GET', `${W}/worksheets?scope=mine`, { as: other })).body.items).toEqual([]);
    const all = (await t.req('GET', `${W}/worksheets`, { as: other })).body.items.map((w: { id: string }) => w.id);
    expect(all).toEqual([shared.id]);

    // Changing or deleting someone else's shared worksheet: 403 with its own code, and nothing changes.
    const edit = await t.req('PATCH', `${W}/worksheets/${shared.id}`, { body: { sql: 'DROP TABLE x' }, as: other });
    expect(edit.status).toBe(403);
    expect(edit.body).toMatchObject({ error: 'worksheet_read_only', detail: { error: 'worksheet_read_only' } });
    expect(edit.body.message).toMatch(/only its owner may change it/);
    expect((await t.req('DELETE', `${W}/worksheets/${shared.id}`, { as: other })).status).toBe(403);
    expect((await t.req('GET', `${W}/worksheets/${shared.id}`, { as: owner })).body.sql).toBe('SELECT 2');

    // Unshared again, it is gone for the other member.
    await t.req('PATCH', `${W}/worksheets/${shared.id}`, { body: { visibility: 'private' }, as: owner });
    expect((await t.req('GET', `${W}/worksheets/${shared.id}`, { as: other })).status).toBe(404);

    // Someone outside the workspace sees neither the workspace nor its worksheets.
    const outsider = await newUser(t, admin);
    expect((await t.req('GET', `${W}/worksheets`, { as: outsider })).status).toBe(404);
    expect((await t.req('POST', `${W}/worksheets`, { body: { title: 'x' }, as: outsider })).status).toBe(404);

    // Sharing and unsharing are audited, with the visibility before and after.
    const audit = await t.req('GET', `/api/admin/audit?action=worksheet.share&limit=10`, { as: admin });
    const rows = audit.body.items.filter((r: { target: { id: string } }) => r.target.id === shared.id);
    expect(rows.map((r: { details: Record<string, string> }) => [r.details.visibility_from, r.details.visibility_to])).toEqual([
      ['workspace', 'private'],
      ['private', 'workspace'],
    ]);
    expect(rows[0]).toMatchObject({ outcome: 'success', actor: { kind: 'user', id: owner.id }, target: { kind: 'worksheet' } });
  });

  it('bad input is a 422 envelope naming the field; a bad id is 404; never a 500', async ({ api: t, admin }) => {
    const me = await member(t, admin);
    const bad = async (method: string, path: string, body: unknown, field: string) => {
      const r = await t.req(method, path, { body, as: me });
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`).toBe(422);
      expect(r.body).toMatchObject({ error: 'unprocessable_content', message: expect.any(String), detail: { error: 'unprocessable_content' } });
      expect(r.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    };
    await bad('POST', `${W}/worksheets`, {}, 'title');
    await bad('POST', `${W}/worksheets`, { title: '' }, 'title');
    await bad('POST', `${W}/worksheets`, { title: 'x'.repeat(201) }, 'title');
    await bad('POST', `${W}/worksheets`, { title: 'ok', sql: 42 }, 'sql');
    await bad('POST', `${W}/worksheets`, { title: 'ok', visibility: 'public' }, 'visibility');
    await bad('POST', `${W}/worksheets`, { title: 'ok', agent_id: 'not-a-uuid' }, 'agent_id');
    await bad('POST', `${W}/worksheets`, { title: 'ok', agent_id: '00000000-0000-4000-8000-000000000000' }, 'agent_id');
    await bad('POST', `${W}/worksheets`, { title: 'ok', catalog: 'nowhere' }, 'catalog');
    const w = (await t.req('POST', `${W}/worksheets`, { body: { title: 'ok' }, as: me })).body;
    await bad('PATCH', `${W}/worksheets/${w.id}`, { title: null }, 'title');
    await bad('PATCH', `${W}/worksheets/${w.id}`, { visibility: 'everyone' }, 'visibility');
    const scope = await t.req('GET', `${W}/worksheets?scope=theirs`, { as: me });
    expect(scope.status).toBe(422);
    expect(scope.body.details.fields[0]).toMatchObject({ field: 'scope', in: 'query' });
    const cursor = await t.req('GET', `${W}/worksheets?cursor=garbage`, { as: me });
    expect(cursor.status).toBe(400);
    expect(cursor.body.error).toBe('invalid_cursor');
    const json = await t.req('POST', `${W}/worksheets`, { rawBody: '{"title": ', as: me });
    expect(json.status).toBe(400);
    expect(json.body).toMatchObject({ error: expect.any(String), message: expect.any(String) });
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000']) {
      expect((await t.req('GET', `${W}/worksheets/${id}`, { as: me })).status).toBe(404);
      expect((await t.req('PATCH', `${W}/worksheets/${id}`, { body: { sql: '' }, as: me })).status).toBe(404);
      expect((await t.req('DELETE', `${W}/worksheets/${id}`, { as: me })).status).toBe(404);
    }
  });
});
