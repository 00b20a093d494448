import { describe, it, expect } from 'vitest';
import { murmur3, bucketOf, applyTransform, parseTransform, hashBytes } from './transforms.ts';

describe('transforms', () => {
  // Appendix B of the table spec.
  it('hashes the spec example values', () => {
    expect(murmur3(hashBytes('int', 34))).toBe(2017239379);
    expect(murmur3(hashBytes('long', 34n))).toBe(2017239379);
    expect(murmur3(hashBytes('date', 17486))).toBe(-653330422);
    expect(murmur3(hashBytes('time', 81068000000n))).toBe(-662762989);
    expect(murmur3(hashBytes('timestamp', 1510871468000000n))).toBe(-2047944441);
    expect(murmur3(hashBytes('string', 'iceberg'))).toBe(1210000089);
    expect(murmur3(hashBytes('uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'))).toBe(1488055340);
    expect(murmur3(hashBytes('binary', Uint8Array.of(0, 1, 2, 3)))).toBe(-188683207);
    expect(murmur3(hashBytes('decimal(4,2)', 1420n))).toBe(-500754589);
    expect(bucketOf('int', 34, 16)).toBe((2017239379 & 0x7fffffff) % 16);
  });

  it('truncates and derives dates as the spec says', () => {
    expect(applyTransform(parseTransform('truncate[10]'), 'int', -1)).toBe(-10);
    expect(applyTransform(parseTransform('truncate[10]'), 'long', 1n)).toBe(0n);
    expect(applyTransform(parseTransform('truncate[50]'), 'decimal(9,2)', 1065n)).toBe(1050n);
    expect(applyTransform(parseTransform('truncate[3]'), 'string', 'iceberg')).toBe('ice');
    const ts = 1510871468000000n; // 2017-11-16T22:31:08Z
    expect(applyTransform(parseTransform('year'), 'timestamp', ts)).toBe(47);
    expect(applyTransform(parseTransform('month'), 'timestamp', ts)).toBe(47 * 12 + 10);
    expect(applyTransform(parseTransform('day'), 'timestamp', ts)).toBe(17486);
    expect(applyTransform(parseTransform('hour'), 'timestamptz', ts)).toBe(419686);
    expect(applyTransform(parseTransform('day'), 'timestamp', -1n)).toBe(-1);
    expect(applyTransform(parseTransform('void'), 'int', 5)).toBe(null);
    expect(() => parseTransform('bucket[0]')).toThrow();
    expect(() => parseTransform('zorder')).toThrow();
  });
});

