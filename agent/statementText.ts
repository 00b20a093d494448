// Text helpers for wrapping one user statement in the agent's own SQL (the COPY that materializes a result).
import { runAt } from '../sqltext/scan.ts';

/**
 * The statement without trailing semicolons and comments, so it can be embedded as `(<body>\n)`. Scans quotes and
 * comments so a `;` or `--` inside a string literal or quoted identifier is left alone.
 */
export function statementBody(sql: string): string {
  let lastCode = -1; // index of the last character that is code (not whitespace, comment or a trailing ';')
  let i = 0;
  while (i < sql.length) {
    const run = runAt(sql, i);
    if (run) {
      if (run.kind !== 'line-comment' && run.kind !== 'block-comment') lastCode = run.end - 1;
      i = run.end;
    } else {
      if (!/\s/.test(sql[i]) && sql[i] !== ';') lastCode = i;
      i++;
    }
  }
  return sql.slice(0, lastCode + 1);
}

/**
 * Duplicate names made unique the way result rows key them: a, a_1, a_2 (skipping names already taken). DuckDB
 * identifiers are case-insensitive, so `a` and `A` clash too (the second becomes `A_1`).
 */
export function uniqueColumnNames(names: readonly string[]): string[] {
  const taken = new Set<string>();
  const out: string[] = [];
  for (const name of names) {
    let candidate = name;
    for (let k = 1; taken.has(candidate.toLowerCase()); k++) candidate = `${name}_${k}`;
    taken.add(candidate.toLowerCase());
    out.push(candidate);
  }
  return out;
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
