// The navigation rail in a real browser against the real stack: every screen is framed by one narrow column of icons
// with their names (the current screen marked with aria-current), so the worksheet's editor and results have the
// width; nothing in it wraps at 1280 or 1440 px; the keyboard reaches the editor in a few Tabs and every screen
// through the rail; on a phone the rail is a row that scrolls inside itself; axe-core finds no critical or serious
// violation on any main screen, light or dark.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane } from './support/worksheetPage.ts';

const { ui, b } = await stackWithBrowser({ suite: 'navigationRail' });

const rail = (page: Page) => page.locator('header.rail');
const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

/** The rail's geometry and whether anything in it wraps or overflows, measured in the page. */
function railLayout(page: Page) {
  return page.evaluate(() => {
    const r = document.querySelector<HTMLElement>('header.rail')!;
    const main = document.querySelector<HTMLElement>('main#main')!;
    const items = [...r.querySelectorAll<HTMLElement>('.rail-item')];
    const labels = items.map((i) => i.querySelector<HTMLElement>('.rail-label')!);
    const wrapped = labels
      .filter((l) => l.scrollWidth > l.clientWidth || l.getBoundingClientRect().height > parseFloat(getComputedStyle(l).lineHeight) * 1.5)
      .map((l) => l.textContent);
    const controls = [...r.querySelectorAll<HTMLElement>('a, button, select')].filter((e) => e.getBoundingClientRect().right > r.getBoundingClientRect().right + 0.5);
    return {
      railWidth: r.getBoundingClientRect().width,
      mainLeft: main.getBoundingClientRect().left,
      mainWidth: main.getBoundingClientRect().width,
      railOverflowsSideways: r.scrollWidth > r.clientWidth,
      pageScrollsSideways: document.documentElement.scrollWidth > window.innerWidth,
      wrapped,
      outside: controls.map((e) => e.getAttribute('aria-label') ?? e.textContent),
      withoutIcon: items.filter((i) => !i.querySelector('svg.icon[aria-hidden=true]')).map((i) => i.textContent),
    };
  });
}

