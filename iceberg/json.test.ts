import fc from 'fast-check';
import { describe, it, expect } from 'vitest';
import { parseJson, stringifyJson, sameLong } from './json.ts';

const BIG = 8744736658442914487n;

describe('64-bit-safe JSON', () => {
  it('keeps int64 snapshot ids exact and small numbers as numbers', () => {
    const text = '{"snapshot-id":8744736658442914487,"n":3,"f":1.5,"neg":-9223372036854775808}';
    const v = parseJson<any>(text);
    expect(v['snapshot-id']).toBe(BIG);
    expect(v.n).toBe(3);
    expect(v.f).toBe(1.5);
    expect(v.neg).toBe(-9223372036854775808n);
    expect(stringifyJson(v)).toBe(text);
    expect(sameLong(3, 3n)).toBe(true);
    expect(sameLong(null, undefined)).toBe(true);
  });
});


/** The oracle: JSON.parse handing each number's source text to a reviver (exact, and 3× slower). */
const INTEGER = /^-?\d+$/;
const exact = (text: string) =>
  JSON.parse(text, ((_k: string, v: unknown, ctx?: { source?: string }) =>
    typeof v === 'number' && !Number.isSafeInteger(v) && ctx?.source && INTEGER.test(ctx.source) ? BigInt(ctx.source) : v) as (k: string, v: unknown) => unknown);

describe('parseJson against the exact reviver', () => {
  const leaf = fc.oneof(
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((b) => (b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b)),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    // digit runs inside strings (paths such as snap-8744736658442914487-1-….avro) must stay strings
    fc.stringMatching(/^[a-z\d\-:,[ .\\"\uE000]{0,40}$/),
    // escaped quotes and trailing backslashes: where a string ends decides what is a number
    fc.constantFrom('8744736658442914487', 'snap-8744736658442914487-1.avro', 'q"12345678901234567890', 'ends\\', '\uE0001234567890123456789', true, false, null),
  );
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 5 }),
    object: fc.dictionary(fc.constantFrom('a', 'snapshot-id', '__proto__', '12345678901234567890', 'x y'), tie('value'), { maxKeys: 4 }),
  }));

  it('gives the same value for any document, compact or indented', () => {
    fc.assert(
      fc.property(value, fc.constantFrom(undefined, 2), (v, space) => {
        const text = stringifyJson(v, space);
        expect(parseJson(text)).toStrictEqual(exact(text));
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) },
    );
  });

  it('keeps the edges exact: a bare top-level long, exponents and fractions, a __proto__ key, invalid JSON', () => {
    expect(parseJson('12345678901234567890')).toBe(12345678901234567890n);
    expect(parseJson('[-9223372036854775808,\n9007199254740993]')).toEqual([-9223372036854775808n, 9007199254740993n]);
    expect(parseJson('[12345678901234567890e2, 0.12345678901234567890, 1.5e300]')).toEqual(exact('[12345678901234567890e2, 0.12345678901234567890, 1.5e300]'));
    const proto = parseJson<Record<string, unknown>>('{"__proto__": 12345678901234567890}');
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value).toBe(12345678901234567890n);
    for (const bad of ['{"a":1,12345678901234567890:2}', '[1 12345678901234567890]', '{"a":12345678901234567890', '[012345678901234567890]']) {
      expect(() => parseJson(bad), bad).toThrow(SyntaxError);
      expect(() => exact(bad), bad).toThrow(SyntaxError);
    }
  });
});
