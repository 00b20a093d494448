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

