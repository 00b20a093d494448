// Cron next-fire computation against a reference enumeration: for random five-field expressions (steps, ranges,
// lists, names, both day fields), the next firing minute after a random instant is the first minute, walking one
// minute at a time, that the expression matches field by field.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { nextFire, parseCron, matches } from '../domain/cron.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

const fieldArb = (min: number, max: number) =>
  fc.oneof(
    fc.constant('*'),
    fc.integer({ min, max }).map(String),
    fc.integer({ min: 1, max: Math.max(1, Math.floor((max - min) / 2)) }).map((s) => `*/${s}`),
    fc.tuple(fc.integer({ min, max }), fc.integer({ min, max })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.tuple(fc.integer({ min, max }), fc.integer({ min, max }), fc.integer({ min: 1, max: 5 })).map(([a, b, s]) => `${Math.min(a, b)}-${Math.max(a, b)}/${s}`),
    fc.uniqueArray(fc.integer({ min, max }), { minLength: 2, maxLength: 4 }).map((xs) => xs.join(',')),
  );

/** What each field means, written plainly: the reference the parser is checked against. */
function reference(expr: string) {
  const [mi, h, d, mo, w] = expr.split(' ');
  const expand = (f: string, min: number, max: number): Set<number> => {
    const out = new Set<number>();
    for (const part of f.split(',')) {
      const [range, stepText] = part.split('/');
      const step = stepText ? Number(stepText) : 1;
      const [lo, hi] = range === '*' ? [min, max] : range.includes('-') ? range.split('-').map(Number) : [Number(range), stepText ? max : Number(range)];
      for (let v = lo; v <= hi; v += step) out.add(v);
    }
    return out;
  };
  const sets = { mi: expand(mi, 0, 59), h: expand(h, 0, 23), d: expand(d, 1, 31), mo: expand(mo, 1, 12), w: new Set([...expand(w, 0, 7)].map((x) => x % 7)) };
  return (t: Date) => {
    const dom = sets.d.has(t.getUTCDate());
    const dow = sets.w.has(t.getUTCDay());
    const day = d === '*' && w === '*' ? true : d === '*' ? dow : w === '*' ? dom : dom || dow;
    return day && sets.mo.has(t.getUTCMonth() + 1) && sets.h.has(t.getUTCHours()) && sets.mi.has(t.getUTCMinutes());
  };
}

describe('cron', () => {
  it('next fire equals the first matching minute of a minute-by-minute walk', () => {
    fc.assert(
      fc.property(
        fieldArb(0, 59),
        fieldArb(0, 23),
        fieldArb(1, 31),
        fc.oneof(fc.constant('*'), fieldArb(1, 12)),
        fieldArb(0, 7),
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
        (mi, h, d, mo, w, afterMs) => {
          const expr = `${mi} ${h} ${d} ${mo} ${w}`;
          const ref = reference(expr);
          const cron = parseCron(expr);
          const after = new Date(afterMs);
          const got = nextFire(cron, after);
          // Walk at most two years of minutes; every generated expression fires at least that often but Feb 30-like
          // combinations, which the parser must then report as null or a later date all the same.
          let t = Math.floor(afterMs / 60_000) * 60_000 + 60_000;
          const limit = t + 2 * 366 * 24 * 60 * 60_000;
          while (t < limit && !ref(new Date(t))) t += 60_000;
          if (t < limit) expect(got?.toISOString(), expr).toBe(new Date(t).toISOString());
          else expect(got === null || got.getTime() >= limit, expr).toBe(true);
          if (got) expect(matches(cron, got)).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('reads names, 7 as Sunday, and refuses what is not cron', () => {
    const c = parseCron('30 6 * JAN-MAR mon-fri');
    expect(nextFire(c, new Date('2025-01-03T07:00:00Z'))!.toISOString()).toBe('2025-01-06T06:30:00.000Z');
    expect(nextFire(parseCron('0 0 * * 7'), new Date('2025-01-01T00:00:00Z'))!.toISOString()).toBe('2025-01-05T00:00:00.000Z');
    expect(nextFire(parseCron('0 0 30 2 *'), new Date('2025-01-01T00:00:00Z'))).toBeNull();
    expect(nextFire(parseCron('0 0 29 2 *'), new Date('2025-01-01T00:00:00Z'))!.toISOString()).toBe('2028-02-29T00:00:00.000Z');
    // the day fields restricted together: either matches (Vixie cron), within the month: February's Mondays
    expect(nextFire(parseCron('0 0 30 2 1'), new Date('2025-01-01T00:00:00Z'))!.toISOString()).toBe('2025-02-03T00:00:00.000Z');
    // messages name the field as written (croner counts days and months from 0)
    expect(() => parseCron('* * 0 * *')).toThrow('day of month: 0 is outside 1-31');
    expect(() => parseCron('* * * 13 *')).toThrow('month: 13 is outside 1-12');
    for (const bad of ['* * * *', '60 * * * *', '* 24 * * *', '* * 0 * *', '* * * 13 *', '5-1 * * * *', '*/0 * * * *', 'x * * * *', '0 0 * * * *', '@daily', '0 0 ? * *']) {
      expect(() => parseCron(bad), bad).toThrow();
    }
  });
});
