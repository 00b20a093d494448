// Finds the statement a Ctrl/Cmd+Enter should run: the one under the cursor. Splits on semicolons that are code,
// not the ones inside strings, quoted identifiers, dollar-quoted bodies or comments.

export interface StatementRange {
  from: number;
  to: number;
  text: string;
}

/** Every statement of `sql` with its offsets (trimmed; blank and comment-only pieces are dropped). */
export function splitStatements(sql: string): StatementRange[] {
  const out: StatementRange[] = [];
  let start = 0;
  let i = 0;
  const n = sql.length;
  const push = (end: number) => {
    const range = trimRange(sql, start, end);
    if (range) out.push(range);
  };
  while (i < n) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      const nl = sql.indexOf('\n', i + 2);
      i = nl === -1 ? n : nl + 1;
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === "'" || c === '"') {
      i = skipQuoted(sql, i, c);
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i));
      if (tag && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? '')) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        i = end === -1 ? n : end + tag[0].length;
      } else i++;
    } else if (c === ';') {
      push(i);
      start = i + 1;
      i++;
    } else i++;
  }
  push(n);
  return out;
}

/** Skips a quoted run starting at `i`; a doubled quote is an escaped quote. Returns the index after it. */
function skipQuoted(sql: string, i: number, q: string): number {
  let j = i + 1;
  while (j < sql.length) {
    if (sql[j] === q) {
      if (sql[j + 1] === q) j += 2;
      else return j + 1;
    } else j++;
  }
  return sql.length;
}

/** Trims whitespace and leading/trailing comments; null when nothing but those is left. */
function trimRange(sql: string, from: number, to: number): StatementRange | null {
  let a = from;
  let b = to;
  for (;;) {
    while (a < b && /\s/.test(sql[a])) a++;
    if (sql.startsWith('--', a)) {
      const nl = sql.indexOf('\n', a);
      a = nl === -1 || nl > b ? b : nl + 1;
    } else if (sql.startsWith('/*', a)) {
      const end = sql.indexOf('*/', a + 2);
      a = end === -1 || end + 2 > b ? b : end + 2;
    } else break;
  }
  while (b > a && /\s/.test(sql[b - 1])) b--;
  if (a >= b) return null;
  return { from: a, to: b, text: sql.slice(a, b) };
}

/**
 * The statement to run for a cursor at `pos`: the statement whose span (from its start to its closing semicolon)
 * holds the cursor; when the cursor sits in blank space between statements, the nearest one before it (the one
 * just typed), else the next one.
 */
export function statementAt(sql: string, pos: number): StatementRange | null {
  const all = splitStatements(sql);
  if (!all.length) return null;
  let before: StatementRange | null = null;
  for (const s of all) {
    // `s.to` is the end of the text; a cursor right after the closing semicolon still belongs to it.
    const closing = sql[s.to] === ';' ? s.to + 1 : s.to;
    if (pos >= s.from && pos <= closing) return s;
    if (closing <= pos) before = s;
  }
  if (before) {
    // Only blank space (or comments) between the statement and the cursor: that statement was just written.
    return before;
  }
  return all[0];
}
