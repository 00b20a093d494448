// Reconnect delays: exponential with "equal jitter" (half fixed, half random), so a fleet of agents that lost the
// control plane at the same moment does not reconnect in lockstep.
export interface BackoffOptions {
  readonly initialMs: number;
  readonly maxMs: number;
}

export function backoffDelayMs(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * Dials before the agent's first connection that stay at the first delay: an agent started beside its control plane
 * (`eider up` starts them together) dials while the api is still loading, and a doubling delay would leave it
 * waiting seconds after the api listens (issue #36). About five seconds of quick retries, then the usual backoff.
 */
export const STARTUP_QUICK_DIALS = 10;

/** The delay before dial `attempt + 1`: before any connection the first STARTUP_QUICK_DIALS stay at the first step. */
export function reconnectDelayMs(attempt: number, everConnected: boolean, options: BackoffOptions, random: () => number = Math.random): number {
  const step = everConnected ? attempt : Math.max(0, attempt - STARTUP_QUICK_DIALS);
  return backoffDelayMs(step, options, random);
}
