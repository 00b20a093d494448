// Views and exports of a result file, made on the agent that holds it (docs/agent.md "Result views and exports"):
// the result's rows in another order or filtered, written by DuckDB to a Parquet file next to the result (the api
// pages it with range reads, as it pages the result itself), and the result or a view of it as CSV, Parquet or JSON
// for download. The statement is built here from the structured view (protocol/resultView.ts): column names are those
// the file itself has, quoted; every value is a bound parameter. One DuckDB instance serves them all, under its own
// memory limit, allowed to touch only the results and its scratch directory.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { encodeView, isEmptyView, viewProblem, type ExportFormat, type ResultView } from '../protocol/index.ts';
import { quoteIdentifier, quoteLiteral } from './statementText.ts';
import type { Logger } from './logger.ts';

/** Views kept per result at most: a filter typed letter by letter makes one per keystroke the api asks for. */
const VIEWS_PER_RESULT = 8;
/** The tie-breaker: the row's position in the result file, so equal keys keep the query's order and pages are stable. */
const ROW_NUMBER = 'file_row_number';
// A type spelled like this is a scalar DuckDB can cast a bound string to; anything else (nested types, whose
// spelling holds field names) is compared as text, so no type text other than these is ever put in a statement.
const SCALAR_TYPE = /^[A-Z][A-Z0-9_ ]*(\(\d+(, ?\d+)?\))?$/;

/** A view or export the caller asked for wrongly: its code and message go back as a 400. */
export class ViewError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ViewError';
    this.code = code;
  }
}

export interface ColumnType {
  name: string;
  type: string;
}

