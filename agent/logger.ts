// Structured logging for the agent. Tokens never reach a log: nothing logs them on purpose, and these redaction
// paths catch any that slip into a logged object. SQL text is logged at debug only.
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'token', '*.token', 'session_token', '*.session_token', '*.*.session_token', 'bootstrap_token', '*.bootstrap_token',
  '*.*.bootstrap_token', 'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization',
];

// The same walk as runtime/logger.ts (the agent may not import api-side code).
// Keys whose values are credentials, at any depth and in any spelling (snake_case, camelCase, headers): pino's
// path list cannot say "anywhere", so every logged object and child binding is walked before it is written.
const SECRET_KEY = /pass(word|wd|phrase)?$|secret|token|authorization|cookie|credential|api_?key|access_?key|private_?key|signature|database_?url|dsn$/i;

export function redactDeep(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return value; // the err serializer handles errors
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_KEY.test(k) && v !== null && v !== undefined && v !== '' ? '[redacted]' : redactDeep(v, depth + 1);
  }
  return out;
}

// Child bindings do not pass through pino's formatters: redact them on the way in, for children of children too.
function redactChildren(l: Logger): Logger {
  const child = l.child.bind(l);
  l.child = ((bindings: Record<string, unknown>, options?: unknown) =>
    redactChildren(child(redactDeep(bindings) as Record<string, unknown>, options as never))) as unknown as Logger['child'];
  return l;
}

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
