// The formatting rules of result values against independent references (JS Date, BigInt arithmetic), over many
// generated values; the end-to-end mapping of real files is in tests/resultReader.test.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  bigIntFromTwosComplement,
  dateValue,
  decimalValue,
  floatValue,
  intervalFromDuckText,
  intervalValue,
  parseDuckType,
  timestampValue,
  timeValue,
} from './resultValues.ts';

const MS_PER_DAY = 86_400_000;
// JS Date covers ±8.64e15 ms: ±100,000,000 days around 1970.
const JS_DAYS = 100_000_000;

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, -1); // without the "Z"
}

describe('dates and timestamps', () => {
  it('formats DATE like JS Date (proleptic Gregorian, expanded years outside 0000-9999)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -JS_DAYS, max: JS_DAYS }), (days) => {
        expect(dateValue(days)).toBe(isoDate(days * MS_PER_DAY).split('T')[0]);
      }),
      { numRuns: 2000 },
    );
    expect(dateValue(0)).toBe('1970-01-01');
    expect(dateValue(19782)).toBe('2024-02-29');
    expect(dateValue(2 ** 31 - 1)).toBe('infinity');
    expect(dateValue(-(2 ** 31 - 1))).toBe('-infinity');
  });

  it('formats TIMESTAMP micros with all six digits, like JS Date plus the microseconds', () => {
    const micros = fc.bigInt({ min: -BigInt(JS_DAYS) * 86_400_000_000n, max: BigInt(JS_DAYS) * 86_400_000_000n });
    fc.assert(
      fc.property(micros, (us) => {
        const ms = us >= 0n ? us / 1000n : -((-us + 999n) / 1000n); // floor
        const sub = us - ms * 1000n;
        expect(timestampValue(us, 'MICROS', 6, false)).toBe(`${isoDate(Number(ms))}${sub.toString().padStart(3, '0')}`);
        expect(timestampValue(us, 'MICROS', 6, true)).toBe(`${isoDate(Number(ms))}${sub.toString().padStart(3, '0')}+00:00`);
      }),
      { numRuns: 2000 },
    );
    expect(timestampValue(-1n, 'MICROS', 6, false)).toBe('1969-12-31T23:59:59.999999');
    expect(timestampValue(2n ** 63n - 1n, 'MICROS', 6, false)).toBe('infinity');
  });

  it('agrees between units, also beyond 2^53 ticks (nanoseconds)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), (ns) => {
        const us = ns >= 0n ? ns / 1000n : -((-ns + 999n) / 1000n);
        const nanoText = timestampValue(ns, 'NANOS', 9, false);
        expect(nanoText.slice(0, -3)).toBe(timestampValue(us, 'MICROS', 6, false));
        expect(timestampValue(ns, 'NANOS', 6, false)).toBe(timestampValue(us, 'MICROS', 6, false));
        expect(timestampValue(us * 1000n, 'NANOS', 0, false)).toBe(timestampValue(us, 'MICROS', 0, false));
      }),
      { numRuns: 1000 },
    );
  });

  it('prints TIME with a fraction only when there is one', () => {
    expect(timeValue(0n, 'MICROS', false)).toBe('00:00:00');
    expect(timeValue(45_296_000_001n, 'MICROS', false)).toBe('12:34:56.000001');
    expect(timeValue(86_400_000_000n, 'MICROS', false)).toBe('24:00:00');
    expect(timeValue(1_500n, 'MILLIS', true)).toBe('00:00:01.500000+00:00');
    expect(timeValue(1n, 'NANOS', false)).toBe('00:00:00.000000001');
  });
});

