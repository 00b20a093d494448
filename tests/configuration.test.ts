// Configuration is honest: docs/configuration.md is the loader's own table, and a variable whose feature is not
// built is never accepted silently (the api logs one warning naming the feature).
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_VARIABLES, unbuiltSettings } from '../runtime/config.ts';
import { renderConfigDocs } from '../bin/configDocs.ts';
import { freshDatabase } from './support/database.ts';
import { freePort } from '../runtime/postgres.ts';

const ROOT = join(import.meta.dirname, '..');

describe('configuration', () => {
  it('docs/configuration.md is generated from the variables the loader accepts', () => {
    const path = join(ROOT, 'docs', 'configuration.md');
    const rendered = renderConfigDocs();
    if (process.env.UPDATE_GENERATED) writeFileSync(path, rendered);
    expect(readFileSync(path, 'utf8')).toBe(rendered);
    for (const name of Object.keys(CONFIG_VARIABLES)) expect(rendered).toContain(`\`${name}\``);
  });

  it('names the variables that are set but whose feature is not built', () => {
    expect(unbuiltSettings({ MIGRATION_RUNNER_TICK_S: '30', DB_AUTH_MODE: 'password', ASSISTANT_ENABLED: 'true', PORT: '8000', MCP_ENABLED: '', LDAP_SERVER_URI: 'ldap://dir', AGENT_METRICS_RETENTION_HOURS: '24' })).toEqual([
      { name: 'DB_AUTH_MODE', feature: 'managed-identity database sign-in' },
      { name: 'AGENT_METRICS_RETENTION_HOURS', feature: 'agent monitoring history' },
    ]);
    expect(unbuiltSettings({ PORT: '8000', DATA_DIR: '/x' })).toEqual([]);
  });

  it('an api given such a variable starts and logs one warning for it', async () => {
    const database = await freshDatabase({ empty: true });
    const dir = mkdtempSync(join(tmpdir(), 'eider-cfgwarn-'));
    const port = await freePort();
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'eider.ts'), 'api'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, PORT: String(port), DATA_DIR: dir, SETUP_TOKEN: 'x'.repeat(24), STORE_ENDPOINT_INTERNAL: 'http://store.example' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise((res) => child.on('exit', res));
    try {
      await expect.poll(() => fetch(`http://127.0.0.1:${port}/api/readyz`).then((r) => r.status, () => 0), { timeout: 60_000, interval: 100 }).toBe(200);
      const warnings = out.split('\n').filter((l) => l.includes('"variable":"STORE_ENDPOINT_INTERNAL"'));
      expect(warnings).toHaveLength(1);
      const feature = 'separate staging signing settings (staging URLs are signed with the catalog backend’s own endpoint and keys)';
      expect(JSON.parse(warnings[0])).toMatchObject({ level: 40, feature, msg: `STORE_ENDPOINT_INTERNAL is set, but ${feature} is not built yet: it has no effect` });
      expect(out).not.toContain('"variable":"PORT"');
    } finally {
      child.kill('SIGTERM');
      await exited;
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
