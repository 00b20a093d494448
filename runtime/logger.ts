// Structured logging. Credential-shaped fields are redacted at the logger so no call site can leak them.
import pino, { type Logger } from 'pino';
import { logRedaction, redactChildren } from '../settings/redaction.ts';

export type { Logger };

export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return redactChildren(pino({
    level: opts.level ?? 'info',
    name: opts.name,
    ...logRedaction,
    base: { pid: process.pid },
  }));
}
