// Four screens' features (issue 35) in a real browser against the real stack: a filter on the result grid, the
// Admin → Audit screen, the catalog's search and table page, and importing a YAML model.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ADMIN, newUser } from '../support/api.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { chooseAgent, typeAndRun, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-six';
const pageErrors: string[] = [];

const w = await stackWithBrowser({
  suite: 'filterAuditSearchAndModelImport',
  agent: AGENT,
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS samples');
    await sql("CREATE TABLE samples.trips AS SELECT range AS trip_id, (3 + range % 90)::DECIMAL(10, 2) AS fare, ['Harbor', 'Airport', 'Market'][1 + range % 3] AS zone FROM range(1000)");
  },
});
const { ui, b } = w;
b.page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));

const axeSource = readFileSync(join(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');
/** axe-core's critical and serious violations on what the page shows now. */
async function axe(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol: the app's Content-Security-Policy (rightly) refuses an inline script.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const r = await (window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe.run();
    return r.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
  });
}

describe('result filter, audit screen, catalog search and model import', () => {
  it('results: a filter shows the rows holding its text in any column, over the whole result whatever its size', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, 'SELECT * FROM samples.trips ORDER BY trip_id');
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    const grid = pane.getByRole('grid');
    await pane.getByRole('gridcell', { name: 'Harbor' }).first().waitFor();
    const filter = pane.getByRole('searchbox', { name: 'Filter rows' });
    await filter.fill('airp');
    // 1 + range % 3 = 2 for 333 of the 1,000 trips: the grid holds those (and its header row) and nothing else.
    await pane.locator('.result-facts').filter({ hasText: '333 of 1,000 rows' }).waitFor();
    await expect.poll(() => grid.getAttribute('aria-rowcount')).toBe('334');
    expect(await pane.getByRole('gridcell', { name: 'Harbor' }).count()).toBe(0);
    await pane.getByRole('gridcell', { name: 'Airport' }).first().waitFor();
    expect(await axe(page)).toEqual([]);
    await b.shot('10-result-filter');
    // A number matches as typed: trip 999 (a Harbor trip) and nothing else.
    await filter.fill('999');
    await expect.poll(() => grid.getAttribute('aria-rowcount')).toBe('2');
    await pane.getByRole('gridcell', { name: 'Harbor' }).waitFor();
    // Sorting keeps the filter: descending by trip_id, the first Airport row is trip 997.
    await filter.fill('airport');
    await expect.poll(() => grid.getAttribute('aria-rowcount')).toBe('334');
    await pane.getByRole('columnheader', { name: /^trip_id/ }).click();
    await pane.getByRole('columnheader', { name: /^trip_id/ }).click();
    await expect.poll(() => pane.getByRole('gridcell').first().textContent()).toBe('997');
    await filter.fill('');
    await expect.poll(() => grid.getAttribute('aria-rowcount')).toBe('1001');

    // Above what the browser holds: the agent filters the whole result, not its first rows.
    const big = await typeAndRun(page, 'SELECT range AS n FROM range(60000)');
    expect(await waitForStatus(big, ['done', 'failed'])).toBe('done');
    await expect.poll(() => big.getByRole('grid').getAttribute('aria-rowcount')).toBe('60001');
    await big.getByRole('searchbox', { name: 'Filter rows' }).fill('59999');
    await expect.poll(() => big.getByRole('grid').getAttribute('aria-rowcount')).toBe('2');
    expect(pageErrors).toEqual([]);
  });

  it('admin: the Audit screen pages the trail with actor, action, outcome and target, filtered by action and outcome (both on the server); admins only', async () => {
    const { page } = b;
    // A refused sign-in, to have a failure in the trail.
    const refused = await w.t.req('POST', '/api/auth/login', { body: { email: 'nobody-here@example.com', password: 'not-a-password-1' } });
    expect(refused.status).toBe(401);
    // More than a page (50) of successes after it: an outcome filter over the rows read would not reach it.
    for (let i = 0; i < 55; i++) expect((await w.t.req('POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } })).status).toBe(200);
    await page.goto(ui.url + '/admin');
    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Audit' }).click();
    const table = page.getByRole('table', { name: 'Audit events' });
    await table.waitFor();
    for (const h of ['Time', 'Actor', 'Action', 'Outcome', 'Target']) await table.getByRole('columnheader', { name: h, exact: true }).waitFor();
    await table.getByRole('row').filter({ hasText: 'auth.login' }).first().waitFor();
    expect(await axe(page)).toEqual([]);

    // By outcome, on the server: the refused sign-in, under 55 newer successes, is on the first page.
    await page.getByLabel('Outcome').selectOption('failure');
    await table.getByRole('row').filter({ hasText: 'anonymous (nobody-here@example.com)' }).first().waitFor();
    expect(await table.locator('tbody tr td:nth-child(4)').allTextContents()).toSatisfy((a: string[]) => a.length > 0 && a.every((x) => x === 'failure'));
    await page.getByLabel('Outcome').selectOption('');

    // By action (on the server): only sign-ins; by outcome: only the refused one, naming the email tried.
    await page.getByLabel('Action').selectOption('auth.login');
    await expect.poll(() => table.locator('tbody tr td:nth-child(3)').allTextContents()).toSatisfy((a: string[]) => a.length > 0 && a.every((x) => x === 'auth.login'));
    await page.getByLabel('Outcome').selectOption('failure');
    // The server answers the new filter: the rows shown until then are the last filter's.
    await expect.poll(() => table.locator('tbody tr td:nth-child(4)').allTextContents()).toSatisfy((a: string[]) => a.length > 0 && a.every((x) => x === 'failure'));
    await table.getByRole('row').filter({ hasText: 'anonymous (nobody-here@example.com)' }).first().waitFor();
    await page.getByLabel('Outcome').selectOption('success');
    await table.getByRole('row').filter({ hasText: 'admin@example.com' }).first().waitFor();
    expect(await table.getByRole('row').filter({ hasText: 'nobody-here@example.com' }).count()).toBe(0);
    await b.shot('20-audit');

    // A member sees neither the screen nor its link.
    const member = await newUser(w.t, w.admin);
    const mb = await w.open('filterAuditSearchAndModelImport-member', { email: member.email, password: 'user-password-1' });
    await mb.page.goto(ui.url + '/admin/audit');
    await mb.page.getByText('Administration needs the admin role.').waitFor();
    expect(await mb.page.getByRole('table', { name: 'Audit events' }).count()).toBe(0);
  });

  it('catalog: a search finds schemas and tables; the table page shows snapshots as a table and lineage above the columns', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/catalog');
    const search = page.getByRole('searchbox', { name: 'Search catalogs, schemas and tables' });
    await search.fill('trip');
    const results = page.getByRole('list', { name: 'Search results' });
    await results.getByRole('link', { name: 'warehouse.samples.trips' }).waitFor();
    await search.fill('sampl');
    await results.getByRole('link', { name: 'warehouse.samples', exact: true }).waitFor();
    expect(await results.getByRole('link', { name: 'warehouse.samples.trips' }).count()).toBe(0);
    await search.fill('no-such-thing');
    await page.getByText('Nothing named like “no-such-thing”.').waitFor();
    expect(await axe(page)).toEqual([]);
    await search.fill('trips');
    await results.getByRole('link', { name: 'warehouse.samples.trips' }).click();

    await page.getByRole('heading', { name: 'trips', level: 2 }).waitFor();
    const snapshots = page.getByRole('table', { name: 'Snapshots' });
    await snapshots.waitFor();
    for (const h of ['Operation', 'Rows added', 'Total rows', 'Data files', 'Total size']) await snapshots.getByRole('columnheader', { name: h, exact: true }).waitFor();
    await snapshots.getByRole('cell', { name: '1,000', exact: true }).first().waitFor();
    // No raw JSON: no cell starts with a brace.
    expect((await snapshots.getByRole('cell').allTextContents()).filter((t) => t.trim().startsWith('{'))).toEqual([]);
    // Lineage near the top (issue 36): under the table's facts, above the columns, health, snapshots and sample rows.
    const y = async (l: ReturnType<Page['getByRole']>) => (await l.boundingBox())!.y;
    const lineage = page.getByRole('region', { name: 'Lineage' });
    await lineage.waitFor();
    const columnsTable = page.getByRole('table', { name: 'Columns' });
    expect(await y(lineage)).toBeLessThan(await y(columnsTable));
    expect(await y(lineage)).toBeLessThan(await y(page.getByRole('heading', { name: 'Snapshots' })));
    await page.getByRole('table', { name: 'Sample rows' }).waitFor({ timeout: 30_000 });
    await page.waitForLoadState('networkidle');
    expect(await axe(page)).toEqual([]);
    await b.shot('30-catalog-table');
  });

  it('models: the empty state imports a native YAML model', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/models');
    const form = page.getByRole('form', { name: 'Create or import a model' });
    await form.waitFor();
    expect(await page.getByText(/use the API/i).count()).toBe(0);
    expect(await axe(page)).toEqual([]);
    // A bad document: the api's error, and nothing imported.
    await form.getByLabel(/Model YAML/).fill('version: 7');
    await form.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('table', { name: 'Models' }).count()).toBe(0);
    await form.getByLabel(/Model YAML/).fill(
      [
        'version: 1',
        'models:',
        '  - slug: trips',
        '    name: Trips',
        '    datasets:',
        '      - {name: trips, catalog: warehouse, schema: samples, table: trips, primary_key: [trip_id]}',
        '    dimensions:',
        '      - {name: zone, dataset: trips}',
        '    metrics:',
        '      - {name: fares, dataset: trips, agg: sum, expr: fare}',
      ].join('\n'),
    );
    await form.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').filter({ hasText: 'Created trips' }).waitFor();
    const models = page.getByRole('table', { name: 'Models' });
    await models.getByRole('link', { name: 'Trips' }).waitFor();
    expect(await models.getByRole('row').filter({ hasText: 'imported (native)' }).count()).toBe(1);
    await b.shot('40-model-imported');
    await models.getByRole('link', { name: 'Trips' }).click();
    await page.getByText('fares', { exact: true }).first().waitFor();
  });
});
