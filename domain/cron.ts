// Five-field cron expressions in UTC (minute hour day-of-month month day-of-week), as Vixie cron reads them: `*`,
// numbers, ranges `a-b`, steps `*/n` and `a-b/n`, lists `a,b`, month and weekday names (JAN…, SUN…), weekday 7 as
// Sunday; when both day fields are restricted a day matches either (the classic OR rule).
import { unprocessable } from './errors.ts';

export interface Cron {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly weekdays: ReadonlySet<number>;
  /** day-of-month or day-of-week was `*` (the OR rule applies only when both are restricted) */
  readonly anyDay: boolean;
  readonly anyWeekday: boolean;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS = [
  { name: 'minute', min: 0, max: 59, names: null },
  { name: 'hour', min: 0, max: 23, names: null },
  { name: 'day of month', min: 1, max: 31, names: null },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 7, names: WEEKDAYS },
] as const;

export class CronError extends Error {}

function value(text: string, f: (typeof FIELDS)[number]): number {
  const upper = text.toUpperCase();
  if (f.names) {
    const i = (f.names as readonly string[]).indexOf(upper);
    if (i >= 0) return f === FIELDS[3] ? i + 1 : i;
  }
  if (!/^\d+$/.test(text)) throw new CronError(`${f.name}: ${text} is not a number${f.names ? ' or a name' : ''}`);
  const n = Number(text);
  if (n < f.min || n > f.max) throw new CronError(`${f.name}: ${n} is outside ${f.min}-${f.max}`);
  return n;
}

function field(text: string, f: (typeof FIELDS)[number]): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^([^/]+)(?:\/(\d+))?$/.exec(part);
    if (!m) throw new CronError(`${f.name}: cannot read ${part}`);
    const step = m[2] === undefined ? 1 : Number(m[2]);
    if (step < 1) throw new CronError(`${f.name}: step must be at least 1`);
    let lo: number;
    let hi: number;
    if (m[1] === '*') {
      lo = f.min;
      hi = f.max === 7 ? 6 : f.max;
    } else if (m[1].includes('-')) {
      const [a, b] = m[1].split('-');
      lo = value(a, f);
      hi = value(b, f);
      if (lo > hi) throw new CronError(`${f.name}: range ${m[1]} runs backwards`);
    } else {
      lo = value(m[1], f);
      hi = m[2] === undefined ? lo : f.max === 7 ? 6 : f.max;
    }
    for (let v = lo; v <= hi; v += step) out.add(f.max === 7 && v === 7 ? 0 : v);
  }
  return out;
}

export function parseCron(expr: string): Cron {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) throw new CronError(`a cron expression has 5 fields (minute hour day-of-month month day-of-week), not ${parts.length}`);
  const [mi, h, d, mo, w] = parts.map((p, i) => field(p, FIELDS[i]));
  return { minutes: mi, hours: h, days: d, months: mo, weekdays: w, anyDay: parts[2] === '*', anyWeekday: parts[4] === '*' };
}

/** The cron as the API takes it: a 422 naming the field and what is wrong. */
export function cronOrUnprocessable(expr: string, field = 'cron'): Cron {
  try {
    return parseCron(expr);
  } catch (e) {
    if (!(e instanceof CronError)) throw e;
    throw unprocessable(`${field}: ${e.message}`, 'unprocessable_content', { fields: [{ field, in: 'body', message: e.message }] });
  }
}

function dayMatches(c: Cron, date: Date): boolean {
  if (!c.months.has(date.getUTCMonth() + 1)) return false;
  const dom = c.days.has(date.getUTCDate());
  const dow = c.weekdays.has(date.getUTCDay());
  if (c.anyDay && c.anyWeekday) return true;
  if (c.anyDay) return dow;
  if (c.anyWeekday) return dom;
  return dom || dow;
}

/** Whether the minute starting at `date` (UTC) is a firing minute. */
export function matches(c: Cron, date: Date): boolean {
  return dayMatches(c, date) && c.hours.has(date.getUTCHours()) && c.minutes.has(date.getUTCMinutes());
}

/** The first firing minute strictly after `after`, or null when none comes within `years` (an impossible date). */
export function nextFire(c: Cron, after: Date, years = 8): Date | null {
  const start = new Date(Math.floor(after.getTime() / 60_000) * 60_000 + 60_000);
  const hours = [...c.hours].sort((a, b) => a - b);
  const minutes = [...c.minutes].sort((a, b) => a - b);
  const day = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()));
  const end = Date.UTC(start.getUTCFullYear() + years, 0, 1);
  for (; day.getTime() < end; day.setUTCDate(day.getUTCDate() + 1)) {
    if (!dayMatches(c, day)) continue;
    for (const h of hours) {
      for (const m of minutes) {
        const t = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), h, m);
        if (t >= start.getTime()) return new Date(t);
      }
    }
  }
  return null;
}
