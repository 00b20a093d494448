// SQL sessions on the agent: each is one sandboxed DuckDB connection held for an external client, with a memory
// reservation (SESSION_BASELINE_BYTES, granted by admission control like a query's) for its whole life. Its
// statements run one at a time, in arrival order, on that connection, so temp tables, `USE` and the settings the
// api's session policy lets through persist between them; Iceberg reads and writes go through the bridge exactly as
// for queries. A statement that asks for more memory than the baseline (sized as a query is: feedback, EXPLAIN,
// bucket) gets a top-up from admission control for its run, capped at SESSION_MAX_BUCKET_FRACTION of the budget.
// A statement reports as a query does (query_started, query_done, query_failed with its id). The session goes on
// close, on the control plane's drop, and when the control channel is lost.
import type { AgentFrame, ExecuteStatementFrame, OpenSessionFrame } from '../protocol/index.ts';
import { processSpan, SpanKind } from '../telemetry/tracing.ts';
import { AdmissionError, type AdmissionController, type Grant } from './admission.ts';
import type { AgentConfig } from './config.ts';
import { LinkedFiles, type DataFileCache } from './dataCache.ts';
import { QueryEngine, type EngineOptions, type ExecutionResult } from './engine.ts';
import { decodeAttachments } from './iceberg/attachments.ts';
import { IcebergBridge } from './iceberg/bridge.ts';
import type { Logger } from './logger.ts';
import { MemoryAsk } from './memoryAsk.ts';
import { reportProgress } from './queryProgress.ts';
import { statementBody } from './statementText.ts';
import { leadingKeyword } from '../sqltext/scan.ts';
import { doneFrame, failedFrame, failureMessage, inlineResult, userFacingMessage } from './runOutcome.ts';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

type OpenPayload = OpenSessionFrame['payload'];
type StatementPayload = ExecuteStatementFrame['payload'];

interface StagedLocal {
  readonly uri: string;
  readonly local: string;
  readonly putUrl: string;
  /** size and mtime before the statement ran (null: absent), to tell what it wrote */
  readonly before: string | null;
}

interface Running {
  readonly statementId: string;
  stopReason: 'cancelled' | 'timeout' | null;
}

// Statements that plan no query and so need no more memory than the baseline: asking them for a top-up (the
// fallback bucket, 1/8 of the budget) would make every `SET TimeZone` of a dbt run wait on a busy agent.
const NO_TOP_UP = new Set(['SET', 'RESET', 'USE', 'BEGIN', 'START', 'COMMIT', 'END', 'ROLLBACK', 'ABORT', 'ATTACH', 'DETACH', 'SHOW', 'DESCRIBE', 'DESC', 'DROP']);

const TRANSACTION_CONTROL = new Set(['BEGIN', 'START', 'COMMIT', 'END', 'ROLLBACK', 'ABORT']);

/**
 * `ATTACH '<catalog>'` (the api lets through only a catalog attached to the workspace): the bridge attached every
 * catalog of the statement's workspace before it, through the catalog service. DuckDB's own ATTACH would open a file
 * of that name in the agent's working directory, so it is not run.
 */
function attachedByBridge(bridge: IcebergBridge | null, text: string): ExecutionResult {
  const name = /ATTACH\s+'([^']*)'/i.exec(text)?.[1];
  if (!bridge || name === undefined || !bridge.attaches(name)) throw new Error(`Catalog Error: catalog ${name ?? ''} is not attached to this workspace`);
  return { rowCount: 0, resultPath: null, columnSchema: null, columns: [], statementType: 'other', wrote: false, profile: null };
}

/** The admission-control id of a statement's top-up (its session holds `session:<id>`). */
const topUpId = (statementId: string) => `statement:${statementId}`;

/** An open in progress (SessionHost's `#opening`). */
interface Opening {
  abandoned: boolean;
  again: boolean;
}

interface Session {
  readonly id: string;
  readonly engine: QueryEngine;
  readonly grant: Grant;
  /** the cached files its statements read, linked into its scratch directory once for all of them */
  readonly links: LinkedFiles;
  /** the tail of the statement queue: each statement runs after the previous one settled */
  tail: Promise<void>;
  running: Running | null;
  readonly queued: Set<string>;
  /** inside BEGIN … COMMIT/ROLLBACK (followed statement by statement: the api sends each alone) */
  inTransaction: boolean;
  closed: boolean;
}