/** The SELECT of a view over the result file bound as $1; its values are the parameters after the file. */
export function viewSelect(columns: readonly ColumnType[], view: ResultView): { sql: string; params: string[] } {
  const problem = viewProblem(view, columns.map((c) => c.name));
  if (problem) throw new ViewError(problem.code, problem.message);
  const params: string[] = [];
  const typeOf = new Map(columns.map((c) => [c.name, c.type]));
  const where = view.filter.map((f) => {
    const col = quoteIdentifier(f.column);
    if (f.op === 'is_null') return `${col} IS NULL`;
    if (f.op === 'is_not_null') return `${col} IS NOT NULL`;
    params.push(String(f.value));
    const p = `$${params.length + 1}`;
    if (f.op === 'contains') return `contains(lower(CAST(${col} AS VARCHAR)), lower(${p}))`;
    const type = typeOf.get(f.column) ?? '';
    return SCALAR_TYPE.test(type) ? `${col} ${f.op} CAST(${p} AS ${type})` : `CAST(${col} AS VARCHAR) ${f.op} ${p}`;
  });
  if (view.search) {
    params.push(view.search);
    const p = `$${params.length + 1}`;
    where.push(`(${columns.map((c) => `contains(lower(CAST(${quoteIdentifier(c.name)} AS VARCHAR)), lower(${p}))`).join(' OR ')})`);
  }
  const tieBreak = !columns.some((c) => c.name === ROW_NUMBER) && view.order_by.length > 0;
  const order = view.order_by.map((k) => `${quoteIdentifier(k.column)} ${k.dir === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`);
  if (tieBreak) order.push(ROW_NUMBER);
  const sql = [
    `SELECT ${tieBreak ? `* EXCLUDE (${ROW_NUMBER})` : '*'} FROM read_parquet($1${tieBreak ? `, ${ROW_NUMBER} = true` : ''})`,
    where.length ? `WHERE ${where.join(' AND ')}` : '',
    order.length ? `ORDER BY ${order.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { sql, params };
}

const COPY_OPTIONS: Record<ExportFormat, string> = {
  csv: 'FORMAT csv, HEADER true',
  parquet: 'FORMAT parquet',
  json: 'FORMAT json, ARRAY true',
};

export interface ResultViewsOptions {
  readonly resultsDir: string;
  /** DuckDB's spill directory for sorts larger than the memory limit. */
  readonly tempDir: string;
  readonly memoryLimitBytes: number;
  readonly threads: number;
  readonly logger: Logger;
}

/** A DuckDB failure caused by the caller's input (a value that is not of the column's type). */
const isInputError = (e: unknown) => /^(Conversion|Invalid Input|Binder) Error/i.test(e instanceof Error ? e.message : '');

export class ResultViews {
  readonly #o: ResultViewsOptions;
  #instance: Promise<DuckDBInstance> | null = null;
  readonly #making = new Map<string, Promise<string>>();
  readonly #kept = new Map<string, string[]>();

  constructor(options: ResultViewsOptions) {
    this.#o = options;
  }

  #open(): Promise<DuckDBInstance> {
    this.#instance ??= (async () => {
      await mkdir(this.#o.tempDir, { recursive: true });
      const instance = await DuckDBInstance.create(':memory:', {
        memory_limit: `${Math.max(64, Math.floor(this.#o.memoryLimitBytes / 2 ** 20))}MiB`,
        threads: String(this.#o.threads),
      });
      const c = await instance.connect();
      try {
        const dirs = [this.#o.resultsDir, this.#o.tempDir].map((d) => quoteLiteral(d.endsWith('/') ? d : `${d}/`));
        // Only the results and the scratch directory, then nothing else can be changed.
        await c.run(
          [`SET temp_directory=${quoteLiteral(this.#o.tempDir)}`, `SET allowed_directories=[${dirs.join(', ')}]`, 'SET enable_external_access=false', 'SET lock_configuration=true'].join(';\n'),
        );
      } finally {
        c.closeSync();
      }
      return instance;
    })();
    this.#instance.catch(() => (this.#instance = null));
    return this.#instance;
  }

  #base(queryId: string) {
    return join(this.#o.resultsDir, `${queryId}.parquet`);
  }

  async #connect<T>(run: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    const c = await (await this.#open()).connect();
    try {
      return await run(c);
    } catch (e) {
      if (e instanceof ViewError) throw e;
      if (isInputError(e)) throw new ViewError('invalid_filter', (e as Error).message.split('\n')[0].slice(0, 500));
      throw e;
    } finally {
      c.closeSync();
    }
  }

  async #columns(c: DuckDBConnection, file: string): Promise<ColumnType[]> {
    const reader = await c.runAndReadAll('DESCRIBE SELECT * FROM read_parquet($1)', [file]);
    return reader.getRows().map((r) => ({ name: String(r[0]), type: String(r[1]) }));
  }

  /** Writes the view's rows as `format` to `target` (through a .partial file, so a reader never sees half of it). */
  async #copy(queryId: string, view: ResultView, format: ExportFormat, target: string): Promise<void> {
    const base = this.#base(queryId);
    const partial = `${target}.partial`;
    await this.#connect(async (c) => {
      const { sql, params } = viewSelect(await this.#columns(c, base), view);
      // The target path is ours (a uuid and a digest), never the caller's: it is quoted, not bound.
      await c.run(`COPY (${sql}) TO ${quoteLiteral(partial)} (${COPY_OPTIONS[format]})`, [base, ...params]);
    });
    await rename(partial, target).catch(async (e: unknown) => {
      await rm(partial, { force: true });
      throw e;
    });
  }

  /** Whether the query's result file is here (not expired, never written). */
  async has(queryId: string): Promise<boolean> {
    return stat(this.#base(queryId)).then(
      (s) => s.isFile(),
      () => false,
    );
  }

  /**
   * The Parquet file of a view of the result: the result itself for an empty view, else a file made once per view
   * (`{id}.view-{digest}.parquet`; swept by retention like the result) and reused while it is kept.
   */
  async viewFile(queryId: string, view: ResultView): Promise<string> {
    if (isEmptyView(view)) return this.#base(queryId);
    const digest = createHash('sha256').update(encodeView(view)).digest('hex').slice(0, 24);
    const path = join(this.#o.resultsDir, `${queryId}.view-${digest}.parquet`);
    const making = this.#making.get(path);
    if (making) return making;
    if (await stat(path).then((s) => s.isFile(), () => false)) return path;
    const started = performance.now();
    const job = this.#copy(queryId, view, 'parquet', path).then(() => {
      this.#o.logger.info({ queryId, ms: Math.round(performance.now() - started) }, 'result view written');
      this.#keep(queryId, path);
      return path;
    });
    this.#making.set(path, job);
    try {
      return await job;
    } finally {
      this.#making.delete(path);
    }
  }

  /** Forgets (deletes) the oldest views of a result beyond VIEWS_PER_RESULT. */
  #keep(queryId: string, path: string): void {
    const list = (this.#kept.get(queryId) ?? []).filter((p) => p !== path);
    list.push(path);
    while (list.length > VIEWS_PER_RESULT) {
      const old = list.shift()!;
      void rm(old, { force: true });
    }
    this.#kept.set(queryId, list);
  }

  /**
   * The result, or a view of it, as a file of `format` for download. `temporary`: the caller deletes it once sent
   * (a crash leaves it to the retention sweep, which knows the `.export-` names).
   */
  async exportFile(queryId: string, view: ResultView, format: ExportFormat): Promise<{ path: string; temporary: boolean }> {
    if (format === 'parquet' && isEmptyView(view)) return { path: this.#base(queryId), temporary: false };
    const path = join(this.#o.resultsDir, `${queryId}.export-${randomUUID()}.${format}`);
    const started = performance.now();
    await this.#copy(queryId, view, format, path);
    this.#o.logger.info({ queryId, format, ms: Math.round(performance.now() - started) }, 'result export written');
    return { path, temporary: true };
  }

  async close(): Promise<void> {
    const instance = await this.#instance?.catch(() => null);
    instance?.closeSync();
    this.#instance = null;
  }
}
