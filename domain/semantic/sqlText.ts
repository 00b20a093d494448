// How compiled SQL spells names and values. The compiled statement travels as text through the query endpoint
// (which takes no bind parameters), so a request's filter values become literals here and only here: strings with
// their quotes doubled (DuckDB's standard strings have no backslash escapes), numbers only when finite, booleans as
// keywords, dates only when they are real calendar dates. Nothing from a request reaches the text another way.
import { unprocessable } from '../errors.ts';

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

export const tableRef = (catalog: string, schema: string, table: string) => `${ident(catalog)}.${ident(schema)}.${ident(table)}`;

export type Scalar = string | number | boolean;

export function literal(value: unknown, field: string): string {
  if (typeof value === 'string') {
    // A NUL would end the string in some clients' view of the text while DuckDB reads on.
    if (value.includes('\u0000')) throw unprocessable(`${field}: a value holds no NUL character`, 'unprocessable_content', { fields: [{ field, in: 'body', message: 'NUL character' }] });
    return `'${value.replace(/'/g, "''")}'`;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw unprocessable(`${field}: a finite number`, 'unprocessable_content', { fields: [{ field, in: 'body', message: 'not finite' }] });
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  throw unprocessable(`${field}: a string, number or boolean`, 'unprocessable_content', { fields: [{ field, in: 'body', message: 'not a scalar' }] });
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date `YYYY-MM-DD` as a DATE literal; anything else (or 2023-02-29) is 422 naming the field. */
export function dateLiteral(value: string, field: string): string {
  const m = DATE.exec(value);
  const ok = m && (() => {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
  })();
  if (!ok) throw unprocessable(`${field}: a date as YYYY-MM-DD`, 'unprocessable_content', { fields: [{ field, in: 'body', message: 'not a date' }] });
  return `DATE '${value}'`;
}
