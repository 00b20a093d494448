// The storage migration runner: it does the phases the storageMigration actors (storageMigrationKind.ts) ask for.
//
// The machine (machines/storageMigration.ts) asks for a phase with `runPhase`; the effect hands it to this
// replica's runner, which runs it in the background (an effect must not hold the actor's effect chain for the
// minutes a copy takes) under a session-level advisory lock per migration, so one process at a time works on a
// migration across replicas, and a process that dies releases it with its connection. While it runs it reports
// `progress` (renewing the phase lease); then `phaseDone` or `phaseFailed`.
//
// The leader-elected tick (MIGRATION_RUNNER_TICK_S) starts pending migrations (`begin`) and resumes phases nobody
// holds (`resume`: after a crash of the process that ran them, or a failover); a phase whose lease lapses is run
// again through the reaper's `deadline`. Every phase is idempotent and checkpointed per table in PostgreSQL.
import type { MigrationPhase, RunPhaseParams } from '../machines/storageMigration.ts';
import type { Db, Queryable } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import type { CatalogClient } from '../runtime/catalogClient.ts';
import type { BackendConfig } from '../domain/backendStorage.ts';
import { appendLog, findMigration, rootsOverlap } from '../domain/storageMigrations/records.ts';
import {
  cleanupTargetPhase,
  copyPhase,
  cutoverPhase,
  PermanentMigrationError,
  purgePhase,
  rewritePhase,
  verifyPhase,
  type PhaseEnv,
} from '../domain/storageMigrations/phases.ts';
import type { ActorHost } from './types.ts';

const MIGRATION_KIND = 'storageMigration';

export interface MigrationRunnerOptions {
  db: Db;
  catalog: CatalogClient | undefined;
  config: BackendConfig;
  logger: Logger;
  /** MIGRATION_RUNNER_ENABLED: a replica without it runs no phase (the others' runners do). */
  enabled: boolean;
  fileConcurrency?: number;
  tableConcurrency?: number;
  /** How often a running phase reports progress (renewing its lease). */
  progressEveryMs?: number;
}

interface Worker {
  phase: MigrationPhase;
  attempt: number;
  abort: AbortController;
  done: Promise<void>;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

const lockKey = (id: string) => `eider:migration:${id}`;
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class MigrationRunner {
  private readonly o: MigrationRunnerOptions;
  private readonly workers = new Map<string, Worker>();
  private hostRef: ActorHost | undefined;
  private closed = false;

  constructor(o: MigrationRunnerOptions) {
    this.o = o;
  }

  /** The host, once created (it needs this runner's kind first). */
  attach(host: ActorHost): void {
    this.hostRef = host;
  }

  private get host(): ActorHost {
    if (!this.hostRef) throw new Error('the migration runner has no actor host yet');
    return this.hostRef;
  }

  /** Stops whatever this replica runs for the migration, then removes what it wrote to its target (under the
   *  migration's lock, so no other replica writes there meanwhile). */
  async cleanupTarget(migrationId: string): Promise<void> {
    // A phase still running for it stops first (here, or on another replica within a progress beat, which
    // releases the lock), so nothing writes to the target after the cleanup.
    await this.stop(migrationId);
    await this.underLock(migrationId, 120_000, () =>
      this.withEnv(migrationId, new AbortController().signal, async (env) => {
        await cleanupTargetPhase(env);
      }),
    );
  }

  /** Runs a phase in the background unless this replica does not run migrations or already runs this one. */
  start(p: RunPhaseParams): void {
    if (!this.o.enabled || this.closed || !this.o.catalog) return;
    const running = this.workers.get(p.migrationId);
    if (running && running.phase === p.phase && running.attempt >= p.attempt) return;
    if (running) running.abort.abort(new Error('a newer attempt of the phase started'));
    const abort = new AbortController();
    const worker: Worker = { phase: p.phase, attempt: p.attempt, abort, done: Promise.resolve() };
    worker.done = (running?.done ?? Promise.resolve())
      .then(() => this.run(p, abort))
      .catch((e) => this.o.logger.error({ migrationId: p.migrationId, phase: p.phase, err: message(e) }, 'migration phase crashed'))
      .finally(() => {
        if (this.workers.get(p.migrationId) === worker) this.workers.delete(p.migrationId);
      });
    this.workers.set(p.migrationId, worker);
  }

  /** Stops this replica's work on a migration and waits for it to end. */
  async stop(migrationId: string): Promise<void> {
    const w = this.workers.get(migrationId);
    if (!w) return;
    w.abort.abort(new Error('the migration was cancelled'));
    await w.done;
  }

  /** Whether this replica is working on the migration (for tests and the tick). */
  running(migrationId: string): boolean {
    return this.workers.has(migrationId);
  }

  private async withEnv<T>(migrationId: string, signal: AbortSignal, fn: (env: PhaseEnv) => Promise<T>): Promise<T | undefined> {
    const migration = await findMigration(this.o.db, migrationId);
    if (!migration || !this.o.catalog) return undefined;
    const env: PhaseEnv = {
      db: this.o.db,
      catalog: this.o.catalog,
      config: this.o.config,
      migration,
      signal,
      fileConcurrency: this.o.fileConcurrency ?? 4,
      tableConcurrency: this.o.tableConcurrency ?? 4,
      expireRetentionUnder: (root) => this.expireRetentionUnder(migration.id, migration.catalog_id, root, signal),
    };
    return fn(env);
  }

  /** One phase under the migration's advisory lock (held on one connection for the phase's whole run). */
  private async run(p: RunPhaseParams, abort: AbortController): Promise<void> {
    await this.o.db.withConnection(async (conn) => {
      const [{ locked }] = await conn.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [lockKey(p.migrationId)]);
      if (!locked) return; // another replica runs it
      try {
        const view = await this.host.get(MIGRATION_KIND, p.migrationId);
        const ctx = view?.snapshot.context as { phase: MigrationPhase | null; attempt: number } | undefined;
        // A stale request (the actor moved on, or a newer attempt exists) does nothing.
        if (!view || view.terminal || ctx?.phase !== p.phase || ctx.attempt !== p.attempt) return;
        await this.runLocked(p, abort);
      } finally {
        await conn.query('select pg_advisory_unlock(hashtext($1))', [lockKey(p.migrationId)]).catch(() => undefined);
      }
    });
  }

