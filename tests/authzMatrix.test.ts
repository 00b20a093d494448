// The authorization matrix, generated from the route table: every route × every kind of caller, each with the
// status its declared access implies. A route added later joins the matrix by being in the table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { newUser, setupAdmin, startTestApi, type Caller, type TestApi } from './support/api.ts';
import { allRoutes } from '../http/routes/index.ts';
import type { Access, RouteDef } from '../http/route.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderRolesDocs } from '../bin/rolesDocs.ts';

type Who = 'anonymous' | 'reader' | 'writer' | 'owner' | 'nonMember' | 'admin' | 'serviceAccount' | 'deactivated';
const WHO: Who[] = ['anonymous', 'reader', 'writer', 'owner', 'nonMember', 'admin', 'serviceAccount', 'deactivated'];
const rank = { reader: 0, writer: 1, owner: 2 } as const;

let t: TestApi;
const callers = {} as Record<Who, Caller | undefined>;
const fixtures: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApi();
  const admin = await setupAdmin(t);
  callers.admin = { token: admin.token };
  callers.anonymous = undefined;
  const owner = await newUser(t, admin);
  await t.req('POST', '/api/workspaces', { body: { slug: 'matrix', name: 'Matrix' }, as: owner });
  for (const role of ['reader', 'writer'] as const) {
    const u = await newUser(t, admin);
    await t.req('PUT', `/api/workspaces/matrix/members/${u.id}`, { body: { role }, as: owner });
    callers[role] = { token: u.token };
  }
  callers.owner = { token: owner.token };
  callers.nonMember = { token: (await newUser(t, admin)).token };
  const sa = await t.req('POST', '/api/admin/service-accounts', { body: { name: 'matrix-sa' }, as: admin });
  const saTok = await t.req('POST', `/api/admin/service-accounts/${sa.body.id}/pats`, { body: { expires_in_days: null }, as: admin });
  callers.serviceAccount = { token: saTok.body.token };
  const gone = await newUser(t, admin);
  await t.req('PUT', `/api/workspaces/matrix/members/${gone.id}`, { body: { role: 'owner' }, as: owner });
  await t.req('PATCH', `/api/admin/users/${gone.id}`, { body: { is_active: false }, as: admin });
  callers.deactivated = { token: gone.token };
  const target = await newUser(t, admin);
  fixtures.workspace = 'matrix';
  fixtures.user_id = target.id;
  fixtures.service_account_id = sa.body.id;
});
afterAll(async () => t?.close());

function urlFor(r: RouteDef): string {
  return r.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(fixtures[name] ?? randomUUID()));
}

/** 'allow' means the access layer let the caller through (what the handler then says is its business). */
function expected(access: Access, who: Who): 401 | 403 | 404 | 'allow' | 'any' {
  if (access.kind === 'public') return 'any';
  if (who === 'anonymous' || who === 'deactivated') return 401;
  switch (access.kind) {
    case 'authenticated':
    case 'resource':
      return 'allow';
    case 'admin':
    case 'permission':
      return who === 'admin' ? 'allow' : 403;
    case 'workspace': {
      if (who === 'admin') return 'allow';
      if (who === 'nonMember' || who === 'serviceAccount') return 404;
      return rank[who as keyof typeof rank] >= rank[access.role] ? 'allow' : 403;
    }
  }
}

describe('authorization matrix (generated from the route table)', () => {
  it('docs/roles.md is rendered from the same access declarations', () => {
    const path = join(import.meta.dirname, '..', 'docs', 'roles.md');
    const rendered = renderRolesDocs();
    if (process.env.UPDATE_GENERATED) writeFileSync(path, rendered);
    expect(readFileSync(path, 'utf8')).toBe(rendered);
    for (const r of allRoutes) expect(rendered).toContain(`\`${r.method} ${r.path}\``);
  });

  it('every route answers every kind of caller as its declared access says', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const r of allRoutes) {
      for (const who of WHO) {
        const want = expected(r.access, who);
        const res = await t.req(r.method, urlFor(r), {
          as: callers[who],
          ...(['POST', 'PUT', 'PATCH'].includes(r.method) ? { body: {} } : {}),
        });
        checked++;
        const line = `${r.method} ${r.path} as ${who}: got ${res.status} ${res.body?.error ?? ''} ${res.body?.message ?? ''}, want ${want}`;
        // A feature switched off answers the spec's 503 (the assistant) by design: only a gated route may.
        const switchedOff = res.status === 503 && r.gate !== undefined;
        if (res.status >= 500 && !switchedOff) failures.push(line);
        else if (want === 'any') continue;
        else if (want === 'allow') {
          const deniedByAccess =
            res.status === 401 ||
            (res.status === 403 && res.body?.error === 'forbidden') ||
            (res.status === 404 && res.body?.message === 'workspace not found');
          if (deniedByAccess) failures.push(line);
        } else if (res.status !== want) failures.push(line);
        else if (typeof want === 'number' && res.body?.error !== { 401: 'unauthorized', 403: 'forbidden', 404: 'not_found' }[want]) failures.push(line);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBe(allRoutes.length * WHO.length);
  });
});
