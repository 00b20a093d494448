// The agent's own session credential, kept under the data dir with mode 0600 so a restarted agent reconnects with
// it (the bootstrap token is single use). It is not a storage credential: those are never written to disk.
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export class SessionTokenStore {
  readonly #path: string;

  constructor(dataDir: string) {
    this.#path = join(dataDir, 'session-token');
  }

  get path(): string {
    return this.#path;
  }

  async read(): Promise<string | null> {
    try {
      const token = (await readFile(this.#path, 'utf8')).trim();
      return token === '' ? null : token;
    } catch {
      return null;
    }
  }

  async write(token: string): Promise<void> {
    await mkdir(dirname(this.#path), { recursive: true, mode: 0o700 });
    // Written to a private temporary file and renamed, so the token is never readable by others even briefly and a
    // crash never leaves a half-written credential.
    const temp = `${this.#path}.${process.pid}.tmp`;
    await writeFile(temp, token, { mode: 0o600 });
    await chmod(temp, 0o600);
    await rename(temp, this.#path);
  }

  async clear(): Promise<void> {
    await rm(this.#path, { force: true });
  }
}
