// Elastic compute in a real browser, on the real stack with the `process` provider: an operator starts an elastic
// agent from the Compute screen and watches it come up, a worksheet runs on the pool (a second agent is started for
// it), and Stop ends the first one.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { processProvider } from '../../runtime/compute/processProvider.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';

const { ui, b } = await stackWithBrowser({
  suite: 'compute',
  env: {
    ELASTIC_COMPUTE_ENABLED: 'true',
    ELASTIC_PROVIDER: 'process',
    ELASTIC_REAPER_TICK_S: '0.5',
    AGENT_HEARTBEAT_INTERVAL_S: '0.5',
    ACTOR_REAPER_TICK_S: '0.2',
  },
  // The elastic agents are processes of their own, listed from folders under the api's data directory: stopped
  // before the api's close removes that directory (after it, the list is empty and they would outlive the suite).
  prepare: async ({ t, defer }) =>
    defer(async () => {
      const provider = processProvider({ root: join(t.dataDir, 'elastic'), command: ['true'], stopGraceMs: 2_000 });
      for (const i of await provider.list()) await provider.terminate(i.providerRef);
    }),
});

describe('web app: elastic compute', () => {
  it('starts an elastic agent of a chosen size, runs a worksheet on the pool, and stops the agent', async () => {
    const { page } = b;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Compute' }).click();
    const form = page.getByRole('form', { name: 'Start an elastic agent' });
    await form.locator('select').first().selectOption('small');
    await form.getByLabel('Name').fill('from-the-browser');
    await form.getByRole('button', { name: /Start/ }).click();
    const row = page.getByRole('table', { name: 'Elastic agents' }).locator('tr', { hasText: 'from-the-browser' });
    // The screen polls while it provisions: it shows running once the process dialled home.
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 60_000 }).toBe('running');
    expect(await row.textContent()).toContain('small');
    // The confirmation follows the agent: it said provisioning when started, and says running now.
    await expect.poll(() => page.getByRole('status').filter({ hasText: /^Started from-the-browser/ }).textContent()).toBe('Started from-the-browser: running.');
    await b.shot('01-running');

    await page.goto(ui.url + '/w/default/worksheets');
    const pane = page.locator('[role=tabpanel]:not([hidden])');
    await pane.locator('.cm-content').waitFor();
    await pane.getByLabel('Agent').selectOption({ label: 'Pool (elastic compute)' });
    await pane.locator('.cm-content').click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('SELECT 42 AS answer');
    await page.keyboard.press('ControlOrMeta+Enter');
    const pill = pane.locator('.pill[data-status]');
    await expect.poll(() => pill.getAttribute('data-status'), { timeout: 60_000 }).toBe('done');
    await pane.locator('.grid-row:not(.loading)').first().waitFor();
    expect(await pane.locator('.grid-row').first().locator('[role=gridcell]').allTextContents()).toEqual(['42']);
    await b.shot('02-pool-query');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Compute' }).click();
    const again = page.getByRole('table', { name: 'Elastic agents' }).locator('tr', { hasText: 'from-the-browser' });
    await again.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => again.getAttribute('data-state'), { timeout: 60_000 }).toBe('terminated');
    expect(await again.textContent()).toContain('operator');
    await b.shot('03-stopped');
  }, 180_000);
});
