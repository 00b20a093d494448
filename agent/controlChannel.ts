// The agent's control channel: dials the control plane, authenticates (session token if it has one, else the
// bootstrap token), advertises agent_status, exchanges heartbeats, hands dispatch/cancel frames to the runner and
// reconnects with exponential backoff and jitter. A control plane silent past heartbeat_ttl_s is treated as gone.
// Given several replicas' URLs, each reconnect dials the next one, so a dead or draining replica is left at once.
import WebSocket from 'ws';
import {
  CLOSE_CODES,
  PROTOCOL_VERSION,
  QUERY_PROGRESS_FEATURE,
  decodeServiceFrame,
  encodeAgentFrame,
  type AgentFrame,
  type ServiceFrame,
} from '../protocol/index.ts';
import { reconnectDelayMs, type BackoffOptions } from './backoff.ts';
import type { Logger } from './logger.ts';
import type { SessionTokenStore } from './sessionTokenStore.ts';

type StatusPayload = Extract<AgentFrame, { type: 'agent_status' }>['payload'];
type DispatchFrame = Extract<ServiceFrame, { type: 'dispatch_query' | 'cancel_query' | 'open_session' | 'close_session' | 'execute_statement' }>;

export interface ControlChannelOptions {
  /** The control plane's replicas, tried in turn. */
  readonly urls: readonly string[];
  readonly bootstrapToken: string;
  readonly tokenStore: SessionTokenStore;
  readonly name: string | undefined;
  readonly resultsPort: number;
  readonly agentVersion: string;
  readonly logger: Logger;
  readonly backoff: BackoffOptions;
  /** How long to wait for auth_ok after sending auth. */
  readonly authTimeoutMs: number;
  readonly status: () => StatusPayload;
  readonly inFlight: () => number;
  readonly onFrame: (frame: DispatchFrame) => void;
  /** Called with the session token in force after every successful auth (the result server checks it). */
  readonly onSessionToken: (token: string) => void;
  /** Called after every successful auth, once agent_status is sent (outcomes held while disconnected go now). */
  readonly onAuthenticated?: () => void;
  /** Called when an authenticated connection is lost (SQL sessions do not outlive it). */
  readonly onDisconnected?: () => void;
}

export class ControlChannel {
  readonly #o: ControlChannelOptions;
  #socket: WebSocket | null = null;
  #stopped = false;
  #attempt = 0;
  /** Whether a control plane ever took this agent: until then, the first dials are quick (reconnectDelayMs). */
  #everConnected = false;
  #urlIndex = 0;
  /** Set when the replica asked us to leave (drain): reconnect elsewhere without waiting out a backoff. */
  #leaveNow = false;
  #reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  #heartbeatTimer: ReturnType<typeof setInterval> | null = null;
  #watchdogTimer: ReturnType<typeof setInterval> | null = null;
  #authTimer: ReturnType<typeof setTimeout> | null = null;
  #authenticated = false;
  #agentId: string | null = null;
  #sessionToken: string | null = null;
  #usedSessionToken = false;
  // When the control plane last sent anything; every frame counts as life for the heartbeat TTL.
  #lastSeen = 0;
  /** The optional frames the connected control plane accepts (its auth_ok `features`). */
  #serviceFeatures: ReadonlySet<string> = new Set();

  constructor(options: ControlChannelOptions) {
    this.#o = options;
  }

  get agentId(): string | null {
    return this.#agentId;
  }

  get connected(): boolean {
    return this.#authenticated;
  }

