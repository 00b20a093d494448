// The statement policy: decides, by parsing only, whether user SQL may reach an agent (invariants I1, I8, docs/invariants.md) and
// which tables it references (for scoped grants, I10). Pure and deterministic; the parser is polyglot's
// WebAssembly port of sqlglot with its DuckDB dialect (see docs/statement-policy.md for the choice).
import { Dialect, init, parse, tokenize } from '@polyglot-sql/sdk';
import { analyzeStatement, dedupeTables } from './ast.ts';
import type { SchemaRef, TableRef } from './ast.ts';
import { isDeniedFunction, isStagingPath, isStagingReader, SESSION_COPY_OPTIONS, SESSION_SETTINGS } from './rules.ts';
import { hasNul, normalizeLineEnds, strayCharacter } from './text.ts';
import { AppError } from '../errors.ts';
import { duckdbReadTree, duckdbSyntaxError } from '../../runtime/sqlSyntax.ts';
import { judgeDuckRead } from './duck.ts';

export type { SchemaRef, TableRef } from './ast.ts';

export type StatementType =
  | 'select'
  | 'insert'
  | 'update'
  | 'delete'
  | 'merge'
  | 'copy'
  | 'create'
  | 'alter'
  | 'drop'
  | 'describe'
  | 'other';

export interface PolicyOptions {
  mode: 'query' | 'session';
  // SQL sessions: COPY may only read from or write under this prefix (e.g. s3://warehouse/_staging/<session_id>/).
  stagingPrefix?: string;
  // SQL sessions: catalog names that `ATTACH '<name>'` may name.
  managedCatalogs?: string[];
  // More statements than this are refused before parsing (the parse is what costs).
  maxStatements?: number;
}

interface PolicyStatement {
  type: StatementType;
  tables: TableRef[];
  // CREATE SCHEMA / DROP SCHEMA targets, checked against grants like the REST schema routes.
  schemas?: { create: SchemaRef[]; drop: SchemaRef[] };
  isWrite: boolean;
}

export type PolicyResult =
  | {
      ok: true;
      statementType: StatementType;
      statements: PolicyStatement[];
      tables: TableRef[];
      schemas: { create: SchemaRef[]; drop: SchemaRef[] };
      isWrite: boolean;
      materialize: boolean;
      /** SQL sessions: `USE <catalog>` made this attached catalog the session's current one. */
      use?: string;
    }
  | { ok: false; code: 'sql_not_allowed'; message: string; statementType: StatementType | null }
  // Text that does not parse as SQL at all is the author's mistake, not a policy verdict: its own code and the
  // position (1-based line and column, 0-based character offset) so an editor can mark it.
  | { ok: false; code: 'sql_syntax_error'; message: string; statementType: null; position: SqlPosition }
  // Too many statements, or not checked within its time budget: bounded work, not a verdict on the SQL.
  | { ok: false; code: 'sql_too_complex'; message: string; statementType: null };

interface SqlPosition {
  line: number;
  column: number;
  offset: number;
}



// The runtime token shape (the package's typings name the fields differently from what it returns).
interface Token {
  type: string;
  text: string;
  start: number;
  end: number;
}

interface Segment {
  tokens: Token[];
}

interface Verdict {
  type: StatementType;
  isWrite: boolean;
  tables: TableRef[];
  schemas?: { create: SchemaRef[]; drop: SchemaRef[] };
  violation: string | null;
}

const DIALECT = Dialect.DuckDB;
let ready: Promise<void> | null = null;

export async function checkStatementPolicy(sql: string, opts: PolicyOptions = { mode: 'query' }): Promise<PolicyResult> {
  return finishPolicy(sql, await decidePolicy(sql, opts));
}

/** The parse and the verdict, pure and synchronous after init: what a policy worker thread runs. */
export async function decidePolicy(sql: string, opts: PolicyOptions = { mode: 'query' }): Promise<Unparsed> {
  ready ??= init();
  await ready;
  try {
    return decide(sql, opts);
  } catch (error) {
    // A policy that cannot decide rejects.
    return reject(`The SQL could not be checked: ${error instanceof Error ? error.message : String(error)}`, null);
  }
}

/** Tells a syntax error from a policy rejection when the policy's parser failed (DuckDB's parser, asynchronous). */
export async function finishPolicy(sql: string, r: Unparsed): Promise<PolicyResult> {
  if (!r.ok && r.duckRead) {
    const read = await duckReads(r.duckRead);
    if (read !== null) return read;
  }
  return r.ok || !r.unparsed ? strip(r) : await syntaxOrRejection(sql, r);
}

// A statement of a submission the policy's parser could not read or misread: a read that passed the lexical guards
// and the token check for denied calls, for DuckDB's own parse to judge (`text` is the statement as the policy saw
// it). The other statements carry their verdict.
type DuckPart = { statements: PolicyStatement[] } | { text: string; type: 'select' | 'describe' };

