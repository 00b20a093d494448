// The one reading of SQL text's quoted runs and comments, as DuckDB's scanner (PostgreSQL's, which it carries) reads
// them: what is code and what is inside a string, a quoted identifier, a dollar-quoted string or a comment. The agent,
// the wire endpoint and the statement policy split and inspect user SQL with it, so they agree with the engine on where
// a statement ends. Indexes are UTF-16 offsets, as JavaScript strings have them.

type RunKind = 'string' | 'quoted' | 'dollar' | 'line-comment' | 'block-comment';

export interface Run {
  kind: RunKind;
  /** The index just past the run (the text's length when it is not closed). */
  end: number;
  closed: boolean;
}

// A name's characters (DuckDB's ident_cont: any non-ASCII byte counts as a letter). A dollar quote or an E'' string
// cannot start right after one: `a$$b` is one name, `typE'x'` a name and a plain string.
const NAME_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;
// `$tag$`: the tag starts with a letter or underscore and goes on with digits too; `$1` is a parameter, not a tag.
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

/** The string, quoted identifier, dollar-quoted string or comment that starts at `i`, or null when code starts there. */
export function runAt(sql: string, i: number): Run | null {
  const c = sql[i];
  const next = sql[i + 1];
  if (c === "'" || c === '"') return quoted(sql, i, c === "'" ? 'string' : 'quoted', false);
  if ((c === 'E' || c === 'e') && next === "'" && !NAME_CHAR.test(sql[i - 1] ?? '')) return quoted(sql, i + 1, 'string', true);
  if (c === '-' && next === '-') {
    // Ends at a line feed or a bare carriage return, which is not part of it.
    let j = i + 2;
    while (j < sql.length && sql[j] !== '\n' && sql[j] !== '\r') j++;
    return { kind: 'line-comment', end: j, closed: true };
  }
  if (c === '/' && next === '*') {
    // Block comments nest.
    let depth = 0;
    let j = i;
    do {
      if (sql[j] === '/' && sql[j + 1] === '*') {
        depth++;
        j += 2;
      } else if (sql[j] === '*' && sql[j + 1] === '/') {
        depth--;
        j += 2;
      } else j++;
    } while (depth > 0 && j < sql.length);
    return depth > 0 ? { kind: 'block-comment', end: sql.length, closed: false } : { kind: 'block-comment', end: j, closed: true };
  }
  if (c === '$' && !NAME_CHAR.test(sql[i - 1] ?? '')) {
    DOLLAR_TAG.lastIndex = i;
    const tag = DOLLAR_TAG.exec(sql)?.[0];
    if (tag === undefined) return null;
    const close = sql.indexOf(tag, i + tag.length);
    return close < 0 ? { kind: 'dollar', end: sql.length, closed: false } : { kind: 'dollar', end: close + tag.length, closed: true };
  }
  return null;
}

/** A quoted run from the quote at `q` (a doubled quote stands for itself; in an E'' string a backslash escapes). */
function quoted(sql: string, q: number, kind: 'string' | 'quoted', escapes: boolean): Run {
  const quote = sql[q];
  let j = q + 1;
  while (j < sql.length) {
    if (escapes && sql[j] === '\\') j += 2;
    else if (sql[j] !== quote) j++;
    else if (sql[j + 1] === quote) j += 2;
    else return { kind, end: j + 1, closed: true };
  }
  return { kind, end: sql.length, closed: false };
}

/** Calls `onCode` with the index of every character that is code, in order; it may return true to stop. */
export function forEachCode(sql: string, onCode: (i: number) => boolean | void): void {
  let i = 0;
  while (i < sql.length) {
    const run = runAt(sql, i);
    if (run) i = run.end;
    else if (onCode(i) === true) return;
    else i++;
  }
}

/** The text with each string, quoted name, dollar quote and comment replaced by what `replace` makes of it. */
function mapRuns(sql: string, replace: (run: Run, text: string) => string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const run = runAt(sql, i);
    if (!run) {
      out += sql[i++];
      continue;
    }
    out += replace(run, sql.slice(i, run.end));
    i = run.end;
  }
  return out;
}

/**
 * The text with everything but code blanked out, same length so positions still match: comments, quoted identifiers
 * and dollar-quoted strings become spaces; a quoted string keeps its quotes, so a literal is still seen where it was.
 */
export function codeOnly(sql: string): string {
  return mapRuns(sql, (run, text) => (run.kind === 'string' ? `'${' '.repeat(Math.max(0, text.length - 2))}'`.slice(0, text.length) : ' '.repeat(text.length)));
}

/** The text with each comment replaced by one space; strings and quoted names kept as written (`"a--b"` stays). */
export function withoutComments(sql: string): string {
  return mapRuns(sql, (run, text) => (run.kind === 'line-comment' || run.kind === 'block-comment' ? ' ' : text));
}

/** True when the text holds nothing but whitespace and comments. */
export function isBlank(sql: string): boolean {
  return codeOnly(sql).trim() === '';
}

/** A script's statements as written (split at each `;` that is code), leaving out those with nothing but comments. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  forEachCode(sql, (i) => {
    if (sql[i] === ';') {
      out.push(sql.slice(start, i));
      start = i + 1;
    }
  });
  out.push(sql.slice(start));
  return out.filter((s) => !isBlank(s));
}

/** The statement's first word, upper-cased, after whitespace, comments and opening parentheses ('' when none). */
export function leadingKeyword(sql: string): string {
  let i = 0;
  for (;;) {
    const run = runAt(sql, i);
    if (run && (run.kind === 'line-comment' || run.kind === 'block-comment')) i = run.end;
    else if (/[\s(]/.test(sql[i] ?? '')) i++;
    else break;
  }
  return (/[A-Za-z]+/y.exec(sql.slice(i))?.[0] ?? '').toUpperCase();
}
