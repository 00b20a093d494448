// Admin → Migrations (issue 14, "Migrations") in a real browser against the real stack with a second S3-compatible
// endpoint (its own object-store process): an admin moves a catalog written by a real agent to the second backend
// and follows it on screen (phase, bytes, each table's state, the log as it streams in) up to the cutover, after
// which the catalog reads the same through the api; a second one is cancelled from the screen before its cutover
// (the target sits behind a slow proxy so the copy lasts long enough) and the catalog stays where it was, readable.
// Admin → Storage backends: a backend on the second store registered from the form, and its credentials rotated
// (a wrong secret refused on screen with the store's answer, the right one saved and audited).
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startExtraStore, type ExtraStore } from '../support/catalogStack.ts';
import { sqlOn, startSlowProxy, waitMigration, type Sql, lakeBackend } from '../support/migrations.ts';
import { stackWithBrowser } from './support/stackWithBrowser.ts';

const AGENT = 'e2e-agent-migrations';

const lake: ExtraStore = await startExtraStore({ bucket: 'lake2' });
const { t, admin, ui, b, agentId } = await stackWithBrowser({
  suite: 'migrations',
  agent: AGENT,
  closeAfter: [lake],
  // A new migration is begun by the replica that accepts it; the tick only resumes interrupted ones.
  env: { MIGRATION_RUNNER_TICK_S: '5' },
});
const bundledId = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string }>).find((x) => x.name === 'bundled')!.id;

const backendOn = (name: string, endpoint: string) => lakeBackend(t, admin, lake, name, endpoint);

/** A catalog on the bundled store with two small tables (three snapshots between them), written by the agent. */
async function smallCatalog(slug: string): Promise<{ id: string; sql: Sql }> {
  const c = await t.req('POST', '/api/catalogs', { as: admin, body: { slug, storage_backend_id: bundledId } });
  expect(c.status, c.text).toBe(201);
  expect((await t.req('PUT', `/api/workspaces/default/catalogs/${slug}`, { as: admin, body: { make_default: false } })).status).toBe(201);
  const sql = sqlOn(t, admin, agentId, slug);
  await sql.run('CREATE SCHEMA s');
  await sql.run("CREATE TABLE s.zones AS SELECT range AS zone_id, 'zone ' || range AS zone FROM range(10)");
  await sql.run('CREATE TABLE s.trips AS SELECT range AS trip_id, range % 10 AS zone_id, (range % 97)::DOUBLE AS fare FROM range(20000)');
  await sql.run('INSERT INTO s.trips SELECT range + 20000, range % 10, 1.0 FROM range(500)');
  return { id: c.body.id, sql };
}

const counts = async (sql: Sql) => ({
  zones: await sql.rows('SELECT count(*)::BIGINT AS n FROM s.zones'),
  trips: await sql.rows('SELECT count(*)::BIGINT AS n, sum(trip_id)::BIGINT AS s FROM s.trips'),
});

