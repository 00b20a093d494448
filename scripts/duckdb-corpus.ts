// Builds tests/fixtures/duckdb-read-corpus.json: harmless read-only statements that DuckDB's own SQL tests run
// (sqllogictest files under test/sql of the duckdb/duckdb repository), the measure of whether the statement policy
// refuses valid DuckDB reads (tests/statementPolicyCorpus.test.ts). Run by hand with a checkout or a bare mirror:
//   npx node scripts/duckdb-corpus.ts /path/to/duckdb/.git   (or a bare repository directory)
// Kept: `query` records, and `statement ok` records that are reads (SELECT, WITH, FROM, VALUES, DESCRIBE, SUMMARIZE,
// PIVOT…), from files that need no extension beyond parquet, json and icu. Left out: anything touching files,
// settings, pragmas, attached databases, COPY and writes, loop-templated SQL, and text the DuckDB the agents run
// (@duckdb/node-api) does not parse as exactly one statement.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const repo = process.argv[2];
if (!repo) throw new Error('usage: scripts/duckdb-corpus.ts <duckdb git directory>');
const MAX_STATEMENTS = 5000;
const MAX_LENGTH = 1500;
const ALLOWED_REQUIRES = new Set(['parquet', 'json', 'icu']);

const git = (...args: string[]): string => execFileSync('git', ['--git-dir', repo, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
const commit = git('rev-parse', 'HEAD').trim();
const files = git('ls-tree', '-r', '--name-only', 'HEAD', 'test/sql').split('\n').filter((f) => f.endsWith('.test'));

// Reads (by first keyword) and the words that mark a statement touching something beyond the query itself.
const READ_START = /^\(*\s*(select|with|from|values|describe|desc|summarize|pivot|unpivot|table)\b/i;
const UNSAFE = /\b(pragma|attach|detach|copy|install|load|export|import|checkpoint|set|reset|call|create|insert|update|delete|drop|alter|merge|truncate|vacuum|prepare|execute|use|begin|commit|rollback|secret)\b|__TEST_DIR__|__WORKING_DIRECTORY__|\{(DATA|TEMP)_DIR\}|\$\{|'[^']*\.(csv|tsv|parquet|json|jsonl|ndjson|txt|gz|zst|db|duckdb|arrow|xlsx|avro)'|'(data|test|s3|https?|gs|az|hf):?\/|\b(read_|parquet_|glob|getenv|current_setting|sniff_csv|duckdb_settings|duckdb_databases|duckdb_secrets|duckdb_extensions|duckdb_memory|duckdb_temporary_files|duckdb_logs)/i;

interface Record_ {
  kind: 'query' | 'statement ok';
  sql: string;
}
// Both kinds are kept only when they read (READ_START): a `query` record may also run INSERT … RETURNING.

function records(text: string): Record_[] | null {
  const lines = text.split('\n');
  const out: Record_[] = [];
  let skipping = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trimEnd();
    const require = /^require\s+(\S+)/.exec(line);
    if (require && !ALLOWED_REQUIRES.has(require[1])) return null;
    if (line === 'mode skip') skipping = true;
    if (line === 'mode unskip') skipping = false;
    const head = /^(query\b|statement ok\b)/.exec(line);
    if (!head) continue;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i].trim() !== '' && lines[i].trim() !== '----'; i++) body.push(lines[i]);
    if (!skipping) out.push({ kind: head[1] === 'query' ? 'query' : 'statement ok', sql: body.join('\n').trim() });
  }
  return out;
}

// Blobs in one batch: a process per file would take minutes over ~4000 files.
const ids = git('ls-tree', '-r', 'HEAD', 'test/sql').split('\n').filter((l) => l.endsWith('.test')).map((l) => l.split(/\s+/)[2]);
const batch = execFileSync('git', ['--git-dir', repo, 'cat-file', '--batch'], { input: ids.join('\n') + '\n', maxBuffer: 1 << 30 });
const texts: string[] = [];
for (let at = 0; texts.length < ids.length; ) {
  const nl = batch.indexOf(10, at);
  const size = Number(batch.subarray(at, nl).toString().split(' ')[2]);
  texts.push(batch.subarray(nl + 1, nl + 1 + size).toString('utf8'));
  at = nl + 1 + size + 1;
}

const candidates = new Set<string>();
for (const text of texts) {
  for (const r of records(text) ?? []) {
    let sql = r.sql.replace(/;\s*$/, '').trim();
    if (sql === '' || sql.length > MAX_LENGTH || sql.includes(';')) continue;
    if (!READ_START.test(sql) || UNSAFE.test(sql)) continue;
    sql = sql.replace(/\r/g, '');
    candidates.add(sql);
  }
}

// DuckDB decides what it parses: exactly one statement. (Calls of denied functions stay in: the test counts their
// refusal as a documented one.)
const db = await DuckDBInstance.create(':memory:', { enable_external_access: 'false', autoload_known_extensions: 'false', autoinstall_known_extensions: 'false' });
const conn = await db.connect();
const kept: string[] = [];
for (const sql of candidates) {
  try {
    if ((await conn.extractStatements(sql)).count === 1) kept.push(sql);
  } catch {
    // not DuckDB the agents run
  }
}

// A deterministic spread over the whole test tree when there are more than the fixture keeps.
const hash = (s: string): string => createHash('sha256').update(s).digest('hex');
const statements = kept.length <= MAX_STATEMENTS ? kept : [...kept].sort((a, b) => hash(a).localeCompare(hash(b))).slice(0, MAX_STATEMENTS);
statements.sort();
const fixture = {
  source: `https://github.com/duckdb/duckdb test/sql/**/*.test at ${commit}`,
  licence: 'MIT, Copyright 2018-2026 Stichting DuckDB Foundation (https://github.com/duckdb/duckdb/blob/main/LICENSE)',
  generator: 'scripts/duckdb-corpus.ts',
  files: files.length,
  candidates: candidates.size,
  parsed: kept.length,
  statements,
};
const out = join(import.meta.dirname, '..', 'tests', 'fixtures', 'duckdb-read-corpus.json');
writeFileSync(out, JSON.stringify(fixture, null, 1) + '\n');
console.log(`${files.length} files, ${candidates.size} candidate reads, ${kept.length} parsed by DuckDB, ${statements.length} written to ${out}`);
