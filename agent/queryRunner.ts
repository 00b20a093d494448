// Runs dispatched queries: estimate → admission → execute → query_done / query_failed. Owns the in-flight set,
// cancellation and the agent-side timeout (both interrupt the running statement).
import type { AgentFrame, DispatchQueryFrame } from '../protocol/index.ts';
import { AdmissionController, type Grant } from './admission.ts';
import type { AgentConfig } from './config.ts';
import { QueryEngine, type EngineOptions } from './engine.ts';
import type { DataFileCache } from './dataCache.ts';
import { decodeAttachments } from './iceberg/attachments.ts';
import { IcebergBridge } from './iceberg/bridge.ts';
import { BridgeError } from './iceberg/errors.ts';
import type { Logger } from './logger.ts';
import type { MemoryAsk } from './memoryAsk.ts';
import type { SandboxSlots } from './sandboxSlots.ts';
import { reportProgress } from './queryProgress.ts';
import { doneFrame, failedFrame, failureMessage, inlineResult } from './runOutcome.ts';
import { processSpan, SpanKind } from '../telemetry/tracing.ts';

type Dispatch = DispatchQueryFrame['payload'];

interface InFlight {
  readonly queryId: string;
  engine: QueryEngine | null;
  stopReason: 'cancelled' | 'timeout' | null;
  readonly done: Promise<void>;
}

export interface QueryRunnerOptions {
  readonly config: AgentConfig;
  readonly admission: AdmissionController;
  readonly memoryAsk: MemoryAsk;
  readonly engine: EngineOptions;
  readonly logger: Logger;
  /** Warm sandboxed instances for queries whose memory ask is known without EXPLAIN (absent: one instance each). */
  readonly slots?: SandboxSlots;
  /** The Iceberg data-file cache (needed when dispatches carry catalogs). */
  readonly dataCache?: DataFileCache;
  /** Test hook: runs between a write's upload and its catalog commit. */
  readonly beforeIcebergCommit?: () => Promise<void>;
  /** Sends a frame to the control plane (dropped while disconnected; the control plane reaps by timeout). */
  readonly send: (frame: AgentFrame) => void;
}


export class QueryRunner {
  readonly #o: QueryRunnerOptions;
  readonly #inFlight = new Map<string, InFlight>();

  constructor(options: QueryRunnerOptions) {
    this.#o = options;
  }

  get inFlightCount(): number {
    return this.#inFlight.size;
  }

  has(queryId: string): boolean {
    return this.#inFlight.has(queryId);
  }

