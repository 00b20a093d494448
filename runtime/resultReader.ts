// Reads one page of a query's result rows from the agent's result server (GET /results/{id}.parquet, Bearer session
// token, HTTP Range) and decodes it with hyparquet. Invariant I1 (docs/invariants.md): no DuckDB here, and never the whole file.
//
// Costs. The footer is read once per file (HEAD for the size, then a suffix range) and kept in an LRU. A page then
// fetches the column chunks of the row groups it overlaps, nothing else: DuckDB writes no page index and one data
// page per column chunk, so a row group is the smallest unit that can be fetched or decoded. The decoded row group
// is kept in a byte-bounded LRU so the next pages of the same group (a client paging by 100 through a 16k-row group)
// cost no fetch and no decode. Cached values are hyparquet's raw decode; each page converts its own rows, so no two
// callers share a row object. Both caches are keyed by url and a digest of the token: a cache hit never serves
// bytes to a token the agent has not accepted.
import { createHash } from 'node:crypto';
import { parquetMetadataAsync, parquetRead, parquetSchema } from 'hyparquet';
import type { AsyncBuffer, FileMetaData, SchemaTree } from 'hyparquet';
import { converterFor, decodingMetadata, parseDuckType, RAW_PARSERS, type Convert } from './resultValues.ts';

export interface ResultSource {
  url: string;
  /** The agent's session token, when reading from the agent's result server itself. */
  bearerToken?: string;
  /** Other request headers (a peer replica's secret, when another replica relays the file). */
  headers?: Record<string, string>;
  fetchImpl?: typeof fetch;
  /** Per HTTP request; default 30 s. */
  timeoutMs?: number;
}

/** DuckDB type spelling as DESCRIBE prints it (the query's column_schema). */
export interface ColumnType {
  name: string;
  type: string;
}

interface RowsPage {
  rows: Record<string, unknown>[];
  columns: string[];
  /** Offset of the next page, null after the last row. */
  nextOffset: number | null;
}

export interface ResultFile {
  readonly numRows: number;
  readonly columns: readonly string[];
  readPage(offset: number, limit: number, columnSchema: ColumnType[] | null): Promise<RowsPage>;
}

export type ResultUnavailableReason = 'not_found' | 'unauthorized' | 'unreachable' | 'bad_response';

/**
 * The result cannot be read: gone (retention: 404), refused (401), agent unreachable or too slow (no status), or an
 * answer that is not the requested bytes. `status` is the agent's HTTP status when there was one.
 */
export class ResultUnavailableError extends Error {
  readonly reason: ResultUnavailableReason;
  readonly status?: number;

  constructor(reason: ResultUnavailableReason, message: string, status?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ResultUnavailableError';
    this.reason = reason;
    if (status !== undefined) this.status = status;
  }
}

/** Where the agent's result server puts a refusal's code and (URI-encoded) message. */
const ERROR_CODE_HEADER = 'x-eider-error';
const ERROR_MESSAGE_HEADER = 'x-eider-message';

/** The agent refused a view or export of a result as asked (an unknown column, a value not of its type): 400. */
export class ResultRequestError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ResultRequestError';
    this.code = code;
  }
}

// 64 KiB holds a typical footer in one read (1M rows x 10 columns in 16k-row groups: ~55 KiB); a larger footer
// costs one more range request.
const FOOTER_FETCH_BYTES = 64 * 1024;
// A parsed footer of a wide file with many row groups runs to a few MB of objects.
const FOOTER_CACHE_ENTRIES = 128;
// Decoded row groups, counted by their uncompressed Parquet size (JS values take roughly 2-4x that on the heap).
const GROUP_CACHE_BYTES = 48 * 2 ** 20;
// A larger group is decoded for the requested rows only and not kept: one entry must not flush the whole cache.
const GROUP_CACHE_MAX_ENTRY_BYTES = GROUP_CACHE_BYTES / 4;
const DEFAULT_TIMEOUT_MS = 30_000;

interface Footer {
  readonly key: string;
  readonly byteLength: number;
  /** The footer hyparquet decodes with (see resultValues.ts); converters read the original's schema tree. */
  readonly decoding: FileMetaData;
  readonly nodes: readonly SchemaTree[];
  readonly columns: readonly string[];
  readonly numRows: number;
  /** Per row group: first row, row count, uncompressed bytes. */
  readonly groups: readonly { start: number; rows: number; bytes: number }[];
}