describe('numbers', () => {
  it('writes DECIMAL with exactly its scale', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }), fc.integer({ min: 0, max: 38 }), (unscaled, scale) => {
        const text = decimalValue(unscaled, scale);
        const [whole, frac = ''] = text.replace('-', '').split('.');
        expect(frac.length).toBe(scale);
        expect(BigInt((text.startsWith('-') ? '-' : '') + whole + frac)).toBe(unscaled);
        expect(/^-?(0|[1-9]\d*)(\.\d+)?$/.test(text)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(decimalValue(1230n, 2)).toBe('12.30');
    expect(decimalValue(-5n, 3)).toBe('-0.005');
    expect(decimalValue(0n, 2)).toBe('0.00');
  });

  it('reads big-endian two\'s complement', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 127n), max: 2n ** 127n - 1n }), (value) => {
        const bytes = new Uint8Array(16);
        let v = BigInt.asUintN(128, value);
        for (let i = 15; i >= 0; i--) {
          bytes[i] = Number(v & 0xffn);
          v >>= 8n;
        }
        expect(bigIntFromTwosComplement(bytes)).toBe(value);
      }),
    );
  });

  it('writes FLOAT as the shortest decimal that reads back as the same float32', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (f) => {
        const value = floatValue(f) as number;
        expect(Math.fround(value)).toBe(Object.is(f, -0) ? 0 : f);
        const digits = Math.abs(value).toExponential().split('e')[0].replace('.', '').length; // significant digits
        if (digits > 1) expect(Math.fround(Number(value.toPrecision(digits - 1)))).not.toBe(f);
      }),
      { numRuns: 2000 },
    );
    expect(floatValue(Math.fround(0.1))).toBe(0.1);
    expect(floatValue(Number.NaN)).toBe('NaN');
  });
});

describe('intervals', () => {
  it('writes ISO 8601 durations with each part signed, months and days kept apart', () => {
    expect(intervalValue(14, 3, 14_706_000_007n)).toBe('P1Y2M3DT4H5M6.000007S');
    expect(intervalValue(-14, -3, -14_706_000_007n)).toBe('P-1Y-2M-3DT-4H-5M-6.000007S');
    expect(intervalValue(0, 0, 0n)).toBe('PT0S');
    expect(intervalValue(1, 0, -1n)).toBe('P1MT-0.000001S');
    expect(intervalValue(0, 0, 360_000_000_000n)).toBe('PT100H');
  });

  it('reads DuckDB interval text', () => {
    expect(intervalFromDuckText('1 year 2 months 3 days 04:05:06.000007')).toBe('P1Y2M3DT4H5M6.000007S');
    expect(intervalFromDuckText('-1 year -2 months -3 days -04:05:06.000007')).toBe('P-1Y-2M-3DT-4H-5M-6.000007S');
    expect(intervalFromDuckText('00:00:00')).toBe('PT0S');
    expect(intervalFromDuckText('-1 day 05:00:00')).toBe('P-1DT5H');
    expect(intervalFromDuckText('2562047788:00:54.775807')).toBe('PT2562047788H54.775807S');
    expect(intervalFromDuckText('2 years')).toBe('P2Y');
    expect(intervalFromDuckText('not an interval')).toBeNull();
    expect(intervalFromDuckText('')).toBeNull();
  });
});

describe('DuckDB type spelling', () => {
  it('parses nested types as DESCRIBE prints them', () => {
    expect(parseDuckType('STRUCT("my field" INTEGER, "q""x" VARCHAR, t TIMESTAMP WITH TIME ZONE)[]')).toEqual({
      kind: 'list',
      element: {
        kind: 'struct',
        fields: [
          { name: 'my field', type: { kind: 'scalar', name: 'INTEGER' } },
          { name: 'q"x', type: { kind: 'scalar', name: 'VARCHAR' } },
          { name: 't', type: { kind: 'scalar', name: 'TIMESTAMP WITH TIME ZONE' } },
        ],
      },
    });
    expect(parseDuckType('MAP(VARCHAR, DECIMAL(38,10)[3])')).toEqual({
      kind: 'map',
      key: { kind: 'scalar', name: 'VARCHAR' },
      value: { kind: 'list', element: { kind: 'decimal', precision: 38, scale: 10 } },
    });
    expect(parseDuckType("ENUM('a', 'b,c''d')")).toEqual({ kind: 'enum' });
    expect(parseDuckType('UNION(num INTEGER, str VARCHAR)')).toEqual({
      kind: 'union',
      members: [
        { name: 'num', type: { kind: 'scalar', name: 'INTEGER' } },
        { name: 'str', type: { kind: 'scalar', name: 'VARCHAR' } },
      ],
    });
    expect(parseDuckType('INTEGER[3][]')).toEqual({ kind: 'list', element: { kind: 'list', element: { kind: 'scalar', name: 'INTEGER' } } });
  });

  it('gives null for what does not parse, so conversion falls back to the Parquet annotations', () => {
    expect(parseDuckType('STRUCT(a INTEGER')).toBeNull();
    expect(parseDuckType('MAP(VARCHAR)')).toBeNull();
    expect(parseDuckType('')).toBeNull();
    expect(parseDuckType('INTEGER junk(')).toBeNull();
  });
});