  private async runLocked(p: RunPhaseParams, abort: AbortController): Promise<void> {
    const id = p.migrationId;
    const signal = abort.signal;
    const send = (event: Record<string, unknown> & { type: string }) => this.host.send(MIGRATION_KIND, id, event as never);
    // Each beat renews the lease, and stops the work when the actor moved on without it (cancelled on another
    // replica, or failed by its deadline).
    const progress = setInterval(() => {
      void (async () => {
        const view = await this.host.get(MIGRATION_KIND, id);
        const ctx = view?.snapshot.context as { phase: MigrationPhase | null; attempt: number } | undefined;
        if (!view || view.terminal || ctx?.phase !== p.phase || ctx.attempt !== p.attempt) {
          abort.abort(new Error('the migration moved on without this run'));
          return;
        }
        await send({ type: 'progress', phase: p.phase, ...(await this.progressOf(id)) });
      })().catch(() => undefined);
    }, this.o.progressEveryMs ?? 5_000);
    progress.unref();
    const started = Date.now();
    try {
      // A phase run again after a failure waits first (2 s, 4 s, … 30 s), so a store or catalog service that is
      // briefly away does not use up the attempts at once; the beats above keep the lease meanwhile.
      if (p.attempt > 1) await abortableSleep(Math.min(30_000, 1000 * 2 ** (p.attempt - 1)), signal);
      await appendLog(this.o.db, id, 'info', `${p.phase} started${p.attempt > 1 ? ` (attempt ${p.attempt})` : ''}`);
      await this.withEnv(id, signal, async (env) => {
        switch (p.phase) {
          case 'copy':
            return copyPhase(env);
          case 'rewrite':
            return rewritePhase(env);
          case 'verify':
            return verifyPhase(env);
          case 'cutover':
            return cutoverPhase(env);
          case 'purge':
            return purgePhase(env);
        }
      });
      clearInterval(progress);
      if (signal.aborted) return;
      await appendLog(this.o.db, id, 'info', `${p.phase} done in ${Date.now() - started} ms`);
      await send({ type: 'progress', phase: p.phase, ...(await this.progressOf(id)) });
      await send({ type: 'phaseDone', phase: p.phase });
    } catch (e) {
      clearInterval(progress);
      if (signal.aborted) return;
      const retryable = !(e instanceof PermanentMigrationError);
      await appendLog(this.o.db, id, 'error', `${p.phase} failed${retryable ? ' (will be retried)' : ''}: ${message(e)}`).catch(() => undefined);
      this.o.logger.warn({ migrationId: id, phase: p.phase, attempt: p.attempt, err: message(e) }, 'migration phase failed');
      await send({ type: 'phaseFailed', phase: p.phase, message: message(e), retryable });
    }
  }

