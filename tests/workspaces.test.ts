import { describe, expect } from 'vitest';
import { newUser } from './support/api.ts';
import { apiTest as it } from './support/fixtures.ts';

describe('workspaces', () => {
  it('creates with the caller as owner; 409 on a taken slug; 422 on a bad slug', async ({ api: t, admin, user: u }) => {
    const r = await t.req('POST', '/api/workspaces', { body: { slug: 'sales', name: 'Sales' }, as: u });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ slug: 'sales', name: 'Sales', default_catalog: null });
    expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const members = await t.req('GET', '/api/workspaces/sales/members', { as: u });
    expect(members.body).toEqual([{ user_id: u.id, email: u.email, name: expect.any(String), role: 'owner' }]);
    const dup = await t.req('POST', '/api/workspaces', { body: { slug: 'sales', name: 'Again' }, as: admin });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe('conflict');
    const bad = await t.req('POST', '/api/workspaces', { body: { slug: 'Not A Slug', name: 'x' }, as: u });
    expect(bad.status).toBe(422);
    expect(bad.body.details.fields.map((f: any) => f.field)).toEqual(['slug']);
  });

  it('lists the caller’s workspaces; admins see all; addressed by slug or UUID; non-members get 404', async ({ api: t, admin }) => {
    const a = await newUser(t, admin);
    const b = await newUser(t, admin);
    const wa = (await t.req('POST', '/api/workspaces', { body: { slug: 'team-a', name: 'A' }, as: a })).body;
    await t.req('POST', '/api/workspaces', { body: { slug: 'team-b', name: 'B' }, as: b });
    const la = await t.req('GET', '/api/workspaces', { as: a });
    expect(la.body.map((w: any) => w.slug)).toEqual(['team-a']);
    const all = await t.req('GET', '/api/workspaces', { as: admin });
    expect(all.body.map((w: any) => w.slug)).toEqual(expect.arrayContaining(['default', 'team-a', 'team-b']));
    expect((await t.req('GET', `/api/workspaces/${wa.id}`, { as: a })).body.slug).toBe('team-a');
    expect((await t.req('GET', '/api/workspaces/team-a', { as: a })).body.id).toBe(wa.id);
    const hidden = await t.req('GET', '/api/workspaces/team-a', { as: b });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error).toBe('not_found');
    const missing = await t.req('GET', '/api/workspaces/does-not-exist', { as: b });
    // a hidden workspace is indistinguishable from a missing one
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(hidden.body);
    expect((await t.req('GET', `/api/workspaces/team-a/members`, { as: b })).status).toBe(404);
  });

  it('members: PUT adds (201) then changes (200); roles are ordered; the last owner stays', async ({ api: t, admin }) => {
    const owner = await newUser(t, admin);
    const m = await newUser(t, admin);
    await t.req('POST', '/api/workspaces', { body: { slug: 'ops', name: 'Ops' }, as: owner });
    const add = await t.req('PUT', `/api/workspaces/ops/members/${m.id}`, { body: { role: 'reader' }, as: owner });
    expect(add.status).toBe(201);
    expect(add.body).toMatchObject({ user_id: m.id, role: 'reader' });
    const change = await t.req('PUT', `/api/workspaces/ops/members/${m.id}`, { body: { role: 'writer' }, as: owner });
    expect(change.status).toBe(200);
    expect(change.body.role).toBe('writer');
    const same = await t.req('PUT', `/api/workspaces/ops/members/${m.id}`, { body: { role: 'writer' }, as: owner });
    expect(same.status).toBe(200);
    // a writer cannot manage members
    const denied = await t.req('PUT', `/api/workspaces/ops/members/${owner.id}`, { body: { role: 'reader' }, as: m });
    expect(denied.status).toBe(403);
    expect((await t.req('PUT', `/api/workspaces/ops/members/${m.id}`, { body: { role: 'boss' }, as: owner })).status).toBe(422);
    expect((await t.req('PUT', `/api/workspaces/ops/members/00000000-0000-4000-8000-000000000000`, { body: { role: 'reader' }, as: owner })).status).toBe(404);
    // last owner cannot leave or be demoted
    expect((await t.req('DELETE', `/api/workspaces/ops/members/${owner.id}`, { as: owner })).status).toBe(409);
    expect((await t.req('PUT', `/api/workspaces/ops/members/${owner.id}`, { body: { role: 'writer' }, as: owner })).status).toBe(409);
    expect((await t.req('DELETE', `/api/workspaces/ops/members/${m.id}`, { as: owner })).status).toBe(204);
    expect((await t.req('DELETE', `/api/workspaces/ops/members/${m.id}`, { as: owner })).status).toBe(404);
    expect((await t.req('GET', '/api/workspaces/ops', { as: m })).status).toBe(404);
  });
});
