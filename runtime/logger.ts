// Structured logging. Credential-shaped fields are redacted at the logger so no call site can leak them.
import pino, { type Logger } from 'pino';

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
  '*.access_key_id',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-setup-token"]',
  'req.headers["x-internal-secret"]',
  'res.headers["set-cookie"]',
];

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
