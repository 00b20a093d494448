// Sandboxed DuckDB instances that serve one query after another. Creating and closing an instance costs 15-20 ms of
// CPU (its thread pool, catalog, allocator), against under 1 ms for a query on a warm one: under concurrency that
// decided how many trivial queries an agent ran per second. A slot keeps what the per-query instance had: the
// sandbox (external access off, its own scratch directory, the readable directories), the memory limit and the
// configuration lock are set once at creation and never change. A query runs on the slot's own connection, kept
// for the slot's life: opening and closing one per query (and another to empty the slot) cost the agent about 10%
// of a trivial query's CPU. What a read could leave on the connection for the next query (a temporary table or
// view, the current database a catalog's USE chose) is checked or reset when the slot is emptied; anything else
// (variables, prepared statements, settings) needs a statement after which the slot is closed.
//
// Only a query that ran reads on its connection hands its slot back (engine.ts); after a write, DDL, a script or a
// maintenance procedure the slot is closed, whatever it may hold. A read's slot is emptied: the databases it
// attached (the Iceberg bridge's catalogs) are detached and its scratch directory cleared; then it is checked empty
// of tables, views and schemas. A slot that cannot be proven empty is closed, never reused: nothing of one query
// (or one workspace) reaches the next. The memory limit is fixed, so a slot serves the queries whose
// limit rounds down to its size (a ladder of √2 steps), and they get that much.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { readdirSync, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PROGRESS_SETTINGS } from './queryProgress.ts';
import { quoteIdentifier, quoteLiteral } from './statementText.ts';

export interface SlotOptions {
  /** Parent of the slots' scratch directories. */
  readonly scratchRoot: string;
  readonly extensionDir: string;
  readonly disabledFilesystems: readonly string[];
  /** Directories every query may also read (the Iceberg data-file cache). */
  readonly extraReadableDirs: readonly string[];
  readonly profilingEnabled: boolean;
  readonly lockConfiguration: boolean;
}

export interface Slot {
  readonly limitBytes: number;
  /** The slot's scratch directory: spill files, the profile, the partial result, the bridge's staging files. */
  readonly dir: string;
  readonly profilePath: string;
  readonly partialPath: string;
  /** The slot's connection, kept across its queries (closed with the slot). */
  readonly connection: DuckDBConnection;
  /** Another connection (its temporary objects die with it). */
  connect(): Promise<DuckDBConnection>;
}

interface SlotInstance extends Slot {
  readonly instance: DuckDBInstance;
}

// Idle slots are instances nobody reserved memory for (a few MB each): enough for a busy agent's concurrent reads,
// the oldest closed first.
const MAX_IDLE_PER_SIZE = 8;
const MAX_IDLE = 12;
const MIB = 2 ** 20;

/** The slot size a memory limit runs in: the largest step of the √2 ladder (from 1 MiB) not above it. */
export function slotSize(limitBytes: number): number {
  const steps = Math.floor(2 * Math.log2(Math.max(1, limitBytes / MIB)));
  return Math.max(MIB, Math.floor(Math.SQRT2 ** steps) * MIB);
}

// What a read leaves in the instance: the databases the bridge attached (detached next: their views go with them),
// and nothing else unless the bridge left a table, a view or a schema in the instance's own database, or a temporary
// table or view on the kept connection (EXPLAIN's, if its DROP failed). Macros, types, sequences, indexes, variables
// and prepared statements only come from statements that make the engine close the slot (a read can neither SET nor
// PREPARE; and duckdb_functions() alone would cost 30 ms, more than the instance it saves). One UNION ALL that
// streams rows: it costs 0.5 ms of CPU where two queries with count(*) subqueries cost 1.4 ms (measured here), half
// an agent's CPU for a trivial query; asking for variables and prepared statements too, and a USE ahead of it,
// cost SELECT 42 another 0.3 ms (bench/agentCpu.ts, run side by side).
const LEFT_BEHIND = `select 'attached' as what, database_name as name from duckdb_databases() where not internal and database_name <> 'memory'
  union all select 'table', table_name from duckdb_tables() where not internal and database_name in ('memory', 'temp')
  union all select 'view', view_name from duckdb_views() where not internal and database_name in ('memory', 'temp')
  union all select 'schema', schema_name from duckdb_schemas() where not internal and database_name = 'memory'`;

/** The slots of an agent whose per-query engine takes `engine`: the same sandbox, scratch under its data dir. */
export function slotsForEngine(
  engine: { dataDir: string; disabledFilesystems: readonly string[]; extraReadableDirs: readonly string[]; profilingEnabled: boolean; lockConfiguration: boolean },
): SandboxSlots {
  return new SandboxSlots({
    scratchRoot: join(engine.dataDir, 'tmp'),
    extensionDir: join(engine.dataDir, 'extensions'),
    disabledFilesystems: engine.disabledFilesystems,
    extraReadableDirs: engine.extraReadableDirs,
    profilingEnabled: engine.profilingEnabled,
    lockConfiguration: engine.lockConfiguration,
  });
}

export class SandboxSlots {
  readonly #o: SlotOptions;
  /** Idle slots, oldest first. */
  readonly #idle: SlotInstance[] = [];
  /** Slots being emptied after their query; a `take` of that size may wait for one instead of creating one. */
  readonly #returning: Array<{ size: number; claimedBy: ((slot: SlotInstance | null) => void) | null }> = [];
  #closed = false;

  constructor(options: SlotOptions) {
    this.#o = options;
  }

  get idleCount(): number {
    return this.#idle.length;
  }

