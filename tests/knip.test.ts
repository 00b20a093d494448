// No dead weight: knip finds no unused file, no unused or unlisted dependency and no unlisted binary outside the
// entry points knip.jsonc declares. (Unused exports are reported by `npx knip` too; they are not a failure here.)
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const KNIP = join(ROOT, 'node_modules', 'knip', 'bin', 'knip.js');

describe('knip', () => {
  it('reports no unused file or dependency and nothing unlisted', { timeout: 180_000 }, () => {
    const r = spawnSync(process.execPath, [KNIP, '--no-progress', '--include', 'files,dependencies,unlisted,binaries,unresolved'], { cwd: ROOT, encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
  });
});
