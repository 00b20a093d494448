// Reading statement text the way the endpoint needs it: splitting a simple Query into statements, the leading
// keyword (what kind of statement, its CommandComplete tag), the client settings answered here, `$n` counting.
// Strings, quoted names, dollar quotes and comments are read by sqltext/scan.ts, as DuckDB reads them.
import { codeOnly, splitStatements as splitScript } from '../sqltext/scan.ts';

/** The statements of a simple Query (split at `;` outside literals and comments); blank ones dropped. */
export function splitStatements(text: string): string[] {
  return splitScript(text).map((s) => s.trim());
}

function words(sql: string, n = 6): string[] {
  return codeOnly(sql).replace(/[()]/g, ' ').trim().split(/\s+/).slice(0, n).map((w) => w.toUpperCase());
}

const READS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'FROM', 'SHOW', 'DESCRIBE', 'SUMMARIZE', 'EXPLAIN', 'PRAGMA']);

export function classify(sql: string): { kind: 'empty' | 'read' | 'other'; ddl: boolean; txBegin: boolean; txEnd: boolean } {
  const [first] = words(sql, 1);
  if (!first) return { kind: 'empty', ddl: false, txBegin: false, txEnd: false };
  return {
    kind: READS.has(first) ? 'read' : 'other',
    ddl: ['CREATE', 'DROP', 'ALTER', 'ATTACH', 'DETACH', 'USE'].includes(first),
    txBegin: first === 'BEGIN' || first === 'START',
    txEnd: ['COMMIT', 'END', 'ROLLBACK', 'ABORT'].includes(first),
  };
}

/** The CommandComplete tag PostgreSQL would send for the statement. */
export function commandTag(sql: string, statementType: string | null, rows: number): string {
  const w = words(sql, 8);
  switch (w[0]) {
    case 'INSERT':
      return `INSERT 0 ${rows}`;
    case 'UPDATE':
    case 'DELETE':
    case 'MERGE':
    case 'COPY':
      return `${w[0]} ${rows}`;
    case 'CREATE': {
      const object = w.slice(1).find((x) => !['OR', 'REPLACE', 'TEMP', 'TEMPORARY', 'UNIQUE', 'UNLOGGED', 'PERSISTENT'].includes(x)) ?? '';
      return `CREATE ${object}`.trim();
    }
    case 'DROP':
    case 'ALTER':
      return `${w[0]} ${w[1] ?? ''}`.trim();
    case 'BEGIN':
    case 'START':
      return 'BEGIN';
    case 'COMMIT':
    case 'END':
      return 'COMMIT';
    case 'ROLLBACK':
    case 'ABORT':
      return 'ROLLBACK';
    case 'SET':
    case 'RESET':
    case 'USE':
    case 'ATTACH':
    case 'DETACH':
    case 'CHECKPOINT':
      return w[0];
    default:
      return statementType === 'select' || statementType === 'describe' || READS.has(w[0] ?? '') ? `SELECT ${rows}` : (w[0] ?? '');
  }
}

// Settings drivers send on connect that only shape the client's own session (PostgreSQL's, not DuckDB's): accepted
// and remembered for SHOW, never sent to the agent. `statement_timeout` becomes the statements' timeout.
const CLIENT_SETTINGS = new Set([
  'extra_float_digits', 'application_name', 'datestyle', 'client_encoding', 'intervalstyle', 'client_min_messages',
  'bytea_output', 'standard_conforming_strings', 'search_path', 'statement_timeout', 'lock_timeout',
  'idle_in_transaction_session_timeout', 'lc_messages', 'lc_monetary', 'lc_numeric', 'lc_time', 'jit', 'geqo',
  'escape_string_warning', 'synchronous_commit', 'default_transaction_isolation', 'default_transaction_read_only',
  'transaction_isolation', 'row_security', 'plan_cache_mode', 'names', 'session_replication_role', 'work_mem',
]);

export function clientSetting(sql: string): { name: string; value: string } | null {
  const t = sql.trim().replace(/;\s*$/, '');
  if (/^(set\s+(session\s+characteristics\s+as\s+)?transaction\b)/i.test(t)) return { name: 'transaction', value: t };
  if (/^(discard\s+all|reset\s+all|deallocate\s+all|unlisten\s+\*|close\s+all)$/i.test(t)) return { name: 'reset', value: '' };
  const m = /^set\s+(?:session\s+|local\s+)?([a-z_.]+)\s*(?:=|\bto\b|\s)\s*(.+)$/is.exec(t);
  if (!m) return null;
  const name = m[1].toLowerCase();
  if (!CLIENT_SETTINGS.has(name)) return null;
  return { name, value: m[2].trim().replace(/^'(.*)'$/s, '$1').replace(/''/g, "'") };
}

/** The highest `$n` placeholder in the text (outside literals and comments). */
export function countParams(sql: string): number {
  let max = 0;
  for (const m of codeOnly(sql).matchAll(/\$(\d+)/g)) max = Math.max(max, Number(m[1]));
  return max;
}

/**
 * `COPY <table or (query)> TO STDOUT [WITH] [(options)]` (psql's \copy … to): the query to run and the output
 * format, or null when the statement is not one. Other COPY forms go to the session as they are.
 */
export function copyToStdout(sql: string): { query: string; csv: boolean; header: boolean; delimiter: string | null } | null {
  const t = sql.trim().replace(/;\s*$/, '');
  const m = /^copy\s+([\s\S]+?)\s+to\s+stdout\b([\s\S]*)$/i.exec(t);
  if (!m) return null;
  const source = m[1].trim();
  const query = source.startsWith('(') && source.endsWith(')') ? source.slice(1, -1) : `SELECT * FROM ${source}`;
  const opts = m[2].toLowerCase();
  const delimiter = /delimiter\s+(?:as\s+)?'((?:[^']|'')*)'/i.exec(m[2])?.[1]?.replace(/''/g, "'") ?? null;
  return { query, csv: /\bcsv\b/.test(opts), header: /\bheader\b(?!\s+(false|off|0))/.test(opts), delimiter };
}

/** One row of COPY output: text format (tab, \N, backslash escapes) or CSV (quoted when needed). */
export function copyLine(values: (string | null)[], o: { csv: boolean; delimiter: string | null }): string {
  const d = o.delimiter ?? (o.csv ? ',' : '\t');
  if (o.csv) {
    return `${values.map((v) => (v === null ? '' : /[",\n\r]/.test(v) || v.includes(d) || v === '' ? `"${v.replace(/"/g, '""')}"` : v)).join(d)}\n`;
  }
  return `${values.map((v) => (v === null ? '\\N' : v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r'))).join(d)}\n`;
}
