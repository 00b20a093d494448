// The result grid over a result far larger than the browser holds, in a real browser against the real stack: a
// header click sorts it and the box under a header filters it, both done by the agent over the whole result; the
// export menu downloads CSV, Parquet or JSON in the order and filter shown; a copied range carries a header row; the
// toolbar stays on one line whatever it says.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { chooseAgent, typeAndRun, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-sort-filter';
const pageErrors: string[] = [];

const w = await stackWithBrowser({ suite: 'resultSortFilterExport', agent: AGENT });
const { ui, b } = w;
b.page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));

describe('result sort, filter and export on the agent', () => {
  it('sorts and filters 200,000 rows, exports what is shown, copies with a header, on one toolbar line', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1280, height: 800 });
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.url });
    const rowsRequests: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/rows')) rowsRequests.push(r.url());
    });
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, "SELECT range AS n, (range * 7919) % 1000 AS k, 'item ' || range AS label FROM range(200000)");
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    const grid = pane.getByRole('grid');
    await expect.poll(() => grid.getAttribute('aria-rowcount'), { timeout: 30_000 }).toBe('200001');
    const header = (name: string) => pane.getByRole('columnheader', { name: new RegExp(`^${name}`) });
    const column = (i: number) => pane.locator('.grid-row:not(.loading)').locator(`[role=gridcell]:nth-child(${i + 1})`).allTextContents();

    // Sort: past the 50,000 rows the browser used to sort, the agent sorts the whole result.
    await header('k').click();
    await expect.poll(() => header('k').getAttribute('aria-sort')).toBe('ascending');
    await header('k').click();
    await expect.poll(() => header('k').getAttribute('aria-sort')).toBe('descending');
    await expect.poll(async () => (await column(2))[0], { timeout: 30_000 }).toBe('999');
    const ks = (await column(2)).map(Number);
    expect(ks.every((k) => k === 999)).toBe(true); // 200 rows have k = 999: the first screen is all of them
    await pane.locator('.result-facts').filter({ hasText: 'sorted by k descending' }).waitFor();
    expect(rowsRequests.some((u) => u.includes('order_by='))).toBe(true);

    // Filter: the box under a header; the count is the agent's, over the whole result.
    await pane.getByRole('textbox', { name: 'Filter label' }).fill('item 1999');
    await pane.locator('.result-facts').filter({ hasText: '111 of 200,000 rows' }).waitFor({ timeout: 30_000 });
    await expect.poll(() => grid.getAttribute('aria-rowcount')).toBe('112');
    await pane.getByRole('textbox', { name: 'Filter label' }).fill('');
    await pane.getByRole('textbox', { name: 'Filter n' }).fill('>= 199995');
    await expect.poll(() => grid.getAttribute('aria-rowcount'), { timeout: 30_000 }).toBe('6');
    const ns = (await column(1)).map((t) => Number(t.replace(/,/g, '')));
    const shownKs = (await column(2)).map(Number);
    expect([...ns].sort()).toEqual([199995, 199996, 199997, 199998, 199999]);
    expect(shownKs).toEqual([...shownKs].sort((a, c) => c - a)); // still sorted by k, descending
    expect(await seriousViolations(page)).toEqual([]);
    await b.shot('10-sorted-and-filtered');

    // A value not of the column's type is said, and the filters stay to be corrected.
    await pane.getByRole('textbox', { name: 'Filter n' }).fill('> abc');
    await pane.getByRole('alert').filter({ hasText: 'invalid_filter' }).waitFor({ timeout: 30_000 });
    await pane.getByRole('textbox', { name: 'Filter n' }).fill('>= 199995');
    await expect.poll(() => grid.getAttribute('aria-rowcount'), { timeout: 30_000 }).toBe('6');

    // Export: made by the agent in the order and filter shown, downloaded as it streams; no paging through the rows.
    const before = rowsRequests.length;
    await pane.locator('.export-menu summary').click();
    expect(await seriousViolations(page)).toEqual([]);
    await b.shot('20-export-menu');
    const [csv] = await Promise.all([page.waitForEvent('download'), pane.getByRole('link', { name: 'CSV' }).click()]);
    expect(csv.suggestedFilename()).toMatch(/^query-[0-9a-f]{8}\.csv$/);
    const lines = readFileSync((await csv.path())!, 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toBe('n,k,label');
    expect(lines.length).toBe(6);
    const exported = lines.slice(1).map((l) => l.split(','));
    expect(exported.map((r) => Number(r[1]))).toEqual(shownKs);
    await pane.locator('.export-menu summary').click();
    const [parquet] = await Promise.all([page.waitForEvent('download'), pane.getByRole('link', { name: 'Parquet' }).click()]);
    expect(readFileSync((await parquet.path())!).subarray(0, 4).toString()).toBe('PAR1');
    await pane.locator('.export-menu summary').click();
    const [json] = await Promise.all([page.waitForEvent('download'), pane.getByRole('link', { name: 'JSON' }).click()]);
    expect((JSON.parse(readFileSync((await json.path())!, 'utf8')) as Array<{ k: number }>).map((r) => r.k)).toEqual(shownKs);
    expect(rowsRequests.length).toBe(before);

    // Copy: a range comes with its column names first; the status line says so, on the toolbar's one line.
    const cell = (row: number, col: number) => pane.locator(`[aria-rowindex="${row + 1}"] [role=gridcell]`).nth(col - 1);
    await cell(1, 2).click();
    await cell(2, 3).click({ modifiers: ['Shift'] });
    await page.keyboard.press('ControlOrMeta+c');
    await pane.getByText('Copied 2 × 2 cells with a header row').waitFor();
    const copied = (await page.evaluate(() => navigator.clipboard.readText())).split('\n');
    expect(copied[0]).toBe('k\tlabel');
    expect(copied.length).toBe(3);
    const bar = pane.getByRole('toolbar', { name: 'Result' });
    const barBox = (await bar.boundingBox())!;
    const exportBox = (await pane.locator('.export-menu summary').boundingBox())!;
    const tabBox = (await pane.getByRole('tab', { name: 'Results' }).boundingBox())!;
    expect(Math.abs(exportBox.y + exportBox.height / 2 - (tabBox.y + tabBox.height / 2))).toBeLessThan(4); // one line
    expect(barBox.height).toBeLessThan(48);
    await b.shot('30-copied-one-line');
    expect(pageErrors).toEqual([]);
  });
});