// Each pending read judged on DuckDB's parse tree with the same rules (domain/statementPolicy/duck.ts), then the verdicts
// combined as `decide` combines them. null when DuckDB does not read one as exactly one SELECT, or the walk refuses
// it: the polyglot rejection then stands.
async function duckReads(parts: DuckPart[]): Promise<PolicyResult | null> {
  const statements: PolicyStatement[] = [];
  for (const part of parts) {
    if ('statements' in part) {
      statements.push(...part.statements);
      continue;
    }
    const tree = await duckdbReadTree(part.text);
    if (tree === null || tree.length !== 1) return null;
    const verdict = judgeDuckRead(tree, part.text, (name) => part.text.includes(`"${name.replace(/"/g, '""')}"`));
    if (!verdict.ok) return null;
    statements.push({ type: part.type, tables: verdict.tables, isWrite: false });
  }
  const only = statements.length === 1 ? statements[0] : null;
  return {
    ok: true,
    statementType: (statements.find((st) => st.isWrite) ?? statements[0]).type,
    statements,
    tables: dedupeTables(statements.flatMap((st) => st.tables)),
    schemas: {
      create: statements.flatMap((st) => st.schemas?.create ?? []),
      drop: statements.flatMap((st) => st.schemas?.drop ?? []),
    },
    isWrite: statements.some((st) => st.isWrite),
    materialize: only !== null && (only.type === 'select' || only.type === 'describe'),
  };
}

// The first words of a read DuckDB's serialization can judge (it serializes SELECTs; DESCRIBE and SUMMARIZE parse
// into one).
const READ_FIRST: Record<string, 'select' | 'describe'> = {
  SELECT: 'select', WITH: 'select', FROM: 'select', VALUES: 'select', TABLE: 'select', '(': 'select',
  DESCRIBE: 'describe', DESC: 'describe', SUMMARIZE: 'describe',
};
// Statements that must stand alone in a submission: never part of a combined verdict.
const ALONE = new Set(['USE', 'BEGIN', 'START', 'COMMIT', 'ROLLBACK', 'END', 'ABORT']);

function segmentText(sql: string, seg: Segment): string {
  return Array.from(sql).slice(seg.tokens[0].start, seg.tokens[seg.tokens.length - 1].end).join('');
}

// A rejection from the parse or the walk, with the statements DuckDB's parse may still allow. One statement: it, when
// it is a read. Several: each statement decided on its own (in this worker), every one allowed or a read for DuckDB.
function withDuckRead(r: Unparsed, segments: Segment[], sql: string, opts: PolicyOptions): Unparsed {
  if (segments.length === 1) {
    const type = READ_FIRST[segments[0].tokens[0].text.toUpperCase()];
    if (!type || deniedCall(segments[0], sql, opts) !== null) return r;
    return { ...r, duckRead: [{ text: segmentText(sql, segments[0]), type }] };
  }
  if (segments.some((seg) => ALONE.has(seg.tokens[0].text.toUpperCase()))) return r;
  const parts: DuckPart[] = [];
  for (const seg of segments) {
    const alone = decide(segmentText(sql, seg), opts);
    if (alone.ok) parts.push({ statements: alone.statements });
    else if (alone.duckRead?.length === 1 && 'text' in alone.duckRead[0]) parts.push(alone.duckRead[0]);
    else return r;
  }
  return parts.some((p) => 'text' in p) ? { ...r, duckRead: parts } : r;
}

