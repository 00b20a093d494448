import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from './backoff.ts';

describe('reconnect backoff', () => {
  it('grows exponentially with jitter and is capped', () => {
    const o = { initialMs: 500, maxMs: 30_000 };
    expect(backoffDelayMs(0, o, () => 0)).toBe(250);
    expect(backoffDelayMs(0, o, () => 1)).toBe(500);
    expect(backoffDelayMs(3, o, () => 1)).toBe(4000);
    expect(backoffDelayMs(50, o, () => 1)).toBe(30_000);
    expect(backoffDelayMs(50, o, () => 0)).toBe(15_000);
  });
});
