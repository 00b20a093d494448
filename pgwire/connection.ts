// One PostgreSQL wire connection: authentication with a personal or service-account token as the password, then a
// SQL session opened through the same code as POST /workspaces/{ws}/sql/sessions, the simple and extended query
// protocols mapped onto its statements, and the session closed when the connection ends.
import { randomInt } from 'node:crypto';
import type { Socket } from 'node:net';
import { PostgresConnection, type State } from 'pg-gateway';
import { principalFromToken, type Principal } from '../domain/identity.ts';
import { resolveWorkspace, type WorkspaceAccess } from '../domain/workspaces.ts';
import { visibleAgents } from '../domain/agents.ts';
import { AppError } from '../domain/errors.ts';
import * as sessions from '../domain/sqlSessions.ts';
import type { QueryRow } from '../domain/queries.ts';
import { appendAudit, type AuditEvent } from '../domain/audit.ts';
import type { AppContext } from '../usecases/context.ts';
import { openSqlSession, submitAndAwait, withHeldResult } from '../usecases/sqlSessions.ts';
import { readQuery } from '../usecases/querySubmission.ts';
import { readRowsPage } from '../usecases/resultPages.ts';
import * as wire from './wire.ts';
import { OID, binaryParam, binaryValue, declaredParamType, fieldsOf, resultFormat, textValue, type DeclaredParamType } from './types.ts';
import { StatementFailed, WireError, errorFieldsOf } from './errors.ts';
import { ScramServer, principalFromTokenId, rememberScramVerifier, scramVerifiersOf } from './scram.ts';
import { CatalogMirror, isCatalogQuery } from './catalogMirror.ts';
import { classify, clientSetting, commandTag, copyLine, copyToStdout, countParams, splitStatements } from './statements.ts';

import { SERVER_VERSION } from './version.ts';
const PAGE_ROWS = 20_000;
/** How long one wait for a statement's end lasts before the connection checks it is still open. */
const STATEMENT_WAIT_MS = 30_000;
const CANCEL_REQUEST = 80877102;
const GSSENC_REQUEST = 80877104;

export interface WireOptions {
  ctx: AppContext;
  tls: { key: Buffer; cert: Buffer } | null;
  /** called with each connection's end, for the server's count */
  onClose: () => void;
}

/** What a statement produced: its columns (null: no result grid), its command tag, and its rows read on demand. */
interface Outcome {
  fields: wire.FieldDescription[] | null;
  tag: string;
  rowCount: number;
  rows: (offset: number, limit: number) => Promise<(string | null)[][]>;
}

interface Prepared {
  sql: string;
  paramTypes: number[];
}

interface Portal {
  stmt: Prepared;
  params: (string | null)[];
  /** Bind's result format codes: none (all text), one for all columns, or one per column. */
  resultFormats: number[];
  outcome: Outcome | null;
  sent: number;
}

const noRows = async () => [];

/** Each result column's format: what Bind asked for (one code for all, or one per column) where it has a binary form. */
const formatsOf = (fields: wire.FieldDescription[], requested: number[]) =>
  fields.map((f, i) => resultFormat(requested.length === 1 ? requested[0] : (requested[i] ?? 0), f.typeOid));

export class WireConnection {
  readonly #o: WireOptions;
  readonly #socket: Socket;
  readonly #gateway: PostgresConnection;
  #principal: Principal | null = null;
  #scram: ScramServer | null = null;
  #sessionId: string | null = null;
  #ws: WorkspaceAccess | null = null;
  #processId = 0;
  #closed = false;
  #queue: Buffer[] = [];
  #draining = false;
  #txStatus: 'I' | 'T' | 'E' = 'I';
  #skipToSync = false;
  #statements = new Map<string, Prepared>();
  #portals = new Map<string, Portal>();
  #settings = new Map<string, string>();
  #timeoutS: number | null = null;
  #mirror: CatalogMirror | null = null;
  #catalog: string | null = null;
  readonly #requestRef = { id: `pgwire-${randomInt(2 ** 31)}` };

