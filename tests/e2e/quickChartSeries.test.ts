// Quick charts with several series in a real browser (issue 35): "Colour by" a column splits a line over time into one
// line per value, each its own colour, with a legend; a scatter takes the same split; without it there is one series.
import { describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { chooseAgent, typeAndRun, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-chart-series';

const { ui, b } = await stackWithBrowser({ suite: 'quickChartSeries', agent: AGENT });

describe('quick chart series', () => {
  it('colour by a column: a line per value with a legend, in colours of their own; the scatter too', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(
      page,
      "SELECT DATE '2025-01-01' + (range // 3)::INTEGER AS day, ['north', 'south', 'west'][1 + range % 3] AS region, 100 + range % 3 * 50 + (range // 3) % 7 AS revenue FROM range(90)",
    );
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    await pane.getByRole('tab', { name: 'Chart' }).click();
    const chart = pane.locator('svg.chart');
    await chart.waitFor();
    // One series by default: a line over time.
    expect(await chart.getAttribute('aria-label')).toBe('Line chart of revenue by day');
    expect(await chart.locator('polyline.chart-line').count()).toBe(1);
    expect(await pane.getByRole('list', { name: 'Series' }).count()).toBe(0);

    await pane.getByLabel('Colour by').selectOption('region');
    expect(await chart.getAttribute('aria-label')).toBe('Line chart of revenue by day, coloured by region');
    const lines = chart.locator('polyline.chart-line');
    expect(await lines.count()).toBe(3);
    for (let i = 0; i < 3; i++) expect((await lines.nth(i).getAttribute('points'))!.split(' ')).toHaveLength(30);
    const strokes = await lines.evaluateAll((els) => els.map((e) => getComputedStyle(e).stroke));
    expect(new Set(strokes).size).toBe(3);
    const legend = pane.getByRole('list', { name: 'Series' });
    expect((await legend.getByRole('listitem').allTextContents()).sort()).toEqual(['north', 'south', 'west']);
    // Each legend swatch is its line's colour.
    const swatches = await legend.locator('.chart-swatch').evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundColor));
    expect(swatches).toEqual(strokes);
    expect(await seriousViolations(page)).toEqual([]);
    await b.shot('10-coloured-lines');

    await pane.getByLabel('Chart type').selectOption('scatter');
    expect(await chart.locator('g.chart-series').count()).toBe(3);
    expect(await chart.locator('circle.chart-dot').count()).toBe(90);
    await pane.getByLabel('Colour by').selectOption('(none)');
    expect(await chart.locator('g.chart-series').count()).toBe(1);
    expect(await pane.getByRole('list', { name: 'Series' }).count()).toBe(0);
  });
});
