// The query profile, plans and past results (issue 21, build items 8 and 4) in a real browser against the real
// stack: the query profile as an operator graph (top-down boxes with time, share, rows; the heaviest marked), and a
// past query's result reopened from History in a worksheet tab of its own (its rows read again by id while the agent keeps them;
// an expired result says so); and EXPLAIN of a read shown on its Plan view (the agent answers it with the plan's rows).
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, chooseAgent, typeAndRun, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-four';

const { ui, b, agent, sql } = await stackWithBrowser({
  suite: 'queryProfileAndPastResults',
  agent: AGENT,
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS shop');
    await sql("CREATE TABLE shop.zones AS SELECT range AS zone_id, 'zone ' || range AS zone FROM range(10)");
    await sql('CREATE TABLE shop.trips AS SELECT range AS trip_id, range % 10 AS zone_id, (range % 97)::DOUBLE AS fare FROM range(200000)');
  },
});

const JOIN_AGG = 'SELECT z.zone, count(*) AS trips, sum(t.fare) AS fares FROM shop.trips t JOIN shop.zones z ON t.zone_id = z.zone_id GROUP BY z.zone ORDER BY z.zone';

describe('query profile graph, plans and past results', () => {
  it('operator graph: an aggregate over a join draws its operators as boxes with time, share and rows, the heaviest marked', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, JOIN_AGG);
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByRole('tab', { name: 'Profile' }).click();
    await pane.getByRole('tree', { name: 'Operator tree' }).waitFor(); // the list stays the first view
    await pane.getByRole('button', { name: 'Graph' }).click();
    const graph = pane.getByRole('img', { name: /^Operator graph: \d+ operators$/ });
    await graph.waitFor();
    const boxes = graph.locator('g.op-box');
    expect(await boxes.count()).toBeGreaterThanOrEqual(3);
    const names = await boxes.evaluateAll((gs) => gs.map((g) => g.getAttribute('data-operator') ?? ''));
    expect(names.some((n) => /JOIN/.test(n))).toBe(true);
    expect(names.some((n) => /GROUP_BY|AGGREGATE/.test(n))).toBe(true);
    expect(names.some((n) => /SCAN|READ_/.test(n)), names.join(', ')).toBe(true);
    // Each box says its time with its share of the total and its rows; the scan of trips read 200,000 rows.
    const texts = await boxes.evaluateAll((gs) => gs.map((g) => [...g.querySelectorAll('text')].map((x) => x.textContent).join(' | ')));
    for (const text of texts) expect(text).toMatch(/\d+(\.\d+)? ?(ms|s|µs).* · [\d.]+% \| [\d,]+ rows?/);
    expect(texts.some((x) => x.includes('200,000 rows'))).toBe(true);
    // Beside the actual rows, the planner's estimate (from DuckDB's profile).
    expect(texts.some((x) => /rows? · est\. [\d,]+/.test(x)), texts.join('\n')).toBe(true);
    // Top-down: the root box sits above the others, and edges join each box to its parent.
    const ys = await boxes.evaluateAll((gs) => gs.map((g) => (g as SVGGElement).getBoundingClientRect().top));
    expect(Math.min(...ys.slice(1))).toBeGreaterThan(ys[0]);
    expect(await graph.locator('path.op-edge').count()).toBe(names.length - 1);
    // The heaviest operators (at most three, those that took time) are marked, and say so to a screen reader.
    const heavy = graph.locator('g.op-box.heavy');
    expect(await heavy.count()).toBeGreaterThanOrEqual(1);
    expect(await heavy.count()).toBeLessThanOrEqual(3);
    expect(await heavy.first().locator('title').textContent()).toMatch(/among the heaviest/);
    await b.shot('01-operator-graph');
  });

  it('EXPLAIN of a read: its plan text on the Plan view, monospaced', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, `EXPLAIN ${JOIN_AGG}`);
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByRole('tab', { name: 'Plan' }).click();
    const plan = pane.getByLabel('Query plan');
    await plan.waitFor();
    await expect.poll(() => plan.textContent()).toMatch(/HASH_JOIN|HASH_GROUP_BY/);
    expect(await plan.evaluate((el) => getComputedStyle(el).fontFamily)).toMatch(/mono/i);
    await b.shot('01b-explain-plan');

  });

  it('History: "Results" opens a done query in a worksheet tab with its rows; an expired result says so', async () => {
    const { page } = b;
    const kept = await sql(JOIN_AGG);
    // Large enough (≈ 160 KB) to stay on the agent only: a small result also travels inline and lives in the api.
    const gone = await sql("SELECT 'soon gone' AS word, md5(i::VARCHAR) AS h FROM range(5000) t(i)");
    await page.goto(ui.url + '/w/default/history?q=' + encodeURIComponent('shop.zones z'));
    const row = page.getByRole('row').filter({ hasText: 'shop.zones z' }).first();
    await row.getByRole('button', { name: `Results of query ${kept.id.slice(0, 8)}` }).click();
    await page.waitForURL(/\/w\/default\/worksheets$/);
    const tab = page.getByRole('tab', { name: new RegExp(`Result ${kept.id.slice(0, 8)}`) });
    await expect.poll(() => tab.getAttribute('aria-selected')).toBe('true');
    const pane = activePane(page);
    expect(await waitForStatus(pane, ['done'])).toBe('done');
    await expect.poll(() => pane.locator('.result-facts').textContent()).toMatch(/^10 rows/);
    await pane.getByRole('gridcell', { name: 'zone 0', exact: true }).or(pane.getByText('zone 0', { exact: true })).first().waitFor();
    expect(await pane.locator('.cm-content').textContent()).toContain('GROUP BY z.zone');
    await b.shot('02-history-results');

    // The agent's retention took the other result's file: its tab says the result expired, not a raw error.
    const file = join(agent.dataDir, 'results', `${gone.id}.parquet`);
    expect(existsSync(file)).toBe(true);
    rmSync(file);
    await page.goto(ui.url + '/w/default/history?q=' + encodeURIComponent('soon gone'));
    await page.getByRole('button', { name: `Results of query ${gone.id.slice(0, 8)}` }).click();
    const expiredPane = activePane(page);
    await expect.poll(() => page.getByRole('tab', { name: new RegExp(`Result ${gone.id.slice(0, 8)}`) }).getAttribute('aria-selected')).toBe('true');
    await expiredPane.getByText(/This result has expired/).waitFor({ timeout: 15_000 });
    await b.shot('03-history-result-expired');
  });
});