interface CachedGroup {
  readonly bytes: number;
  readonly rows: Promise<unknown[][]>;
}

// Map order is recency order, oldest first.
const footers = new Map<string, Promise<Footer>>();
const decodedGroups = new Map<string, CachedGroup>();
let decodedBytes = 0;

function cacheKey(src: ResultSource): string {
  const credential = src.bearerToken ?? JSON.stringify(src.headers ?? {});
  return `${src.url} ${createHash('sha256').update(credential).digest('base64url')}`;
}

function touch<V>(map: Map<string, V>, key: string): V | undefined {
  const value = map.get(key);
  if (value !== undefined) {
    map.delete(key);
    map.set(key, value);
  }
  return value;
}

function dropGroup(key: string, entry?: CachedGroup): void {
  const cached = decodedGroups.get(key);
  if (cached === undefined || (entry !== undefined && cached !== entry)) return;
  decodedGroups.delete(key);
  decodedBytes -= cached.bytes;
}

/** The file is gone or changed: forget everything cached for its url, whatever the token. */
function forgetUrl(url: string): void {
  const prefix = `${url} `;
  for (const key of [...footers.keys()]) if (key.startsWith(prefix)) footers.delete(key);
  for (const key of [...decodedGroups.keys()]) if (key.startsWith(prefix)) dropGroup(key);
}

/**
 * One request to the agent's result server (or the replica relaying it); a refusal becomes its error. `headersOnly`:
 * the timeout covers the answer's headers, not its body (an export streams for as long as it takes).
 */
async function request(src: ResultSource, init: RequestInit, what: string, headersOnly = false): Promise<Response> {
  const doFetch = src.fetchImpl ?? fetch;
  let response: Response;
  // A page's reads time out as a whole; an export only until its headers come.
  const ctl = new AbortController();
  const timeoutMs = src.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timer = headersOnly ? setTimeout(() => ctl.abort(new Error('timed out')), timeoutMs) : undefined;
  const signal = headersOnly ? ctl.signal : AbortSignal.timeout(timeoutMs);
  try {
    response = await doFetch(src.url, {
      ...init,
      headers: {
        ...(init.headers as Record<string, string>),
        ...src.headers,
        ...(src.bearerToken ? { authorization: `Bearer ${src.bearerToken}` } : {}),
      },
      signal: init.signal ? AbortSignal.any([signal, init.signal]) : signal,
    });
  } catch (error) {
    throw new ResultUnavailableError('unreachable', `agent result server unreachable (${what})`, undefined, { cause: error });
  } finally {
    clearTimeout(timer);
  }
  if (response.status === 400) {
    // In headers too: the answer to a HEAD (the first read of a view) has no body.
    await response.body?.cancel();
    const code = response.headers.get(ERROR_CODE_HEADER);
    const message = response.headers.get(ERROR_MESSAGE_HEADER);
    throw new ResultRequestError(code && /^[a-z_]{1,64}$/.test(code) ? code : 'bad_request', message ? decodeURIComponent(message) : 'the agent refused the request');
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    throw new ResultUnavailableError('unauthorized', 'agent refused the session token', response.status);
  }
  if (response.status === 404 || response.status === 410) {
    await response.body?.cancel();
    forgetUrl(src.url);
    throw new ResultUnavailableError('not_found', 'result file not found on the agent (expired or never written)', response.status);
  }
  return response;
}

async function byteLengthOf(src: ResultSource): Promise<number> {
  const response = await request(src, { method: 'HEAD' }, 'HEAD');
  const length = Number(response.headers.get('content-length'));
  await response.body?.cancel();
  if (response.status !== 200 || !Number.isSafeInteger(length) || length < 0) {
    throw new ResultUnavailableError('bad_response', `unexpected answer to HEAD (${response.status})`, response.status);
  }
  return length;
}

