// The app's serving, inside the real server (real routes, real error envelope): long-lived caching for hashed
// assets, no-cache for index.html, the SPA fallback for browser navigations only, and the api's own prefixes left
// to the api.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildServer } from './server.ts';
import { allRoutes } from './routes/index.ts';
import { registerUi } from './ui.ts';
import { startTestApi, type TestApi } from '../tests/support/api.ts';

let t: TestApi;
let app: FastifyInstance;
let missing: FastifyInstance;
const dist = mkdtempSync(join(tmpdir(), 'eider-ui-dist-'));
const bigJs = 'console.log("eider");\n'.repeat(500);
const themeScript = 'document.documentElement.dataset.theme = "dark";';

beforeAll(async () => {
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), `<!doctype html><script>${themeScript}</script><script type="module" src="/assets/index-AbC123.js"></script><div id="root"></div>`);
  writeFileSync(join(dist, 'assets', 'index-AbC123.js'), bigJs);
  writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(tmpdir(), 'eider-ui-secret.txt'), 'outside');
  t = await startTestApi();
  app = await buildServer({ ctx: t.api.ctx, routes: allRoutes, extend: (a) => registerUi(a, dist) });
  missing = await buildServer({ ctx: t.api.ctx, routes: allRoutes, extend: (a) => registerUi(a, join(dist, 'nope')) });
});

afterAll(async () => {
  await app?.close();
  await missing?.close();
  await t?.close();
  rmSync(dist, { recursive: true, force: true });
});

const html = { accept: 'text/html,application/xhtml+xml' };

describe('registerUi', () => {
  it('serves index.html at / without caching', async () => {
    const r = await app.inject({ method: 'GET', url: '/', headers: html });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/html');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.body).toContain('id="root"');
  });

  it('sends a Content-Security-Policy allowing its own scripts (the inline one by hash) and no framing', async () => {
    const r = await app.inject({ method: 'GET', url: '/', headers: html });
    const csp = String(r.headers['content-security-policy']);
    const hash = createHash('sha256').update(themeScript).digest('base64');
    expect(csp).toContain(`script-src 'self' 'sha256-${hash}'`);
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(r.headers['x-frame-options']).toBe('DENY');
    const notBuilt = await missing.inject({ method: 'GET', url: '/', headers: html });
    expect(notBuilt.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('serves hashed assets with a year of immutable caching, gzipped when asked', async () => {
    const plain = await app.inject({ method: 'GET', url: '/assets/index-AbC123.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-type']).toContain('text/javascript');
    expect(plain.body).toBe(bigJs);
    const gz = await app.inject({ method: 'GET', url: '/assets/index-AbC123.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(Number(gz.headers['content-length'])).toBeLessThan(bigJs.length / 10);
    expect(gunzipSync(gz.rawPayload).toString()).toBe(bigJs);
  });

  it('answers browser navigations to app routes with index.html (deep links, reloads)', async () => {
    for (const url of ['/w/default/worksheets', '/w/default/catalog/warehouse/sales/orders', '/admin/users?x=1']) {
      const r = await app.inject({ method: 'GET', url, headers: html });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.body).toContain('id="root"');
    }
  });

  it('does not answer non-HTML requests, missing assets or other files with the app', async () => {
    const json = await app.inject({ method: 'GET', url: '/w/default/worksheets', headers: { accept: 'application/json' } });
    expect(json.statusCode).toBe(404);
    expect(json.json().error).toBe('not_found');
    const asset = await app.inject({ method: 'GET', url: '/assets/gone-123.js', headers: html });
    expect(asset.statusCode).toBe(404);
    const other = await app.inject({ method: 'GET', url: '/favicon.svg' });
    expect(other.statusCode).toBe(200);
    expect(other.headers['cache-control']).toBe('no-cache');
  });

  it('never escapes the dist folder', async () => {
    for (const url of ['/../eider-ui-secret.txt', '/%2e%2e/eider-ui-secret.txt', '/assets/..%2f..%2feider-ui-secret.txt']) {
      const r = await app.inject({ method: 'GET', url });
      expect(r.body, url).not.toContain('outside');
    }
  });

  it('leaves /api, /agents/connect, /internal and /mcp to the api: its routes, 404 and 405 envelopes', async () => {
    const version = await app.inject({ method: 'GET', url: '/api/version', headers: html });
    expect(version.statusCode).toBe(200);
    expect(version.json().api_version).toBe(2);
    for (const url of ['/api/nothing-here', '/agents/connect/whatever', '/internal/x', '/mcp/x']) {
      const r = await app.inject({ method: 'GET', url, headers: html });
      expect(r.statusCode, url).toBe(404);
      expect(r.json().error).toBe('not_found');
    }
    // The app's own agent screens reload: only the socket path is the api's.
    for (const url of ['/agents', '/agents/3b0d2f5e-0000-4000-8000-000000000000']) {
      const r = await app.inject({ method: 'GET', url, headers: html });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['content-type']).toContain('text/html');
    }
    const wrongMethod = await app.inject({ method: 'GET', url: '/api/setup/admin', headers: html });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.json().error).toBe('bad_request');
  });

  it('without a build, / says how to build the UI', async () => {
    const r = await missing.inject({ method: 'GET', url: '/', headers: html });
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('not built');
    expect(r.body).toContain('npm run build:ui');
    const deep = await missing.inject({ method: 'GET', url: '/w/default/history', headers: html });
    expect(deep.body).toContain('not built');
  });
});
