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
