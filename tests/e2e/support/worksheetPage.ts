// Driving the worksheet screen from a test: the visible worksheet's pane, typing SQL with the cursor at a chosen
// place, running it, and waiting on the status pill (the run's own `data-run` count tells a new run from the last).
import { expect } from 'vitest';
import type { Locator, Page } from 'playwright-core';

export const activePane = (page: Page) => page.locator('[role=tabpanel]:not([hidden])');

/** Replaces the visible worksheet's SQL and leaves the cursor just before `cursorAt` (a substring), else at the end. */
export async function typeSql(page: Page, sql: string, cursorAt?: string) {
  const editor = activePane(page).locator('.cm-content');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(sql);
  await page.keyboard.press('Escape'); // a completion list opened by the typing would take the arrow keys
  if (cursorAt !== undefined) {
    const offset = sql.indexOf(cursorAt);
    if (offset < 0) throw new Error(`${cursorAt} is not in the SQL`);
    await page.keyboard.press('ControlOrMeta+Home');
    const linesAbove = sql.slice(0, offset).split('\n').length - 1;
    for (let i = 0; i < linesAbove; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Home');
    const col = offset - sql.lastIndexOf('\n', offset - 1) - 1;
    for (let i = 0; i < col; i++) await page.keyboard.press('ArrowRight');
  }
}

/** Runs with Ctrl/Cmd+Enter and waits until the pill counts the new run. */
export async function run(page: Page) {
  const pill = activePane(page).locator('.pill');
  const before = Number((await pill.getAttribute('data-run')) ?? 0);
  await page.keyboard.press('ControlOrMeta+Enter');
  await expect.poll(async () => Number((await pill.getAttribute('data-run')) ?? 0)).toBe(before + 1);
}

export async function typeAndRun(page: Page, sql: string, cursorAt?: string) {
  await typeSql(page, sql, cursorAt);
  await run(page);
  return activePane(page);
}

export async function waitForStatus(pane: Locator, statuses: string[], timeout = 30_000) {
  const pill = pane.locator('.pill[data-status]');
  await expect.poll(async () => pill.getAttribute('data-status'), { timeout }).toSatisfy((s: string | null) => statuses.includes(s ?? ''));
  return pill.getAttribute('data-status');
}

/** Picks the agent named `name` in the visible worksheet's picker (once it is listed). */
export async function chooseAgent(page: Page, name: string) {
  const picker = activePane(page).getByLabel('Agent');
  const option = picker.locator('option', { hasText: name });
  await expect.poll(() => option.count()).toBe(1);
  await picker.selectOption((await option.getAttribute('value'))!);
}

/** WCAG 2 contrast ratio of two `rgb(…)`/`rgba(…)` colours (alpha ignored: callers pass opaque ones). */
export function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