  /**
   * An idle slot of the size `limitBytes` rounds down to, else one of that size being emptied (a query that follows
   * another at once: emptying takes ~1 ms, creating an instance 15-20 ms of CPU), else a new one.
   */
  async take(limitBytes: number): Promise<Slot> {
    const size = slotSize(limitBytes);
    const i = this.#idle.findIndex((s) => s.limitBytes === size);
    if (i >= 0) return this.#idle.splice(i, 1)[0];
    const returning = this.#returning.find((r) => r.size === size && r.claimedBy === null);
    if (returning) {
      const handed = await new Promise<SlotInstance | null>((resolve) => (returning.claimedBy = resolve));
      if (handed) return handed;
    }
    return this.#create(size);
  }

  /** Empties a slot after its query and keeps it for the next (or hands it to a `take` waiting for it), or closes it
   *  when it cannot be proven empty. `attached`: the databases the query attached, as far as its caller knows
   *  (detached in the same round trip as the check; anything else it finds is detached after). */
  async give(slot: Slot, attached: readonly string[] = []): Promise<void> {
    const s = slot as SlotInstance;
    const returning = { size: s.limitBytes, claimedBy: null as ((slot: SlotInstance | null) => void) | null };
    this.#returning.push(returning);
    let clean = false;
    try {
      clean = !this.#closed && (await this.#empty(s, attached));
    } catch {
      clean = false;
    } finally {
      this.#returning.splice(this.#returning.indexOf(returning), 1);
    }
    if (!clean) {
      returning.claimedBy?.(null);
      return this.#close(s);
    }
    if (returning.claimedBy) return returning.claimedBy(s);
    this.#idle.push(s);
    const sameSize = this.#idle.filter((x) => x.limitBytes === s.limitBytes);
    if (sameSize.length > MAX_IDLE_PER_SIZE) this.#evict(sameSize[0]);
    while (this.#idle.length > MAX_IDLE) this.#evict(this.#idle[0]);
  }

  /** A slot that must not be reused (its query was interrupted mid-way, its cleanup failed). */
  async discard(slot: Slot): Promise<void> {
    await this.#close(slot as SlotInstance);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const s of this.#idle.splice(0)) await this.#close(s);
  }

  #evict(s: SlotInstance): void {
    this.#idle.splice(this.#idle.indexOf(s), 1);
    void this.#close(s);
  }

  async #create(size: number): Promise<SlotInstance> {
    const dir = join(this.#o.scratchRoot, `slot-${randomUUID()}`);
    await mkdir(dir, { recursive: true });
    const instance = await DuckDBInstance.create(':memory:', {
      memory_limit: `${Math.floor(size / MIB)}MiB`,
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      extension_directory: this.#o.extensionDir,
    });
    const profilePath = join(dir, 'profile.json');
    const partialPath = join(dir, 'result.parquet.partial');
    let connection: DuckDBConnection;
    try {
      connection = await instance.connect();
    } catch (error) {
      instance.closeSync();
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    const slot: SlotInstance = { instance, connection, limitBytes: size, dir, profilePath, partialPath, connect: () => instance.connect() };
    try {
      const c = connection;
      {
        // The same sandbox as a per-query instance (engine.ts), fixed for the slot's life; the lock comes last.
        // No profiling: DuckDB's JSON profile is per connection, was never on for a slot's queries (they ran on
        // other connections than the one it was set on), and on the kept connection it would cost a trivial query
        // about 5 ms of CPU, more than twice the rest of its agent time (bench/agentCpu.ts, measured both ways).
        const dirs = [dir, ...this.#o.extraReadableDirs].map((d) => quoteLiteral(d.endsWith('/') ? d : `${d}/`));
        const settings = [
          `SET temp_directory=${quoteLiteral(dir)}`,
          `SET allowed_directories=[${dirs.join(', ')}]`,
          ...(this.#o.disabledFilesystems.length > 0 ? [`SET disabled_filesystems=${quoteLiteral(this.#o.disabledFilesystems.join(','))}`] : []),
          ...PROGRESS_SETTINGS,
          'SET enable_external_access=false',
          ...(this.#o.lockConfiguration ? ['SET lock_configuration=true'] : []),
        ];
        await c.run(settings.join(';\n'));
      }
      return slot;
    } catch (error) {
      await this.#close(slot);
      throw error;
    }
  }

  /** Detach what the query attached, clear the scratch directory, and prove no user object is left. The databases the
   *  caller names are detached ahead of the check, in its round trip to DuckDB (each costs about 0.3 ms, and a
   *  query that follows at once waits for its slot to be emptied); what the check still finds attached, after it. */
  async #empty(s: SlotInstance, attached: readonly string[]): Promise<boolean> {
    const c = s.connection;
    // The instance's own database first: a catalog's USE made an attached one current, and it cannot be detached
    // while it is.
    const known = attached.map((name) => `DETACH DATABASE IF EXISTS ${quoteIdentifier(name)}`);
    const found = (await c.runAndReadAll([...(known.length > 0 ? ['USE memory', ...known] : []), LEFT_BEHIND].join(';\n'))).getRows();
    if (found.some(([what]) => what !== 'attached')) return false;
    const more = found.map(([, name]) => `DETACH ${quoteIdentifier(String(name))}`);
    if (more.length > 0) await c.run(['USE memory', ...more].join(';\n'));
    // Synchronous: the directory is usually empty (or holds the profile), and each asynchronous call is a trip
    // through libuv's thread pool that costs more CPU than the call itself.
    for (const entry of readdirSync(s.dir)) rmSync(join(s.dir, entry), { recursive: true, force: true });
    return true;
  }

  async #close(s: SlotInstance): Promise<void> {
    try {
      s.connection.closeSync();
      s.instance.closeSync();
    } finally {
      await rm(s.dir, { recursive: true, force: true });
    }
  }
}