function decide(original: string, opts: PolicyOptions): Unparsed {
  if (hasNul(original)) return reject('The SQL contains a NUL character.', null);
  const sql = normalizeLineEnds(original);
  const tokenized = tokenize(sql, DIALECT) as unknown as { success: boolean; tokens?: unknown[]; error?: string };
  if (!tokenized.success || !tokenized.tokens) {
    const m = /line (\d+), column (\d+)/.exec(tokenized.error ?? '');
    const position = m ? positionOfLineColumn(sql, Number(m[1]), Number(m[2])) : positionOf(sql, 0);
    return unparsed(reject(`The SQL could not be parsed: ${tokenized.error ?? 'tokenizer error'}`, null), position);
  }
  const tokens = tokenized.tokens.map(toToken);
  const stray = strayCharacter(sql, tokens);
  if (stray !== null) return reject(`The SQL could not be parsed: it contains ${stray}.`, null);
  const segments = splitStatements(tokens);
  if (segments.length === 0) return reject('The SQL contains no statement.', null);
  if (opts.maxStatements !== undefined && segments.length > opts.maxStatements) {
    return tooComplex(`The SQL holds ${segments.length} statements; at most ${opts.maxStatements} are accepted in one submission.`);
  }

  // USE is read from its tokens: polyglot misparses it (`USE warehouse` fails, `USE "a"."b"` joins the names).
  const use = segments.findIndex((seg) => seg.tokens[0].text.toUpperCase() === 'USE');
  if (use >= 0 && opts.mode === 'session') return useStatement(sql, segments, use, opts);
  if (use >= 0) return reject(`${where(sql, segments[use], use, null)} is not allowed: USE is only allowed in SQL sessions`, 'other');

  // CREATE / DROP SCHEMA are read from their tokens (schemaStatement); the parser reads a placeholder in their place.
  const schemaDdl = segments.map(schemaStatement);
  const parsed = parse(schemaDdl.some((d) => d !== null) ? withPlaceholders(sql, segments, schemaDdl) : sql, DIALECT);
  if (!parsed.success) {
    const at = parsed.errorStart ?? 0;
    const index = Math.max(0, segments.findLastIndex((s) => s.tokens[0].start <= at));
    const rejection = reject(`${where(sql, segments[index], index, null)} could not be parsed: ${parsed.error}`, null);
    return withDuckRead(unparsed(rejection, positionOf(sql, at)), segments, sql, opts);
  }
  const asts = parsed.ast as unknown[];
  // The tokenizer and the parser must agree on where statements end; if they do not, neither can be trusted.
  if (asts.length !== segments.length) {
    return reject(`The SQL could not be split into statements (${segments.length} by tokens, ${asts.length} parsed).`, null);
  }

  const verdicts: Verdict[] = [];
  for (let i = 0; i < asts.length; i++) {
    const ddl = schemaDdl[i];
    verdicts.push(ddl ? schemaVerdict(ddl) : judge(asts[i], segments[i], opts, sql));
  }
  const statementType = overallType(verdicts);
  // The agent follows a session's transaction state statement by statement (it refuses Iceberg writes inside one).
  const control = asts.findIndex((a) => TRANSACTION_CONTROL.has(topKind(a) ?? ''));
  if (control >= 0 && segments.length > 1 && verdicts.every((v) => v.violation === null)) {
    return reject(`${where(sql, segments[control], control, topKind(asts[control]))} is not allowed: BEGIN, COMMIT and ROLLBACK are sent as statements of their own`, statementType);
  }
  const bad = verdicts.findIndex((v) => v.violation !== null);
  if (bad >= 0) return withDuckRead(reject(`${where(sql, segments[bad], bad, topKind(asts[bad]))} is not allowed: ${verdicts[bad].violation}`, statementType), segments, sql, opts);

  const statements: PolicyStatement[] = verdicts.map(({ type, tables, schemas, isWrite }) => (schemas ? { type, tables, schemas, isWrite } : { type, tables, isWrite }));
  const only = statements.length === 1 ? statements[0] : null;
  return {
    ok: true,
    statementType,
    statements,
    tables: dedupeTables(statements.flatMap((s) => s.tables)),
    schemas: {
      create: statements.flatMap((s) => s.schemas?.create ?? []),
      drop: statements.flatMap((s) => s.schemas?.drop ?? []),
    },
    isWrite: statements.some((s) => s.isWrite),
    materialize: only !== null && (only.type === 'select' || only.type === 'describe'),
  };
}

/** The api's answer to a rejected statement: 400 sql_syntax_error with its position, or 403 sql_not_allowed. */
export function policyRejection(r: PolicyResult & { ok: false }): AppError {
  if (r.code === 'sql_syntax_error') return new AppError(400, 'sql_syntax_error', r.message, { position: r.position });
  if (r.code === 'sql_too_complex') return new AppError(422, 'unprocessable_content', r.message, { fields: [{ field: 'sql', in: 'body', message: r.message }] });
  return new AppError(403, 'sql_not_allowed', r.message);
}

export function tooComplex(message: string): PolicyResult {
  return { ok: false, code: 'sql_too_complex', message, statementType: null };
}

// A rejection because the policy's parser failed, with where it failed; DuckDB decides what it is.
// `duckRead`: the statements when DuckDB's own parse may still allow the submission (finishPolicy).
export type Unparsed = PolicyResult & { unparsed?: SqlPosition; duckRead?: DuckPart[] };

function unparsed(r: PolicyResult, position: SqlPosition): Unparsed {
  return { ...r, unparsed: position };
}

function strip(r: Unparsed): PolicyResult {
  if (!('unparsed' in r) && !('duckRead' in r)) return r;
  const { unparsed: _, duckRead: __, ...rest } = r;
  return rest;
}

// DuckDB refuses the text too: a syntax error with DuckDB's message and position. DuckDB accepts it: the policy's
// parser is the one that cannot read it, and a statement the policy cannot read is rejected.
async function syntaxOrRejection(sql: string, r: Unparsed & { ok: false }): Promise<PolicyResult> {
  const duck = await duckdbSyntaxError(sql);
  if (duck === null) return strip(r);
  const position = duck.line !== null && duck.column !== null ? positionOfLineColumn(sql, duck.line, duck.column) : (r.unparsed as SqlPosition);
  return {
    ok: false,
    code: 'sql_syntax_error',
    message: `Syntax error at line ${position.line}, column ${position.column}: ${duck.message}`,
    statementType: null,
    position,
  };
}

function positionOf(sql: string, offset: number): SqlPosition {
  const chars = Array.from(sql);
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset && i < chars.length; i++) {
    if (chars[i] === '\n') {
      line++;
      column = 1;
    } else {
      column++;
    }
  }
  return { line, column, offset };
}

