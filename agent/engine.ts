// One query's DuckDB engine: a fresh in-memory DuckDB instance and connection, so the query has its own memory limit
// and its own locked sandbox (DuckDB's memory limit and configuration lock are per instance); or, when its limit is
// known before it starts, a connection on a warm slot sandboxed and locked the same way (sandboxSlots.ts).
// Order matters: sandbox first (EXPLAIN binds the statement, and binding read_csv already opens the file), then
// EXPLAIN for the estimate, then the memory limit and profiling, then the configuration lock, then the statement.
import { DuckDBInstance, StatementType as DuckStatementType, version as duckdbVersion } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { readFileSync, renameSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ColumnSchemaEntry, ParamType, QueryProfile, StatementType } from '../protocol/index.ts';
import { boundParams, type BoundParams } from './boundParams.ts';
import type { AgentConfig } from './config.ts';
import { estimatePeakBytesFromExplain } from './explainEstimate.ts';
import { normalizeProfile } from './profile.ts';
import { PROGRESS_SETTINGS, type EngineProgress } from './queryProgress.ts';
import type { SandboxSlots, Slot } from './sandboxSlots.ts';
import { quoteIdentifier, quoteLiteral, statementBody, uniqueColumnNames } from './statementText.ts';
import { leadingKeyword, splitStatements } from '../sqltext/scan.ts';

export interface EngineOptions {
  readonly dataDir: string;
  readonly resultsDir: string;
  readonly disabledFilesystems: readonly string[];
  readonly lockConfiguration: boolean;
  readonly profilingEnabled: boolean;
  /** Directories a query may also read (the Iceberg data-file cache). */
  readonly extraReadableDirs: readonly string[];
  /** Memory limit while estimating, before the reservation is known. */
  readonly explainMemoryBytes: number;
}

/**
 * The sandbox every query and SQL session of the agent runs in, from its configuration: the data and results
 * folders, the sandbox settings, profiling, the estimate floor as the memory limit while estimating, and no extra
 * readable folder (no cache dir: a run reads only the files its own tables resolved to, linked into its own directory).
 */
export function engineOptions(
  config: Pick<AgentConfig, 'dataDir' | 'resultsDir' | 'sandboxDisabledFilesystems' | 'sandboxLockConfiguration' | 'profilingEnabled' | 'estimateFloorBytes'>,
): EngineOptions {
  return {
    dataDir: config.dataDir,
    resultsDir: config.resultsDir,
    disabledFilesystems: config.sandboxDisabledFilesystems,
    lockConfiguration: config.sandboxLockConfiguration,
    profilingEnabled: config.profilingEnabled,
    explainMemoryBytes: config.estimateFloorBytes,
    extraReadableDirs: [],
  };
}

/**
 * Called around each statement (index in the script) by `execute`: the Iceberg bridge prepares the tables a
 * statement uses before it and carries its writes to Iceberg after it. `after` returns the row count to report,
 * or null to keep DuckDB's.
 */
export interface StatementHooks {
  before(index: number): Promise<void>;
  after(index: number, rowsChanged: number): Promise<number | null>;
  /**
   * Carries out statement `index` when the hooks do its work themselves (a maintenance procedure), after `before`
   * and only once the query is admitted and configured: the statement DuckDB then runs reads the result row they
   * left. Returns how to report the statement, or null for an ordinary one.
   */
  run?(index: number): Promise<{ statementType: StatementType; wrote: boolean } | null>;
  /** Statements the hooks expect: a script DuckDB splits differently is refused rather than misattributed. */
  readonly statementCount: number;
}

export interface ExecutionResult {
  readonly rowCount: number;
  /** Relative to the agent data dir's results: `results/{query_id}.parquet`; null when there is no grid. */
  readonly resultPath: string | null;
  readonly columnSchema: ColumnSchemaEntry[] | null;
  readonly columns: string[];
  readonly statementType: StatementType | undefined;
  /** True when the statement may have changed data (anything but a result-set query). */
  readonly wrote: boolean;
  readonly profile: QueryProfile | null;
}

const STATEMENT_NAMES = new Map<number, string>(
  Object.entries(DuckStatementType as unknown as Record<string, number>)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => [v, k]),
);

