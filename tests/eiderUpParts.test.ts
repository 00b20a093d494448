// `eider up`'s parts as the operating system sees them: the object store and the catalog service hold only the
// variables they read (read from /proc/<pid>/environ, not from our own bookkeeping), and stopping the stack stops the
// elastic `process` agents its api started, which run in process groups of their own.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childrenOf, pollUntil, processRunning } from './support/processes.ts';
import { freeUpPorts, startEiderUp } from './support/eiderUp.ts';
import { requestsTo, setupAdmin, SETUP_TOKEN } from './support/api.ts';

const SECRETS = {
  SETUP_TOKEN,
  AGENT_BOOTSTRAP_TOKEN: 'bootstrap-token-value-0123456789',
  INTERNAL_API_SECRET: 'internal-secret-value-0123456789',
  SECRET_KEY: 'secret-key-value-0123456789abcdef',
  OIDC_CLIENT_SECRET: 'oidc-client-secret-value',
  LDAP_BIND_PASSWORD: 'ldap-bind-password-value',
};

const environOf = (pid: number): Record<string, string> =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
const commandOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

describe('eider up parts', () => {
  it('the object store and the catalog service see none of the stack’s other secrets; Ctrl-C stops the elastic agents too', { timeout: 300_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'eider-up-parts-'));
    const ports = await freeUpPorts();
    const up = startEiderUp({ dataDir, ports, env: { ELASTIC_COMPUTE_ENABLED: 'true', ELASTIC_PROVIDER: 'process', ...SECRETS } });
    const child = up.child;
    let elasticPid: number | null = null;
    try {
      await up.ready();
      const parts = childrenOf(child.pid!).map((pid) => ({ pid, argv: commandOf(pid) }));
      const part = (name: string) => parts.find((p) => p.argv.at(-1) === name)!;
      const store = environOf(part('objectstore').pid);
      const catalog = environOf(part('catalog').pid);
      for (const [name, env] of [['objectstore', store], ['catalog', catalog]] as const) {
        for (const variable of ['SETUP_TOKEN', 'AGENT_BOOTSTRAP_TOKEN', 'INTERNAL_API_SECRET', 'OIDC_CLIENT_SECRET', 'LDAP_BIND_PASSWORD']) {
          expect(env[variable], `${name} ${variable}`).toBeUndefined();
        }
        const values = Object.values(env).join('\n');
        for (const v of [SECRETS.SETUP_TOKEN, SECRETS.AGENT_BOOTSTRAP_TOKEN, SECRETS.INTERNAL_API_SECRET, SECRETS.OIDC_CLIENT_SECRET, SECRETS.LDAP_BIND_PASSWORD]) {
          expect(values, name).not.toContain(v);
        }
      }
      // What each one reads stays: the store its root key and the database (revocations), the catalog its own.
      expect(store.SECRET_KEY).toBeUndefined();
      expect(store.CATALOG_CLIENT_SECRET).toBeUndefined();
      expect(store).toHaveProperty('OBJECT_STORE_SECRET_KEY');
      expect(store).toHaveProperty('DATABASE_URL');
      expect(catalog.OBJECT_STORE_SECRET_KEY).toBeUndefined();
      expect(catalog).toMatchObject({ SECRET_KEY: SECRETS.SECRET_KEY, OTEL_SERVICE_NAME: 'eider-catalog' });
      expect(catalog).toHaveProperty('CATALOG_CLIENT_SECRET');
      // The api still has what it needs (it signs agents in, seals backends).
      expect(environOf(part('api').pid)).toMatchObject({ SETUP_TOKEN: SECRETS.SETUP_TOKEN, SECRET_KEY: SECRETS.SECRET_KEY });

      // An elastic agent the api starts runs in a process group of its own (parent: not the stack).
      const req = requestsTo(`http://127.0.0.1:${ports.api}`);
      const admin = await setupAdmin({ req });
      const started = await req('POST', '/api/admin/agents/elastic', { as: admin, body: {} });
      expect(started.status, started.text).toBe(202);
      const root = join(dataDir, 'elastic');
      elasticPid = await pollUntil(
        async () => {
          const dirs = readdirSync(root).filter((d) => /^[0-9a-f-]{36}$/.test(d));
          return dirs.length ? Number(readFileSync(join(root, dirs[0], 'agent.pid'), 'utf8')) : null;
        },
        (pid) => pid !== null && processRunning(pid),
        60_000,
        200,
      );
      expect(childrenOf(child.pid!)).not.toContain(elasticPid);

      await up.stop();
      expect(child.exitCode).toBe(0);
      expect(processRunning(elasticPid!), 'the elastic agent outlived the stack').toBe(false);
      expect(parts.map((p) => p.pid).filter(processRunning)).toEqual([]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (elasticPid !== null && processRunning(elasticPid)) process.kill(-elasticPid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