  /** Start a dispatched query; its outcome is reported by frames. Returns false for a duplicate dispatch. */
  dispatch(payload: Dispatch): boolean {
    if (this.#inFlight.has(payload.query_id)) return false;
    let entry!: InFlight;
    const done = new Promise<void>((resolve) => {
      queueMicrotask(() => {
        // The query's trace continues the api's dispatch span (its traceparent rides in the frame).
        processSpan('query', { parent: payload.traceparent ?? null, kind: SpanKind.CONSUMER, attributes: { 'eider.query_id': payload.query_id } }, () =>
          this.#run(payload, entry),
        ).finally(() => {
          this.#inFlight.delete(payload.query_id);
          resolve();
        });
      });
    });
    entry = { queryId: payload.query_id, engine: null, stopReason: null, done };
    this.#inFlight.set(payload.query_id, entry);
    return true;
  }

  /** Cancel a query; false when the agent has no such query. The outcome still arrives as query_failed. */
  cancel(queryId: string): boolean {
    const entry = this.#inFlight.get(queryId);
    if (!entry) return false;
    this.#stop(entry, 'cancelled');
    return true;
  }

  #stop(entry: InFlight, reason: 'cancelled' | 'timeout'): void {
    if (entry.stopReason !== null) return;
    entry.stopReason = reason;
    if (!this.#o.admission.cancel(entry.queryId)) entry.engine?.stop();
  }

  /** Cancel everything and wait for the queries to wind down (shutdown). */
  async close(): Promise<void> {
    for (const entry of this.#inFlight.values()) this.#stop(entry, 'cancelled');
    await Promise.all([...this.#inFlight.values()].map((e) => e.done));
    await this.#o.slots?.close();
  }

  async #run(payload: Dispatch, entry: InFlight): Promise<void> {
    const { config, admission, memoryAsk, logger, send } = this.#o;
    const queryId = payload.query_id;
    const log = logger.child({ queryId, workspace: payload.workspace });
    const startedAt = performance.now();
    const timeoutS = Math.min(payload.timeout_s, config.maxTimeoutS);
    // The timeout counts from receipt, like the control plane's view of the query, so queueing is included.
    const timer = setTimeout(() => this.#stop(entry, 'timeout'), timeoutS * 1000);
    // Set inside the closures below (declared with `as` so the checker does not narrow them to null).
    let grant = null as Grant | null;
    let bridge = null as IcebergBridge | null;
    let outcome: AgentFrame;
    const stopped = () => {
      if (entry.stopReason !== null) throw new Error(`stopped: ${entry.stopReason}`);
    };
    try {
      log.debug({ sql: payload.sql }, 'query received');
      const openBridge = async (engine: QueryEngine): Promise<string> => {
        if (!payload.catalogs || payload.catalogs.length === 0) return payload.sql;
        if (!this.#o.dataCache) throw new BridgeError('catalog_error', 'this agent has no Iceberg data cache configured');
        // Attach the catalogs and prepare the first statement's tables (before EXPLAIN, which binds them).
        bridge = await IcebergBridge.open(
          {
            attachments: decodeAttachments(payload.catalogs),
            connection: engine.connection,
            workDir: engine.tempDir,
            cache: this.#o.dataCache,
            logger: log,
            oneShot: true,
            ...(this.#o.beforeIcebergCommit ? { beforeCommit: this.#o.beforeIcebergCommit } : {}),
          },
          payload.sql,
        );
        stopped();
        await bridge.before(0);
        stopped();
        return bridge.sql;
      };
      const admit = async (ask: { bytes: number; source: string }): Promise<Grant> => {
        const granted = await processSpan('admission', { attributes: { 'eider.ask_bytes': ask.bytes } }, () => admission.acquire(queryId, ask.bytes));
        grant = granted;
        stopped();
        log.info({ askBytes: ask.bytes, askSource: ask.source, grantedBytes: granted.grantedBytes, limitBytes: granted.limitBytes, queuedMs: granted.queuedMs }, 'query admitted');
        send({ type: 'query_started', payload: { query_id: queryId, queued_ms: granted.queuedMs, reserved_bytes: granted.grantedBytes } });
        return granted;
      };
      const auto = config.maxConcurrencyProfile === 'auto';
      const known = auto ? memoryAsk.known(payload.sql) : { bytes: 0, source: 'ladder' };
      let sql: string;
      if (known && this.#o.slots) {
        // The size is known without EXPLAIN: admitted first, then run on a warm sandboxed slot of that size.
        const granted = await admit(known);
        entry.engine = await QueryEngine.openInSlot(queryId, this.#o.engine, this.#o.slots, granted.limitBytes);
        stopped();
        sql = await openBridge(entry.engine);
      } else {
        const engine = await QueryEngine.open(queryId, this.#o.engine);
        entry.engine = engine;
        stopped();
        const bound = await openBridge(engine);
        sql = bound;
        const ask = auto
          ? await memoryAsk.askFor(payload.sql, async () => {
              const estimate = await engine.explainEstimate(bound, config.explainTimeoutS * 1000);
              stopped();
              return estimate;
            })
          : { bytes: 0, source: 'ladder' };
        const granted = await admit(ask);
        await engine.configure(granted.limitBytes);
        stopped();
      }
      const engine = entry.engine;
      const stopProgress = reportProgress({ queryId, read: () => engine.progress, send });
      const result = await processSpan('execution', {}, () => engine.execute(sql, bridge ?? undefined)).finally(stopProgress);
      if (bridge) log.info({ ...bridge.stats }, 'iceberg bridge');
      const durationMs = performance.now() - startedAt;
      memoryAsk.learn(payload.sql, { wrote: result.wrote, peakBytes: result.profile?.summary.peak_memory_bytes });
      outcome = doneFrame(queryId, result, durationMs, inlineResult(this.#o.engine.resultsDir, result.resultPath, this.#o.config.resultInlineMaxBytes));
      log.info({ rowCount: result.rowCount, durationMs: Math.round(durationMs), statementType: result.statementType }, 'query done');
    } catch (error) {
      const durationMs = performance.now() - startedAt;
      const failed = failedFrame(queryId, error, entry.stopReason, timeoutS, durationMs, 'query', { dataDir: config.dataDir });
      if (failed.code === 'internal_error') log.error({ err: failureMessage(error) }, 'query failed');
      else log.info({ code: failed.code, err: failed.message }, 'query failed');
      outcome = failed.frame;
    } finally {
      clearTimeout(timer);
    }
    // Reported before the cleanup, which costs a few milliseconds (closing DuckDB blocks): the outcome is final,
    // and the memory stays reserved here until the instance is actually closed.
    this.#inFlight.delete(queryId);
    send(outcome);
    // Close before releasing: the reservation must cover the instance's memory until it is actually freed.
    await entry.engine?.close(bridge?.attachedCatalogs).catch((error: unknown) => log.warn({ err: failureMessage(error) }, 'engine close failed'));
    // Unpinned only once DuckDB is closed: its views read the cached files lazily.
    bridge?.close();
    grant?.release();
  }

}
