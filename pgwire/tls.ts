// The endpoint's TLS key and certificate: the configured files (PG_TLS_CERT_FILE, PG_TLS_KEY_FILE), or a
// self-signed pair generated with `openssl` at first start and kept under DATA_DIR/pgwire/ (so a restart, and every
// replica sharing the directory, presents the same one). Node's crypto makes keys but not X.509 certificates.
import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hostname } from 'node:os';

const run = promisify(execFile);

export interface TlsPair {
  key: Buffer;
  cert: Buffer;
  /** where it came from, for the startup log line */
  source: 'configured' | 'generated' | 'kept';
}

export async function loadTls(opts: { certFile: string | null; keyFile: string | null; dataDir: string }): Promise<TlsPair | null> {
  if (opts.certFile || opts.keyFile) {
    if (!opts.certFile || !opts.keyFile) throw new Error('PG_TLS_CERT_FILE and PG_TLS_KEY_FILE are set together');
    return { cert: await readFile(opts.certFile), key: await readFile(opts.keyFile), source: 'configured' };
  }
  const dir = join(opts.dataDir, 'pgwire-tls');
  const read = () => Promise.all([readFile(join(dir, 'server.crt')), readFile(join(dir, 'server.key'))]);
  const kept = await read().catch(() => null);
  if (kept) return { cert: kept[0], key: kept[1], source: 'kept' };
  // Made in a directory of its own and renamed into place whole: replicas starting together keep one pair.
  const tmp = `${dir}.${process.pid}-${Date.now()}`;
  await mkdir(tmp, { recursive: true, mode: 0o700 });
  try {
    await run('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '3650',
      '-subj', `/CN=${hostname()}`, '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout', join(tmp, 'server.key'), '-out', join(tmp, 'server.crt'),
    ]);
    await rename(tmp, dir).catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST' && e.code !== 'ENOTEMPTY') throw e;
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && (e as { path?: string }).path === 'openssl') return null;
    throw e;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  const made = await read();
  return { cert: made[0], key: made[1], source: 'generated' };
}
