// HTTP server for result files: GET/HEAD /results/{query_id}.parquet, answered only for
// `Authorization: Bearer <the agent's session token>`, with single byte ranges (the api decodes pages with range
// requests instead of downloading whole files).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createHash, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Logger } from './logger.ts';

const RESULT_PATH = /^\/results\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.parquet$/i;

export interface ResultServerOptions {
  readonly resultsDir: string;
  readonly host: string;
  readonly port: number;
  /** The current session token, or null before the first auth_ok. Read per request: it can be reissued. */
  readonly sessionToken: () => string | null;
  readonly logger: Logger;
}

export interface ResultServer {
  readonly port: number;
  close(): Promise<void>;
}

export type ByteRange = { start: number; end: number } | 'unsatisfiable' | null;

/**
 * Parse a Range header against a file size. null = serve the whole file (absent, malformed or multi-range headers
 * are ignored, as RFC 9110 allows); 'unsatisfiable' = answer 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function authorized(header: string | undefined, token: string | null): boolean {
  if (token === null || header === undefined) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return false;
  // Compare fixed-length digests in constant time, so neither the token's content nor its length leaks by timing.
  return timingSafeEqual(digest(m[1]), digest(token));
}

function sendError(res: ServerResponse, status: number, error: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error, message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

async function handle(req: IncomingMessage, res: ServerResponse, options: ResultServerOptions): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  const match = RESULT_PATH.exec(path);
  if (!match) return sendError(res, 404, 'not_found', 'no such route');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(res, 405, 'bad_request', 'method not allowed', { allow: 'GET, HEAD' });
  }
  if (!authorized(req.headers.authorization, options.sessionToken())) {
    return sendError(res, 401, 'unauthorized', 'a valid agent session token is required', { 'www-authenticate': 'Bearer' });
  }
  const file = join(options.resultsDir, `${match[1].toLowerCase()}.parquet`);
  let size: number;
  let modified: Date;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new Error('not a file');
    size = info.size;
    modified = info.mtime;
  } catch {
    return sendError(res, 404, 'not_found', 'result not found (expired or never written)');
  }
  const common = {
    'content-type': 'application/vnd.apache.parquet',
    'accept-ranges': 'bytes',
    'last-modified': modified.toUTCString(),
    'cache-control': 'no-store',
  };
  const range = parseRange(req.headers.range, size);
  if (range === 'unsatisfiable') {
    return sendError(res, 416, 'range_not_satisfiable', 'requested range is outside the file', { 'content-range': `bytes */${size}` });
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  const length = size === 0 ? 0 : end - start + 1;
  const headers: Record<string, string | number> = { ...common, 'content-length': length };
  if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD' || length === 0) {
    res.end();
    return;
  }
  const stream = createReadStream(file, { start, end });
  stream.on('error', (error) => {
    options.logger.warn({ err: error.message, queryId: match[1] }, 'result read failed');
    res.destroy();
  });
  stream.pipe(res);
}

export async function startResultServer(options: ResultServerOptions): Promise<ResultServer> {
  const server: Server = createServer((req, res) => {
    handle(req, res, options).catch((error: unknown) => {
      options.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'result server error');
      if (!res.headersSent) sendError(res, 500, 'internal_error', 'internal error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port, host: options.host }, 'result server listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
