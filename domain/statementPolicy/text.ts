// Lexical guards of the statement policy: they keep the text the parser reads identical, statement by statement
// and name by name, to the text DuckDB will read on the agent. Each guard answers a difference between
// polyglot's tokenizer and DuckDB's that was found by testing both (see tests/statementPolicy.test.ts).
import { runAt } from '../../sqltext/scan.ts';

export interface TokenSpan {
  type: string;
  start: number; // Unicode code point offsets, as polyglot reports them
  end: number;
}

// DuckDB's C API stops reading at a NUL, so text after one is not what the agent would run.
export function hasNul(sql: string): boolean {
  return sql.includes('\u0000');
}

// DuckDB ends a -- comment at a bare carriage return, polyglot only at a line feed: without this,
// "SELECT 1 --x\r; ATTACH …" is one SELECT to the parser and two statements to DuckDB. Same length, so positions
// in messages still match the original text.
export function normalizeLineEnds(sql: string): string {
  return sql.replaceAll('\r', '\n');
}

// Everything between tokens must be ASCII whitespace or a comment. polyglot skips some characters that DuckDB
// reads as part of a name: with a no-break space, `FROM t\u00a0` is table "t" to polyglot and "t\u00a0" to
// DuckDB. Returns a description of the first stray character, or null.
export function strayCharacter(sql: string, tokens: TokenSpan[]): string | null {
  const chars = Array.from(sql);
  let from = 0;
  for (const t of [...tokens, { type: 'END', start: chars.length, end: chars.length }]) {
    // polyglot also quotes identifiers with backticks; DuckDB reads a backtick as an operator, so
    // "SELECT `1 FROM t --`" reads table t in DuckDB and names no table for polyglot.
    if (t.type === 'QUOTED_IDENTIFIER' && chars[t.start] !== '"') return `a ${chars[t.start]}-quoted identifier`;
    const stray = strayInGap(chars, from, t.start);
    if (stray !== null) return stray;
    from = Math.max(from, t.end);
  }
  return null;
}

function strayInGap(chars: string[], from: number, to: number): string | null {
  const gap = chars.slice(from, to).join('');
  let i = 0;
  while (i < gap.length) {
    const c = gap[i];
    const run = runAt(gap, i);
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
    } else if (run?.kind === 'line-comment' || run?.kind === 'block-comment') {
      // Block comments nest in DuckDB (the scanner counts them).
      if (!run.closed) return 'an unterminated comment';
      i = run.end;
    } else {
      const code = gap.codePointAt(i) ?? 0;
      return `the character U+${code.toString(16).toUpperCase().padStart(4, '0')} outside quotes and comments`;
    }
  }
  return null;
}
