// The worksheet with SQL sessions on (issue 35) in a real browser against the real stack: several statements and one
// connection, the schema tree and completion by keyboard, axe-core and the skip link, worksheet names, the polish
// items (agent picker width, a schedule's confirmation, a refused sign-in), error positions, copy and charts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN } from '../support/api.ts';
import { signInAs } from './support/browser.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, chooseAgent, run, typeAndRun, typeSql, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-five';
const pageErrors: string[] = [];

const { ui, b } = await stackWithBrowser({
  suite: 'worksheetSessionsAndAccessibility',
  agent: AGENT,
  env: { SQL_SESSIONS_ENABLED: 'true', SQL_SESSION_REAPER_TICK_S: '0.2' },
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS samples');
    await sql("CREATE TABLE samples.trips AS SELECT range AS trip_id, (3 + range % 90)::DECIMAL(10, 2) AS fare, ['Harbor', 'Airport', 'Market'][1 + range % 3] AS zone FROM range(1000)");
  },
});
const editorText = () => activePane(b.page).locator('.cm-content').evaluate((el) => [...el.querySelectorAll('.cm-line')].map((l) => l.textContent).join('\n'));
b.page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));

describe('worksheet with SQL sessions: statements, keyboard, accessibility and polish', () => {
  it('the main screens, for their screenshots', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, 'SELECT zone, count(*) AS trips, sum(fare) AS fares FROM samples.trips GROUP BY zone ORDER BY zone');
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByRole('gridcell', { name: 'Airport' }).waitFor();
    await b.shot('shot-worksheet');
    await page.goto(ui.url + '/w/default/catalog');
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.waitForLoadState('networkidle');
    await b.shot('shot-catalog');
    await page.goto(ui.url + '/w/default/history');
    await page.getByRole('table', { name: 'Queries' }).waitFor();
    await b.shot('shot-history');
  });

  it('Ctrl+I with the assistant off says so in the panel and keeps the app', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await activePane(page).locator('.cm-content').click();
    await page.keyboard.press('Control+i');
    await page.getByRole('complementary', { name: 'Assistant' }).getByText(/assistant is off/i).waitFor();
    expect(pageErrors).toEqual([]);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  });

  it('a selection of several statements runs them in order and shows the last one\'s result (and each one\'s)', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    await typeSql(page, 'SELECT 1 AS a; SELECT 2 AS b;');
    await page.keyboard.press('ControlOrMeta+a');
    await run(page);
    const pane = activePane(page);
    await expect.poll(() => pane.locator('.pill').getAttribute('data-status'), { timeout: 30_000 }).toBe('done');
    const statements = pane.getByRole('tablist', { name: 'Statements' });
    await expect.poll(() => statements.getByRole('tab').count()).toBe(2);
    await expect.poll(() => statements.getByRole('tab', { name: /Statement 2/ }).getAttribute('aria-selected')).toBe('true');
    await pane.getByRole('columnheader', { name: /^b/ }).waitFor();
    await statements.getByRole('tab', { name: /Statement 1/ }).click();
    await pane.getByRole('columnheader', { name: /^a/ }).waitFor();
  });

  it('a worksheet is one connection: temp tables and settings carry over between statements and runs', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    await typeSql(page, 'create temp table t as select 1 as x;\nselect * from t;');
    await page.keyboard.press('ControlOrMeta+Shift+Enter');
    const pane = activePane(page);
    const statements = pane.getByRole('tablist', { name: 'Statements' });
    await expect.poll(() => statements.getByRole('tab', { name: /Statement 2/ }).getAttribute('data-status'), { timeout: 30_000 }).toBe('done');
    await pane.getByRole('columnheader', { name: /^x/ }).waitFor();
    // A later run of the same worksheet still sees the temp table, and a setting made in one run holds in the next.
    const again = await typeAndRun(page, "SET TimeZone = 'America/New_York'");
    expect(await waitForStatus(again, ['done', 'failed'])).toBe('done');
    const read = await typeAndRun(page, "SELECT (TIMESTAMPTZ '2025-01-01 12:00:00+00')::VARCHAR AS local_time, (SELECT x FROM t) AS x");
    expect(await waitForStatus(read, ['done', 'failed'])).toBe('done');
    await read.getByRole('gridcell', { name: '2025-01-01 07:00:00-05' }).waitFor();
    expect(await pane.locator('.connection-note').count()).toBe(0);
    // The same table read twice in the session (each statement links its files into the session's directory).
    for (let i = 0; i < 2; i++) {
      const twice = await typeAndRun(page, `SELECT count(*) + ${i} AS n FROM samples.trips`);
      expect(await waitForStatus(twice, ['done', 'failed'])).toBe('done');
    }
  });

  it('schema tree: an ARIA tree the keyboard drives; a click opens a table without touching the SQL; it reloads after the worksheet\'s DDL', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = activePane(page);
    await typeSql(page, '-- notes\n');
    const tree = pane.getByRole('tree', { name: 'Schema tree' });
    const item = (name: string | RegExp) => tree.getByRole('treeitem', { name, exact: typeof name === 'string' });
    await item(/^warehouse/).waitFor();
    expect(await item(/^warehouse/).getAttribute('aria-expanded')).toBe('false');
    expect(await item(/^warehouse/).getAttribute('tabindex')).toBe('0'); // the tree's one tab stop
    await item(/^warehouse/).focus();
    await page.keyboard.press('ArrowRight'); // opens
    await expect.poll(() => item(/^warehouse/).getAttribute('aria-expanded')).toBe('true');
    await item('samples').waitFor();
    await page.keyboard.press('ArrowDown'); // to samples
    await expect.poll(() => item('samples').evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('ArrowRight');
    await item('trips').waitFor();
    await page.keyboard.press('ArrowRight'); // into the open schema: its first table
    await expect.poll(() => item('trips').evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await item('trips').getAttribute('aria-expanded')).toBe('false');
    await page.keyboard.press('ArrowRight');
    // Columns with their types under the table.
    await item('fare DECIMAL(10,2)').waitFor();
    await item('zone VARCHAR').waitFor();
    expect(await item('fare DECIMAL(10,2)').getAttribute('aria-level')).toBe('4');
    await page.keyboard.press('ArrowLeft'); // closes the table
    await expect.poll(() => item('fare DECIMAL(10,2)').count()).toBe(0);
    await page.keyboard.press('ArrowLeft'); // to its schema
    await expect.poll(() => item('samples').evaluate((el) => el === document.activeElement)).toBe(true);
    // A click on a table opens it and leaves the SQL (here a comment) alone; Enter inserts its name.
    await item('trips').click();
    await item('fare DECIMAL(10,2)').waitFor();
    expect(await editorText()).toBe('-- notes\n');
    await page.keyboard.press('Enter');
    expect(await editorText()).toBe('-- notes\nsamples.trips');
    await b.shot('10-schema-tree');

    // The worksheet's own CTAS appears in the open schema without a reload; Refresh is there too.
    const made = await typeAndRun(page, 'CREATE TABLE samples.fresh_made AS SELECT 1 AS y');
    expect(await waitForStatus(made, ['done', 'failed'])).toBe('done');
    await item('fresh_made').waitFor();
    expect(await item('trips').getAttribute('aria-expanded')).toBe('true'); // what was open stays open
    await pane.getByRole('button', { name: 'Refresh' }).click();
    await item('fresh_made').waitFor();
  });

  it('completion after `schema.` offers that schema\'s tables', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    const missing: string[] = [];
    const onResponse = (r: { status(): number; url(): string }) => r.status() === 404 && r.url().includes('/api/') && missing.push(r.url());
    page.on('response', onResponse);
    await typeSql(page, 'SELECT * FROM samples.');
    await page.keyboard.press('Control+Space');
    const list = page.locator('.cm-tooltip-autocomplete');
    await list.getByText('trips', { exact: true }).waitFor();
    page.off('response', onResponse);
    expect(missing).toEqual([]);
  });

  it('axe-core: no critical or serious violations on the main screens', async () => {
    const { page } = b;
    const axeSource = readFileSync(join(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');
    const screens: Array<[string, string, () => Promise<unknown>]> = [
      ['worksheet', '/w/default/worksheets', () => activePane(page).locator('.cm-content').waitFor()],
      ['catalog', '/w/default/catalog', () => page.getByRole('heading', { level: 1 }).first().waitFor()],
      ['history', '/w/default/history', () => page.getByRole('table', { name: 'Queries' }).waitFor()],
      ['agents', '/agents', () => page.getByText(AGENT).first().waitFor()],
      ['admin', '/admin', () => page.getByRole('navigation', { name: 'Administration' }).waitFor()],
      ['models', '/w/default/models', () => page.getByRole('heading', { level: 1 }).first().waitFor()],
    ];
    const found: string[] = [];
    for (const [name, path, ready] of screens) {
      await page.goto(ui.url + path);
      await ready();
      await page.waitForLoadState('networkidle');
      // Through the debugging protocol: the app's Content-Security-Policy (rightly) refuses an inline script.
      await page.evaluate(axeSource);
      const violations = await page.evaluate(async () => {
        const r = await (window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe.run();
        return r.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
      });
      for (const v of violations) found.push(`${name}: ${v}`);
    }
    expect(found).toEqual([]);
  });

  it('keyboard: the first Tab offers a skip link that puts the cursor in the editor', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await activePane(page).locator('.cm-content').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the SQL editor');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.classList.contains('cm-content'))).toBe(true);
  });

  it('worksheets: names stay unique after a close, F2 renames in place, History reuses the worksheet with the same SQL', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    const tabs = page.getByRole('tablist', { name: 'Worksheets' });
    const titles = () => tabs.getByRole('tab').evaluateAll((els) => els.map((e) => e.firstChild?.textContent ?? ''));
    await page.getByRole('button', { name: 'New worksheet' }).click();
    await page.getByRole('button', { name: 'New worksheet' }).click();
    const last = (await titles()).at(-1)!;
    const n = Number(/Worksheet (\d+)/.exec(last)![1]);
    // Close the newest with Delete on its tab, then +: the name is not given again.
    await tabs.getByRole('tab', { name: new RegExp(`^${last}`) }).focus();
    await page.keyboard.press('Delete');
    await expect.poll(titles).not.toContain(last);
    await page.getByRole('button', { name: 'New worksheet' }).click();
    await expect.poll(titles).toContain(`Worksheet ${n + 1}`);
    expect(new Set(await titles()).size).toBe((await titles()).length);

    // F2 on the tab: an inline field, Enter keeps the name (no browser prompt).
    let prompted = false;
    page.once('dialog', () => (prompted = true));
    await tabs.getByRole('tab', { name: new RegExp(`^Worksheet ${n + 1}`) }).focus();
    await page.keyboard.press('F2');
    const field = tabs.getByRole('textbox', { name: 'Worksheet name' });
    await field.waitFor();
    await field.fill('Daily fares');
    await page.keyboard.press('Enter');
    await expect.poll(titles).toContain('Daily fares');
    expect(prompted).toBe(false);
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('tab');

    // History's "Open in worksheet" brings the worksheet holding that SQL to the front instead of a copy.
    const sqlText = 'SELECT 7 AS reused_once';
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, sqlText);
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    const count = (await titles()).length;
    await page.getByRole('tab', { name: /^Worksheet 1/ }).or(tabs.getByRole('tab').first()).first().click();
    await page.goto(ui.url + '/w/default/history?q=' + encodeURIComponent('reused_once'));
    await page.getByRole('row').filter({ hasText: 'reused_once' }).first().getByRole('button', { name: 'Open in worksheet' }).click();
    await page.waitForURL(/\/worksheets$/);
    await expect.poll(() => tabs.getByRole('tab', { selected: true }).evaluate((e) => e.firstChild?.textContent)).toBe('Daily fares');
    expect((await titles()).length).toBe(count);
  });

  it('polish: the rail holds the brand and Sign out at 1440 px, a capped agent picker, a schedule that says it was made, a refused sign-in that says so', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    // (the top bar this checked for one row is now the navigation rail: both in it, in the window)
    const rail = (await page.locator('header.rail').boundingBox())!;
    for (const part of [page.getByRole('button', { name: 'Sign out' }), page.locator('.brand')]) {
      const box = (await part.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(rail.x + rail.width);
      expect(box.y + box.height).toBeLessThanOrEqual(900);
    }

    // However long an agent's label, the picker keeps its width.
    const picker = activePane(page).getByLabel('Agent');
    await picker.evaluate((el) => {
      const o = document.createElement('option');
      o.textContent = '○ elastic-agent-with-a-long-name-0123456789 — unavailable · elastic terminated, starts on use (admin)';
      el.appendChild(o);
    });
    expect((await picker.boundingBox())!.width).toBeLessThanOrEqual(300);

    // A schedule made from a saved query is confirmed where it was made.
    await typeSql(page, 'SELECT 1 AS nightly_one');
    await activePane(page).getByRole('button', { name: 'Save', exact: true }).click();
    await activePane(page).getByText(/^Saved as /).waitFor();
    await page.goto(ui.url + '/w/default/schedules');
    const savedRow = page.getByRole('row').filter({ hasText: 'nightly_one' }).first();
    await savedRow.getByRole('button', { name: 'Schedule' }).click();
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByLabel('Agent').selectOption({ label: (await form.getByLabel('Agent').locator('option', { hasText: AGENT }).textContent())! });
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('status').filter({ hasText: /^Scheduled .* at 0 6 \* \* \*/ }).waitFor();
    await b.shot('20-schedule-made');

    // A wrong password: the notice says the sign-in failed, not "Signed out".
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.locator('.notice-title').textContent()).toBe('Sign-in failed');
    await signInAs(page, ADMIN);
  });

  it('error positions: a refusal in Run all is marked where it is in the editor; a binder error is marked, with the engine\'s candidate', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = activePane(page);
    await typeSql(page, 'SELECT 1 AS fine;\n  INSTALL httpfs;');
    await page.keyboard.press('ControlOrMeta+Shift+Enter');
    const alert = pane.getByRole('alert');
    await alert.waitFor({ timeout: 30_000 });
    expect(await alert.textContent()).toMatch(/at line 2, column 3/);
    expect(await pane.locator('.cm-line.cm-error-line').textContent()).toBe('  INSTALL httpfs;');
    expect(await pane.locator('.cm-error-mark').textContent()).toBe('INSTALL');
    await b.shot('30-refusal-marked');

    await typeSql(page, '-- fares\nselect farez from samples.trips');
    await page.keyboard.press('ControlOrMeta+Shift+Enter');
    await expect.poll(() => pane.locator('.pill').getAttribute('data-status'), { timeout: 30_000 }).toBe('failed');
    await expect.poll(() => pane.locator('.cm-error-mark').textContent()).toBe('farez');
    expect(await pane.locator('.cm-line.cm-error-line').textContent()).toBe('select farez from samples.trips');
    const suggestion = pane.getByRole('note').filter({ hasText: 'Did you mean' }).getByRole('button', { name: 'fare', exact: true });
    await suggestion.waitFor();
    await b.shot('31-binder-error-marked');
    await suggestion.click();
    expect(await editorText()).toBe('-- fares\nselect fare from samples.trips');
  });

  it('results: Ctrl/Cmd+C copies the selection with a header row, Ctrl/Cmd+Shift+C without, a single cell alone', async () => {
    const { page } = b;
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.url });
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, "SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, 'y' ORDER BY a");
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByRole('gridcell', { name: 'x', exact: true }).click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('ControlOrMeta+c');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('a\tb\n1\tx\n2\ty');
    await page.keyboard.press('ControlOrMeta+Shift+c');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('1\tx\n2\ty');
    await pane.getByRole('gridcell', { name: 'x', exact: true }).click();
    await page.keyboard.press('ControlOrMeta+c');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('x');
  });

  it('charts: a daily series defaults to a line over time of a measure, with round ticks, inside its box', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(
      page,
      "SELECT range AS day_id, DATE '2025-01-01' + range::INTEGER AS day, 40000 + (range * 7919) % 3671 + 0.3 AS revenue FROM range(365)",
    );
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByRole('tab', { name: 'Chart' }).click();
    const chart = pane.locator('svg.chart');
    await chart.waitFor();
    expect(await chart.getAttribute('aria-label')).toBe('Line chart of revenue by day');
    const ticks = (await chart.locator('.chart-grid text').allTextContents()).map((t) => Number(t.replace(/,/g, '')));
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    const step = ticks[1] - ticks[0];
    expect(/^(1|2|2\.5|5)0*$/.test(String(step).replace(/^0\.0*/, '').replace('.', ''))).toBe(true);
    for (const t of ticks) expect(Number.isInteger(t / step + 1e-9) || Math.abs(Math.round(t / step) - t / step) < 1e-6).toBe(true);
    // The whole chart shows in its box: nothing below the result area's edge.
    const box = (await chart.boundingBox())!;
    const area = (await pane.locator('.result-area').boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(area.y + area.height + 1);
    await b.shot('40-line-by-default');
  });
});