function protocolStatementType(duckType: number, sql: string): StatementType {
  const name = STATEMENT_NAMES.get(duckType) ?? '';
  if (name === 'SELECT') {
    return ['DESCRIBE', 'DESC', 'SHOW', 'SUMMARIZE'].includes(leadingKeyword(sql)) ? 'describe' : 'select';
  }
  if (name.startsWith('MERGE')) return 'merge';
  switch (name) {
    case 'INSERT': return 'insert';
    case 'UPDATE': return 'update';
    case 'DELETE': return 'delete';
    case 'COPY': return 'copy';
    case 'CREATE':
    case 'CREATE_FUNC': return 'create';
    case 'ALTER': return 'alter';
    case 'DROP': return 'drop';
    default: return 'other';
  }
}

/**
 * A prepared column's type as DESCRIBE spells it, or null when the two may differ: a type that names fields (STRUCT,
 * UNION: the prepared spelling always quotes them, DESCRIBE only when needed) or an alias (JSON reads as VARCHAR).
 * Taking it from the prepared statement spares a DESCRIBE round trip for the common result.
 */
function describedSpelling(type: { toString(): string; alias?: string }): string | null {
  const text = type.toString();
  return type.alias === undefined && !text.includes('"') ? text : null;
}

function partialResultPath(resultsDir: string, queryId: string): string {
  return join(resultsDir, `${queryId}.parquet.partial`);
}

export function engineVersion(): string {
  return duckdbVersion();
}

type Extracted = Awaited<ReturnType<DuckDBConnection['extractStatements']>>;
type Prepared = Awaited<ReturnType<Extracted['prepare']>>;
/** DuckDB's statements of a text, each prepared on demand (extracted, or the one statement prepared directly). */
type Statements = { readonly count: number; prepare(index: number): Promise<Prepared> };

// DuckDB's Parquet writer stores HUGEINT and UHUGEINT (also nested) as DOUBLE, losing digits past 2^53, and
// refuses negative INTERVALs (positive ones lose their microseconds). Those columns are written as text instead;
// column_schema still reports the engine type, and the api's reader formats them from the text. It cannot write a
// VARIANT below the top of a column (in a list, map or struct: "requires a transform, but is not a root column"),
// and at the top it shreds it into a group the api's reader does not decode: every VARIANT is written as its JSON
// text, which the reader parses back. TYPE values (get_type, make_type) are written as their names.
function parquetSafeColumn(name: string, type: string): string {
  const id = quoteIdentifier(name);
  const safeType = replaceTypeWords(type, (word) => {
    if (/^(U?HUGEINT|INTERVAL|TYPE)$/.test(word)) return 'VARCHAR';
    return word === 'VARIANT' ? 'JSON' : word;
  });
  return safeType === type ? id : `CAST(${id} AS ${safeType}) AS ${id}`;
}

/** `type` (DuckDB's spelling) with each type word outside quoted field names replaced by `replace(word)`. */
function replaceTypeWords(type: string, replace: (word: string) => string): string {
  return type.replace(/"(?:[^"]|"")*"|\b[A-Z_][A-Z0-9_]*\b/g, (m) => (m.startsWith('"') ? m : replace(m)));
}

/** A result column's type as DESCRIBE spells it, or null when it must be asked (node-api cannot read every type). */
function columnSpelling(prepared: { columnType(i: number): { toString(): string; alias?: string } }, i: number): string | null {
  try {
    return describedSpelling(prepared.columnType(i));
  } catch {
    return null; // a type the bindings do not know (TYPE: "Unexpected type id")
  }
}

// Row groups are the smallest piece of a result the api can fetch and decode (DuckDB writes no page index): 16,384
// rows keep one page of a 1M-row result near 1.6% of the file instead of 12% with the default 122,880.
const RESULT_ROW_GROUP_ROWS = 16_384;
/** How often a stop is repeated while DuckDB may not yet have begun the call it targets. */
const REINTERRUPT_MS = 50;

function bytesSetting(bytes: number): string {
  return `${Math.max(1, Math.floor(bytes / 2 ** 20))}MiB`;
}

