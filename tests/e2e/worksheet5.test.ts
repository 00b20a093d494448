// The web app's fifth round (issue 35) in a real browser against the real stack, with SQL sessions on.
import { describe, expect, it } from 'vitest';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, chooseAgent, run, typeAndRun, typeSql, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-five';
const pageErrors: string[] = [];

const { ui, b } = await stackWithBrowser({
  suite: 'worksheet5',
  agent: AGENT,
  env: { SQL_SESSIONS_ENABLED: 'true', SQL_SESSION_REAPER_TICK_S: '0.2' },
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS samples');
    await sql("CREATE TABLE samples.trips AS SELECT range AS trip_id, (3 + range % 90)::DECIMAL(10, 2) AS fare, ['Harbor', 'Airport', 'Market'][1 + range % 3] AS zone FROM range(1000)");
  },
});
b.page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));

describe('web app, fifth round', () => {
  it('screens (shots)', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, 'SELECT zone, count(*) AS trips, sum(fare) AS fares FROM samples.trips GROUP BY zone ORDER BY zone');
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await b.shot('shot-worksheet');
    await page.goto(ui.url + '/w/default/catalog');
    await page.waitForTimeout(1500);
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
  });
});
