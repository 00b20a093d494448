// Five-field cron expressions in UTC (minute hour day-of-month month day-of-week), read by croner as Vixie cron
// reads them: `*`, numbers, ranges, steps, lists, month and weekday names, weekday 7 as Sunday, and when both day
// fields are restricted a day matches either (the classic OR rule, croner's `domAndDow: false`). Croner also reads
// `L` (last day), `W` (nearest weekday) and `#` (nth weekday). The contract stays five fields: croner's seconds and
// year fields, its `@daily` nicknames and its `?` (which means "the time of parsing") are refused here.
import { Cron } from 'croner';
import { unprocessable } from './errors.ts';

export type { Cron } from 'croner';

class CronError extends Error {}

/** croner's part names, and the field and range a user reads in the message */
const FIELDS: Record<string, { name: string; range: string; index: number }> = {
  minute: { name: 'minute', range: '0-59', index: 0 },
  hour: { name: 'hour', range: '0-23', index: 1 },
  day: { name: 'day of month', range: '1-31', index: 2 },
  month: { name: 'month', range: '1-12', index: 3 },
  dayOfWeek: { name: 'day of week', range: '0-7', index: 4 },
};

/** croner's own message, said in the terms of the field the user wrote (croner counts days and months from 0). */
function explain(e: Error, parts: string[]): string {
  const range = /Invalid value for (\w+)/.exec(e.message);
  const f = range ? FIELDS[range[1]] : undefined;
  if (f) return `${f.name}: ${parts[f.index]} is outside ${f.range}`;
  return e.message.replace(/^CronPattern: /, '');
}

/** Parses a five-field UTC expression; throws CronError saying what is wrong. */
export function parseCron(expr: string): Cron {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) throw new CronError(`a cron expression has 5 fields (minute hour day-of-month month day-of-week), not ${parts.length}`);
  if (parts.some((p) => p.includes('?'))) throw new CronError('? is not supported: use * for any value');
  try {
    return new Cron(parts.join(' '), { mode: '5-part', timezone: 'UTC', paused: true, domAndDow: false });
  } catch (e) {
    if (e instanceof TypeError || e instanceof RangeError) throw new CronError(explain(e, parts));
    throw e;
  }
}

/**
 * The cron as the API takes it: a 422 naming the field and what is wrong, also for an expression that can never fire
 * (`0 0 30 2 *`: February has no 30th), which would otherwise be a schedule that silently never runs.
 */
export function cronOrUnprocessable(expr: string, field = 'cron', now = new Date()): Cron {
  const refuse = (message: string) => unprocessable(`${field}: ${message}`, 'unprocessable_content', { fields: [{ field, in: 'body', message }] });
  let cron: Cron;
  try {
    cron = parseCron(expr);
  } catch (e) {
    if (!(e instanceof CronError)) throw e;
    throw refuse(e.message);
  }
  if (nextFire(cron, now) === null) throw refuse(`${expr.trim()} never fires: no date matches its day of month, month and day of week`);
  return cron;
}

/** Whether the minute starting at `date` (UTC) is a firing minute. */
export function matches(c: Cron, date: Date): boolean {
  return c.match(date);
}

/** The first firing minute strictly after `after`, or null when none ever comes (an impossible date). */
export function nextFire(c: Cron, after: Date): Date | null {
  return c.nextRun(after);
}