/** An AsyncBuffer over single-range GETs; refuses anything but exactly the requested bytes. */
function rangeFile(src: ResultSource, byteLength: number): AsyncBuffer {
  return {
    byteLength,
    async slice(start: number, end: number = byteLength): Promise<ArrayBuffer> {
      if (end <= start) return new ArrayBuffer(0);
      const response = await request(src, { method: 'GET', headers: { range: `bytes=${start}-${end - 1}` } }, 'range');
      if (response.status !== 206) {
        // A 200 would be the whole file: never read it to serve one page.
        await response.body?.cancel();
        if (response.status === 416) forgetUrl(src.url);
        throw new ResultUnavailableError('bad_response', `unexpected answer to a range request (${response.status})`, response.status);
      }
      let body: ArrayBuffer;
      try {
        body = await response.arrayBuffer();
      } catch (error) {
        throw new ResultUnavailableError('unreachable', 'agent result server dropped the response', undefined, { cause: error });
      }
      if (body.byteLength !== end - start) {
        throw new ResultUnavailableError('bad_response', `range answer has ${body.byteLength} bytes, expected ${end - start}`, response.status);
      }
      return body;
    },
  };
}

/** A result file held in memory. */
function memoryFile(bytes: Uint8Array): AsyncBuffer {
  return {
    byteLength: bytes.byteLength,
    slice: (start: number, end: number = bytes.byteLength) => bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + Math.min(end, bytes.byteLength)) as ArrayBuffer,
  };
}

async function loadFooter(src: ResultSource, key: string): Promise<Footer> {
  return readFooter(key, rangeFile(src, await byteLengthOf(src)));
}

async function readFooter(key: string, file: AsyncBuffer): Promise<Footer> {
  const byteLength = file.byteLength;
  const metadata = await parquetMetadataAsync(file, { initialFetchSize: FOOTER_FETCH_BYTES });
  const nodes = parquetSchema(metadata).children;
  const columns = nodes.map((n) => n.element.name);
  // hyparquet addresses top-level columns by name, so two equal names could not be told apart. The agent writes
  // unique names (`a`, `a_1`), so this only guards against files it did not write.
  if (new Set(columns).size !== columns.length) throw new Error('result file has duplicate column names');
  let start = 0;
  const groups = metadata.row_groups.map((g) => {
    const group = { start, rows: Number(g.num_rows), bytes: Number(g.total_byte_size) };
    start += group.rows;
    return group;
  });
  return { key, byteLength, decoding: decodingMetadata(metadata), nodes, columns, numRows: Number(metadata.num_rows), groups };
}

/** Opens the result file: its footer from the cache (LRU by url and token), else one HEAD and footer range reads. */
export async function openResult(src: ResultSource): Promise<ResultFile> {
  const key = cacheKey(src);
  let entry = touch(footers, key);
  if (entry === undefined) {
    const loading = loadFooter(src, key);
    entry = loading;
    footers.set(key, loading);
    loading.catch(() => {
      if (footers.get(key) === loading) footers.delete(key);
    });
    while (footers.size > FOOTER_CACHE_ENTRIES) footers.delete(footers.keys().next().value as string);
  }
  const footer = await entry;
  return new PagedResult(rangeFile(src, footer.byteLength), footer);
}

/**
 * A result file the api holds itself (a small result the agent sent in its query_done frame), under `key` (unique
 * to the query) in the decoded-groups cache. Its footer is parsed on every open: for a file this small that costs
 * less than keeping it.
 */
export async function openResultBytes(key: string, bytes: Uint8Array): Promise<ResultFile> {
  const file = memoryFile(bytes);
  return new PagedResult(file, await readFooter(`inline:${key}`, file));
}

function convertersFor(footer: Footer, columnSchema: ColumnType[] | null): Convert[] {
  return footer.nodes.map((node, i) => {
    // column_schema and the file carry the same names in the same order; match by name first in case they differ.
    const declared =
      columnSchema?.find((c) => c.name === node.element.name) ??
      (columnSchema?.length === footer.nodes.length ? columnSchema[i] : undefined);
    return converterFor(node, declared ? parseDuckType(declared.type) : null);
  });
}

