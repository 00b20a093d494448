// Text helpers for wrapping one user statement in the agent's own SQL (the COPY that materializes a result).

/**
 * The statement without trailing semicolons and comments, so it can be embedded as `(<body>\n)`. Scans quotes and
 * comments so a `;` or `--` inside a string literal or quoted identifier is left alone.
 */
export function statementBody(sql: string): string {
  let lastCode = -1; // index of the last character that is code (not whitespace, comment or a trailing ';')
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const ch = sql[i];
    if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < n) {
        if (sql[j] === ch) {
          if (sql[j + 1] === ch) j += 2;
          else break;
        } else j += 1;
      }
      lastCode = Math.min(j, n - 1);
      i = j + 1;
    } else if (ch === '$' && /^\$[A-Za-z_0-9]*\$/.test(sql.slice(i))) {
      const tag = /^\$[A-Za-z_0-9]*\$/.exec(sql.slice(i))![0];
      const end = sql.indexOf(tag, i + tag.length);
      const stop = end < 0 ? n : end + tag.length;
      lastCode = stop - 1;
      i = stop;
    } else {
      if (!/\s/.test(ch) && ch !== ';') lastCode = i;
      i += 1;
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

/** First keyword of the statement, upper-cased, skipping leading comments and parentheses. */
export function leadingKeyword(sql: string): string {
  const stripped = sql.replace(/^(\s|--[^\n]*\n?|\/\*[\s\S]*?\*\/|\()+/, '');
  return (/^[A-Za-z]+/.exec(stripped)?.[0] ?? '').toUpperCase();
}
