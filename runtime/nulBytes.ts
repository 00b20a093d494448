// PostgreSQL text cannot hold U+0000: a NUL that reaches a query fails it (`invalid byte sequence`), which answered
// 500 for any NUL in a path, query or JSON body. The api and the catalog service refuse such input at the edge with
// this one search, before authentication or a handler can hand it to the database.

/**
 * Where the first NUL sits in a decoded request value (a string, or the strings and keys of arrays and objects), as a
 * dotted path below `at`; undefined when there is none. Iterative, so a deeply nested body cannot overflow the stack.
 */
export function nulAt(value: unknown, at: string): string | undefined {
  const stack: [unknown, string][] = [[value, at]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) return path;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}.${i}`]);
    } else if (v && typeof v === 'object') {
      for (const [k, inner] of Object.entries(v)) {
        if (k.includes('\0')) return path;
        stack.push([inner, `${path}.${k}`]);
      }
    }
  }
  return undefined;
}
