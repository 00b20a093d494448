// Typed SQL composition: statements are written as `sql` templates whose interpolations become bind parameters
// ($1, $2… numbered when the statement is compiled), and fragments nest, so a repository builds WHERE clauses from
// pieces without counting parameters by hand or splicing text. `rows` decodes each row with an effect Schema at the
// database boundary, so a column that changes type fails loudly where it is read instead of deep in a handler.
import { Exit, Schema } from 'effect';
import type { Queryable } from './db.ts';
import { fastDecoder, NOT_SURE } from './schemaFastPath.ts';

export class SqlFragment {
  readonly strings: readonly string[];
  readonly values: readonly unknown[];
  constructor(strings: readonly string[], values: readonly unknown[]) {
    this.strings = strings;
    this.values = values;
  }
}

/** A statement or fragment: `${value}` is a bind parameter; `${fragment}` is spliced in with its own parameters. */
export function sql(strings: TemplateStringsArray | readonly string[], ...values: unknown[]): SqlFragment {
  return new SqlFragment([...strings], values);
}

/** Fragments joined by a separator (`, ` unless given): empty input gives an empty fragment. */
sql.join = (parts: readonly SqlFragment[], separator = ', '): SqlFragment => {
  if (parts.length === 0) return new SqlFragment([''], []);
  const strings: string[] = [''];
  const values: unknown[] = [];
  parts.forEach((p, i) => {
    if (i > 0) strings[strings.length - 1] += separator;
    strings.push('');
    values.push(p);
  });
  return new SqlFragment(strings, values);
};

/**
 * Text that is not a value (a sort direction, a column chosen from a fixed list). Only for strings the code chose;
 * a value from a request never goes here.
 */
sql.trusted = (text: string): SqlFragment => new SqlFragment([text], []);

/** The statement text with $n placeholders and its parameters in order. */
export function compile(f: SqlFragment): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const walk = (frag: SqlFragment): string => {
    let text = frag.strings[0];
    frag.values.forEach((v, i) => {
      if (v instanceof SqlFragment) text += walk(v);
      else {
        params.push(v);
        text += `$${params.length}`;
      }
      text += frag.strings[i + 1];
    });
    return text;
  };
  return { text: walk(f), params };
}

/** Runs a statement and returns its raw rows. */
export async function exec(q: Queryable, f: SqlFragment): Promise<Record<string, unknown>[]> {
  const { text, params } = compile(f);
  return q.query(text, params);
}

export class RowShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RowShapeError';
  }
}

/** Runs a statement and decodes every row with `schema` (columns it does not name are dropped). */
export async function rows<S extends Schema.Codec<unknown, unknown>>(q: Queryable, schema: S, f: SqlFragment): Promise<S['Type'][]> {
  const decode = Schema.decodeUnknownExit(schema);
  const fast = fastDecoder(schema);
  return (await exec(q, f)).map((r) => {
    const value = fast ? fast(r) : NOT_SURE;
    if (value !== NOT_SURE) return value as S['Type'];
    const exit = decode(r);
    if (Exit.isSuccess(exit)) return exit.value as S['Type'];
    throw new RowShapeError(`a row does not match its schema: ${String(exit.cause).slice(0, 300)}`);
  });
}
