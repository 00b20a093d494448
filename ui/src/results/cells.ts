// How result values read in the grid: numbers with the locale's digit grouping (the exact digits the api sent, so a
// HUGEINT or DECIMAL sent as a string keeps every digit), timestamps with a space instead of ISO's T, nested values
// as JSON. Kinds come from the column's DuckDB type; CSV export and copying use the raw values instead.

export type ColumnKind = 'number' | 'time' | 'nested' | 'text';

const NUMERIC = /^(u?(tiny|small|big|huge)?int(eger)?\d*|u?hugeint|float\d*|double|real|decimal(\(.*\))?|numeric(\(.*\))?)$/i;
const TIME = /^(timestamp|date|time|datetime)/i;
const NESTED = /(\[\d*\]$|^(struct|map|union|list|json)\b)/i;

export function columnKind(type: string): ColumnKind {
  const t = type.trim();
  if (NUMERIC.test(t)) return 'number';
  if (TIME.test(t)) return 'time';
  if (NESTED.test(t)) return 'nested';
  return 'text';
}

const parts = (() => {
  try {
    const p = new Intl.NumberFormat().formatToParts(1234.5);
    return { group: p.find((x) => x.type === 'group')?.value ?? ',', decimal: p.find((x) => x.type === 'decimal')?.value ?? '.' };
  } catch {
    return { group: ',', decimal: '.' };
  }
})();

/** `1234567.25` → `1,234,567.25` (in the locale's separators), for any length of digits; other text unchanged. */
function groupDigits(s: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) return s;
  const int = m[2].replace(/\B(?=(\d{3})+(?!\d))/g, parts.group);
  return `${m[1]}${int}${m[3] !== undefined ? parts.decimal + m[3] : ''}`;
}

export function formatCell(value: unknown, kind: ColumnKind = 'text'): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'object') return JSON.stringify(value);
  if (kind === 'number' && (typeof value === 'number' || typeof value === 'string')) {
    const s = typeof value === 'number' ? (Number.isInteger(value) && Math.abs(value) < 1e21 ? value.toFixed(0) : String(value)) : value;
    return groupDigits(s);
  }
  if (kind === 'time' && typeof value === 'string') return value.replace(/^(\d{4}-\d\d-\d\d)T/, '$1 ');
  return String(value);
}

/** Raw text of a value for copying and the value viewer: strings as they are, nested values as indented JSON. */
export function rawText(value: unknown, pretty = false): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  return String(value);
}

/** The width a column starts at: its header, its type's usual width, and the values of its first rows. */
export function initialWidth(name: string, type: string, samples: string[]): number {
  const CHAR = 7.8; // the grid's 12.5 px monospace, rounded up
  const kind = columnKind(type);
  let chars = Math.max(name.length + 2, type.length, 6);
  if (kind === 'number') chars = Math.max(chars, 12); // up to 999,999,999 without cutting
  if (kind === 'time') chars = Math.max(chars, /time zone|tz/i.test(type) ? 29 : /^date$/i.test(type) ? 10 : 26);
  for (const s of samples) chars = Math.max(chars, s.length);
  return Math.min(420, Math.max(80, Math.ceil(chars * CHAR) + 20));
}
