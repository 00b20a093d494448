// The schema tree, column summaries and quick charts (issue 21, build items 2, 6 and 7) in a real browser against
// the real stack: the schema tree beside the editor (lazy levels, insert on click or drag, names quoted when they must be), column summaries in
// the result header (type, nulls, distinct, min/max, a histogram; honest about how many rows they cover), and quick
// charts (bar, line, scatter) of a result's columns.
import { describe, expect, it } from 'vitest';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, chooseAgent, typeAndRun, typeSql, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-three';
const apiCalls: string[] = [];

const { ui, b } = await stackWithBrowser({
  suite: 'schemaTreeSummariesAndCharts',
  agent: AGENT,
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS samples');
    await sql(
      "CREATE TABLE samples.trips AS SELECT range AS trip_id, (3 + range % 90)::DECIMAL(10, 2) AS fare, ['Harbor', 'Airport', 'Market'][1 + range % 3] AS \"Pickup Zone\", " +
        'CASE WHEN range % 10 = 0 THEN NULL ELSE range % 7 END AS "from" FROM range(1000)',
    );
  },
});
b.page.on('request', (r) => r.url().includes('/api/') && apiCalls.push(r.url()));

const editorText = () => activePane(b.page).locator('.cm-content').evaluate((el) => [...el.querySelectorAll('.cm-line')].map((l) => l.textContent).join('\n'));

