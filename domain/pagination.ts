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


function encodeCursor(p: CursorPayload): string {
  return Buffer.from(JSON.stringify(p)).toString('base64url');
}

// A calendar date and time as ISO 8601 or PostgreSQL's text form writes it, with a real calendar day: JavaScript's
// Date.parse accepts `1` and rolls `Feb 30` over, which PostgreSQL then refuses mid-query (a 500).
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

export function isTimestamp(s: string): boolean {
  const m = TIMESTAMP.exec(s);
  if (!m) return false;
  const [y, mo, d, h = '0', mi = '0', sec = '0'] = m.slice(1).map((v) => v ?? undefined);
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  const tz = m[7];
  if (tz && tz.toUpperCase() !== 'Z' && Number(tz.slice(1, 3)) > 15) return false;
  return Number(h) < 24 && Number(mi) < 60 && Number(sec) < 60;
}

// The key a cursor carries must have the sort's type: it is handed to PostgreSQL as a timestamp or a number.
function keyFits(k: string | null, sort: string): boolean {
  if (k === null) return true;
  if (k.length > 64) return false;
  return /duration/.test(sort) ? /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(k) && Number.isFinite(Number(k)) : isTimestamp(k);
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
  if (!keyFits(c.k, sort) || c.id.length > 64) throw new AppError(400, 'invalid_cursor', 'cursor is malformed');
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
