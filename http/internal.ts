// The private /internal API between replicas (spec: refused from outside by the load balancer; here every request
// without the right X-Internal-Secret, or any request while INTERNAL_API_SECRET is empty, is answered exactly like
// an unknown path). A replica that holds an agent's socket puts forwarded frames on it and relays its result files.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.ts';
import { INTERNAL_SECRET_HEADER, internalSecretMatches } from '../runtime/peerClient.ts';
import type { AgentSockets } from '../runtime/agentSockets.ts';

// The work frames an actor on another replica sends to an agent held here (auth and heartbeats stay per socket).
const FORWARDABLE = new Set(['dispatch_query', 'cancel_query', 'open_session', 'close_session', 'execute_statement']);
// A result file, a view of it, or an export (agent/resultServer.ts); the query string (a view) goes along.
const RESULT_FILE = /^[0-9a-f-]{36}(\.parquet|\/view\.parquet|\/export\.(csv|parquet|json))$/;

export function registerInternalApi(app: FastifyInstance, deps: { secret: string; sockets: AgentSockets }) {
  const { sockets } = deps;
  const guard = async (req: FastifyRequest) => {
    const presented = req.headers[INTERNAL_SECRET_HEADER];
    if (!internalSecretMatches(deps.secret, Array.isArray(presented) ? presented[0] : presented)) {
      throw new AppError(404, 'not_found', `no route for ${req.method} ${req.url.split('?')[0]}`);
    }
  };
  const closeArgs = (body: unknown) => {
    const b = (body ?? {}) as { code?: unknown; reason?: unknown };
    if (!Number.isInteger(b.code) || typeof b.reason !== 'string') throw new AppError(400, 'bad_request', 'expected {code: integer, reason: string}');
    return { code: b.code as number, reason: b.reason };
  };
  const opts = { onRequest: guard, schema: { hide: true } };

  app.post<{ Params: { agentId: string } }>('/internal/agents/:agentId/frames', opts, async (req) => {
    const frame = (req.body as { frame?: { type?: unknown; payload?: unknown } } | null)?.frame;
    if (!frame || typeof frame.type !== 'string' || !FORWARDABLE.has(frame.type)) {
      throw new AppError(400, 'bad_request', `expected {frame} with type ${[...FORWARDABLE].join(' or ')}`);
    }
    const live = sockets.agent(req.params.agentId);
    return { delivered: live ? live.send({ type: frame.type, payload: frame.payload }) : false };
  });

  app.post<{ Params: { agentId: string } }>('/internal/agents/:agentId/close', opts, async (req) => {
    const { code, reason } = closeArgs(req.body);
    const live = sockets.agent(req.params.agentId);
    live?.close(code, reason);
    return { delivered: Boolean(live) };
  });

  app.post<{ Params: { connectionId: string } }>('/internal/connections/:connectionId/close', opts, async (req) => {
    const { code, reason } = closeArgs(req.body);
    const live = sockets.connection(req.params.connectionId);
    live?.close(code, reason);
    return { delivered: Boolean(live) };
  });

  // Reads of a result file (ranges), a view of it or an export, relayed with this replica's copy of the agent's
  // session token. Streamed: an export is passed on as it arrives, never held here whole.
  app.route<{ Params: { agentId: string; '*': string } }>({
    method: ['GET', 'HEAD'],
    url: '/internal/agents/:agentId/results/*',
    ...opts,
    handler: async (req, reply) => {
      const file = req.params['*'];
      if (!RESULT_FILE.test(file)) throw new AppError(400, 'bad_request', 'not a result file name');
      const live = sockets.agent(req.params.agentId);
      if (!live?.sessionToken || !live.resultUrl) throw new AppError(503, 'agent_unavailable', 'the agent is not connected to this replica');
      const range = req.headers.range;
      const search = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
      // The timeout covers the answer's headers (a view or export is made first), not the streaming of its body.
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), 30_000);
      reply.raw.once('close', () => ctl.abort());
      let upstream: Response;
      try {
        upstream = await fetch(`${live.resultUrl}/results/${file}${search}`, {
          method: req.method,
          headers: { authorization: `Bearer ${live.sessionToken}`, ...(range ? { range } : {}) },
          signal: ctl.signal,
        });
      } catch {
        throw new AppError(503, 'agent_unavailable', 'the agent result server did not answer');
      } finally {
        clearTimeout(timer);
      }
      reply.code(upstream.status);
      for (const h of ['content-length', 'content-range', 'content-type', 'accept-ranges', 'x-eider-error', 'x-eider-message']) {
        const v = upstream.headers.get(h);
        if (v !== null) reply.header(h, v);
      }
      if (req.method === 'HEAD' || !upstream.body) {
        await upstream.body?.cancel();
        return reply.send();
      }
      return reply.send(Readable.fromWeb(upstream.body as import('node:stream/web').ReadableStream<Uint8Array>));
    },
  });
}