export interface SessionHostOptions {
  readonly config: AgentConfig;
  readonly admission: AdmissionController;
  readonly engine: EngineOptions;
  readonly dataCache: DataFileCache;
  readonly logger: Logger;
  readonly send: (frame: AgentFrame) => void;
  /**
   * Sizes statements (auto profile). By default the host's own: a session statement's text binds to the session's
   * temp tables and `USE`, so the peak a query of the same text had says little about it.
   */
  readonly memoryAsk?: MemoryAsk;
}


export class SessionHost {
  readonly #o: SessionHostOptions;
  readonly #sessions = new Map<string, Session>();
  /**
   * Opens in progress, so a repeated open frame (effects run at least once) opens nothing twice. `abandoned`: closed,
   * or its control channel dropped, meanwhile: a session kept then would hold its memory for no one. `again`: asked
   * again (the new channel's open) after that; the open in progress keeps it, or, when it had already found it
   * abandoned and was letting it go, opens it anew once it has. Asking again clears `abandoned` and sets `again`; a
   * close or a lost channel does the reverse.
   */
  readonly #opening = new Map<string, Opening>();
  /** Sessions being dropped, until their engine is closed and their memory released. */
  readonly #closing = new Map<string, Promise<void>>();
  readonly #memoryAsk: MemoryAsk;

  constructor(options: SessionHostOptions) {
    this.#o = options;
    this.#memoryAsk = options.memoryAsk ?? new MemoryAsk(options.config, options.admission.stats.budgetBytes);
  }

  get count(): number {
    return this.#sessions.size;
  }

  async open(p: OpenPayload): Promise<void> {
    const log = this.#o.logger.child({ sessionId: p.session_id });
    if (this.#sessions.has(p.session_id)) {
      this.#o.send({ type: 'session_opened', payload: { session_id: p.session_id, reserved_bytes: this.#sessions.get(p.session_id)!.grant.grantedBytes } });
      return;
    }
    const inProgress = this.#opening.get(p.session_id);
    if (inProgress) {
      // Asked again (on the new channel, after the old one dropped it): wanted after all.
      inProgress.abandoned = false;
      inProgress.again = true;
      return;
    }
    const opening: Opening = { abandoned: false, again: false };
    this.#opening.set(p.session_id, opening);
    let letGo: boolean;
    try {
      letGo = await this.#openOnce(p, opening, log);
    } finally {
      this.#opening.delete(p.session_id);
    }
    // The new channel asked while this open was letting the session go (found abandoned, its engine closing and its
    // memory returning): that ask was taken as answered by this open, and the session never was (bench/chaos.ts: a
    // replica's drain left sessions whose clients got 503 compute_starting after 30 s). Opened anew now that nothing
    // of the first is left (its scratch directory, named after the session, is gone).
    if (letGo && opening.again) {
      log.info('session asked again while its abandoned open was let go: opening it anew');
      await this.open(p);
    }
  }

