// A long query's progress in the worksheet, in a real browser against the real stack (SQL sessions on, as a
// worksheet runs when they are): the agent reports DuckDB's progress, the api keeps it, and the progress line shows
// a determinate bar with the percent and the rows read; the line goes when the query is done.
import { describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { chooseAgent, typeAndRun, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-progress';
const ROWS = 6_000_000;
const pageErrors: string[] = [];

const w = await stackWithBrowser({
  suite: 'queryProgress',
  agent: AGENT,
  env: { SQL_SESSIONS_ENABLED: 'true', SQL_SESSION_REAPER_TICK_S: '0.2' },
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS prog');
    await sql(`CREATE TABLE prog.big AS SELECT range AS x FROM range(${ROWS})`);
  },
});
const { ui, b } = w;
b.page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));

describe('query progress in the worksheet', () => {
  it('shows a determinate bar with the percent and rows read while the engine reports them', { timeout: 180_000 }, async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    // Several seconds of hashing over a table scan (DuckDB measures a scan's progress), ended by Cancel once the bar
    // is seen (about 9 s on an idle machine, far longer on a loaded one; a join would hide the scan's progress).
    const pane = await typeAndRun(page, `SELECT count(DISTINCT md5(x::varchar || 'salt')) AS d, sum(length(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(x::varchar)))))))))))))))))) AS l FROM prog.big`);
    const line = pane.getByRole('group', { name: 'Query progress' });
    const text = line.locator('.run-progress-text');
    // The engine's total is the table's rows and a couple of its own.
    const total = `${(ROWS / 1000).toLocaleString('en-US')},\\d{3}`;
    await expect
      .poll(() => text.textContent(), { timeout: 60_000 })
      .toMatch(new RegExp(`^\\d+(\\.\\d)?% · [\\d,]+ of ${total} rows read · running for [\\d.]+ (ms|s) on ${AGENT}`));
    const bar = line.getByRole('progressbar', { name: 'Query running' });
    expect(await bar.getAttribute('max')).toBe('100');
    const value = Number(await bar.getAttribute('value'));
    expect(value).toBeGreaterThanOrEqual(0);
    expect(value).toBeLessThanOrEqual(100);
    expect(await bar.getAttribute('aria-valuetext')).toMatch(/^\d+(\.\d)?% done$/);
    expect(await seriousViolations(page)).toEqual([]);
    await b.shot('10-query-progress');
    await pane.getByRole('button', { name: 'Cancel' }).click();
    expect(await waitForStatus(pane, ['cancelled', 'done', 'failed'], 120_000)).toMatch(/^(cancelled|done)$/);
    await expect.poll(() => line.count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
