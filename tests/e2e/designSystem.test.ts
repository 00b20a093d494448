// The web app's design system in a real browser: the tokens are defined, and the worksheet, the catalog table page
// and Admin → Audit draw their controls, tables, empty states and errors from them alike (one control height and
// radius, one table header style, one empty state). The three screens are screenshotted at 1440 px for the
// before/after comparison (copied to EIDER_SHOTS_DIR when set, else only in the run's folder).
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, chooseAgent, typeAndRun, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-design';
const { ui, b } = await stackWithBrowser({
  suite: 'designSystem',
  agent: AGENT,
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS samples');
    await sql("CREATE TABLE samples.trips AS SELECT range AS trip_id, (3 + range % 90)::DECIMAL(10, 2) AS fare, ['Harbor', 'Airport', 'Market'][1 + range % 3] AS zone FROM range(1000)");
  },
});

const shotsDir = process.env.EIDER_SHOTS_DIR;
const shot = async (name: string) => {
  const file = await b.shot(name);
  if (shotsDir) {
    mkdirSync(shotsDir, { recursive: true });
    copyFileSync(file, join(shotsDir, `${name}.png`));
  }
};

/**
 * Every visible control of the page (buttons but links, tabs, the rail's items and the tab strip's own; text inputs; selects), with
 * its height, radius and font size, as `what: height/radius/size` strings. `.small` buttons are their own size.
 */
function controls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('button, select, input')]
      .filter((e) => e.offsetParent !== null && !e.closest('.sr-only, .skip-link'))
      .filter((e) => !(e.matches('button.link, button.small, [role=tab], .rail-item, .tab-add, .tab-close, input[type=checkbox], input[type=radio], input[type=file]')))
      .map((e) => {
        const cs = getComputedStyle(e);
        const what = `${e.tagName.toLowerCase()} ${(e.getAttribute('aria-label') ?? e.textContent ?? '').trim().slice(0, 30)}`;
        return `${what}: ${e.getBoundingClientRect().height}/${cs.borderTopLeftRadius}/${cs.fontSize}`;
      }),
  );
}
const sizes = (list: string[]) => new Set(list.map((c) => c.slice(c.lastIndexOf(': ') + 2)));

/** Each `.table` header cell's font size, weight and colour. */
function tableHeads(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('table.table th')]
      .filter((e) => e.offsetParent !== null)
      .map((e) => {
        const cs = getComputedStyle(e);
        return `${cs.fontSize}/${cs.fontWeight}/${cs.color}`;
      }),
  );
}

describe('design system', () => {
  it('tokens are defined; the three main screens share one control size, one table header and one empty state; screenshots', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.url + '/w/default/worksheets');
    const tokens = await page.evaluate(() => {
      const cs = getComputedStyle(document.documentElement);
      return ['--space-2', '--text-md', '--control-h', '--radius-md', '--accent', '--surface-sunken'].map((t) => `${t}=${cs.getPropertyValue(t).trim()}`);
    });
    // (the build's minifier writes 0.5rem as .5rem)
    expect(tokens).toEqual([
      expect.stringMatching(/^--space-2=0?\.5rem$/),
      expect.stringMatching(/^--text-md=0?\.875rem$/),
      '--control-h=2rem',
      '--radius-md=6px',
      expect.stringMatching(/^--accent=#/),
      expect.stringMatching(/^--surface-sunken=#/),
    ]);

    // The worksheet: before a run, the result area is the empty state; after it, the grid.
    await chooseAgent(page, AGENT);
    await activePane(page).locator('.empty-state.results-empty[role=status]').waitFor();
    const worksheetControls = await controls(page);
    const pane = await typeAndRun(page, 'SELECT zone, count(*) AS trips, sum(fare) AS fares FROM samples.trips GROUP BY zone ORDER BY zone');
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByRole('gridcell', { name: 'Airport' }).waitFor();
    await shot('worksheet');
    expect(await seriousViolations(page)).toEqual([]);
    // A refused statement: the one error notice, with its icon.
    await typeAndRun(page, "SELECT getenv('HOME')");
    const alert = activePane(page).getByRole('alert');
    await alert.waitFor();
    expect(await alert.evaluate((e) => e.classList.contains('notice-error') && e.querySelector('svg.icon[aria-hidden=true]') !== null)).toBe(true);

    // The catalog table page.
    await page.goto(ui.url + '/w/default/catalog/warehouse/samples/trips');
    await page.getByRole('heading', { name: 'trips', level: 2 }).waitFor();
    await page.getByRole('table', { name: 'Sample rows' }).waitFor({ timeout: 30_000 });
    await page.waitForLoadState('networkidle');
    await shot('catalog');
    expect(await seriousViolations(page)).toEqual([]);
    const catalogControls = await controls(page);
    const catalogHeads = await tableHeads(page);
    await page.goto(ui.url + '/w/default/catalog');
    await page.getByRole('searchbox', { name: 'Search catalogs, schemas and tables' }).fill('no-such-thing');
    await page.locator('.empty-state[role=status]').filter({ hasText: 'Nothing named like “no-such-thing”.' }).waitFor();

    // Admin → Audit.
    await page.goto(ui.url + '/admin/audit');
    const audit = page.getByRole('table', { name: 'Audit events' });
    await audit.getByRole('row').nth(1).waitFor();
    await shot('admin');
    expect(await seriousViolations(page)).toEqual([]);
    const adminControls = await controls(page);
    const adminHeads = await tableHeads(page);
    await page.getByLabel('Action').selectOption('lineage.import');
    await page.locator('.empty-state[role=status]').filter({ hasText: 'No audit events match.' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // The dark theme reads the same tokens: axe's contrast check passes on it too.
    await page.getByLabel('Action').selectOption('');
    await audit.getByRole('row').nth(1).waitFor();
    await page.getByRole('combobox', { name: 'Theme' }).selectOption('dark');
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('admin-dark');
    await page.getByRole('combobox', { name: 'Theme' }).selectOption('system');

    // One control: 32 px high (--control-h at a 16 px root), 6 px radius, the body's 14 px type, on every screen.
    const all = [...worksheetControls, ...catalogControls, ...adminControls];
    expect(worksheetControls.length).toBeGreaterThan(5);
    expect(adminControls.length).toBeGreaterThan(2);
    expect({ sizes: [...sizes(all)], all: all.filter((c) => !c.endsWith(': 32/6px/14px')) }).toEqual({ sizes: ['32/6px/14px'], all: [] });
    // One table header style on the catalog page and the audit trail.
    expect(new Set([...catalogHeads, ...adminHeads]).size).toBe(1);
  });
});