  /** One open of the session: kept and answered, or refused and answered; true when it was let go unanswered. */
  async #openOnce(p: OpenPayload, opening: Opening, log: Logger): Promise<boolean> {
    const { send } = this.#o;
    let grant: Grant | null = null;
    let engine: QueryEngine | null = null;
    try {
      // The same session dropped with the channel before (its acknowledgement lost with it) may still be closing: its
      // engine's scratch directory is this one's, and goes with it.
      await this.#closing.get(p.session_id);
      const baseline = Math.min(this.#o.config.sessionBaselineBytes, this.#o.admission.stats.budgetBytes);
      grant = await this.#o.admission.acquire(`session:${p.session_id}`, baseline, { queuedTimeoutMs: this.#o.config.sessionQueuedTimeoutS * 1000 });
      engine = await QueryEngine.open(p.session_id, this.#o.engine);
      // Unlocked: the session's own SETs (the api's safe list) must work; file access stays sandboxed.
      await engine.configure(grant.limitBytes, { lock: false });
      if (opening.abandoned) {
        // The control plane counts it closed or lost, or asks again on the new channel (`again`).
        await engine.close().catch(() => undefined);
        grant.release();
        log.info('session open abandoned: closed, or the control channel lost, meanwhile');
        return true;
      }
      this.#sessions.set(p.session_id, { id: p.session_id, engine, grant, links: new LinkedFiles(join(engine.tempDir, 'files')), tail: Promise.resolve(), running: null, queued: new Set(), inTransaction: false, closed: false });
      log.info({ reservedBytes: grant.grantedBytes, limitBytes: grant.limitBytes }, 'session opened');
      send({ type: 'session_opened', payload: { session_id: p.session_id, reserved_bytes: grant.grantedBytes } });
      return false;
    } catch (error) {
      await engine?.close().catch(() => undefined);
      grant?.release();
      if (opening.abandoned) {
        log.info('session open abandoned while it waited for memory');
        return true;
      }
      const code = error instanceof AdmissionError ? error.code : 'internal_error';
      log.warn({ code, err: failureMessage(error) }, 'session open failed');
      send({ type: 'session_open_failed', payload: { session_id: p.session_id, error: { code, message: userFacingMessage(failureMessage(error), { dataDir: this.#o.config.dataDir }) } } });
      return false;
    }
  }

  /** Queues a statement behind the session's earlier ones. */
  execute(p: StatementPayload): void {
    const s = this.#sessions.get(p.session_id);
    if (!s || s.closed) {
      this.#o.send({ type: 'query_failed', payload: { query_id: p.statement_id, error: { code: 'internal_error', message: 'the session is not open on this agent' } } });
      return;
    }
    if (s.queued.has(p.statement_id) || s.running?.statementId === p.statement_id) return; // a repeated frame
    s.queued.add(p.statement_id);
    // The acknowledgement: the statement is the session's now (its timeout counts from here, queue included).
    this.#o.send({ type: 'query_started', payload: { query_id: p.statement_id, queued_ms: 0, reserved_bytes: s.grant.grantedBytes } });
    s.tail = s.tail.then(() =>
      processSpan('statement', { parent: p.traceparent ?? null, kind: SpanKind.CONSUMER, attributes: { 'eider.statement_id': p.statement_id, 'eider.session_id': p.session_id } }, () =>
        this.#run(s, p),
      ),
    );
  }

  /** Interrupts a running statement or drops a queued one; false when this agent has no such statement. */
  cancel(statementId: string): boolean {
    for (const s of this.#sessions.values()) {
      if (s.running?.statementId === statementId) {
        this.#stop(s, s.running, 'cancelled');
        return true;
      }
      if (s.queued.delete(statementId)) {
        this.#o.send({ type: 'query_failed', payload: { query_id: statementId, error: { code: 'cancelled', message: 'statement cancelled' } } });
        return true;
      }
    }
    return false;
  }

  /** Closes the connection and frees its memory; answers session_closed (also for a session it does not hold). */
  async close(sessionId: string, reason: string): Promise<void> {
    // Closed while it opens: it leaves the admission queue now (the control plane never asks for it again).
    const opening = this.#opening.get(sessionId);
    if (opening) {
      opening.abandoned = true;
      opening.again = false;
      this.#o.admission.cancel(`session:${sessionId}`);
    }
    const s = this.#sessions.get(sessionId);
    if (s) await this.#drop(s, reason);
    this.#o.send({ type: 'session_closed', payload: { session_id: sessionId } });
  }

  /** The control channel is gone: every session goes with it (the control plane fails them on its side). */
  async dropAll(reason: string): Promise<void> {
    // Opens in progress complete and are dropped then, unless the new channel asks for them again meanwhile.
    for (const opening of this.#opening.values()) {
      opening.abandoned = true;
      opening.again = false;
    }
    await Promise.all([...this.#sessions.values()].map((s) => this.#drop(s, reason)));
  }

  async #drop(s: Session, reason: string): Promise<void> {
    if (s.closed) return;
    s.closed = true;
    this.#sessions.delete(s.id);
    s.queued.clear();
    if (s.running) this.#stop(s, s.running, 'cancelled');
    s.engine.interrupt();
    const closing = (async () => {
      await s.tail.catch(() => undefined);
      await s.engine.close().catch((error: unknown) => this.#o.logger.warn({ sessionId: s.id, err: failureMessage(error) }, 'session engine close failed'));
      s.grant.release();
    })();
    this.#closing.set(s.id, closing);
    await closing;
    if (this.#closing.get(s.id) === closing) this.#closing.delete(s.id);
    this.#o.logger.info({ sessionId: s.id, reason }, 'session closed');
  }

  /** Stops the running statement: out of the admission queue when it waits for its top-up, else interrupted. */
  #stop(s: Session, running: Running, reason: 'cancelled' | 'timeout'): void {
    if (running.stopReason === null) running.stopReason = reason;
    if (!this.#o.admission.cancel(topUpId(running.statementId))) s.engine.interrupt();
  }

  async #run(s: Session, p: StatementPayload): Promise<void> {
    const { send, logger, config } = this.#o;
    if (!s.queued.delete(p.statement_id) || s.closed) return; // cancelled while queued, or the session went
    const log = logger.child({ sessionId: s.id, statementId: p.statement_id });
    const running: Running = { statementId: p.statement_id, stopReason: null };
    s.running = running;
    const started = performance.now();
    const timeoutS = Math.min(p.timeout_s, config.maxTimeoutS);
    const timer = setTimeout(() => this.#stop(s, running, 'timeout'), timeoutS * 1000);
    const stopped = () => {
      if (running.stopReason !== null) throw new Error(`stopped: ${running.stopReason}`);
    };
    let bridge: IcebergBridge | null = null;
    let topUp: Grant | null = null;
    let outcome: AgentFrame;
    // An error names a staging file by its storage URI, never by the local copy's path.
    const names: [string, string][] = [];
    try {
      const staged = await this.#fetchStaging(s, p);
      for (const f of staged.files) names.push([f.local, f.uri]);
      let sql = staged.sql;
      const keyword = leadingKeyword(p.sql);
      // Transaction control touches no catalog: the bridge stays out, so a ROLLBACK runs even in a transaction DuckDB
      // has invalidated (where the bridge's own statements would fail).
      if (p.catalogs && p.catalogs.length > 0 && !TRANSACTION_CONTROL.has(keyword)) {
        bridge = await IcebergBridge.open(
          {
            attachments: decodeAttachments(p.catalogs),
            connection: s.engine.connection,
            workDir: s.engine.tempDir,
            cache: this.#o.dataCache,
            links: s.links,
            logger: log,
            // The frame's default is the session's current catalog (the api follows its USE): current before each statement.
            useDefault: true,
            inTransaction: s.inTransaction,
          },
          sql,
        );
        await bridge.before(0);
        sql = bridge.sql;
      }
      topUp = await this.#topUp(s, p, sql, stopped, log);
      stopped();
      const result =
        keyword === 'ATTACH'
          ? attachedByBridge(bridge, p.sql)
          : await this.#executeFollowingTransaction(s, p.sql, () => {
              const stopProgress = reportProgress({ queryId: p.statement_id, read: () => s.engine.progress, send });
              return s.engine.execute(sql, bridge ?? undefined, p.statement_id, p.params, p.param_types).finally(stopProgress);
            });
      this.#memoryAsk.learn(p.sql, { wrote: result.wrote, peakBytes: result.profile?.summary.peak_memory_bytes });
      await this.#uploadStaging(staged.files);
      const durationMs = performance.now() - started;
      outcome = doneFrame(p.statement_id, result, durationMs, inlineResult(this.#o.engine.resultsDir, result.resultPath, config.resultInlineMaxBytes));
      log.info({ rowCount: result.rowCount, durationMs: Math.round(durationMs), statementType: result.statementType }, 'statement done');
    } catch (thrown) {
      const durationMs = performance.now() - started;
      const error = s.inTransaction && /a single transaction can only write to a single attached database/.test(failureMessage(thrown))
        ? new Error('TransactionContext Error: inside a transaction a statement may use the tables of one catalog only (the agent prepares them in their catalog): COMMIT or ROLLBACK first')
        : thrown;
      const failed = failedFrame(p.statement_id, error, running.stopReason, timeoutS, durationMs, 'statement', { dataDir: config.dataDir, files: names });
      log.info({ code: failed.code, err: failed.message }, 'statement failed');
      outcome = failed.frame;
    } finally {
      clearTimeout(timer);
      if (topUp) {
        // The baseline limit is back before the memory is: the connection must not outgrow what it still holds.
        await s.engine.setMemoryLimit(s.grant.limitBytes).catch((error: unknown) => log.warn({ err: failureMessage(error) }, 'session memory limit not restored'));
        topUp.release();
      }
      bridge?.close();
      if (s.running === running) s.running = null;
      await rm(join(s.engine.tempDir, 'staging', p.statement_id), { recursive: true, force: true }).catch(() => undefined);
    }
    send(outcome);
  }

  /**
   * Runs a statement and follows the connection's transaction: BEGIN opens one when it succeeds; COMMIT and ROLLBACK
   * end it whether or not they succeed (DuckDB rolls back a transaction whose COMMIT fails).
   */
  async #executeFollowingTransaction<T>(s: Session, text: string, run: () => Promise<T>): Promise<T> {
    const keyword = leadingKeyword(text);
    const ends = keyword === 'COMMIT' || keyword === 'ROLLBACK' || keyword === 'END' || keyword === 'ABORT';
    try {
      const result = await run();
      if (keyword === 'BEGIN' || keyword === 'START') s.inTransaction = true;
      return result;
    } finally {
      if (ends) s.inTransaction = false;
    }
  }

  /**
   * A statement asks for memory as a query does (auto profile; remembered peak, EXPLAIN estimate, fallback bucket),
   * capped at SESSION_MAX_BUCKET_FRACTION of the budget. When that exceeds the session's baseline grant, the
   * difference is acquired from admission control (queued as a query is, at most SESSION_QUEUED_TIMEOUT_S) and the
   * connection's memory limit is raised to baseline plus top-up (with its share of idle memory, as a query's is).
   * A top-up not granted in time leaves the statement to run within the baseline; the caller restores the limit
   * and releases the top-up when the statement ends, whatever the outcome.
   */
  async #topUp(s: Session, p: StatementPayload, sql: string, stopped: () => void, log: Logger): Promise<Grant | null> {
    const { config, admission } = this.#o;
    if (config.maxConcurrencyProfile !== 'auto') return null; // a ladder slot is the session's whole share
    if (NO_TOP_UP.has(leadingKeyword(p.sql)) && !statementBody(p.sql).includes(';')) return null;
    const cap = Math.floor(config.sessionMaxBucketFraction * admission.stats.budgetBytes);
    const ask = await this.#memoryAsk.askFor(p.sql, async () => {
      const estimate = await s.engine.explainEstimate(sql, config.explainTimeoutS * 1000);
      stopped();
      return estimate;
    });
    const need = Math.min(ask.bytes, cap) - s.grant.grantedBytes;
    if (need <= 0) return null;
    stopped(); // a stop that came during the estimate found nothing queued to cancel
    let grant: Grant;
    try {
      grant = await admission.acquire(topUpId(p.statement_id), need, { queuedTimeoutMs: config.sessionQueuedTimeoutS * 1000 });
    } catch (error) {
      if (!(error instanceof AdmissionError) || error.code === 'cancelled') throw error;
      log.info({ askBytes: ask.bytes, needBytes: need, code: error.code }, 'statement top-up not granted; running within the session baseline');
      return null;
    }
    try {
      await s.engine.setMemoryLimit(Math.max(s.grant.limitBytes, s.grant.grantedBytes + grant.limitBytes));
    } catch (error) {
      grant.release();
      throw error;
    }
    log.info({ askBytes: ask.bytes, askSource: ask.source, topUpBytes: grant.grantedBytes, reservedBytes: s.grant.grantedBytes + grant.grantedBytes, queuedMs: grant.queuedMs }, 'statement topped up');
    return grant;
  }

  /**
   * The staging files a statement names become local files in the session's scratch directory (the only place its
   * sandbox reaches): each is fetched from its presigned GET URL when it exists, and the statement's text names the
   * local copy instead.
   */
  async #fetchStaging(s: Session, p: StatementPayload): Promise<{ sql: string; files: StagedLocal[] }> {
    if (!p.staging?.length) return { sql: p.sql, files: [] };
    const dir = join(s.engine.tempDir, 'staging', p.statement_id);
    await mkdir(dir, { recursive: true });
    let sql = p.sql;
    const files: StagedLocal[] = [];
    for (const [i, f] of p.staging.entries()) {
      const name = f.uri.slice(f.uri.lastIndexOf('/') + 1).replace(/[^A-Za-z0-9._-]/g, '_');
      const local = join(dir, `${i}-${name}`);
      const res = await fetch(f.get_url, { signal: AbortSignal.timeout(120_000) });
      if (res.ok) await writeFile(local, new Uint8Array(await res.arrayBuffer()));
      else if (res.status !== 404) throw new Error(`IO Error: staging file ${f.uri} could not be read (${res.status})`);
      else await res.arrayBuffer();
      const before = await stat(local).then((st) => `${st.size}:${st.mtimeMs}`, () => null);
      files.push({ uri: f.uri, local, putUrl: f.put_url, before });
      sql = sql.split(`'${f.uri.replace(/'/g, "''")}'`).join(`'${local.replace(/'/g, "''")}'`);
    }
    return { sql, files };
  }

  /** What the statement wrote to a staging file goes back to storage through its presigned PUT URL. */
  async #uploadStaging(files: readonly StagedLocal[]): Promise<void> {
    for (const f of files) {
      const now = await stat(f.local).then((st) => `${st.size}:${st.mtimeMs}`, () => null);
      if (now === null || now === f.before) continue;
      // An azure blob SAS URL needs the blob type of a Put Blob; S3 presigned URLs sign only the host, so the header is ignored there.
      const headers = { 'x-ms-blob-type': 'BlockBlob' };
      const res = await fetch(f.putUrl, { method: 'PUT', headers, body: new Uint8Array(await readFile(f.local)), signal: AbortSignal.timeout(120_000) });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`IO Error: staging file ${f.uri} could not be written (${res.status})`);
    }
  }
}
