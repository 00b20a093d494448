// Serves the built single-page app (ui/dist) from the api: hashed assets cached for a year, index.html never cached,
// and any browser navigation outside the api's own prefixes answered with index.html so deep links work.
// Everything else (an unknown /api path, a missing asset) falls through to the server's error envelope.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Path prefixes that belong to the api, the agent socket, replicas and MCP: never answered with the app. The
 *  socket is `/agents/connect` alone: `/agents` and `/agents/{id}` are the app's own screens and must reload. */
const RESERVED_PREFIXES = ['/api', '/agents/connect', '/internal', '/mcp'];

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.svg', '.txt', '.map']);

const IMMUTABLE = 'public, max-age=31536000, immutable';

const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Eider</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>Eider</h1><p>The web app is not built yet. Build it with <code>npm run build:ui</code> (a fresh
<code>npm install</code> does this for you), then reload this page.</p>
<p>The REST API is available at <a href="/api/docs">/api/docs</a>.</p></body></html>`;

/**
 * The app's Content-Security-Policy: its own scripts only (the inline theme script of index.html by its hash), so an
 * injected script cannot run; no framing by any page (clickjacking), no plugins, forms posting only here, and
 * requests only to this origin. Styles may be inline: the editor and charts set them at run time.
 */
function contentSecurityPolicy(inlineScriptHashes: readonly string[]): string {
  return [
    "default-src 'self'",
    `script-src 'self'${inlineScriptHashes.map((h) => ` '${h}'`).join('')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** sha256 sources of the inline scripts of an HTML page, for script-src. */
function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => `sha256-${createHash('sha256').update(m[1]).digest('base64')}`);
}

function isReservedPath(path: string): boolean {
  return RESERVED_PREFIXES.some((p) => path === p || path.startsWith(p + '/'));
}

function acceptsHtml(req: FastifyRequest): boolean {
  const accept = String(req.headers.accept ?? '');
  return accept.includes('text/html');
}

function acceptsGzip(req: FastifyRequest): boolean {
  return /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
}

/**
 * Registers the app on `app` (call before the server is ready). `distDir` is the Vite output folder; it may be
 * missing or appear later (a build after start is picked up without a restart).
 */
export function registerUi(app: FastifyInstance, distDir: string): void {
  const root = resolve(distDir);
  // Gzipped copies of compressible files, built on first request; keyed by path and mtime so a rebuild is seen.
  const gzipCache = new Map<string, { mtimeMs: number; body: Buffer }>();

  // The policy for index.html, keyed by its mtime so a rebuild's new inline script is hashed again.
  let policy: { mtimeMs: number; csp: string } | undefined;
  const policyFor = (file: string, mtimeMs: number) => {
    if (!policy || policy.mtimeMs !== mtimeMs) policy = { mtimeMs, csp: contentSecurityPolicy(inlineScriptHashes(readFileSync(file, 'utf8'))) };
    return policy.csp;
  };

  const sendFile = (req: FastifyRequest, reply: FastifyReply, file: string, cacheControl: string) => {
    const ext = extname(file).toLowerCase();
    const st = statSync(file);
    if (ext === '.html') reply.header('content-security-policy', policyFor(file, st.mtimeMs));
    // Older browsers read only this for framing.
    reply.header('x-frame-options', 'DENY');
    reply.header('content-type', CONTENT_TYPES[ext] ?? 'application/octet-stream');
    reply.header('cache-control', cacheControl);
    reply.header('last-modified', st.mtime.toUTCString());
    reply.header('x-content-type-options', 'nosniff');
    if (COMPRESSIBLE.has(ext) && st.size > 1024) {
      reply.header('vary', 'accept-encoding');
      if (acceptsGzip(req)) {
        let cached = gzipCache.get(file);
        if (!cached || cached.mtimeMs !== st.mtimeMs) {
          cached = { mtimeMs: st.mtimeMs, body: gzipSync(readFileSync(file), { level: 9 }) };
          gzipCache.set(file, cached);
        }
        reply.header('content-encoding', 'gzip');
        reply.header('content-length', cached.body.length);
        return reply.status(200).send(cached.body);
      }
    }
    reply.header('content-length', st.size);
    return reply.status(200).send(createReadStream(file));
  };

  const sendIndex = (req: FastifyRequest, reply: FastifyReply) => {
    const index = join(root, 'index.html');
    if (!existsSync(index)) {
      return reply
        .status(200)
        .header('cache-control', 'no-cache')
        .header('content-security-policy', contentSecurityPolicy([]))
        .header('x-frame-options', 'DENY')
        .type('text/html; charset=utf-8')
        .send(NOT_BUILT_PAGE);
    }
    return sendFile(req, reply, index, 'no-cache');
  };

  /** A file under the dist folder for this URL path, or null (never escapes the folder). */
  const fileFor = (urlPath: string): string | null => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(urlPath);
    } catch {
      return null;
    }
    if (decoded.includes('\0')) return null;
    const file = resolve(root, '.' + decoded);
    if (file !== root && !file.startsWith(root + sep)) return null;
    try {
      return statSync(file).isFile() ? file : null;
    } catch {
      return null;
    }
  };

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0];
    if (isReservedPath(path)) return reply.callNotFound();
    if (path === '/' || path === '/index.html') return sendIndex(req, reply);
    const file = fileFor(path);
    if (file) return sendFile(req, reply, file, path.startsWith('/assets/') ? IMMUTABLE : 'no-cache');
    // A navigation to a client-side route (deep link, reload): the app decides what to show.
    if (!path.startsWith('/assets/') && acceptsHtml(req)) return sendIndex(req, reply);
    return reply.callNotFound();
  };

  const schema = { hide: true };
  app.get('/', { schema }, handler);
  app.get('/*', { schema }, handler);
}
