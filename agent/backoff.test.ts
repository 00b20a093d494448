import { describe, expect, it } from 'vitest';
import { backoffDelayMs, reconnectDelayMs, STARTUP_QUICK_DIALS } from './backoff.ts';

describe('reconnect backoff', () => {
  it('grows exponentially with jitter and is capped', () => {
    const o = { initialMs: 500, maxMs: 30_000 };
    expect(backoffDelayMs(0, o, () => 0)).toBe(250);
    expect(backoffDelayMs(0, o, () => 1)).toBe(500);
    expect(backoffDelayMs(3, o, () => 1)).toBe(4000);
    expect(backoffDelayMs(50, o, () => 1)).toBe(30_000);
    expect(backoffDelayMs(50, o, () => 0)).toBe(15_000);
  });

  it('keeps the first delay for the first dials of an agent that never connected, then grows', () => {
    const o = { initialMs: 500, maxMs: 30_000 };
    for (let a = 0; a < STARTUP_QUICK_DIALS; a++) expect(reconnectDelayMs(a, false, o, () => 1)).toBe(500);
    expect(reconnectDelayMs(STARTUP_QUICK_DIALS + 3, false, o, () => 1)).toBe(4000);
    // once connected, a lost connection backs off from its first failure
    expect(reconnectDelayMs(3, true, o, () => 1)).toBe(4000);
  });
});