const MAIN_SCREENS: Array<[string, string, (page: Page) => Promise<unknown>]> = [
  ['worksheets', '/w/default/worksheets', (page) => activePane(page).locator('.cm-content').waitFor()],
  ['catalog', '/w/default/catalog', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['health', '/w/default/health', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['models', '/w/default/models', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['history', '/w/default/history', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['schedules', '/w/default/schedules', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['sessions', '/w/default/sessions', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['members', '/w/default/members', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['agents', '/agents', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['compute', '/compute', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
  ['admin', '/admin', (page) => page.getByRole('navigation', { name: 'Administration' }).waitFor()],
  ['tokens', '/me/tokens', (page) => page.getByRole('heading', { level: 1 }).first().waitFor()],
];

describe('navigation rail', () => {
  it('frames every screen: icons with their names, the current one marked, the screen beside it owning the width', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.url + '/w/default/worksheets');
    await activePane(page).locator('.cm-content').waitFor();
    const names = await nav(page).getByRole('link').allTextContents();
    expect(names).toEqual(['Worksheets', 'Catalog', 'Health', 'Models', 'History', 'Schedules', 'Sessions', 'Members', 'Agents', 'Compute', 'Admin']);
    const layout = await railLayout(page);
    expect(layout.withoutIcon).toEqual([]);
    // A rail, not a sidebar: under 100 px, and the screen starts where it ends.
    expect(layout.railWidth).toBeLessThan(100);
    expect(Math.abs(layout.mainLeft - layout.railWidth)).toBeLessThan(2);
    expect(layout.mainWidth).toBeGreaterThan(1440 - 100);
    // The editor and the result area take the height of the window below the worksheet's tab strip.
    const editorTop = (await activePane(page).locator('.editor-wrap').boundingBox())!.y;
    expect(editorTop).toBeLessThan(150);

    for (const [name, path, ready] of MAIN_SCREENS) {
      await page.goto(ui.url + path);
      await ready(page);
      expect(await rail(page).isVisible(), name).toBe(true);
      const current = nav(page).locator('[aria-current=page]');
      if (name === 'tokens') {
        expect(await current.count()).toBe(0);
        expect(await page.getByRole('link', { name: /Account and tokens/ }).getAttribute('aria-current')).toBe('page');
      } else {
        expect(await current.allTextContents(), name).toEqual([name[0]!.toUpperCase() + name.slice(1)]);
      }
    }
    // A click moves the mark.
    await nav(page).getByRole('link', { name: 'History' }).click();
    await page.waitForURL(/\/w\/default\/history$/);
    await expect.poll(() => nav(page).locator('[aria-current=page]').allTextContents()).toEqual(['History']);
    await b.shot('rail-1440');
  });

  it('nothing in the rail wraps or spills at 1440 and 1280 px, and the page never scrolls sideways', async () => {
    const { page } = b;
    for (const [width, height] of [
      [1440, 900],
      [1280, 800],
    ] as const) {
      await page.setViewportSize({ width, height });
      for (const path of ['/w/default/worksheets', '/admin/audit', '/compute']) {
        await page.goto(ui.url + path);
        await nav(page).waitFor();
        await page.waitForLoadState('networkidle');
        const layout = await railLayout(page);
        expect({ at: `${width} ${path}`, wrapped: layout.wrapped, outside: layout.outside, rail: layout.railOverflowsSideways, page: layout.pageScrollsSideways }).toEqual({
          at: `${width} ${path}`,
          wrapped: [],
          outside: [],
          rail: false,
          page: false,
        });
        // Sign-out and the account are in the rail, in the window (scrolled to if the rail is taller than it).
        const signOut = page.getByRole('button', { name: 'Sign out' });
        await signOut.scrollIntoViewIfNeeded();
        const box = (await signOut.boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual((await rail(page).boundingBox())!.width);
        expect(box.y + box.height).toBeLessThanOrEqual(height);
      }
      await b.shot(`rail-${width}`);
    }
  });

  it('keyboard: the editor is a few Tabs from load; Tab walks the rail, and Enter on an item opens its screen', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.url + '/w/default/worksheets');
    await activePane(page).locator('.cm-content').waitFor();
    let tabs = 0;
    while (tabs < 3 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Skip to the SQL editor') {
      await page.keyboard.press('Tab');
      tabs++;
    }
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the SQL editor');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.classList.contains('cm-content'))).toBe(true);

    // From the top again: past the skip links and the workspace, Tab visits the rail's items in order.
    await page.goto(ui.url + '/w/default/worksheets');
    await activePane(page).locator('.cm-content').waitFor();
    const visited: string[] = [];
    for (let i = 0; i < 16 && !visited.includes('Members'); i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const e = document.activeElement as HTMLElement | null;
        return e?.closest('nav[aria-label=Main]') ? { text: e.textContent ?? '', outline: getComputedStyle(e).outlineStyle } : null;
      });
      if (focused) {
        visited.push(focused.text);
        expect(focused.outline, `${focused.text} shows its focus`).not.toBe('none');
      }
    }
    expect(visited).toEqual(['Worksheets', 'Catalog', 'Health', 'Models', 'History', 'Schedules', 'Sessions', 'Members']);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/w\/default\/members$/);
    expect(await nav(page).getByRole('link', { name: 'Members' }).getAttribute('aria-current')).toBe('page');
  });

  it('on a phone (390 px) the rail is a row across the top that scrolls inside itself; every item still opens its screen', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(ui.url + '/w/default/worksheets');
      await activePane(page).locator('.cm-content').waitFor();
      const railBox = (await rail(page).boundingBox())!;
      expect(railBox.width).toBeGreaterThan(380);
      expect(railBox.height).toBeLessThan(90);
      const mainBox = (await page.locator('main#main').boundingBox())!;
      expect(mainBox.y).toBeGreaterThanOrEqual(railBox.y + railBox.height - 1);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      const admin = nav(page).getByRole('link', { name: 'Admin' });
      await admin.click(); // scrolled into view by the click
      await page.waitForURL(/\/admin$/);
      await page.getByRole('navigation', { name: 'Administration' }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await b.shot('rail-390');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('axe-core: no critical or serious violation on any main screen, in the light theme and the dark', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    const found: string[] = [];
    for (const theme of ['light', 'dark'] as const) {
      await page.goto(ui.url + '/w/default/worksheets');
      await page.getByRole('combobox', { name: 'Theme' }).selectOption(theme);
      await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
      for (const [name, path, ready] of MAIN_SCREENS) {
        await page.goto(ui.url + path);
        await ready(page);
        await page.waitForLoadState('networkidle');
        for (const v of await seriousViolations(page)) found.push(`${theme} ${name}: ${v}`);
      }
      await b.shot(`axe-${theme}-last`);
    }
    await page.getByRole('combobox', { name: 'Theme' }).selectOption('system');
    expect(found).toEqual([]);
  });
});
