// What a worksheet says about its runs, in a real browser against the real stack with SQL sessions on: a running
// query's progress (phase, times, agent, statement of a "run all"), statements refused at submit kept in History with
// their error, same-named worksheets told apart in the list, and SET VARIABLE carried between a worksheet's runs.
import { describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, chooseAgent, typeAndRun, typeSql, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-feedback';
const pageErrors: string[] = [];

const w = await stackWithBrowser({
  suite: 'worksheetRunFeedback',
  agent: AGENT,
  env: { SQL_SESSIONS_ENABLED: 'true', SQL_SESSION_REAPER_TICK_S: '0.2' },
});
const { ui, b } = w;
b.page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));

describe('worksheet run feedback', () => {
  it('a running query shows its phase, time so far and agent, ticking; the line goes when it ends', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, 'SELECT count(*) FROM range(100000000000) a');
    const line = pane.getByRole('group', { name: 'Query progress' });
    await expect.poll(() => line.getAttribute('data-phase'), { timeout: 20_000 }).toBe('running');
    const text = line.locator('.run-progress-text');
    await expect.poll(() => text.textContent()).toMatch(new RegExp(`^running for [\\d.]+ (ms|s) on ${AGENT} · queued [\\d.]+ (ms|s)$`));
    // It ticks: the time so far grows while the query runs.
    const seconds = async () => {
      const m = /running for ([\d.]+) (ms|s)/.exec((await text.textContent()) ?? '');
      return m ? Number(m[1]) / (m[2] === 'ms' ? 1000 : 1) : NaN;
    };
    const first = await seconds();
    await expect.poll(seconds).toBeGreaterThan(first + 0.5);
    expect(await seriousViolations(page)).toEqual([]);
    await b.shot('10-progress');
    await pane.getByRole('button', { name: 'Cancel' }).click();
    expect(await waitForStatus(pane, ['cancelled'])).toBe('cancelled');
    await expect.poll(() => line.count()).toBe(0);

    // Run all: which statement of how many.
    await typeSql(page, 'SELECT 1 AS a;\nSELECT count(*) FROM range(100000000000) b;');
    await page.keyboard.press('ControlOrMeta+Shift+Enter');
    await expect.poll(() => text.textContent(), { timeout: 20_000 }).toMatch(/^statement 2 of 2 · running for/);
    await pane.getByRole('button', { name: 'Cancel' }).click();
    expect(await waitForStatus(pane, ['cancelled'])).toBe('cancelled');
  });

  it('statements refused at submit are in History with their error, after a reload too, and open in a worksheet', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const refused = await typeAndRun(page, "SELECT getenv('HOME') AS home_dir");
    expect(await waitForStatus(refused, ['failed'])).toBe('failed');
    const syntax = await typeAndRun(page, 'SELEC 1 AS typo_here');
    expect(await waitForStatus(syntax, ['failed'])).toBe('failed');

    await page.goto(ui.url + '/w/default/history');
    const table = page.getByRole('table', { name: 'Refused submissions' });
    const policyRow = table.getByRole('row').filter({ hasText: "getenv('HOME')" });
    await policyRow.waitFor();
    expect(await policyRow.textContent()).toMatch(/getenv\(\) is not allowed/);
    expect(await policyRow.getAttribute('data-code')).toBe('sql_not_allowed');
    const syntaxRow = table.getByRole('row').filter({ hasText: 'SELEC 1 AS typo_here' });
    expect(await syntaxRow.getAttribute('data-code')).toBe('sql_syntax_error');
    // The server's history has no query for either.
    await page.getByRole('table', { name: 'Queries' }).waitFor();
    expect(await page.getByRole('table', { name: 'Queries' }).getByText('typo_here').count()).toBe(0);
    // A status filter other than failed leaves them out; failed keeps them.
    await page.goto(ui.url + '/w/default/history?status=done');
    await page.getByRole('table', { name: 'Queries' }).waitFor();
    expect(await table.count()).toBe(0);
    await page.goto(ui.url + '/w/default/history?status=failed');
    await policyRow.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await b.shot('20-refused-in-history');
    await page.reload();
    await policyRow.getByRole('button', { name: 'Open in worksheet' }).click();
    await expect.poll(() => activePane(page).locator('.cm-content').textContent()).toContain("getenv('HOME')");
  });

  it('same-named worksheets say what tells them apart in the list', async () => {
    const { page } = b;
    for (const sql of ['SELECT sum(fare) FROM trips', 'SELECT count(*) FROM trips', 'SELECT count(*) FROM trips'])
      expect((await w.t.req('POST', '/api/workspaces/default/worksheets', { body: { title: 'Daily revenue', sql }, as: w.admin })).status).toBe(201);
    await page.goto(ui.url + '/w/default/worksheets');
    await page.getByRole('button', { name: 'Worksheets…' }).click();
    const list = page.getByRole('list', { name: 'My worksheets' });
    const named = list.getByRole('button', { name: /^Daily revenue/ });
    await expect.poll(() => named.count()).toBe(3);
    const names = await named.allTextContents();
    expect(new Set(names).size).toBe(3);
    expect(names.filter((n) => n.includes('SELECT sum(fare) FROM trips'))).toHaveLength(1);
    // The same first line too: when each was made.
    expect(names.filter((n) => /SELECT count\(\*\) FROM trips · made /.test(n))).toHaveLength(2);
    // Delete buttons carry the same detail, so each is its own.
    expect(new Set(await list.getByRole('button', { name: /^Delete Daily revenue/ }).evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')))).size).toBe(3);
    expect(await seriousViolations(page)).toEqual([]);
    await b.shot('30-same-named');
    await page.keyboard.press('Escape');
  });

  it('SET VARIABLE in one run is read by getvariable() in the next (the worksheet is one SQL session)', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await page.getByRole('button', { name: 'New worksheet' }).click();
    await chooseAgent(page, AGENT);
    const set = await typeAndRun(page, "SET VARIABLE region = 'north'");
    expect(await waitForStatus(set, ['done', 'failed'])).toBe('done');
    const read = await typeAndRun(page, "SELECT getvariable('region') AS region");
    expect(await waitForStatus(read, ['done', 'failed'])).toBe('done');
    await read.getByRole('gridcell', { name: 'north' }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});
