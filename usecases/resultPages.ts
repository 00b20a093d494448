// Result pages: the api decodes only the page asked for from the result's Parquet file, which is either kept in the
// queries row (a small result the agent sent inline) or read from the agent over HTTP with range requests. The cursor is opaque (the next row offset, tied to the query); total is the persisted row_count.
// A page may also be addressed by its row offset, so a reader can jump to any part of the result in one request:
// the web app's grid jumping to the end of 200,000 rows otherwise walked 399 cursors from the start (11.8 s).
import { AppError, badRequest, conflict, unavailable } from '../domain/errors.ts';
import { readHeldResult, type HeldResult, type QueryRow } from '../domain/queries.ts';
import { downloadResult, openResult, openResultBytes, ResultRequestError, ResultUnavailableError, type ResultDownload, type ResultFile } from '../runtime/resultReader.ts';
import { encodeView, isEmptyView, viewProblem, type ExportFormat, type ResultView } from '../protocol/index.ts';
import type { AppContext } from './context.ts';

// A view (docs/api-decisions.md "Result views"): the result in another order or filtered. The agent holding the
// result makes it, from its result file, as a Parquet file of its own that pages are read from like the result's;
// its cursors name the view, so a cursor of one order never continues another.

export interface RowsCursor {
  q: string;
  o: number;
  /** the view's key, when the pages are of a view */
  v?: string;
}

/** What a rows cursor says (the query and the next row offset), or null when it is not one this server issued. */
export function readRowsCursor(cursor: string): RowsCursor | null {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as RowsCursor;
    if (c && typeof c.q === 'string' && Number.isInteger(c.o) && c.o >= 0 && (c.v === undefined || typeof c.v === 'string')) return c;
  } catch {
    // not JSON
  }
  return null;
}

function decodeRowsCursor(cursor: string, queryId: string, viewKey: string | undefined): number {
  const c = readRowsCursor(cursor);
  if (c && c.q === queryId && c.v === viewKey) return c.o;
  throw new AppError(400, 'invalid_cursor', 'cursor is malformed, belongs to another query, or to another order_by or filter');
}

export const encodeRowsCursor = (queryId: string, offset: number, viewKey?: string) =>
  Buffer.from(JSON.stringify(viewKey === undefined ? { q: queryId, o: offset } : { q: queryId, o: offset, v: viewKey })).toString('base64url');

/** Refuses (400) a view that names a column the result does not have, an unknown operator or a missing value. */
function checkView(row: QueryRow, view: ResultView): void {
  const problem = viewProblem(view, row.columns ?? []);
  if (problem) throw new AppError(400, problem.code, problem.message, { ...(problem.column !== undefined ? { column: problem.column } : {}), columns: row.columns ?? [] });
}

/** The agent's answers as the api's: a refused view is 400, a result gone 410, an agent away 503. */
function fromAgent(e: unknown): never {
  if (e instanceof ResultRequestError) throw new AppError(400, e.code, e.message);
  if (e instanceof ResultUnavailableError) {
    if (e.status === 404) throw resultExpired();
    throw unavailable(`could not read the result from the agent: ${e.message}`, 'agent_unavailable');
  }
  throw e;
}

/** Where the agent serves `file` (under /results/) of the row's result; a view is always made by the agent. */
async function agentSource(ctx: AppContext, row: QueryRow, file: string) {
  const source = row.agent_id ? await ctx.link.resultSource(row.agent_id, file) : null;
  if (!source) throw unavailable('the agent holding this result is not connected; retry when it reconnects', 'agent_unavailable');
  return source;
}

/** Where a page starts: the cursor's offset, or a row offset, or else the first row (not cursor and offset both). */
export type PageStart = { cursor?: string; offset?: number };

const resultExpired = () => new AppError(410, 'result_expired', 'the result file is gone (retention); re-run the query from its SQL');

/**
 * The result file: kept in the queries row when the agent sent it inline, else read from the agent over HTTP.
 * `row.held`: the inline bytes as read with the row (the rows route); without it they are read here.
 */
async function openResultFile(ctx: AppContext, row: QueryRow & { held?: HeldResult }): Promise<ResultFile> {
  if (row.result_held) {
    const held = row.held ?? (await readHeldResult(ctx.db, row.id, ctx.config.RESULT_RETENTION_HOURS));
    // Expired like the agent's file, whether or not the pruner has dropped it yet (or dropped it since the row was read).
    if (!held?.bytes || held.expired) throw resultExpired();
    return openResultBytes(row.id, held.bytes);
  }
  return openResult(await agentSource(ctx, row, `${row.id}.parquet`));
}

export async function readRowsPage(ctx: AppContext, row: QueryRow & { held?: HeldResult }, limit: number, start: PageStart = {}, view?: ResultView) {
  if (start.cursor !== undefined && start.offset !== undefined) throw badRequest('give either cursor or offset, not both', 'invalid_cursor');
  if (row.status !== 'done') throw conflict(`the query is ${row.status}; rows exist only once it is done`, 'query_not_done');
  const viewed = view && !isEmptyView(view) ? view : undefined;
  if (viewed) checkView(row, viewed);
  if (!row.result_path) return { rows: [], columns: [], column_schema: null, cursor: null, total: 0 };
  const viewKey = viewed ? encodeView(viewed) : undefined;
  const offset = start.cursor ? decodeRowsCursor(start.cursor, row.id, viewKey) : (start.offset ?? 0);
  try {
    // A view's total is its own row count, known once the agent has made it; the result's is the persisted one.
    const read = async () => {
      const file = viewKey ? await openResult(await agentSource(ctx, row, `${row.id}/view.parquet?view=${viewKey}`)) : null;
      const total = file ? file.numRows : Number(row.row_count ?? 0);
      if (offset >= total) return { total, page: null };
      return { total, page: await (file ?? (await openResultFile(ctx, row))).readPage(offset, limit, row.column_schema) };
    };
    // The agent keeps a few views per result and deletes the oldest: one gone under a reader is made again, once.
    const { total, page } = await read().catch((e: unknown) => {
      if (viewKey && e instanceof ResultUnavailableError && e.reason === 'not_found') return read();
      throw e;
    });
    if (!page) return { rows: [], columns: row.columns ?? [], column_schema: row.column_schema, cursor: null, total };
    const next = offset + page.rows.length;
    return {
      rows: page.rows,
      columns: row.columns ?? page.columns,
      column_schema: row.column_schema,
      cursor: next < total && page.rows.length > 0 ? encodeRowsCursor(row.id, next, viewKey) : null,
      total,
    };
  } catch (e) {
    return fromAgent(e);
  }
}

/**
 * The result (or a view of it) as a CSV, Parquet or JSON file, made by the agent holding it and streamed through:
 * the api holds no more of it than is in flight. `signal`: the client went away.
 */
export async function exportResult(ctx: AppContext, row: QueryRow, format: ExportFormat, view: ResultView, signal?: AbortSignal): Promise<ResultDownload> {
  if (row.status !== 'done') throw conflict(`the query is ${row.status}; rows exist only once it is done`, 'query_not_done');
  if (!row.result_path) throw conflict('this statement returned no rows to export', 'no_result');
  checkView(row, view);
  const viewParam = isEmptyView(view) ? '' : `?view=${encodeView(view)}`;
  try {
    return await downloadResult(await agentSource(ctx, row, `${row.id}/export.${format}${viewParam}`), signal);
  } catch (e) {
    return fromAgent(e);
  }
}
