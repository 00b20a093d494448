// Debian's Chromium driven by playwright-core for the browser tests: installed by scripts/ensure-chromium.sh when
// missing, launched headless with a fresh profile, and a screenshot folder that the run prints.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '../../..');

function ensureChromium(): string {
  return execFileSync('sh', [join(ROOT, 'scripts/ensure-chromium.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  shot(name: string): Promise<string>;
  close(): Promise<void>;
}

const runStamp = new Date().toISOString().replace(/[:.]/g, '-');

/** The folder screenshots of this run go to (printed once per test file). */
function screenshotDir(suite: string): string {
  const dir = join(ROOT, '.test-data', 'screenshots', runStamp, suite);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function launchBrowser(suite: string): Promise<Browser> {
  const executablePath = ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'eider-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // The app's Content-Security-Policy must hold for everything the tests do: a violation the browser reports fails
  // the file when its browser closes.
  const cspViolations: string[] = [];
  context.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(10_000);
  const dir = screenshotDir(suite);
  console.log(`[e2e] screenshots: ${dir}`);
  return {
    context,
    page,
    async shot(name) {
      const file = join(dir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
      if (cspViolations.length) throw new Error(`the browser reported Content-Security-Policy violations:\n${cspViolations.join('\n')}`);
    },
  };
}

/** Signs in with email and password on the sign-in screen the page shows, and waits for the app's navigation. */
export async function signInAs(page: Page, who: { email: string; password: string }) {
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** A browser on the app at `url`, signed in as `who`, accepting confirmation dialogs; closed again when sign-in fails. */
export async function launchSignedIn(suite: string, url: string, who: { email: string; password: string }): Promise<Browser> {
  const b = await launchBrowser(suite);
  try {
    b.page.on('dialog', (d) => void d.accept());
    await b.page.goto(url + '/');
    await signInAs(b.page, who);
    return b;
  } catch (e) {
    await b.close();
    throw e;
  }
}
