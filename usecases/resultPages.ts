// Result pages: the api decodes only the page asked for from the result's Parquet file, which is either kept in the
// queries row (a small result the agent sent inline) or read from the agent over HTTP with range requests. The cursor is opaque (the next row offset, tied to the query); total is the persisted row_count.
// A page may also be addressed by its row offset, so a reader can jump to any part of the result in one request:
// the web app's grid jumping to the end of 200,000 rows otherwise walked 399 cursors from the start (11.8 s).
import { AppError, badRequest, conflict, unavailable } from '../domain/errors.ts';
import { readHeldResult, type HeldResult, type QueryRow } from '../domain/queries.ts';
import { openResult, openResultBytes, ResultUnavailableError, type ResultFile } from '../runtime/resultReader.ts';
import type { AppContext } from './context.ts';

export interface RowsCursor {
  q: string;
  o: number;
}

/** What a rows cursor says (the query and the next row offset), or null when it is not one this server issued. */
export function readRowsCursor(cursor: string): RowsCursor | null {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as RowsCursor;
    if (c && typeof c.q === 'string' && Number.isInteger(c.o) && c.o >= 0) return c;
  } catch {
    // not JSON
  }
  return null;
}

function decodeRowsCursor(cursor: string, queryId: string): number {
  const c = readRowsCursor(cursor);
  if (c && c.q === queryId) return c.o;
  throw new AppError(400, 'invalid_cursor', 'cursor is malformed or belongs to another query');
}

export const encodeRowsCursor = (queryId: string, offset: number) => Buffer.from(JSON.stringify({ q: queryId, o: offset })).toString('base64url');

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
  const source = row.agent_id ? await ctx.link.resultSource(row.agent_id, `${row.id}.parquet`) : null;
  if (!source) throw unavailable('the agent holding this result is not connected; retry when it reconnects', 'agent_unavailable');
  return openResult(source);
}

export async function readRowsPage(ctx: AppContext, row: QueryRow & { held?: HeldResult }, limit: number, start: PageStart = {}) {
  if (start.cursor !== undefined && start.offset !== undefined) throw badRequest('give either cursor or offset, not both', 'invalid_cursor');
  if (row.status !== 'done') throw conflict(`the query is ${row.status}; rows exist only once it is done`, 'query_not_done');
  const total = Number(row.row_count ?? 0);
  if (!row.result_path) return { rows: [], columns: [], column_schema: null, cursor: null, total: 0 };
  const offset = start.cursor ? decodeRowsCursor(start.cursor, row.id) : (start.offset ?? 0);
  if (offset >= total) return { rows: [], columns: row.columns ?? [], column_schema: row.column_schema, cursor: null, total };
  try {
    const file = await openResultFile(ctx, row);
    const page = await file.readPage(offset, limit, row.column_schema);
    const next = offset + page.rows.length;
    return {
      rows: page.rows,
      columns: row.columns ?? page.columns,
      column_schema: row.column_schema,
      cursor: next < total && page.rows.length > 0 ? encodeRowsCursor(row.id, next) : null,
      total,
    };
  } catch (e) {
    if (e instanceof ResultUnavailableError) {
      if (e.status === 404) throw resultExpired();
      throw unavailable(`could not read the result from the agent: ${e.message}`, 'agent_unavailable');
    }
    throw e;
  }
}
