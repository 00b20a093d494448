// A screen's changes through the api, one way: `run(fn)` clears the last error, awaits `fn` and then `after` (the
// reload of what the change touched); a failure is kept in `error` for the screen to show, and `after` is skipped.
import { useState } from 'react';

export interface Action {
  error: unknown;
  /** For an error the screen finds itself (a form it refuses before asking the api). */
  setError(error: unknown): void;
  run(fn: () => Promise<unknown>): Promise<void>;
}

export function useAction(after: () => void): Action {
  const [error, setError] = useState<unknown>(null);
  const run = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      after();
    } catch (e) {
      setError(e);
    }
  };
  return { error, setError, run };
}
