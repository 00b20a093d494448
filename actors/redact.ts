// Removes secret-looking fields before anything an actor holds reaches a history row or an inspection response:
// event payloads and contexts can carry agent tokens or vended credentials, and neither may be stored or shown.
const SECRET_KEY = /token|secret|password|credential|key/i;

function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** A deep copy of `value` without secret-looking keys; BigInt becomes a decimal string so the result is JSON. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 32) return '[too deep]';
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (isSecretKey(k) || typeof v === 'function') continue;
      out[k] = redactSecrets(v, depth + 1);
    }
    return out;
  }
  return value;
}