function positionOfLineColumn(sql: string, line: number, column: number): SqlPosition {
  const lines = Array.from(sql).join('').split('\n');
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) offset += Array.from(lines[i]).length + 1;
  return { line, column, offset: offset + column - 1 };
}

function reject(message: string, statementType: StatementType | null): PolicyResult {
  return { ok: false, code: 'sql_not_allowed', message, statementType };
}

// A multi-statement input is typed by its first write, or else by its first statement.
function overallType(verdicts: Verdict[]): StatementType {
  return (verdicts.find((v) => v.isWrite) ?? verdicts[0]).type;
}

// Classifies one statement by its top node, applies the mode's rules, then the walk and token checks.
function judge(ast: unknown, segment: Segment, opts: PolicyOptions, sql: string): Verdict {
  const kind = topKind(ast);
  const node = kind !== null && isObj(ast) && isObj(ast[kind]) ? ast[kind] : {};
  const first = segment.tokens[0].text.toUpperCase();
  const prefix = opts.mode === 'session' ? opts.stagingPrefix : undefined;
  const stagedRead = prefix ? (call: Record<string, unknown>) => stagedReadViolation(call, prefix) : undefined;
  const verdict = (type: StatementType, isWrite: boolean, violation: string | null = null): Verdict => {
    if (violation !== null) return { type, isWrite, tables: [], violation };
    const facts = analyzeStatement(ast, { ...(stagedRead ? { stagedRead } : {}), session: opts.mode === 'session' });
    // A write must name what it writes: an empty target list would mean "nothing to check" downstream (I10).
    const blind = isWrite && facts.tables.length === 0 && facts.schemas.length === 0 ? 'the statement\'s write target could not be determined' : null;
    const schemas = kind === 'create_schema' ? { create: facts.schemas, drop: [] } : kind === 'drop_schema' ? { create: [], drop: facts.schemas } : undefined;
    return { type, isWrite, tables: facts.tables, ...(schemas ? { schemas } : {}), violation: deniedCall(segment, sql, opts) ?? facts.violation ?? blind };
  };

  switch (kind) {
    case 'select':
    case 'union':
    case 'intersect':
    case 'except':
    case 'values':
    case 'pivot':
      return verdict('select', false);
    case 'describe':
      // polyglot parses EXPLAIN into the same node as DESCRIBE, the explained statement as its target.
      if (first === 'EXPLAIN') return verdict('describe', false, explainViolation(node, segment));
      return verdict('describe', false, first === 'DESCRIBE' || first === 'DESC' ? null : `${first} is not allowed`);
    case 'summarize':
      return verdict('describe', false);
    case 'show':
      return verdict('describe', false, showViolation(node));
    case 'insert':
      return verdict('insert', true);
    case 'update':
      return verdict('update', true);
    case 'delete':
    case 'truncate':
      return verdict('delete', true);
    case 'merge':
      return verdict('merge', true);
    case 'create_table':
    case 'create_view':
    case 'create_schema':
      return verdict('create', true);
    case 'alter_table':
    case 'alter_view':
      return verdict('alter', true);
    case 'drop_table':
    case 'drop_view':
    case 'drop_schema':
      return verdict('drop', true);
    case 'copy':
      return verdict('copy', node.kind === true, copyViolation(node, opts));
    case 'attach':
      return verdict('other', false, attachViolation(node, opts));
    case 'set_statement':
      return verdict('other', false, setViolation(node, opts));
    case 'command':
      if (first === 'RESET') return verdict('other', false, resetViolation(node, opts));
      break;
    case 'transaction':
    case 'commit':
    case 'rollback':
      if (opts.mode === 'session') return verdict('other', false, transactionViolation(kind, node, first));
  }
  return verdict(typeOfRejected(kind, first), false, `${kindName(segment, kind)} statements are not allowed`);
}

// polyglot's DuckDB dialect cannot parse `DROP SCHEMA catalog.schema`, nor `CREATE SCHEMA warehouse.x` (WAREHOUSE
// is a keyword of its own). Both statements are small enough to read from their tokens, exactly:
//   CREATE SCHEMA [IF NOT EXISTS] [catalog.]schema
//   DROP SCHEMA [IF EXISTS] [catalog.]schema [CASCADE | RESTRICT]
// Anything else (another clause, a third name part) is left to the parser, as before.
interface SchemaDdl {
  kind: 'create' | 'drop';
  ref: SchemaRef;
}

