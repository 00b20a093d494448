// Catalog search and the table page (issues 35 and 36) in a real browser, on the real stack: a table written by a
// real agent is found by typing part of its name (one request to the search route, no schema listing), opened from
// the keyboard, and its page shows lineage near the top, column statistics from its manifests, its layout and
// properties, and the current snapshot's summary as a list; axe finds nothing critical or serious on either screen.
import { describe, expect, it } from 'vitest';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { seriousViolations } from './support/axe.ts';

const { ui, b } = await stackWithBrowser({
  suite: 'catalogSearch',
  agent: 'e2e-catalog-search-agent',
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS shop');
    await sql('CREATE TABLE shop.customer_orders (id BIGINT, amount DOUBLE, placed DATE, note VARCHAR)');
    await sql(`INSERT INTO shop.customer_orders VALUES (1, 12.5, DATE '2026-01-02', 'first'), (2, 99.25, DATE '2026-03-04', NULL), (3, NULL, DATE '2026-02-01', 'third')`);
    await sql('CREATE TABLE shop.borders (id BIGINT)');
  },
});

describe('web app: catalog search and the table page', () => {
  it('finds a table by a word of its name through the search route and opens it from the keyboard', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/catalog');
    await page.getByRole('list', { name: 'Catalogs' }).waitFor();
    const asked: string[] = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname));
    const box = page.getByRole('searchbox', { name: 'Search catalogs, schemas and tables' });
    await box.pressSequentially('ORD', { delay: 30 });
    const results = page.getByRole('list', { name: 'Search results' });
    await results.getByRole('link', { name: 'warehouse.shop.customer_orders' }).waitFor();
    // `borders` has no word starting with "ord"
    expect(await results.getByRole('link').allTextContents()).toEqual(['warehouse.shop.customer_orders']);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'match' }).textContent()).toBe('1 match');
    // One search, sent once typing paused (debounced), and no schema or table listing behind it.
    expect(asked.filter((p) => p.endsWith('/catalog-search'))).toHaveLength(1);
    expect(asked.filter((p) => /\/schemas(\/|$)/.test(p))).toEqual([]);
    await b.shot('01-search');
    expect(await seriousViolations(page)).toEqual([]);

    // Escape from the results returns to the box; ArrowDown goes back in, Enter opens the link.
    await box.press('ArrowDown');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('warehouse.shop.customer_orders');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('type'))).toBe('search');
    await box.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForURL(ui.url + '/w/default/catalog/warehouse/shop/customer_orders');

    await box.waitFor({ state: 'detached' });
    await page.goto(ui.url + '/w/default/catalog');
    await page.getByRole('searchbox', { name: 'Search catalogs, schemas and tables' }).fill('no-such-thing');
    await page.locator('.empty-state[role=status]').filter({ hasText: 'Nothing named like “no-such-thing”.' }).waitFor();
  }, 120_000);

  it('shows lineage near the top, column statistics, layout, properties and the snapshot summary as a list', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/catalog/warehouse/shop/customer_orders');
    await page.getByRole('heading', { name: 'customer_orders', level: 2 }).waitFor();
    const columns = page.getByRole('table', { name: 'Columns' });
    await columns.getByRole('columnheader', { name: 'Lower bound' }).waitFor({ timeout: 30_000 });

    // Lineage comes before the columns, the layout and the snapshots.
    const lineage = page.getByRole('region', { name: 'Lineage' });
    const order = await page.evaluate(() => {
      const at = (el: Element | null) => (el ? el.getBoundingClientRect().top + window.scrollY : -1);
      return {
        lineage: at(document.querySelector('section[aria-label="Lineage"]')),
        columns: at(document.querySelector('table[aria-label="Columns"]')),
        snapshots: at(document.querySelector('table[aria-label="Snapshots"]')),
      };
    });
    await lineage.waitFor();
    expect(order.lineage).toBeGreaterThan(0);
    expect(order.lineage).toBeLessThan(order.columns);
    expect(order.columns).toBeLessThan(order.snapshots);

    // Statistics summed from the manifests: counts, nulls, least and greatest bounds per column.
    const row = async (name: string) => {
      const cells = await columns.locator('tr', { has: page.getByRole('cell', { name, exact: true }) }).getByRole('cell').allTextContents();
      const heads = await columns.getByRole('columnheader').allTextContents();
      return Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
    };
    expect(await row('amount')).toMatchObject({ Type: 'DOUBLE', Values: '3', Nulls: '1', 'Lower bound': '12.5', 'Upper bound': '99.25' });
    expect(await row('placed')).toMatchObject({ Type: 'DATE', Values: '3', Nulls: '0', 'Lower bound': '2026-01-02', 'Upper bound': '2026-03-04' });
    expect(await row('note')).toMatchObject({ Nulls: '1', 'Lower bound': 'first', 'Upper bound': 'third' });
    expect(await page.getByText(/^Statistics from the Iceberg manifests of the current snapshot, over its one data file/).count()).toBe(1);

    // Layout and properties.
    const layout = page.getByRole('region', { name: 'Layout' });
    const facts = Object.fromEntries(
      await layout.locator('dl.facts').first().locator('dt').evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])),
    );
    expect(facts).toMatchObject({ 'Partitioned by': 'not partitioned', 'Sorted by': 'unsorted' });
    expect(['1', '2', '3']).toContain(facts['Format version']);
    await layout.getByRole('heading', { name: 'Properties' }).waitFor();

    // The current snapshot's summary: named keys, formatted numbers, no JSON.
    const list = page.locator('dl[aria-label="Current snapshot summary"]');
    await list.waitFor();
    const entries = Object.fromEntries(await list.locator('dt').evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
    expect(entries).toMatchObject({ Operation: 'append', 'Rows added': '3', 'Total rows': '3', 'Data files added': '1' });
    expect(await list.textContent()).not.toMatch(/[{}"]/);

    await page.getByRole('table', { name: 'Sample rows' }).waitFor({ timeout: 30_000 });
    await page.waitForLoadState('networkidle');
    await b.shot('02-table-page');
    expect(await seriousViolations(page)).toEqual([]);
  }, 120_000);
});
