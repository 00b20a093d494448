// The bundled agent runs user SQL: the process `eider up` spawns for it must not see the stack's secrets.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { agentEnvironment, bundledResultsPort } from '../bin/agentEnv.ts';

describe('bundled agent environment', () => {
  it('a spawned agent process sees only what an agent needs', () => {
    const parent = {
      PATH: process.env.PATH,
      DATA_DIR: '/data',
      LOG_LEVEL: 'info',
      CATALOG_CLIENT_SECRET: 'catalog-secret-value',
      OBJECT_STORE_SECRET_KEY: 'root-store-key',
      OBJECT_STORE_ACCESS_KEY: 'root-store-id',
      SETUP_TOKEN: 'setup-token-value',
      SECRET_KEY: 'secret-key-value',
      DATABASE_URL: 'postgres://eider:pw@db/eider',
      POSTGRES_PASSWORD: 'pw',
      AGENT_BOOTSTRAP_TOKEN: 'boot-token-value',
      AWS_SECRET_ACCESS_KEY: 'aws',
      MEMORY_HEADROOM_FRACTION: '0.2',
    };
    const env = agentEnvironment(parent, { CONTROL_PLANE_URL: 'ws://127.0.0.1:8000/agents/connect', BOOTSTRAP_TOKEN: 'boot-token-value', AGENT_NAME: 'bundled' });
    // what a real child process started with it can read
    const seen = JSON.parse(spawnSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(process.env))'], { env, encoding: 'utf8' }).stdout);
    for (const secret of ['CATALOG_CLIENT_SECRET', 'OBJECT_STORE_SECRET_KEY', 'OBJECT_STORE_ACCESS_KEY', 'SETUP_TOKEN', 'SECRET_KEY', 'DATABASE_URL', 'POSTGRES_PASSWORD', 'AGENT_BOOTSTRAP_TOKEN', 'AWS_SECRET_ACCESS_KEY']) {
      expect(seen[secret], secret).toBeUndefined();
    }
    const values = JSON.stringify(seen);
    for (const v of ['catalog-secret-value', 'root-store-key', 'setup-token-value', 'secret-key-value', 'postgres://']) expect(values).not.toContain(v);
    expect(seen).toMatchObject({ CONTROL_PLANE_URL: 'ws://127.0.0.1:8000/agents/connect', BOOTSTRAP_TOKEN: 'boot-token-value', AGENT_NAME: 'bundled', DATA_DIR: '/data', MEMORY_HEADROOM_FRACTION: '0.2' });
  });

  it("moves the agent's result server off a port another part of the stack listens on, unless it was set", () => {
    // API_REPLICAS=3 under the default PORT: api-2 listens on 8001, the result server's default.
    expect(bundledResultsPort({}, [8000, 8001, 8002, 8181, 9000])).toBe('0');
    expect(bundledResultsPort({}, [8000, 8181, 9000])).toBeUndefined();
    expect(bundledResultsPort({ RESULTS_HTTP_PORT: '8001' }, [8000, 8001])).toBeUndefined();
  });
});
