// Worksheets kept on the server (issue 21, build item 3) in a real browser against a real api: what one browser
// writes is there after signing in on a fresh one; a worksheet shared with the workspace is listed for another member,
// who reads it (read-only) and keeps a copy of their own; a change made while the api cannot be reached is saved once
// it can.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ADMIN, newUser, type Caller } from '../support/api.ts';
import type { Browser } from './support/browser.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, typeSql } from './support/worksheetPage.ts';

// Each test opens the browsers it needs (closed with the world).
const world = await stackWithBrowser({ suite: 'worksheet-server', api: 'alone', browser: 'none' });
const { t, admin, ui } = world;
const browsers: Browser[] = [];

const open = async (suite: string, who: { email: string; password: string }) => {
  const b = await world.open(suite, who);
  browsers.push(b);
  await b.page.goto(ui.url + '/w/default/worksheets');
  return b;
};
const savedState = (page: Page) => activePane(page).locator('.worksheet-saved').getAttribute('data-saved');
const editorText = (page: Page) => activePane(page).locator('.cm-content').textContent();
const mine = async (as: Caller) => (await t.req('GET', '/api/workspaces/default/worksheets?scope=mine', { as })).body.items as { id: string; title: string; sql: string; visibility: string }[];

describe('worksheets on the server', () => {
  it('a worksheet written in one browser opens after sign-in in a fresh one; shared, another member reads it and copies it', async () => {
    const a = await open('worksheet-server-a', ADMIN);
    await typeSql(a.page, "SELECT 'written in browser A' AS origin");
    await expect.poll(() => savedState(a.page), { timeout: 15_000 }).toBe('saved');
    const [kept] = await mine(admin);
    expect(kept).toMatchObject({ sql: "SELECT 'written in browser A' AS origin", visibility: 'private' });
    await a.shot('01-saved');

    // A fresh browser (no cached tabs) signs in and finds the worksheet open in a tab.
    const fresh = await open('worksheet-server-fresh', ADMIN);
    await expect.poll(() => editorText(fresh.page), { timeout: 15_000 }).toContain('written in browser A');
    expect(await fresh.page.getByRole('tab', { name: kept.title }).getAttribute('aria-selected')).toBe('true');
    await fresh.shot('02-fresh-browser');

    // Shared from browser A; another member lists it under "Shared in workspace" and opens it read-only.
    await activePane(a.page).getByLabel('Shared with workspace').check();
    await expect.poll(async () => (await mine(admin))[0].visibility, { timeout: 15_000 }).toBe('workspace');
    const member = await newUser(t, admin);
    expect((await t.req('PUT', `/api/workspaces/default/members/${member.id}`, { body: { role: 'reader' }, as: admin })).status).toBe(201);
    const m = await open('worksheet-server-member', { email: member.email, password: 'user-password-1' });
    await m.page.getByRole('button', { name: 'Worksheets…' }).click();
    const list = m.page.getByRole('dialog', { name: 'Worksheets' });
    await list.getByRole('list', { name: 'Shared in workspace' }).getByRole('button', { name: kept.title }).click();
    await expect.poll(() => editorText(m.page)).toContain('written in browser A');
    const note = activePane(m.page).getByRole('note');
    expect(await note.textContent()).toMatch(/Shared by Admin: only they can change it/);
    expect(await activePane(m.page).getByLabel('Shared with workspace').count()).toBe(0);
    await m.shot('03-shared-read-only');

    // The member's own copy is theirs: saved, editable, private.
    await activePane(m.page).getByRole('button', { name: 'Save a copy' }).click();
    await expect.poll(() => m.page.getByRole('tab', { name: `Copy of ${kept.title}` }).getAttribute('aria-selected')).toBe('true');
    await expect.poll(() => savedState(m.page), { timeout: 15_000 }).toBe('saved');
    expect(await mine(member)).toMatchObject([{ title: `Copy of ${kept.title}`, sql: kept.sql, visibility: 'private' }]);
    // Nothing the member did changed the owner's worksheet.
    expect((await mine(admin))[0].sql).toBe(kept.sql);
  });

  it('a change made while the api cannot be reached is kept in the tab and saved once it can', async () => {
    const a = browsers[0];
    await a.context.setOffline(true);
    await typeSql(a.page, "SELECT 'written offline' AS origin");
    await expect.poll(() => savedState(a.page), { timeout: 15_000 }).toBe('error');
    expect(await activePane(a.page).getByText('Not saved', { exact: true }).count()).toBe(1);
    await a.shot('04-offline');
    await a.context.setOffline(false);
    await expect.poll(() => savedState(a.page), { timeout: 25_000 }).toBe('saved');
    expect((await mine(admin))[0].sql).toBe("SELECT 'written offline' AS origin");
  });
});
