// Serves the app the way the api does (registerUi over a fresh Vite build of the current source) in front of a
// real api started by startTestApi: browser navigations and assets are answered by registerUi, everything under the
// api's prefixes is passed through unchanged to the api, so the browser talks to one origin as in production.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Fastify from 'fastify';
import { registerUi } from '../../../http/ui.ts';
import type { TestApi } from '../../support/api.ts';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Builds the app into a folder of its own (test files run in parallel; they must not share ui/dist). */
function buildUi(): string {
  const out = mkdtempSync(join(ROOT, '.test-data', 'ui-dist-'));
  execFileSync(join(ROOT, 'node_modules/.bin/vite'), ['build', '--config', 'ui/vite.config.ts', '--outDir', out, '--logLevel', 'error'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return out;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'accept-encoding']);

export async function serveUi(t: TestApi): Promise<{ url: string; close(): Promise<void> }> {
  const dist = buildUi();
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  registerUi(app, dist);
  app.setNotFoundHandler(async (req, reply) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && typeof v === 'string') headers[k] = v;
    // As a reverse proxy does: the api checks a browser's Origin against the host the browser addressed.
    if (req.headers.host) headers['x-forwarded-host'] = req.headers.host;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && Buffer.isBuffer(req.body);
    const res = await fetch(t.url + req.url, { method: req.method, headers, body: hasBody ? new Uint8Array(req.body as Buffer) : undefined, redirect: 'manual' });
    reply.status(res.status);
    res.headers.forEach((v, k) => {
      if (k !== 'set-cookie' && k !== 'content-encoding' && k !== 'content-length' && k !== 'transfer-encoding') reply.header(k, v);
    });
    const cookies = res.headers.getSetCookie();
    if (cookies.length) reply.header('set-cookie', cookies);
    return reply.send(Buffer.from(await res.arrayBuffer()));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await app.close();
      rmSync(dist, { recursive: true, force: true });
    },
  };
}
