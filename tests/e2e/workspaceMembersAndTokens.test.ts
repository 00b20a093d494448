// Workspace members and tokens (issue 21, build items 9 and 10) in a real browser against the real stack: a
// workspace's members (listed with roles; owners add a user by email, change a role, remove one; a reader only
// reads), tokens' names and last use as far as the api records them, the one-time secret gone once its token is
// revoked, the user who ran each query in History, and the worksheet's agent chosen by name in the address.
import { describe, expect, it } from 'vitest';
import { ADMIN, newUser } from '../support/api.ts';
import { launchSignedIn } from './support/browser.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-admin-two';
const { t, admin, ui, b, agentId } = await stackWithBrowser({ suite: 'workspaceMembersAndTokens', agent: AGENT });

const members = async () => (await t.req('GET', '/api/workspaces/default/members', { as: admin })).body as Array<{ user_id: string; role: string }>;

describe('workspace members, tokens, who ran a query, an agent by name', () => {
  it('members: an owner adds a user by email, changes the role, removes them; a reader sees the list only', async () => {
    const { page } = b;
    const alice = await newUser(t, admin);
    const reader = await newUser(t, admin);
    expect((await t.req('PUT', `/api/workspaces/default/members/${reader.id}`, { body: { role: 'reader' }, as: admin })).status).toBe(201);

    await page.goto(ui.url + '/w/default/worksheets');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await expect.poll(() => page.url()).toBe(ui.url + '/w/default/members');
    const table = page.getByRole('table', { name: 'Members' });
    await table.getByRole('row', { name: /Admin \(you\)/ }).waitFor();
    expect(await table.getByLabel('Role of Admin').inputValue()).toBe('owner');
    expect(await table.getByRole('row', { name: new RegExp(reader.email) }).getByRole('combobox').inputValue()).toBe('reader');

    // the picker offers the users not yet in the workspace, by email
    const form = page.getByRole('form', { name: 'Add a member' });
    const offered = await page.locator('#member-candidates option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(offered).toContain(alice.email);
    expect(offered).not.toContain(reader.email);
    expect(offered).not.toContain(ADMIN.email);

    await form.getByLabel('User email').fill(alice.email);
    await form.getByLabel("New member's role").selectOption('writer');
    await form.getByRole('button', { name: 'Add member' }).click();
    const row = table.getByRole('row', { name: new RegExp(alice.email) });
    await row.waitFor();
    expect(await row.getByRole('combobox').inputValue()).toBe('writer');
    expect((await members()).find((m) => m.user_id === alice.id)?.role).toBe('writer');
    await b.shot('01-members');

    await row.getByRole('combobox').selectOption('owner');
    await expect.poll(async () => (await members()).find((m) => m.user_id === alice.id)?.role).toBe('owner');
    await row.getByRole('button', { name: /^Remove / }).click();
    await row.waitFor({ state: 'detached' });
    expect((await members()).some((m) => m.user_id === alice.id)).toBe(false);

    // an email nobody has is said, not sent
    await form.getByLabel('User email').fill('nobody@example.com');
    await form.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('alert').filter({ hasText: 'No active user has the email or id' }).waitFor();

    // a reader sees who is in the workspace, with no controls to change it
    const rb = await launchSignedIn('workspaceMembersAndTokens-reader', ui.url, { email: reader.email, password: 'user-password-1' });
    try {
      await rb.page.goto(ui.url + '/w/default/members');
      const rt = rb.page.getByRole('table', { name: 'Members' });
      await rt.getByRole('row', { name: /Admin/ }).waitFor();
      expect(await rt.getByRole('row', { name: /Admin/ }).textContent()).toContain('owner');
      expect(await rb.page.getByRole('form', { name: 'Add a member' }).count()).toBe(0);
      expect(await rt.getByRole('combobox').count()).toBe(0);
      expect(await rt.getByRole('button', { name: /^Remove / }).count()).toBe(0);
      await rb.page.getByText('Only the workspace\'s owners change its members; you are a reader.').waitFor();
      await rb.shot('02-members-as-reader');
    } finally {
      await rb.close();
    }
  });

  it('personal tokens: last use shown (never for an unused one); a revoked token takes its one-time secret with it', async () => {
    const { page } = b;
    const other = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 5 }, as: { cookie: admin.cookie } });
    expect(other.status).toBe(201);
    // One request with it records its last use.
    expect((await t.req('GET', '/api/me', { headers: { authorization: `Bearer ${other.body.token}` } })).status).toBe(200);
    await page.goto(ui.url + '/me/tokens');
    const table = page.getByRole('table', { name: 'Personal tokens' });
    await table.waitFor();
    expect(await table.locator('thead th').allTextContents()).toEqual(['Token', 'Created', 'Expires', 'Last used', 'Actions']);
    // The list answers each token's last use: a time for the one just used, "never" for the others.
    const listed = (await t.req('GET', '/api/me/pats', { as: { cookie: admin.cookie } })).body as Array<Record<string, unknown>>;
    expect(listed.find((x) => x.id === other.body.id)?.last_used_at).toEqual(expect.any(String));
    await expect.poll(() => table.locator('tbody tr').count()).toBe(listed.length);
    const cells = await table.locator('tbody tr td:nth-child(4)').allTextContents();
    expect(cells.map((c) => c === 'never')).toEqual(listed.map((x) => x.last_used_at === null));

    const created = page.waitForResponse((r) => r.url().endsWith('/api/me/pats') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create token' }).click();
    const issued = (await (await created).json()) as { id: string; token: string };
    const secret = page.getByRole('region', { name: 'New personal token' });
    expect(await secret.getByRole('textbox').inputValue()).toBe(issued.token);

    // revoking another token leaves the new secret on screen
    await table.getByRole('button', { name: `Revoke token ${other.body.id.slice(0, 8)}` }).click();
    await table.getByRole('button', { name: `Revoke token ${other.body.id.slice(0, 8)}` }).waitFor({ state: 'detached' });
    expect(await secret.isVisible()).toBe(true);
    await b.shot('03-token-secret-shown');

    // revoking the new one hides its secret: it no longer works, so it is not left to copy
    await table.getByRole('button', { name: `Revoke token ${issued.id.slice(0, 8)}` }).click();
    await secret.waitFor({ state: 'detached' });
    expect(await page.locator('input[value="' + issued.token + '"]').count()).toBe(0);
    expect((await t.req('GET', '/api/me', { headers: { authorization: `Bearer ${issued.token}` } })).status).toBe(401);
    await b.shot('04-token-revoked');
  });

  it('service-account tokens: a new token was never used; revoking it hides its secret', async () => {
    const { page } = b;
    const sa = await t.req('POST', '/api/admin/service-accounts', { body: { name: 'etl-loader', role: 'member' }, as: admin });
    expect(sa.status).toBe(201);
    await page.goto(ui.url + '/admin/service-accounts');
    const item = page.getByRole('list', { name: 'Service accounts' }).getByRole('listitem').filter({ hasText: 'etl-loader' });
    await item.getByRole('button', { name: 'Tokens' }).click();
    const created = page.waitForResponse((r) => r.url().includes('/pats') && r.request().method() === 'POST');
    await item.getByRole('button', { name: 'Issue token' }).click();
    const issued = (await (await created).json()) as { id: string; token: string };
    const secret = item.getByRole('region', { name: 'New service-account token' });
    expect(await secret.getByRole('textbox').inputValue()).toBe(issued.token);
    const tokenRow = item.getByRole('list', { name: 'Tokens' }).getByRole('listitem').filter({ hasText: issued.id.slice(0, 8) });
    expect(await tokenRow.textContent()).toContain('last used never');
    await b.shot('05-service-account-token');
    await tokenRow.getByRole('button', { name: `Revoke token ${issued.id.slice(0, 8)}` }).click();
    await secret.waitFor({ state: 'detached' });
    await item.getByText('No tokens.').waitFor();
  });

  it('History shows who ran each query', async () => {
    const { page } = b;
    const bob = await newUser(t, admin);
    expect((await t.req('PUT', `/api/workspaces/default/members/${bob.id}`, { body: { role: 'writer' }, as: admin })).status).toBe(201);
    for (const [who, text] of [
      [admin, 'SELECT 1 AS by_admin'],
      [bob, 'SELECT 2 AS by_bob'],
    ] as const) {
      const s = await t.req('POST', '/api/workspaces/default/queries', { body: { sql: text, agent_id: agentId }, as: who });
      expect(s.status, s.text).toBe(202);
      expect((await t.req('GET', `/api/queries/${s.body.id}?wait_timeout_s=30`, { as: who })).body.status).toBe('done');
    }
    await page.goto(ui.url + '/w/default/history');
    const table = page.getByRole('table', { name: 'Queries' });
    await table.getByRole('row', { name: /by_bob/ }).waitFor();
    expect(await table.locator('thead th').allTextContents()).toEqual(['Status', 'Type', 'User', 'SQL', 'Started', 'Duration', 'Rows', 'Actions']);
    expect(await table.getByRole('row', { name: /by_bob/ }).locator('td.history-user').textContent()).toBe(bob.email.replace(/-.*/, '').replace('user', 'User '));
    expect(await table.getByRole('row', { name: /by_admin/ }).locator('td.history-user').textContent()).toBe('Admin');
    await b.shot('06-history-user');
  });

  it('a worksheet address names its agent by name: ?agent=<name> selects it; a name no agent has is said', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets?agent=no-such-agent');
    const pane = activePane(page);
    await pane.getByText('no agent named “no-such-agent”').waitFor();
    await expect.poll(() => page.url()).toBe(ui.url + '/w/default/worksheets');

    await page.goto(ui.url + `/w/default/worksheets?agent=${encodeURIComponent(AGENT)}`);
    await expect.poll(() => pane.getByLabel('Agent').inputValue()).toBe(agentId);
    expect(await pane.getByText('no agent named').count()).toBe(0);
    await expect.poll(() => page.url()).toBe(ui.url + '/w/default/worksheets');
    // the choice is the worksheet's own, kept as the agent's id across a reload
    await page.reload();
    await expect.poll(() => activePane(page).getByLabel('Agent').inputValue()).toBe(agentId);
    await b.shot('07-agent-by-name');
  });
});
