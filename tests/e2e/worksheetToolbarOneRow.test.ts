// The worksheet's own toolbar in a real browser (issue 35): at 1440 and 1280 px wide every control, the share
// checkbox, the save status and the status pill included, sits on one row, none hidden or cut; and, with SQL sessions
// on, `USE warehouse.samples;` says plainly why it is refused while `USE warehouse;` works.
import { describe, expect, it } from 'vitest';
import { stackWithBrowser } from './support/stackWithBrowser.ts';
import { activePane, chooseAgent, typeAndRun, waitForStatus } from './support/worksheetPage.ts';

const AGENT = 'e2e-agent-toolbar';

const { ui, b } = await stackWithBrowser({
  suite: 'worksheetToolbarOneRow',
  agent: AGENT,
  env: { SQL_SESSIONS_ENABLED: 'true', SQL_SESSION_REAPER_TICK_S: '0.2' },
  prepare: async ({ sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS samples');
    await sql('CREATE TABLE samples.toolbar_trips AS SELECT range AS trip_id FROM range(3)');
  },
});

/** Each toolbar child's box, and the toolbar's own, in the page. */
async function toolbarBoxes() {
  return activePane(b.page)
    .getByRole('toolbar', { name: 'Worksheet' })
    .evaluate((bar) => {
      const own = bar.getBoundingClientRect();
      const parts = [...bar.children]
        .map((el) => ({ el, r: el.getBoundingClientRect(), text: (el.textContent ?? '').trim() || el.getAttribute('aria-label') || el.tagName }))
        .filter(({ r }) => r.width > 0 && r.height > 0)
        .map(({ el, r, text }) => {
          // A picker's select must stay inside its label (it gives up width, it does not spill onto the next control).
          const select = el.querySelector('select')?.getBoundingClientRect();
          const spills = select ? select.right > r.right + 1 || select.left < r.left - 1 : false;
          return { text, top: r.top, bottom: r.bottom, left: r.left, right: r.right, cut: spills || el.scrollWidth > el.clientWidth + 1 };
        });
      return { own: { left: own.left, right: own.right }, parts };
    });
}

/**
 * At each width: the toolbar's children share one row, inside the toolbar, none over another or spilling out of its
 * box (the pickers may give up width: their text ends in an ellipsis, their title holds the choice); the page does not
 * scroll sideways.
 */
async function oneRowAt(widths: number[], shot: string) {
  const { page } = b;
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    await expect
      .poll(async () => {
        const { own, parts } = await toolbarBoxes();
        const centres = parts.map((p) => (p.top + p.bottom) / 2);
        const oneRow = Math.max(...centres) - Math.min(...centres) <= 4;
        const inside = parts.every((p) => p.left >= own.left - 1 && p.right <= own.right + 1);
        const overlapping = parts.slice(1).filter((p, i) => p.left < parts[i].right - 1).map((p) => p.text);
        return { oneRow, inside, overlapping, cut: parts.filter((p) => p.cut).map((p) => p.text) };
      })
      .toEqual({ oneRow: true, inside: true, overlapping: [], cut: [] });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await b.shot(`${shot}-${width}`);
  }
}

describe('worksheet toolbar', () => {
  it('at 1440 and 1280 px the share checkbox, the save status and the status pill sit on the toolbar\'s one row', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const pane = await typeAndRun(page, 'SELECT 1 AS one');
    expect(await waitForStatus(pane, ['done', 'failed'])).toBe('done');
    // What the issue saw wrap: the share checkbox, the save status and the pill, all present.
    const bar = pane.getByRole('toolbar', { name: 'Worksheet' });
    await bar.getByLabel('Shared with workspace').waitFor();
    await bar.locator('.worksheet-saved').waitFor();
    await bar.locator('.pill[data-status=done]').waitFor();
    await oneRowAt([1440, 1280], 'toolbar');
    // The save status's words are short (Unsaved, Saving…, Saved), each explained on hover.
    expect(await bar.locator('.worksheet-saved').getAttribute('title')).toBeTruthy();
    // The pickers' titles hold what they show.
    expect(await bar.getByLabel('Agent').getAttribute('title')).toMatch(new RegExp(`^● ${AGENT} — healthy`));
    expect(await bar.getByLabel('Catalog').getAttribute('title')).toBe('Workspace default');
    // A save's confirmation is a note under the toolbar, whole; the toolbar keeps its row.
    await bar.getByRole('button', { name: 'Save', exact: true }).click();
    await pane.getByText(/^Saved as .+ at /).waitFor();
    expect(await bar.getByText(/^Saved as /).count()).toBe(0);
    await oneRowAt([1440, 1280], 'toolbar-saved');
  });

  it('USE warehouse.samples says plainly that a schema cannot be made current; USE warehouse works', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await chooseAgent(page, AGENT);
    const use = await typeAndRun(page, 'USE warehouse.samples;');
    expect(await waitForStatus(use, ['done', 'failed'])).toBe('failed');
    await expect.poll(() => use.getByRole('alert').textContent()).toMatch(/a schema cannot be made current \(qualify tables with their schema\)/);
    const catalog = await typeAndRun(page, 'USE warehouse;');
    expect(await waitForStatus(catalog, ['done', 'failed'])).toBe('done');
    const read = await typeAndRun(page, 'SELECT count(*) AS n FROM samples.toolbar_trips');
    expect(await waitForStatus(read, ['done', 'failed'])).toBe('done');
    await read.getByRole('gridcell', { name: '3' }).waitFor();
  });
});
