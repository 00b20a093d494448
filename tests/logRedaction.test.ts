// No secret reaches a log line: nested and camelCase credential fields are redacted by the api's (and catalog
// service's) logger and by the agent's, as written by real processes to their stdout.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SECRETS = ['s3cr3t-client', 'AKIA-root-key', 'wJalr-secret-key', 'setup-tok-123', 'eid_agent_abc', 'pg-pass-9', 'Bearer xyz', 'sid=cookie'];
const SAMPLE = {
  catalog: { clientSecret: 's3cr3t-client', auth: { credentials: { accessKeyId: 'AKIA-root-key', secretAccessKey: 'wJalr-secret-key' } } },
  setupToken: 'setup-tok-123',
  agents: [{ name: 'a', sessionToken: 'eid_agent_abc' }],
  db: { databaseUrl: 'postgres://eider:pg-pass-9@db/eider', POSTGRES_PASSWORD: 'pg-pass-9' },
  req: { headers: { Authorization: 'Bearer xyz', Cookie: 'sid=cookie' } },
  keep: { rows: 3, name: 'visible' },
};

function logsOf(module: string, make: string): string {
  const script = `import * as m from ${JSON.stringify(resolve(ROOT, module))};
const log = ${make};
const sample = ${JSON.stringify(SAMPLE)};
log.info(sample, 'nested');
log.child({ catalogClientSecret: 's3cr3t-client' }).warn({ deeper: { a: { b: { apiKey: 'AKIA-root-key' } } } }, 'child');`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: ROOT });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe('log redaction', () => {
  it.each([
    ['api and catalog service', 'runtime/logger.ts', "m.createLogger({ level: 'info', name: 'api' })"],
    ['agent', 'agent/logger.ts', "m.createAgentLogger({ level: 'info', name: 'agent' })"],
  ])('%s: nothing secret in the output, the rest intact', (_, module, make) => {
    const out = logsOf(module, make);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.msg)).toEqual(['nested', 'child']);
    for (const s of SECRETS) expect(out, s).not.toContain(s);
    expect(lines[0].keep).toEqual({ rows: 3, name: 'visible' });
    expect(lines[0].catalog.clientSecret).toBe('[redacted]');
    expect(lines[0].agents[0]).toEqual({ name: 'a', sessionToken: '[redacted]' });
  });
});