/** Opens Admin → Migrations through the navigation and starts moving `slug` to the backend named `target`. */
async function startFromScreen(page: Page, slug: string, target: string, onScreen?: () => Promise<void>) {
  await page.goto(ui.url + '/w/default/worksheets');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Migrations' }).click();
  await expect.poll(() => page.url()).toBe(ui.url + '/admin/migrations');
  await page.getByRole('heading', { name: 'Storage migrations' }).waitFor();
  await onScreen?.();
  const form = page.getByRole('form', { name: 'Migrate a catalog' });
  const catalog = form.getByLabel('Catalog');
  await expect.poll(() => catalog.locator('option', { hasText: `${slug} (` }).count()).toBe(1);
  await catalog.selectOption({ label: `${slug} (s3://warehouse/${slug}/)` });
  // the backend the catalog is on is not offered as a target
  const to = form.getByLabel('To storage backend');
  expect(await to.locator('option', { hasText: 'bundled (' }).count()).toBe(0);
  await to.selectOption({ label: `${target} (object_store, s3://lake2/${target}/)` });
  const posted = page.waitForResponse((r) => r.url().endsWith('/migrations') && r.request().method() === 'POST');
  await form.getByRole('button', { name: 'Start migration' }).click();
  const res = await posted;
  expect(res.status()).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

/**
 * Records, in the page, every state the Tables table shows and every length of the log, as they change: what a
 * person watching the screen saw between two of the test's looks.
 */
async function watchDetail(page: Page) {
  await page.evaluate(() => {
    const w = window as unknown as { __seen: { states: string[]; logLengths: number[] } };
    w.__seen = { states: [], logLengths: [] };
    const look = () => {
      const detail = document.querySelector('[aria-label="Migration detail"]');
      if (!detail) return;
      const rows = [...detail.querySelectorAll('table[aria-label="Tables"] tbody tr')];
      const states = rows.map((r) => `${r.children[0]?.textContent}=${r.children[1]?.textContent}`).join(',');
      if (states && w.__seen.states.at(-1) !== states) w.__seen.states.push(states);
      const n = detail.querySelectorAll('table[aria-label="Migration log"] tbody tr').length;
      if (w.__seen.logLengths.at(-1) !== n) w.__seen.logLengths.push(n);
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
    look();
  });
  return () => page.evaluate(() => (window as unknown as { __seen: { states: string[]; logLengths: number[] } }).__seen);
}

describe('Admin → Migrations in the browser', () => {
  it('moves a catalog to the second backend: progress per table and the log stream in up to the cutover; the catalog reads the same', async () => {
    const { page } = b;
    const { id: catalogId, sql } = await smallCatalog('movecat');
    const before = await counts(sql);
    expect(before.trips).toEqual([{ n: 20500, s: expect.any(Number) }]);
    // A little latency on the way to the target, so the copy lasts long enough to be seen moving.
    const proxy = await startSlowProxy(lake.endpoint, 300);
    try {
      await backendOn('lake-b', proxy.endpoint);
      let seen: Awaited<ReturnType<typeof watchDetail>> | undefined;
      const id = await startFromScreen(page, 'movecat', 'lake-b', async () => {
        await page.getByText('No catalog has been migrated yet.').waitFor();
        seen = await watchDetail(page);
      });

      const row = page.getByRole('table', { name: 'Storage migrations' }).getByRole('row').filter({ hasText: 'movecat' });
      await row.waitFor();
      expect(await row.locator('td').nth(1).textContent()).toBe('bundled');
      expect(await row.locator('td').nth(2).textContent()).toBe('lake-b');
      const detail = page.getByRole('region', { name: 'Migration detail' });
      await detail.getByRole('heading', { name: /^movecat: (pending|running)$/ }).waitFor();
      await detail.getByRole('button', { name: 'Cancel migration' }).waitFor();
      await b.shot('01-migration-running');

      // Completion, as the screen shows it: each table verified, all bytes copied, the cutover in the log.
      await detail.getByRole('heading', { name: 'movecat: completed' }).waitFor({ timeout: 90_000 });
      const tables = detail.getByRole('table', { name: 'Tables' });
      await expect.poll(() => tables.locator('tbody tr').evaluateAll((rs) => rs.map((r) => [...r.querySelectorAll('td')].slice(0, 2).map((c) => c.textContent)))).toEqual([
        ['s.trips', 'verified'],
        ['s.zones', 'verified'],
      ]);
      const log = detail.getByRole('table', { name: 'Migration log' });
      await log.getByRole('row').filter({ hasText: /cut over: 2 table\(s\) and the catalog now on lake-b/ }).waitFor();
      for (const tbl of ['s.trips', 's.zones']) {
        await log.getByRole('row').filter({ hasText: tbl }).filter({ hasText: /data copied: \d+ file\(s\) written/ }).waitFor();
        await log.getByRole('row').filter({ hasText: tbl }).filter({ hasText: /verified: \d+ snapshot\(s\)/ }).waitFor();
      }
      expect(await detail.getByRole('progressbar', { name: 'Bytes copied' }).getAttribute('value')).toBe('100');
      expect(await detail.textContent()).toMatch(/2 of 2 table\(s\) · phase completed · old files kept until /);
      expect(await detail.getByRole('button', { name: 'Cancel migration' }).count()).toBe(0);
      await expect.poll(() => row.locator('td').nth(3).textContent()).toBe('completed');
      expect(await row.locator('td').nth(5).textContent()).toBe('2 / 2');
      expect(await row.locator('td').nth(6).textContent()).toMatch(/\(100%\)$/);

      // The screen followed it as it went: table states before "verified", and the log in several pulls.
      const watched = await seen!();
      expect(watched.states.length, JSON.stringify(watched.states)).toBeGreaterThan(1);
      expect(watched.states.some((s) => !/=verified.*=verified/.test(s)), JSON.stringify(watched.states)).toBe(true);
      expect(watched.logLengths.filter((n) => n > 0).length, JSON.stringify(watched.logLengths)).toBeGreaterThan(1);
      // The log on screen is the whole log, in order.
      const apiLog = (await t.req('GET', `/api/catalogs/${catalogId}/migrations/${id}/logs`, { as: admin })).body as Array<{ message: string }>;
      await expect.poll(() => log.locator('tbody tr td:nth-child(4)').allTextContents()).toEqual(apiLog.map((l) => l.message));
      await b.shot('02-migration-completed');

      // The api agrees: the catalog is on the second backend and reads the same.
      const m = (await t.req('GET', `/api/catalogs/${catalogId}/migrations/${id}`, { as: admin })).body;
      expect(m).toMatchObject({ status: 'completed', phase: 'completed', tables_total: 2, tables_done: 2, error: null });
      expect((await t.req('GET', `/api/catalogs/${catalogId}`, { as: admin })).body).toMatchObject({ slug: 'movecat', root_uri: 's3://lake2/lake-b/movecat/' });
      expect(await counts(sql)).toEqual(before);
    } finally {
      await proxy.close();
    }
  }, 240_000);

  it('cancels a migration from the screen before its cutover: it ends cancelled and the catalog stays readable where it was', async () => {
    const { page } = b;
    const { id: catalogId, sql } = await smallCatalog('staycat');
    const before = await counts(sql);
    // A slow network to the target: the copy lasts long enough to cancel it midway.
    const proxy = await startSlowProxy(lake.endpoint, 1000);
    try {
      await backendOn('slow-lake', proxy.endpoint);
      const id = await startFromScreen(page, 'staycat', 'slow-lake');
      const detail = page.getByRole('region', { name: 'Migration detail' });
      await detail.getByRole('heading', { name: /^staycat: (pending|running)$/ }).waitFor();
      // the copy has begun: the log says so
      await detail.getByRole('table', { name: 'Migration log' }).getByRole('row').filter({ hasText: /copying 2 table\(s\)/ }).waitFor({ timeout: 30_000 });
      expect((await t.req('GET', `/api/catalogs/${catalogId}/migrations/${id}`, { as: admin })).body).toMatchObject({ status: 'running', phase: 'copying' });
      await b.shot('03-migration-copying');

      const cancelled = page.waitForResponse((r) => r.url().endsWith(`/migrations/${id}/cancel`));
      await detail.getByRole('button', { name: 'Cancel migration' }).click();
      expect((await cancelled).status()).toBe(202);
      await detail.getByRole('heading', { name: 'staycat: cancelled' }).waitFor();
      expect(await detail.getByRole('button', { name: 'Cancel migration' }).count()).toBe(0);
      expect(await detail.textContent()).toContain('phase cancelled');
      const row = page.getByRole('table', { name: 'Storage migrations' }).getByRole('row').filter({ hasText: 'staycat' });
      await expect.poll(() => row.locator('td').nth(3).textContent()).toBe('cancelled');
      // the log goes on to its end: the copy at the target removed
      const log = detail.getByRole('table', { name: 'Migration log' });
      await log.getByRole('row').filter({ hasText: /the copy at the target was removed/ }).waitFor({ timeout: 30_000 });
      await b.shot('04-migration-cancelled');

      // The api agrees: cancelled, the catalog on the bundled store, its rows unchanged, and writable again.
      const m = await waitMigration(t, admin, catalogId, id, (x) => x.status !== 'running' && x.status !== 'pending');
      expect(m).toMatchObject({ status: 'cancelled', phase: 'cancelled' });
      expect((await t.req('GET', `/api/catalogs/${catalogId}`, { as: admin })).body).toMatchObject({ storage_backend_id: bundledId, root_uri: 's3://warehouse/staycat/' });
      expect(await counts(sql)).toEqual(before);
      await expect.poll(async () => (await t.stack.request('GET', '/management/v1/warehouses/staycat')).body.read_only, { timeout: 30_000 }).toBe(false);
      await sql.run('INSERT INTO s.zones VALUES (99, \'zone 99\')');
      expect(await sql.rows('SELECT count(*)::BIGINT AS n FROM s.zones')).toEqual([{ n: 11 }]);
    } finally {
      await proxy.close();
    }
  }, 240_000);
});

describe('Admin → Storage backends in the browser', () => {
  it('registers a backend on the second store from the form, then rotates its credentials: a wrong secret is refused on screen and changes nothing, the right one is saved', async () => {
    const { page } = b;
    await page.goto(ui.url + '/w/default/worksheets');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Storage backends' }).click();
    await expect.poll(() => page.url()).toBe(ui.url + '/admin/storage');
    const table = page.getByRole('table', { name: 'Storage backends' });
    // the bundled store's keys are its configuration: nothing to rotate there
    const bundled = table.getByRole('row').filter({ hasText: 's3://warehouse/' });
    await bundled.getByText('the bundled store\'s own').waitFor();
    expect(await bundled.getByRole('button', { name: 'Rotate credentials' }).count()).toBe(0);

    const add = page.getByRole('form', { name: 'Add a storage backend' });
    await add.getByLabel('Name').fill('lake-ui');
    await add.getByLabel('Kind').selectOption('object_store');
    await add.getByLabel('Root URI').fill('s3://lake2/lake-ui/');
    await add.getByLabel('Endpoint').fill(lake.endpoint);
    await add.getByLabel('Access key id').fill(lake.accessKey);
    await add.getByLabel('Secret access key').fill(lake.secretKey);
    const created = page.waitForResponse((r) => r.url().endsWith('/api/admin/storage-backends') && r.request().method() === 'POST');
    await add.getByRole('button', { name: 'Add backend' }).click();
    expect((await created).status()).toBe(201);
    const row = table.getByRole('row').filter({ hasText: 'lake-ui' });
    await row.waitFor();
    const id = ((await t.req('GET', '/api/admin/storage-backends', { as: admin })).body as Array<{ id: string; name: string }>).find((x) => x.name === 'lake-ui')!.id;
    const stored = async () => (await t.database.db.query(`select access_key_id, secret_access_key, credential_vending from eider.storage_backends where id = $1`, [id]))[0];
    const before = await stored();

    await row.getByRole('button', { name: 'Rotate credentials' }).click();
    const rotate = page.getByRole('form', { name: 'Rotate the credentials of lake-ui' });
    await rotate.getByLabel('Access key id').fill(lake.accessKey);
    await rotate.getByLabel('Secret access key').fill('not-the-secret-of-lake2');
    const refused = page.waitForResponse((r) => r.url().endsWith(`/api/admin/storage-backends/${id}`) && r.request().method() === 'PATCH');
    await rotate.getByRole('button', { name: 'Rotate credentials' }).click();
    expect((await refused).status()).toBe(422);
    const alert = page.getByRole('alert').filter({ hasText: 'storage_unreachable' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('SignatureDoesNotMatch');
    expect(await alert.textContent()).not.toContain('not-the-secret-of-lake2');
    expect(await stored()).toEqual(before);
    await b.shot('05-storage-rotation-refused');

    await rotate.getByLabel('Secret access key').fill(lake.secretKey);
    const saved = page.waitForResponse((r) => r.url().endsWith(`/api/admin/storage-backends/${id}`) && r.request().method() === 'PATCH');
    await rotate.getByRole('button', { name: 'Rotate credentials' }).click();
    expect((await saved).status()).toBe(200);
    // the form closes and the list is read again
    await expect.poll(() => page.getByRole('form', { name: 'Rotate the credentials of lake-ui' }).count()).toBe(0);
    const after = await stored();
    expect(after.access_key_id).toBe(lake.accessKey);
    expect(after.secret_access_key).not.toBe(before.secret_access_key); // sealed anew
    const audit = await t.database.db.query<{ details: { change: string; fields: string[] } }>(
      `select details from eider.audit_events where action = 'backend.change' and outcome = 'success' and target_id = $1 order by at`,
      [id],
    );
    expect(audit.map((a) => a.details.change)).toEqual(['created', 'credentials_rotated']);
    // the wrong secret refused on screen is a failure row beside them
    const refusedRows = await t.database.db.query(`select 1 from eider.audit_events where action = 'backend.change' and outcome = 'failure' and target_id = $1`, [id]);
    expect(refusedRows.length).toBeGreaterThan(0);
    expect(audit[1].details.fields).toEqual(['access_key_id', 'secret_access_key']);
  }, 120_000);
});
