// HTTP server for result files, answered only for `Authorization: Bearer <the agent's session token>`:
//   GET/HEAD /results/{query_id}.parquet                    the result, with single byte ranges (the api decodes pages
//                                                            with range requests instead of downloading whole files)
//   GET/HEAD /results/{query_id}/view.parquet?view=…        a view of it (order, filters; resultViews.ts), likewise
//   GET      /results/{query_id}/export.{csv|parquet|json}?view=…  the result or a view of it, whole, for download
// A view the file cannot take (unknown column, operator, a value not of the column's type) is 400 with its code.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { createHash, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Logger } from './logger.ts';
import { decodeView, EXPORT_FORMATS, EXPORT_MEDIA_TYPES, type ExportFormat, type ResultView } from '../protocol/index.ts';
import { ViewError, type ResultViews } from './resultViews.ts';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const RESULT_PATH = new RegExp(`^/results/(${UUID})(\\.parquet|/view\\.parquet|/export\\.(csv|parquet|json))$`, 'i');

export interface ResultServerOptions {
  readonly resultsDir: string;
  readonly host: string;
  readonly port: number;
  /** The current session token, or null before the first auth_ok. Read per request: it can be reissued. */
  readonly sessionToken: () => string | null;
  readonly logger: Logger;
  /** Views and exports; without it those routes answer 404. */
  readonly views?: ResultViews;
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
  // The code and message in headers too: the answer to a HEAD (the api's first read of a view) carries no body.
  const said = { 'x-eider-error': error, 'x-eider-message': encodeURIComponent(message) };
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...said, ...headers });
  res.end(body);
}

/** The view a request's `view` parameter carries (none: the result as it is); undefined when it is not one. */
function viewOf(req: IncomingMessage): ResultView | undefined {
  const text = new URL(req.url ?? '/', 'http://agent').searchParams.get('view');
  if (text === null || text === '') return { order_by: [], filter: [] };
  return decodeView(text) ?? undefined;
}

async function handle(req: IncomingMessage, res: ServerResponse, options: ResultServerOptions): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  const match = RESULT_PATH.exec(path);
  if (!match) return sendError(res, 404, 'not_found', 'no such route');
  const kind = match[2] === '.parquet' ? 'result' : match[2] === '/view.parquet' ? 'view' : 'export';
  const allowed = kind === 'export' ? ['GET'] : ['GET', 'HEAD'];
  if (!allowed.includes(req.method ?? '')) {
    return sendError(res, 405, 'bad_request', 'method not allowed', { allow: allowed.join(', ') });
  }
  if (!authorized(req.headers.authorization, options.sessionToken())) {
    return sendError(res, 401, 'unauthorized', 'a valid agent session token is required', { 'www-authenticate': 'Bearer' });
  }
  const queryId = match[1].toLowerCase();
  if (kind === 'result') return serveFile(req, res, join(options.resultsDir, `${queryId}.parquet`), EXPORT_MEDIA_TYPES.parquet, options, queryId);
  const views = options.views;
  if (!views) return sendError(res, 404, 'not_found', 'no such route');
  const view = viewOf(req);
  if (!view) return sendError(res, 400, 'invalid_view', 'the view parameter is not a view');
  if (!(await views.has(queryId))) return sendError(res, 404, 'not_found', 'result not found (expired or never written)');
  try {
    if (kind === 'view') {
      return await serveFile(req, res, await views.viewFile(queryId, view), EXPORT_MEDIA_TYPES.parquet, options, queryId);
    }
    const format = match[3].toLowerCase() as ExportFormat;
    if (!EXPORT_FORMATS.includes(format)) return sendError(res, 404, 'not_found', 'no such route');
    const made = await views.exportFile(queryId, view, format);
    const done = () => (made.temporary ? void rm(made.path, { force: true }) : undefined);
    res.once('close', done);
    return await serveFile(req, res, made.path, EXPORT_MEDIA_TYPES[format], options, queryId, false);
  } catch (e) {
    if (e instanceof ViewError) return sendError(res, 400, e.code, e.message);
    throw e;
  }
}

/** A file, whole or (when `ranges`) the single byte range asked for. */
async function serveFile(req: IncomingMessage, res: ServerResponse, file: string, contentType: string, options: ResultServerOptions, queryId: string, ranges = true): Promise<void> {
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
    'content-type': contentType,
    ...(ranges ? { 'accept-ranges': 'bytes' } : {}),
    'last-modified': modified.toUTCString(),
    'cache-control': 'no-store',
  };
  const range = ranges ? parseRange(req.headers.range, size) : null;
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
    options.logger.warn({ err: error.message, queryId }, 'result read failed');
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
