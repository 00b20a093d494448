// Table maintenance in a real browser, on the real stack: a table written by a real agent in 25 single-row INSERTs
// is not scanned yet on its table page; an administrator presses Scan now on the Lakehouse health page (aggressive
// profile), sees the table with a low grade and a compaction recommendation, dismisses the manifest one, and finds
// the health panel on the table page. Applying is left to the api suite (its agent procedures are built apart).
import { describe, expect, it } from 'vitest';
import { stackWithBrowser } from './support/stackWithBrowser.ts';

const QUALIFIED = 'warehouse.mnt_e2e.clicks';

const { t, admin, ui, b } = await stackWithBrowser({
  suite: 'maintenance',
  agent: 'e2e-maintenance-agent',
  // No scanner loop: the only scan is the one the test presses, so "not scanned yet" holds until then.
  env: { MAINTENANCE_SCANNER_ENABLED: 'false' },
  prepare: async ({ t, admin, sql }) => {
    await sql('CREATE SCHEMA IF NOT EXISTS mnt_e2e');
    await sql('CREATE TABLE mnt_e2e.clicks (id BIGINT, label VARCHAR)');
    // One data file, one snapshot and one manifest per INSERT: small files the aggressive profile flags.
    for (let i = 0; i < 25; i++) await sql(`INSERT INTO mnt_e2e.clicks VALUES (${i}, 'click ${i}')`);
    const policy = await t.req('PUT', '/api/admin/maintenance/policy', { body: { profile: 'aggressive' }, as: admin });
    expect(policy.body.profile, policy.text).toBe('aggressive');
  },
});

describe('web app: Lakehouse health', () => {
  it('scans on demand, grades the small-file table, dismisses a recommendation, and shows the table’s health panel', async () => {
    const { page } = b;
    const tablePage = ui.url + '/w/default/catalog/warehouse/mnt_e2e/clicks';
    await page.goto(tablePage);
    const panel = page.getByRole('region', { name: 'Health' });
    await panel.getByText('Not scanned yet').waitFor();
    await panel.scrollIntoViewIfNeeded();
    await b.shot('01-not-scanned');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Health' }).click();
    await page.getByRole('heading', { name: 'Lakehouse health' }).waitFor();
    const scanner = page.getByRole('region', { name: 'Scanner' });
    await expect.poll(() => scanner.getByLabel('Profile').inputValue()).toBe('aggressive');
    await scanner.getByRole('button', { name: 'Scan now', exact: true }).click();
    const report = scanner.getByRole('status', { name: 'Scan report' });
    await report.waitFor({ timeout: 60_000 });
    expect(await report.textContent()).toMatch(/^Scan of \d+ tables? in \d+ catalogs? \(aggressive profile\) took .*: [1-9]\d* recommendations? opened/);

    const row = page.getByRole('table', { name: 'Tables by health' }).locator('tr', { hasText: QUALIFIED });
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(['D', 'F']).toContain(cells[0]);
    expect(Number(cells[1])).toBeLessThan(60);
    expect(Number(cells[3])).toBeGreaterThanOrEqual(2);

    const compact = page.getByRole('article', { name: `Compact small files: ${QUALIFIED}` });
    await compact.waitFor();
    expect(await compact.locator('.pill').textContent()).toBe('critical');
    expect(await compact.locator('pre').textContent()).toBe(`CALL system.rewrite_data_files(table => '${QUALIFIED}', target_file_size_bytes => 134217728)`);
    expect(await compact.getByRole('term').allTextContents()).toContain('Data files before');
    await compact.getByRole('button', { name: 'Apply' }).waitFor(); // an administrator's; not pressed here
    await b.shot('02-health-page');

    const manifests = page.getByRole('article', { name: `Rewrite manifests: ${QUALIFIED}` });
    await manifests.getByRole('button', { name: 'Dismiss' }).click();
    await expect.poll(() => manifests.count()).toBe(0);
    const dismissed = (await t.req('GET', '/api/maintenance/recommendations?workspace=default&table=clicks&status=dismissed', { as: admin })).body.items;
    expect(dismissed.map((r: { kind: string }) => r.kind)).toEqual(['rewrite_manifests']);
    // Shown again, marked dismissed, once the filter asks for dismissed ones.
    await page.getByRole('group', { name: 'Recommendation status' }).getByLabel('dismissed').check();
    await expect.poll(() => manifests.getAttribute('data-status')).toBe('dismissed');
    expect(await manifests.getByRole('button', { name: 'Dismiss' }).count()).toBe(0);
    await b.shot('03-dismissed');

    await row.getByRole('link', { name: QUALIFIED }).click();
    await page.waitForURL(tablePage);
    await panel.locator('.grade').waitFor();
    expect(['D', 'F']).toContain(await panel.locator('.grade').textContent());
    const meters = panel.getByRole('meter');
    expect(await meters.evaluateAll((ms) => ms.map((m) => m.getAttribute('aria-label')))).toEqual(['File sizes', 'Snapshots', 'Manifests']);
    const metrics = panel.getByLabel('Health metrics');
    const facts = await metrics.getByRole('definition').allTextContents();
    const terms = await metrics.getByRole('term').allTextContents();
    expect(facts[terms.indexOf('Data files')]).toBe('25');
    expect(facts[terms.indexOf('Records')]).toBe('25');
    await panel.getByRole('article', { name: `Compact small files: ${QUALIFIED}` }).waitFor();
    expect(await panel.getByRole('article', { name: `Rewrite manifests: ${QUALIFIED}` }).count()).toBe(0);
    await panel.scrollIntoViewIfNeeded();
    await b.shot('04-table-panel');
  }, 180_000);
});