function schemaStatement(segment: Segment): SchemaDdl | null {
  const t = segment.tokens;
  const word = (i: number, w: string) => t[i]?.type !== 'QUOTED_IDENTIFIER' && t[i]?.text.toUpperCase() === w;
  const kind = word(0, 'CREATE') ? 'create' : word(0, 'DROP') ? 'drop' : null;
  if (kind === null || !word(1, 'SCHEMA')) return null;
  let i = 2;
  if (kind === 'create' && word(i, 'IF') && word(i + 1, 'NOT') && word(i + 2, 'EXISTS')) i += 3;
  if (kind === 'drop' && word(i, 'IF') && word(i + 1, 'EXISTS')) i += 2;
  const parts: string[] = [];
  for (;;) {
    const name = nameToken(t[i]);
    if (name === null) return null;
    parts.push(name);
    i++;
    if (t[i]?.type !== 'DOT') break;
    i++;
  }
  if (parts.length > 2) return null;
  if (kind === 'drop' && (word(i, 'CASCADE') || word(i, 'RESTRICT'))) i++;
  if (i !== t.length) return null;
  const ref = parts.length === 2 ? { catalog: parts[0], name: parts[1] } : { catalog: null, name: parts[0] };
  return { kind, ref };
}

// A name part: an identifier, quoted (kept as written) or not (folded to lower case, as DuckDB resolves it), or a
// word the tokenizer took for one of its keywords.
function nameToken(t: Token | undefined): string | null {
  if (!t) return null;
  if (t.type === 'QUOTED_IDENTIFIER') return t.text;
  if (t.type === 'VAR' || (isWord(t) && t.type === t.text.toUpperCase())) return t.text.toLowerCase();
  return null;
}

function schemaVerdict(d: SchemaDdl): Verdict {
  const schemas = d.kind === 'create' ? { create: [d.ref], drop: [] } : { create: [], drop: [d.ref] };
  return { type: d.kind, isWrite: true, tables: [], schemas, violation: null };
}

// The text the parser reads: each schema statement replaced by a read of the same length, so every other
// statement keeps its place (and an error its position).
function withPlaceholders(sql: string, segments: Segment[], ddl: ReadonlyArray<SchemaDdl | null>): string {
  const chars = Array.from(sql);
  segments.forEach((seg, i) => {
    if (!ddl[i]) return;
    const start = seg.tokens[0].start;
    const end = seg.tokens[seg.tokens.length - 1].end;
    const text = Array.from('SELECT 1'.padEnd(end - start, ' '));
    chars.splice(start, end - start, ...text);
  });
  return chars.join('');
}

function topKind(ast: unknown): string | null {
  if (!isObj(ast)) return null;
  const keys = Object.keys(ast);
  return keys.length === 1 ? keys[0] : null;
}

function typeOfRejected(kind: string | null, first: string): StatementType {
  const k = kind ?? '';
  if (k.startsWith('create_') || first === 'CREATE') return 'create';
  if (k.startsWith('drop_') || first === 'DROP') return 'drop';
  if (k.startsWith('alter_') || first === 'ALTER') return 'alter';
  if (k === 'copy' || first === 'COPY') return 'copy';
  return 'other';
}

// The statements a plan may be shown for: the reads (the same top nodes `judge` types as select). EXPLAIN ANALYZE runs
// its statement, which for a read is what the read itself would do; of anything else it is refused, as is EXPLAIN of
// a write (DuckDB plans, and with ANALYZE runs, the write). The explained read is then walked like any read: its
// tables are reported for scoped grants and its calls are checked.
const EXPLAINABLE = new Set(['select', 'union', 'intersect', 'except', 'values']);

function explainViolation(node: Record<string, unknown>, segment: Segment): string | null {
  const target = topKind(node.target);
  const second = segment.tokens[1]?.text.toUpperCase() ?? '';
  const what = second === 'ANALYZE' || second === 'ANALYSE' ? `EXPLAIN ${second}` : 'EXPLAIN';
  if (target === null || !EXPLAINABLE.has(target)) return `${what} is only allowed of a read (SELECT, VALUES, set operations)`;
  return null;
}

const SHOW_ALLOWED = new Set(['TABLES', 'ALL TABLES', 'DATABASES']);

function showViolation(node: Record<string, unknown>): string | null {
  const what = typeof node.this === 'string' ? node.this.toUpperCase() : '';
  return SHOW_ALLOWED.has(what) ? null : `SHOW ${what} is not allowed (use DESCRIBE for a table)`;
}

// SQL sessions: COPY between a table or query and one file under the session's staging prefix.
function copyViolation(node: Record<string, unknown>, opts: PolicyOptions): string | null {
  if (opts.mode !== 'session') return 'COPY is only allowed in SQL sessions, within the session staging prefix';
  if (!opts.stagingPrefix) return 'this session has no staging prefix for COPY';
  const files = node.files;
  const file = Array.isArray(files) && files.length === 1 ? stringLiteral(files[0]) : null;
  if (file === null) return 'COPY must name exactly one file as a plain string';
  if (!isStagingPath(file, opts.stagingPrefix, { glob: true })) return `COPY may only use paths under ${opts.stagingPrefix}`;
  const source = isObj(node.this) ? node.this : {};
  const withColumns = isObj(source.schema) ? source.schema.this : source; // COPY t (a, b) FROM …
  const table = isObj(withColumns) && isObj(withColumns.table);
  if (node.kind === true && !table) return 'COPY … FROM must load into a table';
  if (node.kind !== true && !table && !isObj(source.subquery)) return 'COPY … TO must read a table or a query';
  const params = Array.isArray(node.params) ? node.params : [];
  for (const p of params) {
    const name = isObj(p) && typeof p.name === 'string' ? p.name.toLowerCase() : '';
    if (!SESSION_COPY_OPTIONS.has(name)) return `COPY option ${name.toUpperCase() || '?'} is not allowed`;
    if (isObj(p) && p.value != null && !isPlainValue(p.value)) return `COPY option ${name.toUpperCase()} must be a plain value`;
  }
  return null;
}

