// Structured logging for the agent. Tokens never reach a log: nothing logs them on purpose, and the redaction
// every part shares (settings/redaction.ts) catches any that slip into a logged object. SQL text is logged at debug only.
import { pino, type Logger } from 'pino';
import { logRedaction, redactChildren } from '../settings/redaction.ts';

export type { Logger };

export function createAgentLogger(options: { level: string; name: string }, destination?: NodeJS.WritableStream): Logger {
  const settings = {
    name: options.name,
    level: options.level,
    ...logRedaction,
  };
  return redactChildren(destination ? pino(settings, destination as never) : pino(settings));
}
