// Azurite, the Azure Storage emulator (npm `azurite`), as a real blob service for tests: its own process on a free
// port, its files in a temporary directory, the emulator's well-known development account.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { freePort } from '../../runtime/postgres.ts';
import { exited } from './processes.ts';

export interface Azurite {
  /** The blob endpoint of the account, as a backend's `endpoint`: `http://127.0.0.1:<port>/devstoreaccount1`. */
  endpoint: string;
  accountName: string;
  accountKey: string;
  container(name: string): ContainerClient;
  /** Every blob name under `prefix` in `container`. */
  names(container: string, prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

// Azurite's documented development account (public, the same in every Azurite).
const ACCOUNT = 'devstoreaccount1';
const KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const BIN = join(import.meta.dirname, '..', '..', 'node_modules', 'azurite', 'dist', 'src', 'blob', 'main.js');

export async function startAzurite(): Promise<Azurite> {
  const dir = mkdtempSync(join(tmpdir(), 'eider-azurite-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, '--blobHost', '127.0.0.1', '--blobPort', String(port), '--location', dir, '--skipApiVersionCheck', '--loose', '--disableTelemetry'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (d) => (output += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`azurite did not start within 30 s: ${output}`)), 30_000);
    child.stdout!.on('data', (d) => {
      output += d;
      if (/successfully listens/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`azurite exited (${code}): ${output}`));
    });
  });
  child.stdout!.resume();
  const endpoint = `http://127.0.0.1:${port}/${ACCOUNT}`;
  const service = new BlobServiceClient(endpoint, new StorageSharedKeyCredential(ACCOUNT, KEY));
  return {
    endpoint,
    accountName: ACCOUNT,
    accountKey: KEY,
    container: (name) => service.getContainerClient(name),
    async names(container, prefix) {
      const out: string[] = [];
      for await (const b of service.getContainerClient(container).listBlobsFlat({ prefix })) out.push(b.name);
      return out;
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited(child);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