// SQL sessions: `read_parquet('<staging file>' | ['<staging file>', …] [, option = constant …])` and the other
// staging readers. Every path is a plain string under the session's staging prefix (no glob, no `..`), options are
// constants: nothing the reader is handed can name another file or run anything.
function stagedReadViolation(call: Record<string, unknown>, prefix: string): string | null {
  const name = typeof call.name === 'string' ? call.name.toLowerCase() : '?';
  const [first, ...options] = Array.isArray(call.args) ? (call.args as unknown[]) : [];
  const list = isObj(first) && isObj(first.array_func) && Array.isArray(first.array_func.expressions) ? first.array_func.expressions : null;
  const paths = list ? list.map(stringLiteral) : [stringLiteral(first)];
  const ok = call.distinct !== true && paths.length > 0 && paths.every((p) => p !== null && isStagingPath(p, prefix, { glob: false }));
  if (!ok) return `${name}() may only read files under ${prefix}, each named by a plain string (or a list of them), without globs`;
  for (const o of options) {
    const eq = isObj(o) && isObj(o.eq) ? o.eq : null;
    const named = isObj(o) && isObj(o.named_argument) ? o.named_argument : null;
    const key = eq ? identName(eq.left) : named ? identName({ identifier: named.name }) : null;
    const value = eq ? eq.right : named?.value;
    if (key === null || !isConstant(value)) return `${name}() options must be name = constant value`;
  }
  return null;
}

const TRANSACTION_CONTROL = new Set(['transaction', 'commit', 'rollback']);

