// Structured logging for the agent. Tokens never reach a log: nothing logs them on purpose, and these redaction
// paths catch any that slip into a logged object. SQL text is logged at debug only.
import { pino, type Logger } from 'pino';
import { redactChildren, redactDeep } from '../settings/redaction.ts';

export type { Logger };

export const REDACT_PATHS = [
  'token', '*.token', 'session_token', '*.session_token', '*.*.session_token', 'bootstrap_token', '*.bootstrap_token',
  '*.*.bootstrap_token', 'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization',
];

export function createAgentLogger(options: { level: string; name: string }, destination?: NodeJS.WritableStream): Logger {
  const settings = {
    name: options.name,
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: {
      log: (o: Record<string, unknown>) => redactDeep(o) as Record<string, unknown>,
    },
  };
  return redactChildren(destination ? pino(settings, destination as never) : pino(settings));
}
