// The agent control channel at /agents/connect. Each socket is an agentConnection actor; frames become actor
// events (the connection's own, or a query's). Credentials are checked here, before the machine hears of them,
// so no token ever enters a snapshot. Frames of one socket are handled strictly in order.
import { isDatabaseUnavailable, joinTransaction } from '../runtime/db.ts';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import type { WebSocket } from 'ws';
import { CLOSE_CODES, DEFAULT_RESULTS_PORT, PROTOCOL_VERSION, decodeAgentFrame, encodeServiceFrame, type AgentFrame, type ServiceFrame } from '../protocol/index.ts';
import * as agents from '../domain/agents.ts';
import { placementOf, recordProgress } from '../domain/queries.ts';
import { agentOfSession } from '../domain/sqlSessions.ts';
import type { ActorHost, EventFor } from '../actors/types.ts';
import type { Json } from '../machines/index.ts';
import type { AgentSockets } from '../runtime/agentSockets.ts';
import type { AppContext } from '../usecases/context.ts';
import { ANONYMOUS } from '../domain/audit.ts';
import { audit } from './audit.ts';
import { clientAddress, parseTrustedProxies, type TrustedProxies } from '../runtime/trustedProxies.ts';

export interface AgentChannelDeps {
  ctx: AppContext;
  host: ActorHost;
  sockets: AgentSockets;
}

/**
 * The agent's result-server host as seen by the api: the peer address, or the client a trusted proxy
 * (TRUSTED_PROXIES) reports in X-Forwarded-For; never a header from an untrusted peer, never a name.
 */
function agentAddress(req: FastifyRequest, trusted: TrustedProxies): string {
  const fwd = req.headers['x-forwarded-for'];
  const header = Array.isArray(fwd) ? fwd.join(',') : fwd;
  const host = clientAddress(req.socket.remoteAddress || '127.0.0.1', header, trusted);
  return host.includes(':') ? `[${host}]` : host;
}