function toObject(names: readonly string[], converters: readonly Convert[], values: readonly unknown[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) {
    const value = converters[i](values[i]);
    // A column may be named "__proto__": plain assignment would set the prototype instead.
    if (names[i] === '__proto__') Object.defineProperty(row, names[i], { value, enumerable: true, writable: true, configurable: true });
    else row[names[i]] = value;
  }
  return row;
}

/** hyparquet's raw decode of rows [rowStart, rowEnd), one array of top-level column values per row. */
async function decodeRows(file: AsyncBuffer, footer: Footer, rowStart: number, rowEnd: number): Promise<unknown[][]> {
  let decoded: unknown[][] = [];
  await parquetRead({
    file,
    metadata: footer.decoding,
    rowStart,
    rowEnd,
    utf8: false, // unannotated BYTE_ARRAY is BLOB: keep the bytes (base64); VARCHAR is annotated
    parsers: RAW_PARSERS,
    rowFormat: 'array',
    onComplete: (rows: unknown[][]) => {
      decoded = rows;
    },
  });
  if (decoded.length !== rowEnd - rowStart) throw new Error(`decoded ${decoded.length} rows, expected ${rowEnd - rowStart}`);
  return decoded;
}

class PagedResult implements ResultFile {
  readonly #file: AsyncBuffer;
  readonly #footer: Footer;

  constructor(file: AsyncBuffer, footer: Footer) {
    this.#file = file;
    this.#footer = footer;
  }

  get numRows(): number {
    return this.#footer.numRows;
  }

  get columns(): readonly string[] {
    return this.#footer.columns;
  }

  async readPage(offset: number, limit: number, columnSchema: ColumnType[] | null): Promise<RowsPage> {
    if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError('offset must be a non-negative integer');
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    const footer = this.#footer;
    const columns = [...footer.columns];
    if (offset >= footer.numRows) return { rows: [], columns, nextOffset: null };
    const rowEnd = Math.min(footer.numRows, offset + limit);
    const file = this.#file;
    const parts = await Promise.all(
      footer.groups
        .map((group, index) => ({ ...group, index }))
        .filter((g) => g.rows > 0 && g.start < rowEnd && g.start + g.rows > offset)
        .map(async (g) => {
          const from = Math.max(offset, g.start);
          const to = Math.min(rowEnd, g.start + g.rows);
          if (g.bytes > GROUP_CACHE_MAX_ENTRY_BYTES) return decodeRows(file, footer, from, to);
          const rows = await this.#wholeGroup(file, g.index, g.start, g.rows, g.bytes);
          return rows.slice(from - g.start, to - g.start);
        }),
    );
    const converters = convertersFor(footer, columnSchema);
    const rows: Record<string, unknown>[] = [];
    for (const part of parts) for (const values of part) rows.push(toObject(columns, converters, values));
    return { rows, columns, nextOffset: rowEnd < footer.numRows ? rowEnd : null };
  }

  #wholeGroup(file: AsyncBuffer, index: number, start: number, rows: number, bytes: number): Promise<unknown[][]> {
    const key = `${this.#footer.key} ${index}`;
    const cached = touch(decodedGroups, key);
    if (cached) return cached.rows;
    const entry: CachedGroup = { bytes, rows: decodeRows(file, this.#footer, start, start + rows) };
    decodedGroups.set(key, entry);
    decodedBytes += bytes;
    entry.rows.catch(() => dropGroup(key, entry));
    while (decodedBytes > GROUP_CACHE_BYTES && decodedGroups.size > 1) dropGroup(decodedGroups.keys().next().value as string);
    return entry.rows;
  }
}

export interface ResultDownload {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  contentLength: number | null;
}

/**
 * A whole file from the agent's result server (an export), as a stream: the api passes it on as it arrives and never
 * holds it. `signal` aborts it (the client went away).
 */
export async function downloadResult(src: ResultSource, signal?: AbortSignal): Promise<ResultDownload> {
  const response = await request(src, { method: 'GET', ...(signal ? { signal } : {}) }, 'export', true);
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel();
    throw new ResultUnavailableError('bad_response', `unexpected answer to an export (${response.status})`, response.status);
  }
  const length = Number(response.headers.get('content-length'));
  return {
    body: response.body,
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    contentLength: response.headers.has('content-length') && Number.isSafeInteger(length) ? length : null,
  };
}
