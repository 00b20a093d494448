// Secrets kept at rest (storage-backend keys in the control plane's rows and in the catalog metastore) are sealed
// with SECRET_KEY: AES-256-GCM under a key derived per purpose (HKDF-SHA256), the purpose bound in as associated
// data, so a value sealed for one column cannot be opened as another. Values written before sealing existed are
// plain text without the prefix; `openSecret` passes them through so a boot step can seal them in place.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'eidsealed:v1:';

class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

const keys = new Map<string, Buffer>();
function keyFor(secretKey: string, purpose: string): Buffer {
  const id = `${purpose}\u0000${secretKey}`;
  let k = keys.get(id);
  if (!k) {
    k = Buffer.from(hkdfSync('sha256', secretKey, 'eider secret box', purpose, 32));
    if (keys.size > 64) keys.clear();
    keys.set(id, k);
  }
  return k;
}

export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX);

export function sealSecret(secretKey: string, purpose: string, plaintext: string): string {
  if (!secretKey) throw new SecretBoxError('no SECRET_KEY to seal secrets with');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secretKey, purpose), iv);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The plain secret; a value stored before sealing (no prefix) comes back as it is. */
export function openSecret(secretKey: string, purpose: string, stored: string): string {
  if (!isSealed(stored)) return stored;
  if (!secretKey) throw new SecretBoxError('a sealed secret needs SECRET_KEY to be opened');
  const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
  if (raw.length < 28) throw new SecretBoxError('a sealed secret is truncated');
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(secretKey, purpose), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError('a sealed secret cannot be opened with this SECRET_KEY (was SECRET_KEY changed?)');
  }
}