  async start(): Promise<void> {
    this.#sessionToken = await this.#o.tokenStore.read();
    if (this.#sessionToken !== null) this.#o.onSessionToken(this.#sessionToken);
    this.#connect();
  }

  /** Send a frame if authenticated; frames produced while disconnected are dropped (logged). */
  send(frame: AgentFrame): boolean {
    // Progress is best effort: left out, unlogged, while disconnected and for a control plane that did not ask for it.
    if (frame.type === 'query_progress' && !(this.#authenticated && this.#serviceFeatures.has(QUERY_PROGRESS_FEATURE))) return false;
    const socket = this.#socket;
    if (!socket || socket.readyState !== WebSocket.OPEN || (!this.#authenticated && frame.type !== 'auth')) {
      this.#o.logger.warn({ frameType: frame.type }, 'control channel down: frame dropped');
      return false;
    }
    const encoded = encodeAgentFrame(frame);
    if (!encoded.ok) {
      // Our own bug: never put an invalid frame on the wire.
      this.#o.logger.error({ frameType: frame.type, err: encoded.error.message }, 'refusing to send invalid frame');
      return false;
    }
    socket.send(encoded.text);
    return true;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    const socket = this.#socket;
    this.#teardown();
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          socket.terminate();
          resolve();
        }, 2000);
        socket.once('close', () => {
          clearTimeout(force);
          resolve();
        });
        socket.close(1000, 'agent shutting down');
      });
    }
  }

  #connect(): void {
    if (this.#stopped) return;
    const log = this.#o.logger;
    const url = this.#o.urls[this.#urlIndex % this.#o.urls.length];
    log.info({ url, attempt: this.#attempt }, 'connecting to control plane');
    const socket = new WebSocket(url, { handshakeTimeout: this.#o.authTimeoutMs });
    this.#socket = socket;
    socket.on('open', () => this.#onOpen(socket));
    socket.on('message', (data, isBinary) => {
      if (socket !== this.#socket) return;
      this.#lastSeen = Date.now();
      this.#onMessage(isBinary ? null : data.toString());
    });
    socket.on('error', (error) => log.warn({ err: error.message }, 'control channel error'));
    socket.on('close', (code, reason) => {
      if (socket !== this.#socket) return;
      log.warn({ code, reason: reason.toString() }, 'control channel closed');
      if (this.#authenticated) this.#o.onDisconnected?.();
      // 1012 "service restart": the replica drains and hands its agents over.
      if (code === CLOSE_CODES.shutdown || code === 1012) this.#leaveNow = true;
      this.#teardown();
      this.#scheduleReconnect();
    });
  }

  #onOpen(socket: WebSocket): void {
    this.#lastSeen = Date.now();
    this.#usedSessionToken = this.#sessionToken !== null;
    const auth: AgentFrame = {
      type: 'auth',
      payload: {
        ...(this.#sessionToken !== null ? { session_token: this.#sessionToken } : { bootstrap_token: this.#o.bootstrapToken }),
        protocol_version: PROTOCOL_VERSION,
        ...(this.#o.name ? { name: this.#o.name } : {}),
        results_port: this.#o.resultsPort,
        agent_version: this.#o.agentVersion,
      },
    };
    this.#o.logger.info({ credential: this.#usedSessionToken ? 'session' : 'bootstrap' }, 'authenticating');
    this.send(auth);
    this.#authTimer = setTimeout(() => {
      this.#o.logger.warn('no auth answer in time: reconnecting');
      socket.terminate();
    }, this.#o.authTimeoutMs);
  }

  #onMessage(text: string | null): void {
    const log = this.#o.logger;
    const decoded = decodeServiceFrame(text ?? '');
    if (!decoded.ok) {
      log.warn({ code: decoded.error.code, err: decoded.error.message, frameType: decoded.error.frameType }, 'bad frame from control plane');
      this.#sendRaw({
        type: 'error',
        payload: {
          code: decoded.error.code,
          message: decoded.error.message,
          ...(decoded.error.frameType ? { frame_type: decoded.error.frameType } : {}),
        },
      });
      return;
    }
    const frame = decoded.frame;
    switch (frame.type) {
      case 'auth_ok':
        void this.#onAuthOk(frame.payload);
        return;
      case 'auth_error':
        void this.#onAuthError(frame.payload);
        return;
      case 'heartbeat':
        return;
      case 'error':
        log.warn({ code: frame.payload.code, err: frame.payload.message, frameType: frame.payload.frame_type }, 'control plane reported an error');
        return;
      case 'dispatch_query':
      case 'cancel_query':
      case 'open_session':
      case 'close_session':
      case 'execute_statement':
        if (!this.#authenticated) {
          this.#sendRaw({ type: 'error', payload: { code: 'not_authenticated', message: `${frame.type} before auth_ok`, frame_type: frame.type } });
          return;
        }
        this.#o.onFrame(frame);
        return;
    }
  }

  // Sends even before auth_ok (the `error` answer to a bad frame must not wait for authentication).
  #sendRaw(frame: AgentFrame): void {
    const encoded = encodeAgentFrame(frame);
    if (encoded.ok && this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(encoded.text);
  }

  async #onAuthOk(payload: Extract<ServiceFrame, { type: 'auth_ok' }>['payload']): Promise<void> {
    const log = this.#o.logger;
    if (this.#authTimer) clearTimeout(this.#authTimer);
    if (payload.session_token !== undefined && payload.session_token !== this.#sessionToken) {
      this.#sessionToken = payload.session_token;
      try {
        await this.#o.tokenStore.write(payload.session_token);
      } catch (error) {
        log.error({ err: String(error) }, 'could not store the session token: a restart will need a new bootstrap token');
      }
    }
    if (this.#sessionToken === null) {
      log.error('auth_ok carried no session token and none is stored: result reads will be refused');
    } else {
      this.#o.onSessionToken(this.#sessionToken);
    }
    this.#serviceFeatures = new Set(payload.features ?? []);
    this.#authenticated = true;
    this.#agentId = payload.agent_id;
    this.#attempt = 0;
    this.#everConnected = true;
    log.info({ agentId: payload.agent_id, heartbeatIntervalS: payload.heartbeat_interval_s, heartbeatTtlS: payload.heartbeat_ttl_s }, 'connected to control plane');
    this.send({ type: 'agent_status', payload: this.#o.status() });
    this.#o.onAuthenticated?.();
    this.#heartbeatTimer = setInterval(() => {
      this.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString(), in_flight: this.#o.inFlight() } });
      this.send({ type: 'agent_status', payload: this.#o.status() });
    }, payload.heartbeat_interval_s * 1000);
    const ttlMs = payload.heartbeat_ttl_s * 1000;
    this.#watchdogTimer = setInterval(() => {
      if (Date.now() - this.#lastSeen > ttlMs) {
        log.warn({ silentMs: Date.now() - this.#lastSeen }, 'control plane silent past heartbeat TTL: reconnecting');
        this.#socket?.terminate();
      }
    }, Math.max(100, Math.min(ttlMs / 4, 5000)));
  }

  async #onAuthError(payload: { code: string; message: string }): Promise<void> {
    const log = this.#o.logger;
    log.error({ code: payload.code, reason: payload.message }, 'control plane refused authentication');
    if (this.#usedSessionToken && payload.code !== 'protocol_version_mismatch') {
      // The stored credential was revoked or belongs to a deleted agent: fall back to the bootstrap token.
      this.#sessionToken = null;
      await this.#o.tokenStore.clear().catch(() => undefined);
    }
    this.#socket?.close(CLOSE_CODES.authFailed, payload.code);
  }

  #teardown(): void {
    if (this.#heartbeatTimer) clearInterval(this.#heartbeatTimer);
    if (this.#watchdogTimer) clearInterval(this.#watchdogTimer);
    if (this.#authTimer) clearTimeout(this.#authTimer);
    this.#heartbeatTimer = this.#watchdogTimer = this.#authTimer = null;
    this.#authenticated = false;
  }

  #scheduleReconnect(): void {
    if (this.#stopped) return;
    this.#urlIndex = (this.#urlIndex + 1) % this.#o.urls.length;
    // A draining replica hands its agents over: the next replica is dialled at once, not after a backoff.
    const delay = this.#leaveNow ? 50 : reconnectDelayMs(this.#attempt, this.#everConnected, this.#o.backoff);
    this.#leaveNow = false;
    this.#attempt += 1;
    this.#o.logger.info({ delayMs: delay }, 'reconnecting after delay');
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay);
  }
}