interface WarmInstance {
  instance: DuckDBInstance;
  connection: DuckDBConnection;
}

/**
 * Instances created ahead of need. Creating one costs 12-20 ms (4 ms of it blocking the event loop), most of a
 * trivial query's time on the agent; each is still used by exactly one query, unconfigured until it is taken
 * (sandbox, limits and lock are set then). The pool refills when a query ends, not when one starts, so the
 * creation never competes with a starting query.
 */
class WarmInstances {
  readonly #ready: Array<Promise<WarmInstance>> = [];
  readonly #create: () => Promise<WarmInstance>;
  readonly #size: number;

  constructor(create: () => Promise<WarmInstance>, size: number) {
    this.#create = create;
    this.#size = size;
  }

  async take(): Promise<WarmInstance> {
    const next = this.#ready.shift();
    if (next) {
      try {
        return await next;
      } catch {
        // a failed warm-up: create one now, and report that failure if it repeats
      }
    }
    return this.#create();
  }

  refill(): void {
    while (this.#ready.length < this.#size) {
      const p = this.#create();
      p.catch(() => undefined);
      this.#ready.push(p);
    }
  }
}

const warmPools = new Map<string, WarmInstances>();

function warmInstances(extensionDir: string, memoryBytes: number): WarmInstances {
  const key = `${extensionDir}\0${memoryBytes}`;
  let pool = warmPools.get(key);
  if (!pool) {
    pool = new WarmInstances(async () => {
      const instance = await DuckDBInstance.create(':memory:', {
        memory_limit: bytesSetting(memoryBytes),
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
        extension_directory: extensionDir,
      });
      try {
        return { instance, connection: await instance.connect() };
      } catch (error) {
        instance.closeSync();
        throw error;
      }
    }, 2);
    warmPools.set(key, pool);
  }
  return pool;
}

/** Where a query's engine runs: its own instance (closed after it), or a connection on a reusable slot. */
type Host = { readonly kind: 'own'; readonly instance: DuckDBInstance } | { readonly kind: 'slot'; readonly slot: Slot; readonly slots: SandboxSlots };

// The results directory is made once per process: a recursive mkdir on every query cost a warm query ~0.25 ms of
// the agent's event loop (measured under load), for a directory nothing removes.
const resultsDirs = new Map<string, Promise<unknown>>();
function ensureResultsDir(dir: string): Promise<unknown> {
  let made = resultsDirs.get(dir);
  if (!made) {
    made = mkdir(dir, { recursive: true });
    made.catch(() => resultsDirs.delete(dir));
    resultsDirs.set(dir, made);
  }
  return made;
}

export class QueryEngine {
  readonly #queryId: string;
  readonly #options: EngineOptions;
  readonly #host: Host;
  readonly #connection: DuckDBConnection;
  readonly #tempDir: string;
  readonly #partialPath: string;
  readonly #profileFile: string;
  /** Only reads ran on the connection (a slot may then serve the next query): a write, DDL, a script or a
   *  maintenance procedure may leave objects behind, so its slot is closed instead. */
  #readOnly = true;
  #stopRequested = false;
  /** Calls of `execute` in progress, and the timer that repeats an interrupt while one is (see `interrupt`). */
  #executing = 0;
  #reinterrupt: NodeJS.Timeout | null = null;
  #closed = false;

  private constructor(queryId: string, options: EngineOptions, host: Host, connection: DuckDBConnection, tempDir: string) {
    this.#queryId = queryId;
    this.#options = options;
    this.#host = host;
    this.#connection = connection;
    this.#tempDir = tempDir;
    this.#partialPath = host.kind === 'slot' ? host.slot.partialPath : partialResultPath(options.resultsDir, queryId);
    this.#profileFile = host.kind === 'slot' ? host.slot.profilePath : join(tempDir, 'profile.json');
  }

  /**
   * A query whose memory limit is already known (admitted first), on a warm slot of that size: sandboxed, limited,
   * profiled and locked already (sandboxSlots.ts), so `configure` has nothing left to do.
   */
  static async openInSlot(queryId: string, options: EngineOptions, slots: SandboxSlots, limitBytes: number): Promise<QueryEngine> {
    await ensureResultsDir(options.resultsDir);
    const slot = await slots.take(limitBytes);
    return new QueryEngine(queryId, options, { kind: 'slot', slot, slots }, slot.connection, slot.dir);
  }

