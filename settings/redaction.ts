// Secrets never reach a log: the redaction every process's logger applies (runtime/logger.ts, agent/logger.ts).
// Keys whose values are credentials, at any depth and in any spelling (snake_case, camelCase, headers): pino's
// path list cannot say "anywhere", so every logged object and child binding is walked before it is written.
const SECRET_KEY = /pass(word|wd|phrase)?$|secret|token|authorization|cookie|credential|api_?key|access_?key|account_?key|private_?key|signature|database_?url|dsn$/i;

/** Pino's own redaction paths: the keys a request, a header set or a frame carries credentials in. One list for every
 * part (api, agent, catalog, object store); `redactDeep` below catches what they cannot name. */
const LOG_REDACT_PATHS = [
  'password', 'token', 'secret', 'session_token', 'bootstrap_token', 'authorization', 'cookie',
  '*.password', '*.token', '*.secret', '*.session_token', '*.bootstrap_token', '*.authorization',
  '*.*.session_token', '*.*.bootstrap_token',
  '*.secret_access_key', '*.account_key', '*.access_key_id',
  'headers.authorization', 'req.headers.authorization', 'req.headers.cookie', 'req.headers["x-setup-token"]',
  'req.headers["x-internal-secret"]', 'res.headers["set-cookie"]',
];

/** The redaction settings every process's pino logger is built with. */
export const logRedaction = {
  redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
  formatters: { log: (o: Record<string, unknown>) => redactDeep(o) as Record<string, unknown> },
};

function redactDeep(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return value; // the err serializer handles errors
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_KEY.test(k) && v !== null && v !== undefined && v !== '' ? '[redacted]' : redactDeep(v, depth + 1);
  }
  return out;
}

/** Child bindings do not pass through pino's formatters: redact them on the way in, for children of children too. */
export function redactChildren<L extends { child(bindings: Record<string, unknown>, options?: never): L }>(l: L): L {
  const child = l.child.bind(l);
  l.child = ((bindings: Record<string, unknown>, options?: never) => redactChildren(child(redactDeep(bindings) as Record<string, unknown>, options))) as L['child'];
  return l;
}
