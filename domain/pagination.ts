// Opaque keyset cursors. A cursor names the last row of a page by its sort key and id, and the sort it belongs to,
// so reusing it under another sort is refused (422) instead of silently skipping or repeating rows.
import { AppError } from './errors.ts';

export interface Page<T> {
  items: T[];
  cursor: string | null;
  has_more: boolean;
}

export interface CursorPayload {
  /** the sort the cursor was issued under, e.g. "started_at:desc" */
  s: string;
  /** sort key of the last row (string form), or null for rows without one */
  k: string | null;
  /** id of the last row */
  id: string;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export function encodeCursor(p: CursorPayload): string {
  return Buffer.from(JSON.stringify(p)).toString('base64url');
}

export function decodeCursor(cursor: string, sort: string): CursorPayload {
  let p: unknown;
  try {
    p = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new AppError(400, 'invalid_cursor', 'cursor is malformed');
  }
  const c = p as CursorPayload;
  if (!c || typeof c !== 'object' || typeof c.s !== 'string' || typeof c.id !== 'string' || !(typeof c.k === 'string' || c.k === null)) {
    throw new AppError(400, 'invalid_cursor', 'cursor is malformed');
  }
  if (c.s !== sort) {
    throw new AppError(422, 'invalid_cursor', `cursor was issued for sort ${c.s}, not ${sort}; restart paging`);
  }
  return c;
}

export const staleCursor = () => new AppError(422, 'stale_cursor', 'the row this cursor names was deleted; restart paging');

/** Builds a page from `limit + 1` fetched rows. */
export function pageOf<R, T>(rows: R[], limit: number, sort: string, key: (r: R) => { k: string | null; id: string }, map: (r: R) => T): Page<T> {
  const has_more = rows.length > limit;
  const slice = has_more ? rows.slice(0, limit) : rows;
  const last = slice[slice.length - 1];
  return {
    items: slice.map(map),
    cursor: has_more && last ? encodeCursor({ s: sort, ...key(last) }) : null,
    has_more,
  };
}
