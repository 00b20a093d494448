// The PostgreSQL wire endpoint (docs/postgres-protocol.md): a TCP listener on PG_PORT whose connections are SQL
// sessions. Started by the api process when PG_PORT is set; every replica may run one (the session actor, the
// cancel keys and the SCRAM verifiers are in the database).
import { createServer, type Server, type Socket } from 'node:net';
import type { AppContext } from '../usecases/context.ts';
import { WireConnection } from './connection.ts';
import { loadTls } from './tls.ts';

export interface RunningPgWire {
  port: number;
  /** whether SSLRequest is answered with TLS */
  tls: boolean;
  close(): Promise<void>;
}

export async function startPgWire(ctx: AppContext, opts: { port: number; host: string }): Promise<RunningPgWire> {
  const c = ctx.config;
  const tls = await loadTls({ certFile: c.PG_TLS_CERT_FILE, keyFile: c.PG_TLS_KEY_FILE, dataDir: c.DATA_DIR });
  if (!tls) ctx.logger.warn('pgwire: no TLS certificate (openssl not found and none configured); clients authenticate with SCRAM-SHA-256 only');
  const sockets = new Set<Socket>();
  const ending = new Set<Promise<void>>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    let done!: () => void;
    const ended = new Promise<void>((r) => (done = r));
    ending.add(ended);
    new WireConnection(socket, {
      ctx,
      tls,
      onClose: () => {
        ending.delete(ended);
        done();
      },
    });
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  ctx.logger.info({ port, tls: tls?.source ?? 'none' }, 'pgwire listening');
  return {
    port,
    tls: tls !== null,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Each connection's end closes its session (WireConnection's close handler).
      for (const s of sockets) s.destroy();
      await Promise.race([Promise.all([...ending]), new Promise((r) => setTimeout(r, 5_000).unref())]);
      await closed;
    },
  };
}
