// The docs are tested like the README: every shell block in README.md and docs/ is either a walk-through this file
// runs against a fresh `eider up` (its printed output compared with the page's), an example another test runs, or
// marked as not runnable with the reason.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unmarkedShellBlocks, walkthroughs } from './support/docsBlock.ts';
import { freeUpPorts, startEiderUp } from './support/eiderUp.ts';

const ROOT = join(import.meta.dirname, '..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
// The order a newcomer follows: members first, then what they run.
const WALKTHROUGH_PAGES = ['docs/roles.md', 'docs/catalogs.md', 'docs/sql-sessions.md', 'docs/schedules.md', 'docs/semantic-layer.md', 'docs/lineage.md', 'docs/mcp.md'];

describe('docs as tests', () => {
  it('every shell block of README.md and docs/ is run by a test or says why it cannot run', () => {
    const unmarked = PAGES.flatMap((page) => unmarkedShellBlocks(readFileSync(join(ROOT, page), 'utf8')).map((line) => `${page}:${line}`));
    expect(unmarked).toEqual([]);
  });

  it('the task pages\' walk-throughs run as written against a fresh eider up and print what the pages show', { timeout: 400_000 }, async () => {
    const all = WALKTHROUGH_PAGES.flatMap((page) => walkthroughs(readFileSync(join(ROOT, page), 'utf8')).map((w) => ({ page, ...w })));
    expect(all.map((w) => w.name).sort()).toEqual(['walkthrough:catalogs', 'walkthrough:lineage', 'walkthrough:mcp', 'walkthrough:members', 'walkthrough:schedules', 'walkthrough:semantic', 'walkthrough:sessions']);
    const dir = mkdtempSync(join(tmpdir(), 'eider-docs-'));
    const ports = await freeUpPorts();
    const port = ports.api;
    const stack = startEiderUp({ dataDir: join(dir, '.eider'), ports, cwd: dir, home: dir, env: { SQL_SESSIONS_ENABLED: 'true', LOG_LEVEL: 'warn' } });
    try {
      await stack.ready();
      // What the README's first steps leave a reader with: URL, PAT, AGENT and the json helper.
      const prelude = `URL=http://127.0.0.1:${port}
json() { node -p "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); $1"; }
curl -s -X POST $URL/api/setup/admin -H "X-Setup-Token: $(cat .eider/setup-token)" -H 'content-type: application/json' \\
  -d '{"email":"you@example.com","password":"a-long-password","name":"You"}' > /dev/null
curl -s -c cookies.txt -X POST $URL/api/auth/login -H 'content-type: application/json' \\
  -d '{"email":"you@example.com","password":"a-long-password"}' > /dev/null
PAT=$(curl -s -b cookies.txt -X POST $URL/api/me/pats -H 'content-type: application/json' -d '{"expires_in_days":1}' | json 'v.token')
AGENT=$(curl -s $URL/api/agents -H "Authorization: Bearer $PAT" | json 'v.find((a) => a.status === "healthy").id')
declare -p URL PAT AGENT > prelude.env
`;
      const setup = spawnSync('bash', ['-euo', 'pipefail', '-c', prelude], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 60_000 });
      expect(setup.status, `${setup.stderr}\n${setup.stdout}`).toBe(0);
      for (const w of all) {
        const script = `source prelude.env\njson() { node -p "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); $1"; }\n${w.script}`;
        const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 120_000 });
        expect(run.status, `${w.page} ${w.name}: ${run.stderr}\n${run.stdout}`).toBe(0);
        if (w.output !== null) expect(run.stdout, `${w.page} ${w.name}`).toBe(w.output);
      }
    } finally {
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
