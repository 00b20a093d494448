import { describe, expect, it } from 'vitest';
import { failureMessage } from './runOutcome.ts';

describe('failureMessage', () => {
  it('keeps the first line and the engine\'s suggestions, not the echo of the statement or a plan', () => {
    const binder = new Error(
      'Binder Error: Referenced column "farez" not found in FROM clause!\nCandidate bindings: "fare", "trip_id"\n\nLINE 1: select farez from trips\n               ^',
    );
    expect(failureMessage(binder)).toBe('Binder Error: Referenced column "farez" not found in FROM clause!\nCandidate bindings: "fare", "trip_id"');
    expect(failureMessage(new Error('Catalog Error: Table with name tripz does not exist!\nDid you mean "trips"?\n\nLINE 1: …'))).toBe(
      'Catalog Error: Table with name tripz does not exist!\nDid you mean "trips"?',
    );
    expect(failureMessage(new Error(`Invalid Input Error: no\n${'plan line\n'.repeat(1000)}`))).toBe('Invalid Input Error: no');
  });
});
