// Screenshots of the web app's main screens at 1440x900 for a change's closing note, run by hand (not a test):
//   npx node scripts/screenshots.ts [--repo DIR] [--out DIR]
// Starts `eider up` from DIR (default: this checkout, which must have a built ui/dist: npx node scripts/build-ui.ts)
// on free ports over a fresh data folder, creates the first admin, waits for the bundled agent and the samples, then
// drives Chromium through sign-in, a worksheet with a result, the catalog, history, compute, agents and admin, and
// writes one PNG per screen into --out (default docs/screenshots/after). A "before" set is the same script run with
// --repo pointing at a worktree of the older commit (its own eider, its own ui/dist).
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type Page } from 'playwright-core';

const HERE = resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({ options: { repo: { type: 'string' }, out: { type: 'string' } } });
const repo = resolve(args.repo ?? HERE);
const out = resolve(args.out ?? join(HERE, 'docs/screenshots/after'));
const ADMIN = { email: 'ada@example.com', password: 'correct-horse-battery', name: 'Ada Lovelace' };
const SETUP_TOKEN = 'screenshots-setup-token-0123456789';

const freePort = () =>
  new Promise<number>((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => ok(typeof a === 'object' && a ? a.port : 0));
    });
  });

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'eider-shots-'));
const [port, catalogPort, storePort] = [await freePort(), await freePort(), await freePort()];
const url = `http://127.0.0.1:${port}`;
console.log(`[shots] eider up from ${repo} on ${url} (data ${dataDir})`);
const stack = spawn('npx', ['node', 'bin/eider.ts', 'up'], {
  cwd: repo,
  env: {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    CATALOG_PORT: String(catalogPort),
    OBJECT_STORE_PORT: String(storePort),
    RESULTS_HTTP_PORT: '0',
    SETUP_TOKEN,
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
  detached: true,
});
const stopStack = async () => {
  if (stack.exitCode !== null || stack.pid === undefined) return;
  const exited = new Promise((r) => stack.once('exit', r));
  process.kill(-stack.pid, 'SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
  if (stack.exitCode === null) process.kill(-stack.pid, 'SIGKILL');
};

try {
  await until('the api', 180_000, async () => ((await fetch(`${url}/api/healthz`)).ok ? true : undefined));
  const made = await fetch(`${url}/api/setup/admin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-setup-token': SETUP_TOKEN },
    body: JSON.stringify(ADMIN),
  });
  if (made.status !== 201) throw new Error(`creating the admin answered ${made.status}: ${await made.text()}`);
  await until('readiness (the bundled agent and the samples)', 300_000, async () => ((await fetch(`${url}/api/readyz`)).ok ? true : undefined));

  const executablePath = execFileSync('sh', [join(HERE, 'scripts/ensure-chromium.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
  page.setDefaultTimeout(30_000);
  mkdirSync(out, { recursive: true });
  const shot = async (name: string) => {
    await page.waitForLoadState('networkidle');
    await page.waitForTimeout(300); // the last paint after the data
    const file = join(out, `${name}.png`);
    await page.screenshot({ path: file });
    console.log(`[shots] ${file} ${Math.round(statSync(file).size / 1024)} KB`);
  };

  await page.goto(url + '/');
  await page.getByLabel('Email').waitFor();
  await page.getByLabel('Email').fill(ADMIN.email);
  await shot('sign-in');
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();

  await goToWorksheet(page, url);
  await shot('worksheet');
  for (const [name, path] of [
    ['catalog', '/w/default/catalog/warehouse/samples/trips'],
    ['history', '/w/default/history'],
    ['compute', '/compute'],
    ['agents', '/agents'],
    ['admin', '/admin/audit'],
  ] as const) {
    await page.goto(url + path);
    await page.locator('h1, h2').first().waitFor();
    await shot(name);
  }
  await browser.close();
} finally {
  await stopStack();
  rmSync(dataDir, { recursive: true, force: true });
}

/** The first worksheet with a grouped query over the samples run to its result. */
async function goToWorksheet(page: Page, base: string) {
  await page.goto(base + '/w/default/worksheets');
  const pane = page.locator('[role=tabpanel]:not([hidden])');
  const editor = pane.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText('SELECT zone, count(*) AS trips, round(avg(fare), 2) AS avg_fare, round(sum(distance_km)) AS km\nFROM samples.trips\nGROUP BY zone\nORDER BY trips DESC');
  await page.keyboard.press('Escape');
  // the bundled agent is the picker's choice once it is listed
  await until('an agent in the picker', 60_000, async () => ((await pane.getByLabel('Agent').inputValue()) ? true : undefined));
  await page.keyboard.press('ControlOrMeta+Enter');
  await pane.locator('.pill.done').waitFor({ timeout: 60_000 });
  await pane.getByRole('gridcell', { name: 'Airport' }).first().waitFor();
}