  /** A fresh sandboxed instance for one query (configuration not yet locked). */
  static async open(queryId: string, options: EngineOptions): Promise<QueryEngine> {
    const tempDir = join(options.dataDir, 'tmp', queryId);
    const extensionDir = join(options.dataDir, 'extensions');
    await mkdir(tempDir, { recursive: true });
    await mkdir(extensionDir, { recursive: true });
    await ensureResultsDir(options.resultsDir);
    const { instance, connection } = await warmInstances(extensionDir, options.explainMemoryBytes).take();
    try {
      // Only this query's own scratch directory (spill files, profile) and its own result file: never the data dir
      // as a whole, or a query could read another query's (another workspace's) results. One round trip to DuckDB
      // for all of it (each run costs a hop through its thread), in this order: external access goes off last.
      const dirs = [tempDir, ...options.extraReadableDirs].map((d) => quoteLiteral(d.endsWith('/') ? d : `${d}/`));
      const settings = [
        `SET temp_directory=${quoteLiteral(tempDir)}`,
        `SET allowed_directories=[${dirs.join(', ')}]`,
        `SET allowed_paths=[${quoteLiteral(partialResultPath(options.resultsDir, queryId))}]`,
        ...(options.disabledFilesystems.length > 0 ? [`SET disabled_filesystems=${quoteLiteral(options.disabledFilesystems.join(','))}`] : []),
        ...PROGRESS_SETTINGS,
        'SET enable_external_access=false',
      ];
      await connection.run(settings.join(';\n'));
      return new QueryEngine(queryId, options, { kind: 'own', instance }, connection, tempDir);
    } catch (error) {
      connection.closeSync();
      instance.closeSync();
      await rm(tempDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Estimated peak bytes from EXPLAIN, or null when unestimable (not a single SELECT, error, or timeout). */
  async explainEstimate(sql: string, timeoutMs: number): Promise<number | null> {
    const extracted = await this.#connection.extractStatements(sql);
    if (extracted.count !== 1) return null;
    const body = statementBody(sql);
    if (!['SELECT', 'WITH', 'FROM', 'VALUES', 'TABLE', ''].includes(leadingKeyword(body)) && !body.trimStart().startsWith('(')) {
      return null;
    }
    const timer = setTimeout(() => this.#connection.interrupt(), timeoutMs);
    try {
      const reader = await this.#connection.runAndReadAll(`EXPLAIN (FORMAT json) ${body}`);
      const rows = reader.getRows();
      const plan = rows.find((r) => r[0] === 'physical_plan')?.[1];
      return typeof plan === 'string' ? estimatePeakBytesFromExplain(plan) : null;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Apply the granted memory limit and profiling, then lock the configuration. A SQL session's connection stays
   * unlocked (`lock: false`): its statements may change the settings the api's session policy lets through
   * (TimeZone…), while file access stays sandboxed (external access off, allowed directories fixed).
   */
  async configure(memoryLimitBytes: number, opts: { lock?: boolean } = {}): Promise<void> {
    if (this.#host.kind === 'slot') return;
    const settings = [`SET memory_limit=${quoteLiteral(bytesSetting(memoryLimitBytes))}`];
    if (this.#options.profilingEnabled) {
      settings.push(`SET enable_profiling='json'`, `SET profiling_coverage='ALL'`, `SET profiling_output=${quoteLiteral(this.#profilePath())}`);
    }
    // The lock comes last, in the same round trip: nothing can change the settings after it.
    if (this.#options.lockConfiguration && opts.lock !== false) settings.push('SET lock_configuration=true');
    await this.#connection.run(settings.join(';\n'));
  }

  /** DuckDB's memory limit (whole MiB): a SQL session's connection raises it for one statement's top-up. */
  async setMemoryLimit(bytes: number): Promise<void> {
    await this.#connection.run(`SET memory_limit=${quoteLiteral(bytesSetting(bytes))}`);
  }

  /** The query's connection, for the Iceberg bridge's own statements (views, staging tables, COPY of data files). */
  get connection(): DuckDBConnection {
    return this.#connection;
  }

  /** What DuckDB reports of the statement running on the connection now (queryProgress.ts), null once closed. */
  get progress(): EngineProgress | null {
    if (this.#closed) return null;
    try {
      return this.#connection.progress;
    } catch {
      return null;
    }
  }

  /** The query's scratch directory (inside the sandbox's allowed directories). */
  get tempDir(): string {
    return this.#tempDir;
  }

  /**
   * Interrupt the running statement (cancel, timeout). Safe to call at any time. DuckDB drops an interrupt that lands
   * before its worker thread has begun the call (measured: one sent right after `run()` is lost, and the statement
   * runs to its end), so while `execute` is in progress the interrupt is repeated until it returns.
   */
  interrupt(): void {
    if (this.#closed) return;
    this.#connection.interrupt();
    if (this.#executing > 0) this.#repeatInterrupt();
  }

  /**
   * Stop the query for good: interrupt what runs now, and refuse every later DuckDB call of `execute`. DuckDB only
   * interrupts a call in progress, so a cancel landing between two calls (after the configuration, before the
   * statement) was lost and the statement ran on. A SQL session's engine uses `interrupt`, which does not stick.
   */
  stop(): void {
    this.#stopRequested = true;
    if (this.#closed) return;
    this.#connection.interrupt();
    this.#repeatInterrupt();
  }

  #repeatInterrupt(): void {
    this.#reinterrupt ??= setInterval(() => {
      if (!this.#closed) this.#connection.interrupt();
    }, REINTERRUPT_MS).unref();
  }

  #stopRepeating(): void {
    if (this.#reinterrupt) clearInterval(this.#reinterrupt);
    this.#reinterrupt = null;
  }

  #checkStopped(): void {
    if (this.#stopRequested) throw new Error('INTERRUPT Error: Interrupted!');
  }

  /**
   * Runs `sql`; a result grid goes to `results/<resultId>.parquet` (the engine's own id by default; a session names
   * each statement's). A session's partial file is written in its scratch directory, which the sandbox allows.
   */
  async execute(
    sql: string,
    hooks?: StatementHooks,
    resultId: string = this.#queryId,
    params?: readonly (string | null)[],
    paramTypes?: readonly (ParamType | null)[],
  ): Promise<ExecutionResult> {
    this.#checkStopped();
    this.#executing++;
    try {
      return await this.#execute(sql, hooks, resultId, params?.length ? boundParams(params, paramTypes) : undefined);
    } finally {
      // A stopped query keeps interrupting until it is closed; a session's statement interrupt ends with the statement.
      if (--this.#executing === 0 && !this.#stopRequested) this.#stopRepeating();
    }
  }

  async #execute(sql: string, hooks: StatementHooks | undefined, resultId: string, params?: BoundParams): Promise<ExecutionResult> {
    // A single statement (most queries) is prepared at once: DuckDB's statement extraction parses the text a second
    // time and cost a trivial query about 5% of the agent's CPU. The bridge's tables are prepared before (binding
    // reads them). Anything else (several statements, one DuckDB expands into several, an error) is extracted
    // below, which reports it as it always has.
    const single = !hooks || hooks.statementCount === 1;
    const hooked = hooks && single ? await this.#beforeStatement(hooks, params) : undefined;
    const direct = single ? await this.#connection.prepare(sql).catch(() => null) : null;
    const extracted: Statements = direct ? { count: 1, prepare: () => Promise.resolve(direct) } : await this.#connection.extractStatements(sql);
    if (extracted.count === 0) throw new Error('the query contains no statement');
    const sizes = await this.#statementSizes(sql, extracted.count, hooks);
    if (params && sizes.length > 1) throw new Error('Binder Error: parameters bind to one statement; the script has several');
    // `$n` values bound as text (DuckDB casts each to the type its position asks for) or as their declared type;
    // never spliced into the text.
    const values = params?.values;
    const valueTypes = params?.types;
    if (sizes.length > 1) {
      this.#readOnly = false;
      return this.#executeScript(extracted, sizes, hooks);
    }
    this.#checkStopped();
    const own = hooked !== undefined ? hooked : hooks ? await this.#beforeStatement(hooks, params) : null;
    this.#checkStopped();
    // What DuckDB runs around the statement itself (a PIVOT's CREATE TYPE of its values ahead of it, in a
    // transaction for all but a read), after the bridge's views.
    const expanded = extracted.count > 1;
    const { main, prepare } = await this.#group(extracted, 0, extracted.count);
    for (let j = 0; j < main; j++) {
      this.#readOnly = false;
      await (await prepare(j)).run();
      this.#checkStopped();
    }
    const finish = async () => {
      for (let j = main + 1; j < extracted.count; j++) await (await prepare(j)).run();
    };
    const prepared = await prepare(main);
    this.#checkStopped();
    if (params) {
      if (prepared.parameterCount !== params.values.length) throw new Error(`Binder Error: the statement takes ${prepared.parameterCount} parameters, ${params.values.length} were bound`);
      params.values.forEach((v, i) => (v === null ? prepared.bindNull(i + 1) : prepared.bindValue(i + 1, v, params.types[i])));
    }
    if (own || !['SELECT', 'EXPLAIN'].includes(STATEMENT_NAMES.get(prepared.statementType) ?? '')) this.#readOnly = false;
    if (!own && STATEMENT_NAMES.get(prepared.statementType) === 'EXPLAIN') return this.#explain(prepared, resultId, finish);
    const duckType = protocolStatementType(prepared.statementType, sql);
    const statementType = own?.statementType ?? duckType;
    if (duckType !== 'select' && duckType !== 'describe') {
      this.#checkStopped();
      const result = await prepared.run();
      await finish();
      let rowCount = ['insert', 'update', 'delete', 'merge', 'copy'].includes(statementType) ? Number(result.rowsChanged) : 0;
      // Read before the hooks run statements of their own, which would replace the profile.
      const profile = await this.#profile(rowCount);
      rowCount = (await hooks?.after(0, rowCount)) ?? rowCount;
      return { rowCount, resultPath: null, columnSchema: null, columns: [], statementType, wrote: true, profile };
    }
    let names: string[];
    let types: (string | null)[];
    if (values) {
      // With parameters the prepared statement's columns are not final until bound (a `$n` of no declared type
      // reads as one column "unknown"): DESCRIBE with the values bound says what the statement returns.
      const described = (await this.#connection.runAndReadAll(`DESCRIBE ${statementBody(sql)}`, values, valueTypes)).getRows();
      names = described.map((r) => String(r[0]));
      types = described.map((r) => String(r[1]));
    } else {
      names = Array.from({ length: prepared.columnCount }, (_, i) => prepared.columnName(i));
      types = Array.from({ length: prepared.columnCount }, (_, i) => columnSpelling(prepared, i));
    }
    prepared.destroySync();
    await finish();
    const columns = uniqueColumnNames(names);
    const wrapped = `SELECT * FROM (\n${statementBody(sql)}\n) AS __eider_result(${columns.map(quoteIdentifier).join(', ')})`;
    const columnSchema = types.every((t) => t !== null)
      ? columns.map((name, i) => ({ name, type: types[i]! }))
      : (expanded ? await this.#expandedRows(`DESCRIBE ${wrapped}`) : await this.#connection.runAndReadAll(`DESCRIBE ${wrapped}`, values, valueTypes)).getRows().map((row) => ({ name: String(row[0]), type: String(row[1]) }));
    const projection = columnSchema.map((c) => parquetSafeColumn(c.name, c.type)).join(', ');
    const fileName = `${resultId}.parquet`;
    const partial = resultId === this.#queryId ? this.#partialPath : join(this.#tempDir, `${resultId}.parquet.partial`);
    this.#checkStopped();
    const copy = `COPY (SELECT ${projection} FROM (${wrapped})) TO ${quoteLiteral(partial)} (FORMAT parquet, ROW_GROUP_SIZE ${RESULT_ROW_GROUP_ROWS})`;
    // The wrapped statement expands again as the user's did (its CREATE TYPE runs again): the COPY is its last.
    // A prepared COPY answers its count as its one row, not as rows changed.
    const rowCount = expanded ? Number((await this.#expandedRows(copy)).getRows()[0]?.[0] ?? 0) : Number((await this.#connection.run(copy, values, valueTypes)).rowsChanged);
    const profile = await this.#profile(rowCount);
    renameSync(partial, join(this.#options.resultsDir, fileName));
    return { rowCount, resultPath: `results/${fileName}`, columnSchema, columns, statementType, wrote: own?.wrote ?? false, profile };
  }

  /** The hooks' work ahead of a single statement: its tables, and a maintenance procedure's own run. */
  async #beforeStatement(hooks: StatementHooks, params: BoundParams | undefined) {
    await hooks.before(0);
    this.#checkStopped();
    const own = (await hooks.run?.(0)) ?? null;
    if (own && params) throw new Error('Binder Error: parameters are not supported in statements that write Iceberg tables; send the values in the SQL');
    return own;
  }

  /**
   * EXPLAIN [ANALYZE] of a read (the statement policy lets no other through): its rows, the plan as text, become the
   * result grid. DuckDB cannot select from an EXPLAIN, so the rows go through a temporary table of the connection.
   */
  async #explain(prepared: Prepared, resultId: string, finish: () => Promise<void>): Promise<ExecutionResult> {
    const reader = await prepared.runAndReadAll();
    await finish();
    const profile = await this.#profile(reader.currentRowCount);
    const columns = uniqueColumnNames(reader.columnNames());
    const rows = reader.getRows();
    await this.#connection.run(`CREATE OR REPLACE TEMP TABLE __eider_explain (${columns.map((c) => `${quoteIdentifier(c)} VARCHAR`).join(', ')})`);
    const insert = await this.#connection.prepare(`INSERT INTO temp.main.__eider_explain VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`);
    for (const row of rows) {
      row.forEach((v, i) => (v === null ? insert.bindNull(i + 1) : insert.bindVarchar(i + 1, String(v))));
      await insert.run();
    }
    insert.destroySync();
    const fileName = `${resultId}.parquet`;
    const partial = resultId === this.#queryId ? this.#partialPath : join(this.#tempDir, `${resultId}.parquet.partial`);
    await this.#connection.run(`COPY (SELECT * FROM temp.main.__eider_explain) TO ${quoteLiteral(partial)} (FORMAT parquet)`);
    await this.#connection.run('DROP TABLE temp.main.__eider_explain');
    renameSync(partial, join(this.#options.resultsDir, fileName));
    const columnSchema = columns.map((name) => ({ name, type: 'VARCHAR' }));
    return { rowCount: rows.length, resultPath: `results/${fileName}`, columnSchema, columns, statementType: 'describe', wrote: false, profile };
  }

  /**
   * How many of DuckDB's statements each statement of `sql` became. DuckDB expands a few statements into several
   * (a PIVOT without an IN list runs a CREATE TYPE of the pivoted values first), so its count can exceed the
   * statements written. When it does, each statement (the lexer's split, as the bridge splits) is extracted on its
   * own and the counts must add up to DuckDB's; otherwise the split is not trusted: with the bridge the script is
   * refused rather than misattributed, without it DuckDB's statements run as they are.
   */
  async #statementSizes(sql: string, count: number, hooks: StatementHooks | undefined): Promise<number[]> {
    const ones = (n: number) => Array.from({ length: n }, () => 1);
    if (hooks?.statementCount === count || (!hooks && count === 1)) return ones(count);
    const texts = splitStatements(sql);
    if (!hooks && texts.length === count) return ones(count);
    if ((!hooks || texts.length === hooks.statementCount) && texts.length < count) {
      const sizes: number[] = [];
      for (const text of texts) sizes.push(await this.#connection.extractStatements(text).then((e) => e.count, () => 0));
      if (sizes.every((n) => n > 0) && sizes.reduce((a, b) => a + b, 0) === count) return sizes;
    }
    if (hooks) throw new Error(`Parser Error: the script splits into ${count} statements for DuckDB but ${hooks.statementCount} for the Iceberg bridge`);
    return ones(count);
  }

  /**
   * Which of DuckDB's statements `from` … `from + size - 1` is the statement itself: the last, or the one before the
   * COMMIT when DuckDB wrapped its expansion in a transaction (it does for all but a read). Told by the first
   * statement, the one that can be prepared before any ran (a failed prepare spoils the extracted statements);
   * `prepare(j)` hands that one back prepared.
   */
  async #group(extracted: Statements, from: number, size: number) {
    let first: Prepared | null = await extracted.prepare(from);
    const wrapped = size >= 3 && STATEMENT_NAMES.get(first.statementType) === 'TRANSACTION';
    const prepare = async (j: number): Promise<Prepared> => {
      if (j === from && first) {
        const p = first;
        first = null;
        return p;
      }
      return extracted.prepare(j);
    };
    return { main: from + size - (wrapped ? 2 : 1), prepare };
  }

  /** Runs every statement `sql` becomes and answers the rows of the statement itself (#group). */
  async #expandedRows(sql: string) {
    const extracted = await this.#connection.extractStatements(sql);
    const { main, prepare } = await this.#group(extracted, 0, extracted.count);
    let rows: Awaited<ReturnType<Prepared['runAndReadAll']>> | null = null;
    for (let j = 0; j < extracted.count; j++) {
      const prepared = await prepare(j);
      if (j === main) rows = await prepared.runAndReadAll();
      else await prepared.run();
    }
    return rows!;
  }

  async #executeScript(extracted: Statements, sizes: readonly number[], hooks?: StatementHooks): Promise<ExecutionResult> {
    let rowCount = 0;
    let at = 0;
    for (let i = 0; i < sizes.length; i++) {
      await hooks?.before(i);
      await hooks?.run?.(i);
      // DuckDB's statements ahead of statement i's own (a PIVOT's CREATE TYPE), then its own.
      const end = at + sizes[i];
      // Prepared one at a time: a later statement may depend on an earlier one (CREATE then INSERT).
      this.#checkStopped();
      const { main, prepare } = await this.#group(extracted, at, sizes[i]);
      for (; at < main; at++) {
        this.#checkStopped();
        await (await prepare(at)).run();
      }
      this.#checkStopped();
      const prepared = await prepare(at++);
      const type = STATEMENT_NAMES.get(prepared.statementType) ?? '';
      const result = await prepared.run();
      for (; at < end; at++) await (await prepare(at)).run(); // the COMMIT of DuckDB's expansion
      const counted = ['INSERT', 'UPDATE', 'DELETE'].includes(type) || type.startsWith('MERGE');
      const changed = counted ? Number(result.rowsChanged) : 0;
      const reported = (await hooks?.after(i, changed)) ?? changed;
      if (counted || reported !== changed) rowCount += reported;
    }
    return { rowCount, resultPath: null, columnSchema: null, columns: [], statementType: 'other', wrote: true, profile: await this.#profile(rowCount) };
  }

  #profilePath(): string {
    return this.#profileFile;
  }

  async #profile(rowCount: number): Promise<QueryProfile | null> {
    // A slot's queries are not profiled (sandboxSlots.ts says why).
    if (!this.#options.profilingEnabled || this.#host.kind === 'slot') return null;
    try {
      // Synchronous, like the result file's rename: a small local file, where a trip through libuv's thread pool
      // costs more CPU than the read (a few kB of JSON in the page cache).
      return normalizeProfile(readFileSync(this.#profilePath(), 'utf8'), rowCount);
    } catch {
      return null;
    }
  }

  /** Close the instance (or hand the slot back, emptied) and remove the spill directory and any partial result.
   *  `attached`: the databases the query attached on the connection (the bridge's catalogs), when known. */
  async close(attached: readonly string[] = []): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopRepeating();
    const host = this.#host;
    if (host.kind === 'slot') {
      // The connection is the slot's: emptied with it (give), or closed with it (discard).
      if (this.#readOnly) await host.slots.give(host.slot, attached);
      else await host.slots.discard(host.slot);
      return;
    }
    try {
      this.#connection.closeSync();
    } finally {
      host.instance.closeSync();
    }
    await rm(this.#tempDir, { recursive: true, force: true });
    await rm(this.#partialPath, { force: true });
    warmInstances(join(this.#options.dataDir, 'extensions'), this.#options.explainMemoryBytes).refill();
  }
}