// SQL sessions: BEGIN [TRANSACTION], START TRANSACTION, COMMIT [TRANSACTION], ROLLBACK [TRANSACTION]; no savepoints
// or modes (DuckDB has neither).
function transactionViolation(kind: string, node: Record<string, unknown>, first: string): string | null {
  if (kind === 'transaction' && (node.modes != null || node.this != null || !['BEGIN', 'START'].includes(first))) return 'only BEGIN [TRANSACTION] and START TRANSACTION are allowed';
  if (kind === 'rollback' && node.savepoint != null) return 'savepoints are not supported';
  if (kind === 'commit' && (node.chain != null || node.durability != null)) return 'only COMMIT [TRANSACTION] is allowed';
  return null;
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// SQL sessions: `USE <catalog>`, alone, naming a catalog attached to the workspace. The api then resolves the session's
// unqualified names in that catalog (grants included) and the agent makes it current before each statement. A schema
// (`USE c.s`) is refused: the grant check resolves unqualified names in a catalog's `main` schema.
function useStatement(sql: string, segments: Segment[], index: number, opts: PolicyOptions): Unparsed {
  const at = where(sql, segments[index], index, null);
  if (segments.length > 1) return reject(`${at} is not allowed: USE is sent as a statement of its own`, 'other');
  const rest = segments[0].tokens.slice(1);
  const name = rest.length === 1 ? (rest[0].type === 'QUOTED_IDENTIFIER' ? rest[0].text : PLAIN_NAME.test(rest[0].text) ? rest[0].text.toLowerCase() : null) : null;
  const managed = name === null ? undefined : (opts.managedCatalogs ?? []).find((c) => c === name || (rest[0].type !== 'QUOTED_IDENTIFIER' && c.toLowerCase() === name));
  if (managed === undefined) {
    const what = rest.some((t) => t.type === 'DOT') ? 'a schema cannot be made current (qualify tables with their schema)' : 'USE may only name a catalog attached to the workspace';
    return reject(`${at} is not allowed: ${what}`, 'other');
  }
  return {
    ok: true,
    statementType: 'other',
    statements: [{ type: 'other', tables: [], isWrite: false }],
    tables: [],
    schemas: { create: [], drop: [] },
    isWrite: false,
    materialize: false,
    use: managed,
  };
}

// SQL sessions: `ATTACH '<managed catalog>' [AS <same name>] [(TYPE iceberg, READ_ONLY)]` and nothing else.
function attachViolation(node: Record<string, unknown>, opts: PolicyOptions): string | null {
  if (opts.mode !== 'session') return 'ATTACH is only allowed in SQL sessions, for a managed catalog';
  const target = isObj(node.this) ? node.this : {};
  const aliased = isObj(target.alias) ? target.alias : null;
  const name = stringLiteral(aliased ? aliased.this : target);
  if (name === null || !(opts.managedCatalogs ?? []).includes(name)) return 'ATTACH may only name a managed catalog, as a plain string';
  const alias = aliased && isObj(aliased.alias) && typeof aliased.alias.name === 'string' ? aliased.alias.name : null;
  if (alias !== null && alias.toLowerCase() !== name.toLowerCase()) return `ATTACH '${name}' may only use the alias ${name}`;
  const options = Array.isArray(node.expressions) ? node.expressions : [];
  for (const o of options) {
    const opt = isObj(o) && isObj(o.attach_option) ? o.attach_option : null;
    const key = opt ? identName(opt.this)?.toUpperCase() : undefined;
    const value = opt?.expression == null ? null : (identName(opt.expression) ?? stringLiteral(opt.expression));
    const ok = (key === 'TYPE' && value?.toLowerCase() === 'iceberg') || (key === 'READ_ONLY' && opt?.expression == null);
    if (!ok) return `ATTACH option ${key ?? '?'} is not allowed`;
  }
  return null;
}

// SQL sessions: SET of a listed setting, at session or local scope, to a literal; and SET VARIABLE of any name to a
// literal (a variable is the session's own value, read back with getvariable(); it changes no setting).
function setViolation(node: Record<string, unknown>, opts: PolicyOptions): string | null {
  if (opts.mode !== 'session') return 'SET is only allowed in SQL sessions';
  const items = Array.isArray(node.items) ? node.items : [];
  if (items.length === 0) return 'this SET form is not allowed';
  for (const item of items) {
    if (!isObj(item)) return 'this SET form is not allowed';
    const name = isObj(item.name) ? identName(item.name.identifier) : null;
    if (item.kind === 'VARIABLE') {
      if (name === null) return 'this SET VARIABLE form is not allowed';
      if (!isPlainValue(item.value)) return `SET VARIABLE ${name} must be set to a literal`;
      continue;
    }
    if (name === null || !SESSION_SETTINGS.has(name.toLowerCase())) return `SET ${name ?? '?'} is not allowed`;
    if (item.kind != null && item.kind !== 'SESSION' && item.kind !== 'LOCAL') return `SET ${String(item.kind)} is not allowed`;
    if (!isPlainValue(item.value)) return `SET ${name} must be set to a literal`;
  }
  return null;
}

function resetViolation(node: Record<string, unknown>, opts: PolicyOptions): string | null {
  if (opts.mode !== 'session') return 'RESET is only allowed in SQL sessions';
  if (typeof node.this === 'string' && /^RESET\s+VARIABLE\s+[A-Za-z_][A-Za-z0-9_]*\s*$/i.test(node.this)) return null;
  const m = typeof node.this === 'string' ? /^RESET\s+(?:(?:SESSION|LOCAL)\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*$/i.exec(node.this) : null;
  if (!m || !SESSION_SETTINGS.has(m[1].toLowerCase())) return 'RESET of this setting is not allowed';
  return null;
}

// Token-level check for calls of denied functions: it holds however the parser represents the call (plain,
// quoted, schema-qualified, method syntax, inside a column default). Names directly after TABLE, INTO, VIEW,
// EXISTS, AS, COPY or WITH are table or CTE names with a column list, not calls. In a session, a staging reader
// passes when its path argument is, token by token, what the AST check allows (`stagedReadTokens`).
const NOT_A_CALL_AFTER = new Set(['TABLE', 'INTO', 'VIEW', 'EXISTS', 'AS', 'COPY', 'WITH']);

function deniedCall(segment: Segment, sql: string, opts: PolicyOptions): string | null {
  const t = segment.tokens;
  const prefix = opts.mode === 'session' ? opts.stagingPrefix : undefined;
  for (let i = 0; i + 1 < t.length; i++) {
    if (t[i + 1].type !== 'L_PAREN' || !isWord(t[i]) || !isDeniedFunction(t[i].text, opts.mode === 'session')) continue;
    let j = i - 1;
    while (j >= 1 && t[j].type === 'DOT' && isWord(t[j - 1])) j -= 2;
    if (j >= 0 && t[j].type !== 'QUOTED_IDENTIFIER' && NOT_A_CALL_AFTER.has(t[j].text.toUpperCase())) continue;
    const name = t[i].text.toLowerCase();
    if (prefix && j === i - 1 && isStagingReader(name)) {
      if (stagedReadTokens(t, i + 2, sql, prefix)) continue;
      return `${name}() may only read files under ${prefix}, each named by a plain string (or a list of them), without globs`;
    }
    return `function ${name}() is not allowed`;
  }
  return null;
}

// From `at` (just after the reader's parenthesis): one staging string, or a bracketed list of them, then `,` or `)`.
// Each string must be a plain single-quoted literal in the text itself, so DuckDB reads the same characters.
function stagedReadTokens(t: Token[], at: number, sql: string, prefix: string): boolean {
  const chars = Array.from(sql);
  const staged = (k: number) => {
    const tok = t[k];
    if (tok?.type !== 'STRING') return false;
    const raw = chars.slice(tok.start, tok.end).join('');
    return raw === `'${tok.text.replaceAll("'", "''")}'` && isStagingPath(tok.text, prefix, { glob: false });
  };
  let k = at;
  if (t[k]?.type === 'L_BRACKET') {
    for (k++; ; k += 2) {
      if (!staged(k)) return false;
      if (t[k + 1]?.type === 'R_BRACKET') break;
      if (t[k + 1]?.type !== 'COMMA') return false;
    }
    k += 2;
  } else {
    if (!staged(k)) return false;
    k++;
  }
  return t[k]?.type === 'COMMA' || t[k]?.type === 'R_PAREN';
}

function isWord(t: Token): boolean {
  return t.type === 'QUOTED_IDENTIFIER' || (t.type !== 'STRING' && /^[A-Za-z_][A-Za-z0-9_$]*$/.test(t.text));
}

function splitStatements(tokens: Token[]): Segment[] {
  const segments: Segment[] = [];
  let current: Token[] = [];
  for (const t of tokens) {
    if (t.type === 'SEMICOLON') {
      if (current.length > 0) segments.push({ tokens: current });
      current = [];
    } else {
      current.push(t);
    }
  }
  if (current.length > 0) segments.push({ tokens: current });
  return segments;
}

function toToken(raw: unknown): Token {
  const r = isObj(raw) ? raw : {};
  const span = isObj(r.span) ? r.span : {};
  return {
    type: String(r.token_type ?? r.tokenType ?? ''),
    text: String(r.text ?? ''),
    start: Number(span.start ?? 0),
    end: Number(span.end ?? 0),
  };
}

// "Statement 2 (DROP TABLE) at line 3, column 1" — positions count Unicode characters, as the tokenizer does.
function where(sql: string, segment: Segment, index: number, astKind: string | null): string {
  const chars = Array.from(sql);
  const start = segment.tokens[0].start;
  let line = 1;
  let column = 1;
  for (let i = 0; i < start && i < chars.length; i++) {
    if (chars[i] === '\n') {
      line++;
      column = 1;
    } else {
      column++;
    }
  }
  return `Statement ${index + 1} (${kindName(segment, astKind)}) at line ${line}, column ${column}`;
}

const KIND_MODIFIERS = new Set(['OR', 'REPLACE', 'TEMP', 'TEMPORARY', 'PERSISTENT', 'UNIQUE', 'IF', 'NOT', 'EXISTS']);

// The statement's leading keywords (`CREATE SECRET`, `LOAD`); for `WITH …` and `(…)`, the parsed kind.
function kindName(segment: Segment, astKind: string | null): string {
  const words = segment.tokens.filter(isWord).map((t) => t.text.toUpperCase());
  const first = words[0] ?? segment.tokens[0].text.toUpperCase();
  if ((first === 'WITH' || segment.tokens[0].type === 'L_PAREN') && astKind !== null) {
    return astKind.replaceAll('_', ' ').toUpperCase();
  }
  if (!['CREATE', 'DROP', 'ALTER', 'FORCE', 'EXPORT', 'IMPORT', 'UPDATE'].includes(first)) return first;
  const next = words.slice(1).find((w) => !KIND_MODIFIERS.has(w));
  return first === 'UPDATE' && next !== 'EXTENSIONS' ? first : next ? `${first} ${next}` : first;
}

function stringLiteral(v: unknown): string | null {
  if (!isObj(v) || !isObj(v.literal)) return null;
  const lit = v.literal;
  return lit.literal_type === 'string' && typeof lit.value === 'string' ? lit.value : null;
}

function identName(v: unknown): string | null {
  if (!isObj(v)) return null;
  if (isObj(v.identifier) && typeof v.identifier.name === 'string') return v.identifier.name;
  if (isObj(v.column) && v.column.table == null && isObj(v.column.name) && typeof v.column.name.name === 'string') {
    return v.column.name.name;
  }
  if (isObj(v.var) && typeof v.var.this === 'string') return v.var.this;
  return typeof v.name === 'string' ? v.name : null;
}

// Literals, bare names and lists of them: nothing that can call a function or read a table.
function isPlainValue(v: unknown): boolean {
  if (!isObj(v)) return false;
  const keys = Object.keys(v);
  if (keys.length !== 1) return false;
  const [k] = keys;
  const inner = v[k];
  if (k === 'literal' || k === 'boolean' || k === 'null') return true;
  if (k === 'identifier' || k === 'var' || k === 'column') return identName(v) !== null;
  if (k === 'neg') return isObj(inner) && isPlainValue(inner.this);
  if (k === 'tuple' || k === 'array_func') return isObj(inner) && Array.isArray(inner.expressions) && inner.expressions.every(isPlainValue);
  return false;
}

// A plain value, or a `{key: value}` struct or map of them (read_csv's columns, types).
function isConstant(v: unknown): boolean {
  if (isPlainValue(v)) return true;
  const map = isObj(v) && isObj(v.map_func) ? v.map_func : null;
  return map !== null && Array.isArray(map.keys) && Array.isArray(map.values) && [...map.keys, ...map.values].every(isConstant);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
