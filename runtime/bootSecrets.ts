// Persistent secrets generated on first boot and kept under DATA_DIR (mode 0600); a value from the
// environment wins and is never written.
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export function loadOrCreateSecret(dataDir: string, file: string, fromEnv: string | null | undefined, bytes = 32): string {
  if (fromEnv) return fromEnv;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, file);
  if (existsSync(path)) {
    const v = readFileSync(path, 'utf8').trim();
    if (v) return v;
  }
  const v = randomBytes(bytes).toString('base64url');
  writeFileSync(path, v + '\n', { mode: 0o600 });
  chmodSync(path, 0o600);
  return v;
}

/** Writes a value to a 0600 file (the setup token file that `eider up` shows to the operator). */
export function writeSecretFile(dataDir: string, file: string, value: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, file);
  writeFileSync(path, value + '\n', { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}