describe('schema tree, column summaries and quick charts', () => {
  it('schema tree: catalogs, schemas, tables and columns load level by level; Enter, a double-click or a drag inserts the quoted name', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = activePane(page);
    const tree = pane.getByRole('tree', { name: 'Schema tree' });
    const item = (name: string | RegExp) => tree.getByRole('treeitem', { name, exact: typeof name === 'string' });
    await item(/^warehouse/).waitFor();
    apiCalls.length = 0;
    expect(await tree.getByText('samples').count()).toBe(0); // nothing below the catalogs until one is opened
    await item(/^warehouse/).click();
    await item('samples').click();
    await item('trips').waitFor();
    expect(apiCalls.some((u) => /\/schemas\/samples\/tables$/.test(u))).toBe(true);
    expect(apiCalls.some((u) => /\/tables\/trips$/.test(u))).toBe(false); // columns only when the table opens

    await typeSql(page, 'SELECT * FROM ');
    await item('trips').dblclick();
    expect(await editorText()).toBe('SELECT * FROM samples.trips');
    await item('trips').click();
    await item('Pickup Zone VARCHAR').waitFor();
    expect(await tree.locator('.tree-column').allTextContents()).toEqual(expect.arrayContaining(['trip_id BIGINT', 'fare DECIMAL(10,2)']));
    await b.shot('01-schema-tree');

    await typeSql(page, 'SELECT  FROM samples.trips', ' FROM');
    await item('Pickup Zone VARCHAR').focus();
    await page.keyboard.press('Enter');
    expect(await editorText()).toBe('SELECT "Pickup Zone" FROM samples.trips');
    await page.keyboard.insertText(', ');
    await item(/^from /).dblclick(); // a reserved word is quoted too
    expect(await editorText()).toBe('SELECT "Pickup Zone", "from" FROM samples.trips');

    // Dragging a column into the editor drops its name where it lands.
    await typeSql(page, 'SELECT ');
    await item(/^fare /).dragTo(pane.locator('.cm-content'));
    await expect.poll(editorText).toMatch(/fare/);

    // Collapsing hides the columns; the toolbar's Schema button hides the tree.
    await item('trips').click();
    await expect.poll(() => item('Pickup Zone VARCHAR').count()).toBe(0);
    await pane.getByRole('button', { name: 'Schema', exact: true }).click();
    expect(await pane.getByRole('tree', { name: 'Schema tree' }).count()).toBe(0);
    await pane.getByRole('button', { name: 'Schema', exact: true }).click();
  });

  it('column summaries: nulls, distinct, least and greatest and a histogram under each header, and how many rows they cover', async () => {
    const { page } = b;
    const pane = await typeAndRun(page, 'SELECT trip_id, fare, "Pickup Zone", "from" FROM samples.trips');
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByText('1,000 rows').waitFor();
    await pane.getByRole('button', { name: 'Summaries' }).click();
    await pane.getByText('Summaries of all 1,000 rows').waitFor();
    const summary = (i: number) => pane.locator('[role=columnheader]').nth(i).locator('.col-summary');
    await summary(1).waitFor();
    expect(await summary(1).getAttribute('aria-label')).toBe('Summary: no nulls, 1,000 distinct, from 0 to 999');
    expect(await summary(2).getAttribute('aria-label')).toBe('Summary: no nulls, 90 distinct, from 3.00 to 92.00');
    expect(await summary(3).getAttribute('aria-label')).toBe('Summary: no nulls, 3 distinct, from Airport to Market');
    expect(await summary(4).getAttribute('aria-label')).toBe('Summary: 100 null (10%), 7 distinct, from 0 to 6');
    expect(await summary(1).locator('.col-histogram rect').count()).toBe(12);
    expect(await summary(3).locator('.col-histogram').count()).toBe(0); // text: no histogram
    // The rows still line up under the taller header, and a click on a summary does not sort.
    await summary(2).click();
    expect(await pane.locator('[role=columnheader]').nth(2).getAttribute('aria-sort')).toBe('none');
    const header = await pane.locator('.grid-header').boundingBox();
    const row1 = await pane.locator('[aria-rowindex="2"]').boundingBox();
    expect(Math.abs(row1!.y - (header!.y + header!.height))).toBeLessThan(2);
    await b.shot('02-column-summaries');
    await pane.getByRole('button', { name: 'Summaries' }).click();
    expect(await summary(1).count()).toBe(0);

    // A result larger than the browser holds is summarized from its first 50,000 rows, and says so.
    const big = await typeAndRun(page, 'SELECT range AS n FROM range(60000)');
    expect(await waitForStatus(big, ['done', 'failed'])).toBe('done');
    await big.getByText('60,000 rows').waitFor();
    await big.getByRole('button', { name: 'Summaries' }).click();
    await big.getByText('Summaries of the first 50,000 of 60,000 rows').waitFor({ timeout: 30_000 });
    expect(await big.locator('[role=columnheader]').nth(1).locator('.col-summary').getAttribute('aria-label')).toBe('Summary: no nulls, 50,000 distinct, from 0 to 49,999');
    await b.shot('03-summaries-of-the-first-rows');
  });

  it('quick charts: bar, line and scatter of chosen columns, as SVG', async () => {
    const { page } = b;
    const pane = await typeAndRun(page, 'SELECT trip_id, fare, "Pickup Zone" FROM samples.trips');
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByRole('tab', { name: 'Chart' }).click();
    const chart = pane.locator('svg.chart');
    await chart.waitFor();
    expect(await pane.getByRole('status').filter({ hasText: 'From all 1,000 rows' }).count()).toBe(1);
    // Bars by default: the text column across, the sum of the first measure (not an id) up.
    expect(await pane.getByLabel('X axis').inputValue()).toBe('Pickup Zone');
    expect(await chart.getAttribute('aria-label')).toBe('Bar chart of sum of fare by Pickup Zone'); // a measure, not the id
    await pane.getByLabel('Y axis').selectOption('fare');
    expect(await chart.getAttribute('aria-label')).toBe('Bar chart of sum of fare by Pickup Zone');
    expect(await chart.locator('rect.chart-bar').count()).toBe(3);
    expect(await chart.locator('.chart-xlabel').allTextContents()).toEqual(['Airport', 'Harbor', 'Market']);
    expect(await chart.locator('rect.chart-bar title').allTextContents()).toEqual(['Airport: 15,696', 'Harbor: 15,375', 'Market: 16,029']);
    await pane.getByLabel('Y axis').selectOption('(count of rows)');
    expect(await chart.locator('rect.chart-bar title').allTextContents()).toEqual(['Airport: 333', 'Harbor: 334', 'Market: 333']);
    await b.shot('04-bar-chart');

    await pane.getByLabel('Chart type').selectOption('line');
    expect(await pane.getByLabel('X axis').inputValue()).toBe('trip_id'); // numeric or time columns only
    await pane.getByLabel('Y axis').selectOption('fare');
    expect(await chart.getAttribute('aria-label')).toBe('Line chart of fare by trip_id');
    const points = await chart.locator('polyline.chart-line').getAttribute('points');
    expect(points!.split(' ')).toHaveLength(1000);
    await b.shot('05-line-chart');

    await pane.getByLabel('Chart type').selectOption('scatter');
    expect(await chart.locator('circle.chart-dot').count()).toBe(1000);
    expect(await chart.getAttribute('aria-label')).toBe('Scatter plot of fare by trip_id');
    await b.shot('06-scatter');
    await pane.getByRole('tab', { name: 'Results' }).click();
    await pane.getByRole('grid', { name: 'Query results' }).waitFor();
  });

  it('with SQL sessions off, the worksheet says plainly what does not carry over between statements', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, 'SELECT 1 AS one');
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    const note = pane.locator('.connection-note');
    await note.waitFor();
    expect(await note.textContent()).toMatch(/SQL sessions are off on this server.*temporary tables, SET, SET VARIABLE, USE and transactions do not carry over/);
  });
});
