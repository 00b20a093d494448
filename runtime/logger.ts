// Structured logging. Credential-shaped fields are redacted at the logger so no call site can leak them.
import pino, { type Logger } from 'pino';
import { redactChildren, redactDeep } from '../settings/redaction.ts';

export type { Logger };

export const REDACT_PATHS = [
  'password',
  'token',
  'secret',
  'session_token',
  'bootstrap_token',
  'authorization',
  'cookie',
  '*.password',
  '*.token',
  '*.secret',
  '*.session_token',
  '*.bootstrap_token',
  '*.secret_access_key',
  '*.account_key',
  '*.access_key_id',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-setup-token"]',
  'req.headers["x-internal-secret"]',
  'res.headers["set-cookie"]',
];

export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return redactChildren(pino({
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    name: opts.name,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: {
      log: (o) => redactDeep(o) as Record<string, unknown>,
    },
    base: { pid: process.pid },
  }));
}