export interface AgentChannel {
  /** Shutdown: every connection actor drains (its socket is closed with "reconnect elsewhere"); resolves once each
   *  socket's end was recorded, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
}

/** Agent frames a newer one of the same type supersedes. */
const SUPERSEDED = new Set(['heartbeat', 'agent_status']);
/** The least time between two progress writes of one query, whatever its agent sends (it sends one a second). */
const PROGRESS_MIN_INTERVAL_MS = 900;

export async function registerAgentChannel(app: FastifyInstance, deps: AgentChannelDeps): Promise<AgentChannel> {
  const { ctx, host, sockets } = deps;
  const { config, logger, db } = ctx;
  const heartbeatIntervalMs = config.AGENT_HEARTBEAT_INTERVAL_S * 1000;
  const heartbeatTtlMs = config.AGENT_HEARTBEAT_TTL_S * 1000;
  const trusted = parseTrustedProxies(config.TRUSTED_PROXIES);
  await app.register(websocket, { options: { maxPayload: 8 * 1024 * 1024 } });
  /** Each open socket's end, recorded (its `disconnected` delivered) once the promise settles. */
  const ends = new Map<string, Promise<void>>();

  // The api's heartbeat, encoded once a second for every socket rather than once per socket (10,000 sockets send
  // 1,000 a second at the default interval); its sent_at is at most a second old.
  let beat = { at: 0, text: '' };
  const heartbeatText = () => {
    const now = Date.now();
    if (now - beat.at >= 1000) {
      const enc = encodeServiceFrame({ type: 'heartbeat', payload: { sent_at: new Date(now).toISOString() } });
      if (enc.ok) beat = { at: now, text: enc.text };
    }
    return beat.text;
  };

  app.get('/agents/connect', { websocket: true, schema: { hide: true } }, (socket: WebSocket, req) => {
    // A draining replica takes no agent: one that dials it (its reconnect went round the list) is sent on at once,
    // and its socket does not hold the shutdown open.
    if (ctx.draining.value) {
      socket.close(1012, 'replica shutting down');
      return;
    }
    const connectionId = randomUUID();
    const address = agentAddress(req, trusted);
    const log = logger.child({ connectionId });
    const send = (frame: ServiceFrame) => {
      const enc = encodeServiceFrame(frame);
      if (!enc.ok || socket.readyState !== socket.OPEN) return false;
      socket.send(enc.text);
      return true;
    };
    const conn = {
      connectionId,
      agentId: null as string | null,
      sessionToken: null as string | null,
      issuedToken: null as string | null,
      resultUrl: null as string | null,
      send: (f: { type: string; payload: unknown }) => send(f as ServiceFrame),
      close: (code: number, reason: string) => {
        if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(code, reason.slice(0, 120));
      },
    };
    sockets.addConnection(conn);
    const heartbeat = setInterval(() => {
      if (socket.readyState === socket.OPEN) socket.send(heartbeatText());
    }, heartbeatIntervalMs);
    heartbeat.unref();

    let chain: Promise<unknown> = host
      .spawn('agentConnection', connectionId, {
        connectionId,
        replicaUrl: ctx.replica.internalUrl,
        resultAddress: null,
        at: Date.now(),
        authTimeoutMs: 10_000,
        heartbeatIntervalMs,
        heartbeatTtlMs,
        drainTimeoutMs: 10_000,
      })
      .then((s) => s.start())
      .catch((err) => log.error({ err }, 'could not start the connection actor'));
    const inOrder = (fn: () => Promise<unknown>) => {
      chain = chain.then(fn).catch((err) => log.error({ err }, 'agent frame handling failed'));
    };

    // Presence. Every interval an agent sends a heartbeat and re-sends its status, and each renewal the actor takes
    // is a write (its snapshot and the agents row): two a second for every ten agents, 2,000 a second at 10,000
    // (issue #36). A status whose capabilities this socket already delivered is presence only, and presence renewed
    // less than half an interval ago is not renewed again: one write per agent per interval, the deadline (three
    // intervals by default) still renewed every interval.
    // An idle agent's status is the very same text each time: once delivered, that text is presence without being
    // decoded again.
    const presence = { capabilities: null as string | null, statusText: null as string | null, at: 0 };
    const renewPresence = async () => {
      const now = Date.now();
      if (now - presence.at < heartbeatIntervalMs / 2) return;
      presence.at = now;
      await host.send('agentConnection', connectionId, { type: 'heartbeat' });
    };

    // The latest heartbeat and status frame received, by type: an older one still queued says nothing the newer
    // one does not, and is skipped. While the database is unreachable each delivery is retried for about 2 s, and
    // the heartbeats piling up in front of a query's outcome held it back for tens of seconds.
    const latest = new Map<string, number>();
    // Likewise a query's progress: a newer report of the same query supersedes one still queued.
    const latestProgress = new Map<string, number>();
    /** When each query's progress was last written (a throttle, not state: any replica reads the row). */
    const progressWrittenAt = new Map<string, number>();
    let received = 0;
    socket.on('message', (data, isBinary) => {
      const text = isBinary ? null : data.toString();
      if (text !== null && text === presence.statusText) return inOrder(renewPresence);
      const decoded = decodeAgentFrame(text);
      const n = ++received;
      if (decoded.ok && SUPERSEDED.has(decoded.frame.type)) latest.set(decoded.frame.type, n);
      if (decoded.ok && decoded.frame.type === 'query_progress') latestProgress.set(decoded.frame.payload.query_id, n);
      inOrder(async () => {
        if (!decoded.ok) {
          log.warn({ code: decoded.error.code, reason: decoded.error.message }, 'bad frame from agent');
          send({ type: 'error', payload: { code: decoded.error.code, message: decoded.error.message } });
          return;
        }
        if (SUPERSEDED.has(decoded.frame.type) && latest.get(decoded.frame.type) !== n) return;
        if (decoded.frame.type === 'query_progress' && latestProgress.get(decoded.frame.payload.query_id) !== n) return;
        await onFrame(decoded.frame, text!);
      });
    });
    let ended!: () => void;
    ends.set(connectionId, new Promise<void>((r) => (ended = r)));
    let socketClosed = false;
    socket.on('close', (code) => {
      socketClosed = true;
      clearInterval(heartbeat);
      inOrder(async () => {
        try {
          await host.send('agentConnection', connectionId, { type: 'disconnected', reason: `socket closed (${code})` });
        } finally {
          sockets.removeConnection(connectionId);
          ends.delete(connectionId);
          ended();
        }
      });
    });
    socket.on('error', (err) => log.warn({ err: err.message }, 'agent socket error'));

    // Answered here at once, with the protocol's close code (4001/4002) that the agent logs; the machine's own
    // auth_error and close effects then find the socket closing and do nothing.
    const authFail = async (code: string, message: string, closeCode: number) => {
      log.warn({ code, reason: message }, 'agent authentication refused');
      send({ type: 'auth_error', payload: { code, message } });
      conn.close(closeCode, code);
      await host.send('agentConnection', connectionId, { type: 'authFailed', code, message });
    };

    async function onFrame(frame: AgentFrame, text: string) {
      switch (frame.type) {
        case 'auth': {
          if (conn.agentId) {
            send({ type: 'error', payload: { code: 'unexpected_frame_type', message: 'already authenticated', frame_type: 'auth' } });
            return;
          }
          // Fields the spec's frame table does not name (an agent written from it sends only the token): the current
          // protocol, the spec's default result port (RESULTS_HTTP_PORT), no version.
          const p = { ...frame.payload, protocol_version: frame.payload.protocol_version ?? PROTOCOL_VERSION, results_port: frame.payload.results_port ?? DEFAULT_RESULTS_PORT, agent_version: frame.payload.agent_version ?? null };
          if (p.protocol_version !== PROTOCOL_VERSION) {
            return authFail(
              'protocol_version_mismatch',
              `control plane speaks protocol ${PROTOCOL_VERSION}, agent sent ${p.protocol_version}`,
              CLOSE_CODES.protocolVersionMismatch,
            );
          }
          let agentId: string;
          let resumed = false;
          let name = p.name ?? null;
          if (p.session_token) {
            const agent = await agents.agentBySessionToken(db, p.session_token);
            if (!agent) return authFail('invalid_session_token', 'unknown or revoked agent session token', CLOSE_CODES.authFailed);
            agentId = agent.id;
            name = agent.name;
            resumed = true;
            conn.sessionToken = p.session_token;
          } else {
            // The token is spent, the agent registered and the bootstrap audited together: a crash in between
            // neither burns the token without an agent nor leaves an agent without its record.
            const reg = await db.tx(async (q) => {
              const tx = joinTransaction(q);
              const boot = await agents.consumeBootstrapToken(tx, p.bootstrap_token!);
              if (!boot) return null;
              // A token minted for an elastic agent's instance gives that pre-created row its credential.
              const registered = boot.agent_id
                ? await agents.renewAgentCredential(tx, boot.agent_id, p.agent_version)
                : await agents.registerAgent(tx, { name: p.name || boot.name || `agent-${address}`, version: p.agent_version });
              if (!registered) return null;
              await audit(
                ctx,
                req,
                {
                  action: 'agent.bootstrap',
                  outcome: 'success',
                  actor: { kind: 'agent', id: registered.agentId, email: null },
                  target: { kind: 'agent', id: registered.agentId },
                  details: { agent_name: p.name || boot.name || null, address },
                },
                q,
              );
              return registered;
            });
            if (!reg) {
              await audit(ctx, req, { action: 'agent.bootstrap', outcome: 'failure', actor: ANONYMOUS, details: { code: 'invalid_bootstrap_token', address, agent_name: p.name ?? null } });
              return authFail('invalid_bootstrap_token', 'unknown, used or expired bootstrap token', CLOSE_CODES.authFailed);
            }
            agentId = reg.agentId;
            conn.sessionToken = reg.sessionToken;
            conn.issuedToken = reg.sessionToken;
          }
          conn.resultUrl = `http://${address}:${p.results_port}`;
          await agents.recordAgentHello(db, agentId, conn.resultUrl, p.agent_version);
          log.info({ agentId, resumed }, 'agent authenticated');
          const r = await host.send('agentConnection', connectionId, {
            type: 'authenticated',
            agentId,
            name,
            version: p.agent_version,
            resumed,
          });
          // auth_ok and the registry binding happen in the effects: later frames of this socket wait for them.
          await r.effectsDone;
          conn.agentId = agentId;
          return;
        }
        case 'agent_status': {
          if (!conn.agentId) return notAuthenticated(frame.type);
          const capabilities = JSON.stringify(frame.payload.capabilities);
          if (capabilities !== presence.capabilities) {
            await host.send('agentConnection', connectionId, { type: 'status', capabilities: frame.payload.capabilities as unknown as { [key: string]: Json } }); // decoded from a JSON frame: JSON values
            presence.capabilities = capabilities;
            presence.at = Date.now();
          } else await renewPresence();
          presence.statusText = text;
          return;
        }
        case 'heartbeat':
          if (!conn.agentId) return notAuthenticated(frame.type);
          return renewPresence();
        case 'query_started':
          if (!conn.agentId) return notAuthenticated(frame.type);
          // A session statement is acknowledged (it runs now); a query has started.
          await ownQuery(frame.payload.query_id, { type: 'started' });
          return;
        case 'session_opened':
        case 'session_open_failed':
        case 'session_closed': {
          if (!conn.agentId) return notAuthenticated(frame.type);
          const sessionId = frame.payload.session_id;
          const event: EventFor<'sqlSession'> =
            frame.type === 'session_opened'
              ? { type: 'opened' }
              : frame.type === 'session_closed'
                ? { type: 'closed' }
                : { type: 'openFailed', code: frame.payload.error.code, message: frame.payload.error.message };
          // Kept through a database outage as an outcome is: the agent does not say it again, and a lost
          // acknowledgement left the session opening (its client waiting) until the opening deadline.
          return keptThroughOutage(() => reportOnSession(sessionId, event), { sessionId, event: event.type });
        }
        case 'query_progress': {
          if (!conn.agentId) return notAuthenticated(frame.type);
          const p = frame.payload;
          latestProgress.delete(p.query_id);
          const now = Date.now();
          if (now - (progressWrittenAt.get(p.query_id) ?? -Infinity) < PROGRESS_MIN_INTERVAL_MS) return;
          progressWrittenAt.set(p.query_id, now);
          // Best effort: a report that cannot be written is dropped (the next one comes a second later); the update
          // itself ignores a query not running on this agent.
          await recordProgress(db, p.query_id, conn.agentId, { percent: p.percent, rows_processed: p.rows_processed, rows_total: p.rows_total }).catch((err: unknown) =>
            log.debug({ err, queryId: p.query_id }, 'query progress not recorded'),
          );
          return;
        }
        case 'query_done': {
          if (!conn.agentId) return notAuthenticated(frame.type);
          const p = frame.payload;
          await ownQuery(p.query_id, {
            type: 'done',
            rowCount: p.row_count,
            durationMs: p.duration_ms,
            resultPath: p.result_path,
            columns: p.result_path ? [...(p.columns ?? [])] : null,
            columnSchema: p.column_schema ? p.column_schema.map((c) => ({ name: c.name, type: c.type })) : null,
            profile: (p.profile ?? null) as Json, // decoded from a JSON frame
            ...(p.result_inline !== undefined ? { resultInline: p.result_inline } : {}),
          });
          return;
        }
        case 'query_failed':
          if (!conn.agentId) return notAuthenticated(frame.type);
          await ownQuery(frame.payload.query_id, { type: 'failed', code: frame.payload.error.code, message: frame.payload.error.message });
          return;
        case 'cancel_ack':
          // Found false: the agent has no such query, nothing of it runs (a cancelling query is then cancelled).
          if (conn.agentId && !frame.payload.found) await ownQuery(frame.payload.query_id, { type: 'cancelAck', found: false });
          return;
        case 'error':
          if (frame.type === 'error') log.warn({ code: frame.payload.code, reason: frame.payload.message }, 'agent reported an error');
          return;
      }
    }

    function notAuthenticated(type: string) {
      send({ type: 'error', payload: { code: 'unexpected_frame_type', message: 'authenticate first', frame_type: type } });
    }

    /** An agent may only report on queries (and session statements) dispatched to it. An outcome (done, failed) is
     *  kept until the database takes it: dropped after the host's few attempts (about 2 s), a result that arrived
     *  while PostgreSQL restarted left its query to end `failed` by timeout although it ran. While the database is
     *  unreachable it is tried again with backoff (this connection's later frames wait behind it, in order); once
     *  the socket closed, the agent sends it again to the replica it reconnects to. */
    async function ownQuery(queryId: string, event: EventFor<'query'>) {
      if (event.type !== 'done' && event.type !== 'failed') return reportOnQuery(queryId, event);
      return keptThroughOutage(() => reportOnQuery(queryId, event), { queryId, event: event.type });
    }

    async function reportOnSession(sessionId: string, event: EventFor<'sqlSession'>) {
      const s = await agentOfSession(db, sessionId);
      if (!s || s.agent_id !== conn.agentId) {
        log.warn({ sessionId }, 'agent reported on a session it does not hold');
        send({ type: 'error', payload: { code: 'unknown_session', message: `no session ${sessionId} was opened on this agent` } });
        return;
      }
      await host.send('sqlSession', sessionId, event);
    }

    /** Delivers what the agent reported, tried again with backoff while the database is unreachable. */
    async function keptThroughOutage<T>(deliver: () => Promise<T>, about: Record<string, string>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await deliver();
        } catch (e) {
          if (!isDatabaseUnavailable(e) || socketClosed || ctx.draining.value) throw e;
          if (attempt === 1) log.warn(about, 'database unreachable; keeping what the agent reported until it is back');
          await new Promise((r) => setTimeout(r, Math.min(1_000, 100 * 2 ** Math.min(attempt, 4))));
        }
      }
    }

    async function reportOnQuery(queryId: string, event: EventFor<'query'>) {
      const remembered = sockets.dispatchedTo(queryId);
      let owner = remembered?.agentId;
      let sessionId = remembered?.sessionId ?? null;
      if (remembered === undefined) {
        const placed = await placementOf(db, queryId);
        owner = placed?.agent_id ?? undefined;
        sessionId = placed?.session_id ?? null;
      }
      if (owner !== conn.agentId) {
        log.warn({ queryId }, 'agent reported on a query it was not given');
        send({ type: 'error', payload: { code: 'unknown_query', message: `no query ${queryId} was dispatched to this agent` } });
        return;
      }
      if (event.type === 'done' || event.type === 'failed') {
        sockets.forgetDispatch(queryId);
        progressWrittenAt.delete(queryId);
      }
      if (sessionId === null) {
        await host.send('query', queryId, event);
        return;
      }
      // A session statement: the agent's start is its acknowledgement; its profile and small result go with its
      // `done` to its row.
      if (event.type === 'started') await host.send('statement', queryId, { type: 'ack' });
      else if (event.type === 'done' || event.type === 'failed' || event.type === 'cancelAck') await host.send('statement', queryId, event);
    }
  });

  return {
    async drain(timeoutMs) {
      const pending = [...ends.values()];
      await Promise.all(
        sockets.all().map((c) =>
          host.send('agentConnection', c.connectionId, { type: 'drain' }).catch((err) => logger.warn({ err, connectionId: c.connectionId }, 'drain not recorded')),
        ),
      );
      // A socket still authenticating ignores drain; it is closed all the same.
      for (const c of sockets.all()) c.close(1012, 'replica shutting down');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(pending), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
    },
  };
}
