// DuckDB's own parser as the judge of whether text is SQL at all (I1 allows the api the engine for parsing).
// The statement policy's parser is narrower than DuckDB's: when it fails, this tells a real syntax error (answered
// with DuckDB's message and position) from a statement DuckDB accepts but the policy cannot read (a rejection).
// Parse only: the instance has no external access and never autoloads an extension.
// Loaded on first use only: the policy module also runs in worker threads, which never need the native engine.
import type { DuckDBConnection } from '@duckdb/node-api';

let connection: Promise<DuckDBConnection> | null = null;

async function parser(): Promise<DuckDBConnection> {
  connection ??= import('@duckdb/node-api').then(({ DuckDBInstance }) => DuckDBInstance.create(':memory:', {
    enable_external_access: 'false',
    autoload_known_extensions: 'false',
    autoinstall_known_extensions: 'false',
    threads: '1',
  })).then((i) => i.connect());
  return connection;
}

export interface DuckSyntaxError {
  message: string;
  // 1-based, from DuckDB's caret line when it gives one
  line: number | null;
  column: number | null;
}

/** null when DuckDB parses the text; otherwise its parser error. */
export async function duckdbSyntaxError(sql: string): Promise<DuckSyntaxError | null> {
  const conn = await parser();
  try {
    await conn.extractStatements(sql);
    return null;
  } catch (e) {
    const raw = String((e as Error).message).replace(/^Failed to extract statements:\s*/, '');
    const [first] = raw.split('\n');
    // "LINE 2:   SELEC 2\n          ^": the caret's column within the quoted line
    const m = /\nLINE (\d+): (.*)\n( *)\^/.exec(raw);
    const prefix = m ? `LINE ${m[1]}: `.length : 0;
    return {
      message: first.replace(/^Parser Error:\s*/, ''),
      line: m ? Number(m[1]) : null,
      column: m ? m[3].length - prefix + 1 : null,
    };
  }
}

/**
 * DuckDB's parse tree of a read (json_serialize_sql: SELECTs only, parse only, nothing bound or run), as its list of
 * statements; null when DuckDB does not read the text as SELECTs.
 */
export async function duckdbReadTree(sql: string): Promise<unknown[] | null> {
  const conn = await parser();
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  // DuckDB writes non-finite doubles bare (Infinity, NaN), which JSON does not have; a text it still cannot read
  // is no tree at all.
  const text = String(reader.getRows()[0][0]).replace(/:(-?Infinity|NaN)(?=[,}\]])/g, ':null');
  try {
    const json = JSON.parse(text) as { error?: boolean; statements?: unknown };
    return json.error === true || !Array.isArray(json.statements) ? null : json.statements;
  } catch {
    return null;
  }
}
