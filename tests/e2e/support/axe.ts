// axe-core's critical and serious violations on what a page shows now, evaluated through the debugging protocol:
// the app's Content-Security-Policy (rightly) refuses the inline script an injected <script> tag would be.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

const axeSource = readFileSync(join(import.meta.dirname, '../../../node_modules/axe-core/axe.min.js'), 'utf8');

export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const r = await (window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe.run();
    return r.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
  });
}
