// The Models screen in a real browser (issue 35): a model is created here from YAML started from the example (no
// "use the API"), a dbt manifest is a format the same form takes, and the compile panel takes several metrics and shows
// the SQL laid out for reading (a SELECT item a line), which runs in a worksheet.
import { describe, expect, it } from 'vitest';
import { formatSql } from '../../ui/src/worksheet/formatSql.ts';
import { seriousViolations } from './support/axe.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, chooseAgent, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-models';
const pageErrors: string[] = [];

const w = await stackWithBrowser({
  suite: 'modelsCreateImportAndCompile',
  agent: AGENT,
  prepare: async ({ sql }) => {
    // The table the form's example names.
    await sql('CREATE SCHEMA IF NOT EXISTS shop');
    await sql("CREATE TABLE shop.orders AS SELECT range AS id, DATE '2025-01-01' + (range % 5)::INTEGER AS order_date, CASE WHEN range % 3 = 0 THEN 'north' ELSE 'south' END AS region, range * 2 AS amount FROM range(30)");
  },
});
const { ui, b } = w;
b.page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));

describe('models: create, import and compile', () => {
  it('creates a model from the example YAML; dbt manifest is a format of the same form; nothing says "use the API"', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/models');
    const form = page.getByRole('form', { name: 'Create or import a model' });
    await form.waitFor();
    expect(await page.getByText(/API/).count()).toBe(0);
    expect(await form.getByLabel('Format', { exact: true }).locator('option').allTextContents()).toEqual(['Eider YAML (version 1)', 'dbt manifest.json']);
    await form.getByRole('button', { name: 'Start from the example' }).click();
    expect(await form.getByLabel(/Model YAML/).inputValue()).toContain('slug: shop');
    await form.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').filter({ hasText: 'Created shop' }).waitFor();
    await page.getByRole('table', { name: 'Models' }).getByRole('link', { name: 'Shop' }).waitFor();
    // The form stays open with its report once the list fills.
    expect(await form.isVisible()).toBe(true);
    // A dbt manifest that is not one: the api's message names the format it expects.
    await form.getByLabel('Format', { exact: true }).selectOption({ label: 'dbt manifest.json' });
    await form.getByLabel('dbt manifest.json').fill('{"nodes": 1}');
    await form.getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('dbt manifest.json');
    expect(await seriousViolations(page)).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it('compiles two metrics by a dimension to formatted SQL, which runs in a worksheet', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/models/shop');
    const panel = page.getByRole('region', { name: 'Compiled SQL' });
    const metrics = panel.getByRole('group', { name: 'Metrics' });
    await metrics.getByLabel('revenue').waitFor();
    // One metric to start with; both chosen.
    expect(await metrics.getByRole('checkbox', { checked: true }).count()).toBe(1);
    await metrics.getByLabel('revenue').check();
    await metrics.getByLabel('order_count').check();
    await panel.getByRole('group', { name: 'Dimensions' }).getByLabel('region').check();
    await panel.getByRole('button', { name: 'Compile' }).click();
    const sql = panel.getByLabel('SQL');
    await sql.waitFor();
    const text = (await sql.textContent())!;
    // The same request to the api (the metrics in the model's order, as the panel sends them) gives the same SQL, laid out.
    const model = await w.t.req('GET', '/api/workspaces/default/semantic/models/shop', { as: w.admin });
    const order = (model.body.metrics as Array<{ name: string }>).map((m) => m.name);
    const direct = await w.t.req('POST', '/api/workspaces/default/semantic/compile', { body: { model: 'shop', metrics: order, dimensions: ['region'] }, as: w.admin });
    expect(direct.status, direct.text).toBe(200);
    expect(text).toBe(formatSql(direct.body.sql));
    // Laid out: SELECT alone on its line, then one item a line (the region and both metrics).
    const lines = text.split('\n');
    expect(lines[0]).toBe('SELECT');
    for (const name of ['"region"', '"revenue"', '"order_count"']) expect(lines.filter((l) => l.trimEnd().endsWith(`AS ${name},`) || l.trimEnd().endsWith(`AS ${name}`)).length).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await b.shot('10-two-metrics-compiled');
    await panel.getByRole('button', { name: 'Open in worksheet' }).click();
    await page.waitForURL(/\/worksheets$/);
    await chooseAgent(page, AGENT);
    const pane = activePane(page);
    await pane.getByRole('button', { name: 'Run', exact: true }).click();
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    // north: ids 0, 3, …, 27: 10 orders, amount 2 × 135 = 270
    await pane.getByText('2 rows').first().waitFor({ timeout: 20_000 });
    const cells = () => pane.locator('.grid-row:not(.loading) [role=gridcell]').allTextContents().then((c) => c.join(' '));
    await expect.poll(cells, { timeout: 10_000 }).toMatch(/north 270 10|north 10 270/);
  });
});