  private async progressOf(id: string): Promise<{ tablesTotal: number; tablesDone: number; bytesCopied: number }> {
    const [r] = await this.o.db.query<{ total: number; done: number; bytes: string }>(
      `select count(*)::int as total, count(*) filter (where state in ('copied', 'rewritten', 'verified'))::int as done,
              coalesce(sum(least(bytes_copied, bytes)), 0) as bytes
         from storage_migration_tables where migration_id = $1`,
      [id],
    );
    return { tablesTotal: r.total, tablesDone: r.done, bytesCopied: Number(r.bytes) };
  }

  /**
   * A migration back onto a root an earlier migration of the catalog left retained: its retention ends now (it is
   * what this copy would overwrite, and its purge must not delete the new copy later). Waits until it is purged.
   */
  private async expireRetentionUnder(selfId: string, catalogId: string, root: string, signal: AbortSignal): Promise<void> {
    const earlier = await this.o.db.query<{ id: string; source_root: string }>(
      `select id, source_root from storage_migrations where catalog_id = $1 and id <> $2 and cutover_at is not null and purged_at is null`,
      [catalogId, selfId],
    );
    for (const m of earlier.filter((e) => rootsOverlap(e.source_root, root))) {
      await appendLog(this.o.db, selfId, 'info', `ending the retention of migration ${m.id}: its old files are under ${root}`);
      await this.host.send(MIGRATION_KIND, m.id, { type: 'expireRetention' });
      for (;;) {
        if (signal.aborted) throw signal.reason ?? new Error('aborted');
        const v = await this.host.get(MIGRATION_KIND, m.id);
        if (!v || v.terminal) break;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /**
   * The leader's tick: pending migrations begin; a phase nobody holds (its process died) resumes. A live
   * migration is "held" while some process has its advisory lock.
   */
  async tick(q: Queryable = this.o.db): Promise<{ begun: number; resumed: number }> {
    const out = { begun: 0, resumed: 0 };
    if (!this.o.catalog) return out;
    const live = await q.query<{ id: string; state: string; phase: string | null }>(
      `select a.id, a.state, a.snapshot->'context'->>'phase' as phase from actors a where a.kind = $1 and not a.terminal`,
      [MIGRATION_KIND],
    );
    for (const m of live) {
      if (m.state === 'pending') {
        await this.host.send(MIGRATION_KIND, m.id, { type: 'begin' });
        out.begun++;
        continue;
      }
      const working = ['copying', 'rewriting', 'verifying', 'cuttingOver'].includes(m.state) || (m.state === 'retained' && m.phase === 'purge');
      if (!working || this.workers.has(m.id)) continue;
      if (!(await this.lockFree(m.id))) continue;
      const r = await this.host.send(MIGRATION_KIND, m.id, { type: 'resume' });
      if (r.outcome === 'persisted') {
        out.resumed++;
        this.o.logger.info({ migrationId: m.id, state: m.state }, 'storage migration resumed');
        await appendLog(this.o.db, m.id, 'warn', `resumed after an interruption (${m.state})`);
      }
    }
    return out;
  }

  /** Runs `fn` holding the migration's lock, waiting up to `waitMs` for whoever holds it (then running anyway). */
  private async underLock<T>(id: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
    return this.o.db.withConnection(async (conn) => {
      const until = Date.now() + waitMs;
      let locked = false;
      for (;;) {
        [{ locked }] = await conn.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [lockKey(id)]);
        if (locked || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      try {
        return await fn();
      } finally {
        if (locked) await conn.query('select pg_advisory_unlock(hashtext($1))', [lockKey(id)]).catch(() => undefined);
      }
    });
  }

  private async lockFree(id: string): Promise<boolean> {
    return this.o.db.withConnection(async (conn) => {
      const [{ locked }] = await conn.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [lockKey(id)]);
      if (locked) await conn.query('select pg_advisory_unlock(hashtext($1))', [lockKey(id)]);
      return locked;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.workers.values()];
    for (const w of all) w.abort.abort(new Error('the api is stopping'));
    await Promise.all(all.map((w) => w.done));
  }
}