  constructor(socket: Socket, o: WireOptions) {
    this.#o = o;
    this.#socket = socket;
    this.#gateway = new PostgresConnection(socket, {
      serverVersion: SERVER_VERSION,
      tls: o.tls ?? undefined,
      onStartup: (state) => this.#onStartup(state),
      onMessage: (data, state) => this.#onMessage(data, state),
    });
    socket.on('close', () => void this.#end());
    socket.on('error', () => undefined);
  }

  get #out(): Socket {
    return this.#gateway.socket;
  }

  #send(...messages: Buffer[]): void {
    if (this.#closed) return;
    this.#out.write(messages.length === 1 ? messages[0] : Buffer.concat(messages));
  }

  #fatal(code: string, message: string): void {
    this.#send(wire.errorResponse({ severity: 'FATAL', code, message }));
    this.#out.end();
  }

  // ---- startup and authentication -------------------------------------------------------------------------

  async #onStartup(state: State): Promise<boolean> {
    const params = state.clientInfo?.parameters ?? { user: '' };
    if (!params.database) {
      this.#fatal('3D000', 'name the workspace as the database (workspace or workspace/catalog)');
      return true;
    }
    if (this.#gateway.secureSocket) this.#send(wire.authenticationCleartext());
    else {
      // Without TLS the token never crosses the wire: SCRAM-SHA-256 against the verifier kept for it.
      this.#scram = new ScramServer();
      this.#send(wire.authenticationSasl(['SCRAM-SHA-256']));
    }
    // From here on the messages are framed here, synchronously per chunk: pg-gateway's own loop awaits between
    // messages, and a chunk arriving meanwhile (a driver writes Parse, Bind, Execute as separate TLS records) would
    // run a second loop over the same buffer.
    const socket = this.#gateway.detach();
    socket.on('data', (chunk: Buffer) => this.#frame(chunk));
    return true;
  }

  #pending: Buffer = Buffer.alloc(0);

  #frame(chunk: Buffer): void {
    let buf = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    while (buf.length >= 5) {
      const len = buf.readUInt32BE(1);
      if (len < 4) return this.#fatal('08P01', 'malformed message length');
      if (buf.length < 1 + len) break;
      this.#queue.push(Buffer.from(buf.subarray(0, 1 + len)));
      buf = buf.subarray(1 + len);
    }
    this.#pending = Buffer.from(buf);
    void this.#drain();
  }

  async #onMessage(data: Uint8Array, state: State): Promise<boolean> {
    const buf = Buffer.from(data);
    if (!state.hasStarted) {
      if (buf.length === 16 && buf.readInt32BE(4) === CANCEL_REQUEST) {
        await this.#cancelRequest(buf.readInt32BE(8), buf.readInt32BE(12)).catch((e: unknown) => this.#o.ctx.logger.warn({ err: (e as Error).message }, 'pgwire cancel failed'));
        this.#socket.end();
        this.#gateway.hasStarted = true;
        return true;
      }
      if (buf.length === 8 && buf.readInt32BE(4) === GSSENC_REQUEST) {
        // No GSSAPI encryption: 'N', and the client goes on with SSLRequest or its startup message.
        this.#socket.write('N');
        setImmediate(() => (this.#gateway.hasStarted = false));
        return true;
      }
    }
    return false;
  }

  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#queue.length && !this.#closed) {
        const m = this.#queue.shift()!;
        try {
          await this.#handle(m);
        } catch (e) {
          this.#o.ctx.logger.warn({ err: (e as Error).message }, 'pgwire message failed');
          this.#send(wire.errorResponse(errorFieldsOf(e)));
          if (!this.#principal || !this.#sessionId) this.#out.end();
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  async #handle(m: Buffer): Promise<void> {
    const type = String.fromCharCode(m[0]);
    const r = new wire.MessageReader(m.subarray(5));
    if (!this.#sessionId) {
      if (type === 'p') return this.#password(r);
      if (type === 'X') return void this.#out.end();
      return this.#fatal('08P01', `unexpected message ${type} before authentication`);
    }
    if (this.#skipToSync && type !== 'S' && type !== 'X') return;
    switch (type) {
      case 'Q':
        return this.#simpleQuery(r.cstring());
      case 'P':
        return this.#parse(r);
      case 'B':
        return this.#bind(r);
      case 'D':
        return this.#describe(r);
      case 'E':
        return this.#execute(r);
      case 'C':
        return this.#close(r);
      case 'S':
        this.#skipToSync = false;
        return this.#send(wire.readyForQuery(this.#txStatus));
      case 'H':
        return;
      case 'X':
        return void this.#out.end();
      case 'd':
      case 'c':
      case 'f':
        return; // COPY FROM STDIN is not offered; a stray CopyData is dropped
      default:
        this.#send(wire.errorResponse({ severity: 'ERROR', code: '0A000', message: `message ${type} is not supported` }));
    }
  }

  async #password(r: wire.MessageReader): Promise<void> {
    const { ctx } = this.#o;
    const user = this.#gateway.clientInfo?.parameters.user ?? '';
    let principal: Principal | undefined;
    if (this.#scram) {
      const step = this.#scram.step;
      if (step === 'initial') {
        const mechanism = r.cstring();
        const len = r.int32();
        if (mechanism !== 'SCRAM-SHA-256') return this.#fatal('28000', `SASL mechanism ${mechanism} is not offered`);
        const first = r.bytes(len).toString('utf8');
        const verifiers = await scramVerifiersOf(ctx.db, user);
        const reply = this.#scram.clientFirst(first, verifiers);
        if (!reply) return this.#fatal('28P01', 'malformed SCRAM message');
        return this.#send(wire.authenticationSaslContinue(reply));
      }
      const result = this.#scram.clientFinal(r.rest().toString('utf8'));
      if (!result) {
        return this.#fatal(
          '28P01',
          `password authentication failed for user "${user}": no token of this user was verified for SCRAM; connect once with TLS (sslmode=require) or check the token`,
        );
      }
      principal = await principalFromTokenId(ctx.db, result.tokenId);
      if (!principal) return this.#fatal('28P01', `password authentication failed for user "${user}"`);
      this.#send(wire.authenticationSaslFinal(result.serverFinal));
    } else {
      const token = r.cstring();
      principal = await principalFromToken(ctx.db, token);
      if (!principal) return this.#fatal('28P01', `password authentication failed for user "${user}": the password is a personal or service-account token`);
      // Kept so the same token can authenticate with SCRAM-SHA-256 where TLS is not used.
      if (principal.tokenId) await rememberScramVerifier(ctx.db, principal.tokenId, principal.user.id, token).catch(() => undefined);
    }
    this.#principal = principal;
    await this.#openSession();
  }

  async #openSession(): Promise<void> {
    const { ctx } = this.#o;
    const c = ctx.config;
    const params = this.#gateway.clientInfo!.parameters;
    const [wsRef, catalog] = splitDatabase(params.database);
    if (!c.SQL_SESSIONS_ENABLED) return this.#fatal('57P03', 'SQL sessions are not enabled on this server (SQL_SESSIONS_ENABLED)');
    let ws: WorkspaceAccess;
    try {
      ws = await resolveWorkspace(ctx.db, this.#principal!, wsRef, 'reader');
    } catch {
      return this.#fatal('3D000', `database "${params.database}" does not exist (it names a workspace you are a member of: workspace or workspace/catalog)`);
    }
    const options = parseOptions(params.options ?? '');
    const agentRef = params['eider.agent'] ?? options['eider.agent'] ?? null;
    const app = params.application_name || 'postgres-wire';
    let sessionId: string;
    try {
      const agentId = await this.#chooseAgent(ws, agentRef);
      sessionId = await openSqlSession(ctx, this.#principal!, ws, { agent_id: agentId, catalog: catalog ?? null }, `${app.replace(/[\s/]+/g, '-')}/pgwire`);
    } catch (e) {
      const f = errorFieldsOf(e);
      return this.#fatal(f.code, f.message);
    }
    const settled = (v: { status: string }) => v.status !== 'opening' && v.status !== 'pending';
    await ctx.host.waitFor('sqlSession', sessionId, settled, c.SQL_SESSION_WAIT_TIMEOUT_S * 1000);
    const row = (await sessions.readSession(ctx.db, sessionId))!;
    if (row.status !== 'open') {
      await ctx.host.send('sqlSession', sessionId, { type: 'close' }).catch(() => undefined);
      return this.#fatal('57P03', row.status === 'failed' ? `the session could not be opened: ${row.error ?? 'failed'}` : `the session did not open within ${c.SQL_SESSION_WAIT_TIMEOUT_S} s; try again`);
    }
    this.#sessionId = sessionId;
    this.#ws = ws;
    this.#catalog = row.active_catalog;
    if (this.#closed) {
      // The client left while the session opened: #end ran before there was a session to close.
      await ctx.host.send('sqlSession', sessionId, { type: 'close' }).catch(() => undefined);
      return;
    }
    const secret = randomInt(-(2 ** 31), 2 ** 31);
    for (let i = 0; i < 5 && !this.#processId; i++) {
      const pid = randomInt(1, 2 ** 31);
      const [ins] = await ctx.db.query<{ process_id: number }>(
        `insert into pgwire_backends (process_id, secret_key, session_id) values ($1, $2, $3) on conflict do nothing returning process_id`,
        [pid, secret, sessionId],
      );
      if (ins) this.#processId = pid;
    }
    this.#settings.set('application_name', app);
    this.#send(
      wire.authenticationOk(),
      ...Object.entries({
        server_version: SERVER_VERSION,
        server_encoding: 'UTF8',
        client_encoding: 'UTF8',
        DateStyle: 'ISO, MDY',
        IntervalStyle: 'postgres',
        TimeZone: 'UTC',
        integer_datetimes: 'on',
        standard_conforming_strings: 'on',
        is_superuser: 'off',
        session_authorization: this.#principal!.user.email ?? this.#principal!.user.name,
        application_name: app,
      }).map(([k, v]) => wire.parameterStatus(k, v)),
      wire.backendKeyData(this.#processId, secret),
      wire.readyForQuery('I'),
    );
  }

  /** The agent the client named (`eider.agent`: id or name), else one it may use that is connected, else the pool. */
  async #chooseAgent(ws: WorkspaceAccess, ref: string | null): Promise<string | null> {
    const { ctx } = this.#o;
    const usable = (await visibleAgents(ctx.db, this.#principal!, undefined, ws.workspace.id)).filter((a) => a.tier !== null);
    if (ref) {
      const named = usable.find((a) => a.agent.id === ref || a.agent.name === ref);
      if (!named) throw new WireError('08004', `agent ${ref} is not one you may use`);
      return named.agent.id;
    }
    if (ctx.elastic) return null;
    for (const a of usable) if (a.agent.status === 'healthy' && (await ctx.link.reachable(a.agent.id))) return a.agent.id;
    throw new WireError('08004', 'no agent you may use is connected; name one with options=-c eider.agent=<id or name>');
  }

  async #cancelRequest(pid: number, secret: number): Promise<void> {
    const { ctx } = this.#o;
    const [b] = await ctx.db.query<{ session_id: string }>(`select session_id from pgwire_backends where process_id = $1 and secret_key = $2`, [pid, secret]);
    if (!b) return;
    const live = await ctx.db.query<{ id: string }>(`select id from queries where session_id = $1 and status in ('queued', 'running')`, [b.session_id]);
    await Promise.all(live.map((s) => ctx.host.send('statement', s.id, { type: 'cancel' })));
  }

  async #end(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const { ctx } = this.#o;
    try {
      if (this.#sessionId) {
        await ctx.db.query(`delete from pgwire_backends where session_id = $1`, [this.#sessionId]).catch(() => undefined);
        await ctx.host.send('sqlSession', this.#sessionId, { type: 'close' });
      }
    } catch (e) {
      ctx.logger.warn({ sessionId: this.#sessionId, err: (e as Error).message }, 'pgwire session close failed');
    } finally {
      await this.#mirror?.close();
      this.#o.onClose();
    }
  }

  // ---- queries ------------------------------------------------------------------------------------------------

  async #simpleQuery(text: string): Promise<void> {
    const parts = splitStatements(text);
    if (parts.length === 0) return this.#send(wire.emptyQueryResponse(), wire.readyForQuery(this.#txStatus));
    for (const sql of parts) {
      try {
        const copy = copyToStdout(sql);
        if (copy) {
          await this.#copyOut(copy);
          continue;
        }
        const out = await this.#run(sql, []);
        if (out.fields) this.#send(wire.rowDescription(out.fields));
        await this.#sendRows(out, 0, Infinity);
        this.#send(wire.commandComplete(out.tag));
      } catch (e) {
        this.#failed(e);
        break;
      }
    }
    this.#send(wire.readyForQuery(this.#txStatus));
  }

  /** COPY … TO STDOUT: the query runs as a statement, its rows go out as CopyData lines. */
  async #copyOut(copy: NonNullable<ReturnType<typeof copyToStdout>>): Promise<void> {
    const out = await this.#run(copy.query, []);
    const names = out.fields?.map((f) => f.name) ?? [];
    this.#send(wire.copyOutResponse(names.length));
    if (copy.header && copy.csv) this.#send(wire.copyData(Buffer.from(copyLine(names, copy))));
    for (let at = 0; at < out.rowCount; ) {
      const rows = await out.rows(at, PAGE_ROWS);
      if (rows.length === 0) break;
      this.#send(...rows.map((r) => wire.copyData(Buffer.from(copyLine(r, copy)))));
      at += rows.length;
    }
    this.#send(wire.copyDone(), wire.commandComplete(`COPY ${out.rowCount}`));
  }

  #failed(e: unknown): void {
    if (this.#txStatus === 'T') this.#txStatus = 'E';
    this.#send(wire.errorResponse(errorFieldsOf(e)));
  }

  async #sendRows(out: Outcome, from: number, max: number, formats: readonly number[] = []): Promise<number> {
    let sent = 0;
    const binary = formats.includes(1) ? formats.map((f, i) => (f === 1 ? out.fields![i].typeOid : null)) : null;
    while (sent < max && from + sent < out.rowCount) {
      const rows = await out.rows(from + sent, Math.min(PAGE_ROWS, max - sent));
      if (rows.length === 0) break;
      this.#send(...rows.map((r) => wire.dataRow(binary ? r.map((v, i) => (v === null || binary[i] === null ? v : binaryValue(v, binary[i]))) : r)));
      sent += rows.length;
      // A slow reader holds the next page back instead of the api's memory.
      if (this.#out.writableNeedDrain) {
        await new Promise<void>((resolve) => {
          const done = () => {
            this.#out.off('drain', done);
            this.#out.off('close', done);
            resolve();
          };
          this.#out.on('drain', done);
          this.#out.on('close', done);
        });
      }
    }
    return sent;
  }

  #parse(r: wire.MessageReader): void {
    const name = r.cstring();
    const sql = r.cstring();
    const n = r.int16();
    const paramTypes = Array.from({ length: n }, () => r.int32());
    this.#statements.set(name, { sql, paramTypes });
    this.#send(wire.parseComplete());
  }

  #bind(r: wire.MessageReader): void {
    try {
      const portal = r.cstring();
      const stmt = this.#statements.get(r.cstring());
      if (!stmt) throw new WireError('26000', 'prepared statement does not exist');
      const formats = Array.from({ length: r.int16() }, () => r.int16());
      const count = r.int16();
      const params: (string | null)[] = [];
      for (let i = 0; i < count; i++) {
        const len = r.int32();
        if (len < 0) {
          params.push(null);
          continue;
        }
        const raw = r.bytes(len);
        const binary = (formats.length === 1 ? formats[0] : (formats[i] ?? 0)) === 1;
        params.push(binary ? binaryParam(raw, stmt.paramTypes[i] ?? 0) : raw.toString('utf8'));
      }
      const resultFormats = Array.from({ length: r.int16() }, () => r.int16());
      this.#portals.set(portal, { stmt, params, resultFormats, outcome: null, sent: 0 });
      this.#send(wire.bindComplete());
    } catch (e) {
      this.#extendedFailed(e);
    }
  }

  #extendedFailed(e: unknown): void {
    this.#failed(e);
    this.#skipToSync = true;
  }

  async #describe(r: wire.MessageReader): Promise<void> {
    const kind = String.fromCharCode(r.byte());
    const name = r.cstring();
    try {
      if (kind === 'S') {
        const stmt = this.#statements.get(name);
        if (!stmt) throw new WireError('26000', `prepared statement "${name}" does not exist`);
        const n = Math.max(stmt.paramTypes.length, countParams(stmt.sql));
        this.#send(wire.parameterDescription(Array.from({ length: n }, (_, i) => stmt.paramTypes[i] || OID.text)));
        // The columns of a read are known once it runs; a write is not run to describe it.
        const fields = n === 0 && classify(stmt.sql).kind === 'read' ? (await this.#run(stmt.sql, [])).fields : null;
        this.#send(fields ? wire.rowDescription(fields) : wire.noData());
        return;
      }
      const portal = this.#portals.get(name);
      if (!portal) throw new WireError('34000', `portal "${name}" does not exist`);
      // Describe of a portal runs it: its columns are what the statement produced (Execute then sends its rows).
      portal.outcome ??= await this.#run(portal.stmt.sql, portal.params, portal.stmt.paramTypes);
      const fields = portal.outcome.fields;
      this.#send(fields ? wire.rowDescription(fields, formatsOf(fields, portal.resultFormats)) : wire.noData());
    } catch (e) {
      this.#extendedFailed(e);
    }
  }

  async #execute(r: wire.MessageReader): Promise<void> {
    const name = r.cstring();
    const max = r.int32();
    try {
      const portal = this.#portals.get(name);
      if (!portal) throw new WireError('34000', `portal "${name}" does not exist`);
      portal.outcome ??= await this.#run(portal.stmt.sql, portal.params, portal.stmt.paramTypes);
      const out = portal.outcome;
      const sent = await this.#sendRows(out, portal.sent, max > 0 ? max : Infinity, out.fields ? formatsOf(out.fields, portal.resultFormats) : []);
      portal.sent += sent;
      if (max > 0 && portal.sent < out.rowCount) this.#send(wire.portalSuspended());
      else this.#send(wire.commandComplete(out.tag));
    } catch (e) {
      this.#extendedFailed(e);
    }
  }

  #close(r: wire.MessageReader): void {
    const kind = String.fromCharCode(r.byte());
    const name = r.cstring();
    if (kind === 'S') this.#statements.delete(name);
    else this.#portals.delete(name);
    this.#send(wire.closeComplete());
  }

  /** One statement: answered here (client settings, SHOW, catalog queries) or run in the session. `paramOids`: the
   *  types Parse declared for its `$n` (0: unspecified). */
  async #run(sql: string, params: (string | null)[], paramOids: readonly number[] = []): Promise<Outcome> {
    const c = classify(sql);
    if (c.kind === 'empty') return { fields: null, tag: '', rowCount: 0, rows: noRows };
    if (/^\s*(savepoint|release)\b/i.test(sql) || /^\s*rollback\s+(work\s+|transaction\s+)?to\b/i.test(sql)) {
      return { fields: null, tag: /^\s*savepoint/i.test(sql) ? 'SAVEPOINT' : /^\s*release/i.test(sql) ? 'RELEASE' : 'ROLLBACK', rowCount: 0, rows: noRows };
    }
    if (c.txBegin || c.txEnd) {
      // Transaction control (every driver with autocommit off sends it) is acknowledged here: the session policy
      // refuses BEGIN today, so each statement commits on its own (docs/postgres-protocol.md).
      this.#txStatus = c.txBegin ? 'T' : 'I';
      return { fields: null, tag: commandTag(sql, null, 0), rowCount: 0, rows: noRows };
    }
    const setting = clientSetting(sql);
    if (setting) {
      if (setting.name === 'statement_timeout') {
        const ms = Number.parseInt(setting.value, 10);
        this.#timeoutS = Number.isFinite(ms) && ms > 0 ? ms / 1000 : null;
      }
      this.#settings.set(setting.name, setting.value);
      return { fields: null, tag: 'SET', rowCount: 0, rows: noRows };
    }
    const show = /^\s*show\s+([a-z_.]+(?:\s+[a-z_]+)*)\s*;?\s*$/i.exec(sql);
    if (show) {
      const answer = this.#show(show[1].toLowerCase());
      const column = show[1].toLowerCase() === 'transaction isolation level' ? 'transaction_isolation' : show[1].toLowerCase();
      if (answer !== null) return this.#constant([{ name: column, type: 'VARCHAR' }], [[answer]], 'SHOW');
    }
    if (isCatalogQuery(sql)) {
      this.#mirror ??= new CatalogMirror(this.#o.ctx, this.#ws!, this.#catalog, this.#gateway.clientInfo!.parameters.database, this.#principal!);
      const res = await this.#mirror.query(sql, params);
      return this.#constant(res.columns, res.rows, `SELECT ${res.rows.length}`);
    }
    const row = await this.#statement(sql, params, params.map((_, i) => declaredParamType(paramOids[i] ?? 0)));
    if (c.ddl) this.#mirror?.invalidate();
    const tz = /^\s*set\s+(?:session\s+)?time\s*zone\s*(?:=|to)?\s*'([^']+)'/i.exec(sql) ?? /^\s*set\s+timezone\s*(?:=|to)\s*'([^']+)'/i.exec(sql);
    if (tz) {
      this.#settings.set('timezone', tz[1]);
      this.#send(wire.parameterStatus('TimeZone', tz[1]));
    }
    const total = Number(row.row_count ?? 0);
    const fields = row.column_schema && row.result_path ? fieldsOf(row.column_schema) : null;
    const oids = fields?.map((f) => f.typeOid) ?? [];
    const names = row.column_schema?.map((x) => x.name) ?? [];
    const { ctx } = this.#o;
    let source: Awaited<ReturnType<typeof withHeldResult>> | undefined;
    return {
      fields,
      tag: commandTag(sql, row.statement_type, total),
      rowCount: fields ? total : 0,
      rows: async (offset, limit) => {
        source ??= await withHeldResult(ctx, row);
        const page = await readRowsPage(ctx, source, limit, { offset });
        const keys = page.columns.length ? page.columns : names;
        return page.rows.map((r) => keys.map((k, i) => textValue(r[k], oids[i] ?? OID.text)));
      },
    };
  }

  #constant(columns: { name: string; type: string }[], rows: unknown[][], tag: string): Outcome {
    const fields = fieldsOf(columns);
    const text = rows.map((r) => r.map((v, i) => textValue(v, fields[i].typeOid)));
    return { fields, tag, rowCount: text.length, rows: async (o, l) => text.slice(o, o + l) };
  }

  #show(name: string): string | null {
    const fixed: Record<string, string> = {
      server_version: SERVER_VERSION,
      server_version_num: '150000',
      server_encoding: 'UTF8',
      client_encoding: 'UTF8',
      standard_conforming_strings: 'on',
      integer_datetimes: 'on',
      'transaction isolation level': 'read committed',
      transaction_isolation: 'read committed',
      default_transaction_isolation: 'read committed',
      'transaction_read_only': 'off',
      max_identifier_length: '63',
      datestyle: 'ISO, MDY',
      intervalstyle: 'postgres',
      search_path: 'main',
      lc_collate: 'C',
      lc_ctype: 'C',
      is_superuser: 'off',
    };
    return this.#settings.get(name) ?? fixed[name] ?? (name === 'timezone' ? 'UTC' : null);
  }

  /** Runs `sql` in the session (the session API's admission) and waits for its end. */
  async #statement(sql: string, params: (string | null)[], paramTypes: (DeclaredParamType | null)[]): Promise<QueryRow> {
    const { ctx } = this.#o;
    const s = await sessions.readSession(ctx.db, this.#sessionId!);
    if (!s) throw new WireError('08003', 'the session is gone');
    let row: QueryRow;
    try {
      const audit = (e: AuditEvent) => appendAudit(ctx.db, { replicaId: ctx.replica.id, requestId: this.#requestRef.id }, e);
      row = await submitAndAwait(ctx, audit, this.#principal!, s, { sql, params, paramTypes, timeout_s: this.#timeoutS }, STATEMENT_WAIT_MS);
    } catch (e) {
      if (e instanceof AppError && e.code === 'session_not_open') {
        // The session ended under the connection (idle, lifetime, admin close): so does the connection.
        this.#fatal('57P01', `the SQL session ended (${s.close_reason ?? s.status})`);
      }
      throw e;
    }
    for (;;) {
      if (row.status === 'done') return row;
      if (row.status === 'failed' || row.status === 'cancelled') {
        throw new StatementFailed(row.status === 'cancelled' ? 'canceling statement due to user request' : (row.error ?? 'the statement failed'), row.status === 'cancelled' ? 'cancelled' : row.error_code);
      }
      if (this.#closed) throw new WireError('08006', 'the connection closed');
      await ctx.host.waitForTerminal('statement', row.id, STATEMENT_WAIT_MS);
      row = await readQuery(ctx, row.id);
    }
  }
}

/** `workspace` or `workspace/catalog`. */
function splitDatabase(db: string): [string, string | undefined] {
  const i = db.indexOf('/');
  return i < 0 ? [db, undefined] : [db.slice(0, i), db.slice(i + 1) || undefined];
}

/** libpq's `options` (`-c name=value ...`, or `--name=value`). */
function parseOptions(options: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /(?:-c\s*|--)([A-Za-z0-9_.]+)=(\S+)/g;
  for (let m = re.exec(options); m; m = re.exec(options)) out[m[1]] = m[2];
  return out;
}
