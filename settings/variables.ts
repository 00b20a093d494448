// The one configuration loader of every Eider process (api, agent, catalog service): a process declares its
// variables in a table (kind, default, secret, group, and whether its feature is built), and this module reads,
// validates and defaults them from the environment. A bad value stops the process with one line naming the
// variable, the problem and the expected form. docs/configuration.md is rendered from the same tables.
import { Exit, Schema, SchemaIssue } from 'effect';

type Kind =
  | { t: 'string' }
  | { t: 'int'; min?: number; max?: number }
  | { t: 'number'; min?: number; max?: number; above?: number; below?: number }
  | { t: 'bool' }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'json'; shape: 'array' | 'object' }
  | { t: 'url'; protocols: readonly string[] }
  /** one URL or several, comma-separated (an agent's list of control-plane replicas) */
  | { t: 'urls'; protocols: readonly string[] }
  /** a byte count, plain or with a unit (64MiB, 1GB), since operators write both */
  | { t: 'bytes' }
  /** a list separated by commas or white space */
  | { t: 'list' };

export interface VarSpec {
  kind: Kind;
  /** the default as text; null: unset unless given; undefined: required */
  def: string | null | undefined;
  secret?: boolean;
  group: string;
  /** the feature that would read it, while that feature is not built */
  notBuilt?: string;
}

export type VariableTable = Record<string, VarSpec>;

// Builders keep each variable's kind and default as literal types, so values are typed per variable.
export const str = <D extends string | null | undefined>(group: string, def: D, secret = false) => ({ kind: { t: 'string' } as const, def, secret, group });
export const int = (group: string, def: string, min = 0, max?: number) => ({ kind: { t: 'int', min, max } as const, def, group });
export const num = (group: string, def: string, min = 0, max?: number) => ({ kind: { t: 'number', min, max } as const, def, group });
/** a number in an interval whose ends may be open: fractions such as (0, 1] */
export const range = (group: string, def: string, bounds: { min?: number; max?: number; above?: number; below?: number }) => ({ kind: { t: 'number', ...bounds } as const, def, group });
export const bool = (group: string, def: 'true' | 'false') => ({ kind: { t: 'bool' } as const, def, group });
export const oneOf = <D extends string | null>(group: string, def: D, values: readonly string[]) => ({ kind: { t: 'enum', values } as const, def, group });
export const json = <S extends 'array' | 'object'>(group: string, def: string, shape: S, secret = false) => ({ kind: { t: 'json', shape } as const, def, secret, group });
export const url = <D extends string | null | undefined>(group: string, def: D, protocols: readonly string[], secret = false) => ({ kind: { t: 'url', protocols } as const, def, secret, group });
export const urls = <D extends string | null | undefined>(group: string, def: D, protocols: readonly string[]) => ({ kind: { t: 'urls', protocols } as const, def, group });
export const bytes = (group: string, def: string) => ({ kind: { t: 'bytes' } as const, def, group });
export const list = (group: string, def: string) => ({ kind: { t: 'list' } as const, def, group });
/** Marks a variable whose feature is not built yet: it is validated, and setting it logs one warning naming the feature. */
export const notBuilt = <V extends VarSpec>(feature: string, v: V): V & { notBuilt: string } => ({ ...v, notBuilt: feature });

type ValueOfKind<K extends Kind> = K extends { t: 'int' | 'number' | 'bytes' }
  ? number
  : K extends { t: 'bool' }
    ? boolean
    : K extends { t: 'json'; shape: 'array' }
      ? unknown[]
      : K extends { t: 'json' }
        ? Record<string, unknown>
        : K extends { t: 'list' } | { t: 'urls' }
          ? readonly string[]
          : string;

/** The typed values of a table: a variable with a null default may be null. */
export type Values<T extends VariableTable> = {
  readonly [K in keyof T]: T[K]['def'] extends null ? ValueOfKind<T[K]['kind']> | null : ValueOfKind<T[K]['kind']>;
};

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(message);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

function expectedForm(k: Kind): string {
  const bounds = (k: { min?: number; max?: number; above?: number; below?: number }) =>
    [k.min !== undefined ? ` >= ${k.min}` : '', k.above !== undefined ? ` > ${k.above}` : '', k.max !== undefined ? ` and <= ${k.max}` : '', k.below !== undefined ? ` and < ${k.below}` : '']
      .join('')
      .replace(/^ and/, '');
  switch (k.t) {
    case 'string':
      return 'a string';
    case 'int':
      return `an integer${bounds(k)}`;
    case 'number':
      return `a number${bounds(k)}`;
    case 'bool':
      return 'true or false (or 1 or 0)';
    case 'enum':
      return `one of ${k.values.join(', ')}`;
    case 'json':
      return `a JSON ${k.shape}`;
    case 'url':
      return `a URL starting with ${k.protocols.map((p) => `${p}//`).join(' or ')}`;
    case 'urls':
      return `one or more URLs, comma-separated, each starting with ${k.protocols.map((p) => `${p}//`).join(' or ')}`;
    case 'bytes':
      return 'a byte count such as 67108864 or 64MiB';
    case 'list':
      return 'a list separated by commas or spaces';
  }
}

const UNIT: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };
const BytesText = Schema.String.check(Schema.makeFilter((v: string) => {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(v.trim());
  return !!m && UNIT[m[2].toLowerCase()] !== undefined;
}));
const toBytes = (v: string) => {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(v.trim())!;
  return Math.floor(Number(m[1]) * UNIT[m[2].toLowerCase()]);
};

/** The effect Schema that decodes one variable's text. */
function schemaFor(k: Kind): Schema.Top {
  switch (k.t) {
    case 'string':
    case 'list':
      return Schema.String;
    case 'bytes':
      return BytesText;
    case 'int': {
      let n = Schema.NumberFromString.check(Schema.isInt());
      if (k.min !== undefined) n = n.check(Schema.isGreaterThanOrEqualTo(k.min));
      if (k.max !== undefined) n = n.check(Schema.isLessThanOrEqualTo(k.max));
      return n;
    }
    case 'number': {
      let n = Schema.NumberFromString.check(Schema.isFinite());
      if (k.min !== undefined) n = n.check(Schema.isGreaterThanOrEqualTo(k.min));
      if (k.max !== undefined) n = n.check(Schema.isLessThanOrEqualTo(k.max));
      if (k.above !== undefined) n = n.check(Schema.isGreaterThan(k.above));
      if (k.below !== undefined) n = n.check(Schema.isLessThan(k.below));
      return n;
    }
    case 'bool':
      // The documented forms only: a `yes` or `on` that was meant for another tool is refused, not guessed at.
      return Schema.Literals(['true', 'false', '1', '0']);
    case 'enum':
      return Schema.Literals(k.values as [string, ...string[]]);
    case 'json':
      return Schema.fromJsonString(k.shape === 'array' ? Schema.Array(Schema.Unknown) : Schema.Record(Schema.String, Schema.Unknown));
    case 'url':
      return Schema.String.check(Schema.makeFilter((v: string) => isUrlWith(v, k.protocols)));
    case 'urls':
      return Schema.String.check(
        Schema.makeFilter((v: string) => {
          const parts = splitUrls(v);
          return parts.length > 0 && parts.every((u) => isUrlWith(u, k.protocols));
        }),
      );
  }
}

function isUrlWith(v: string, protocols: readonly string[]): boolean {
  try {
    return urlPerHost(v).every((u) => protocols.includes(new URL(u).protocol));
  } catch {
    return false;
  }
}

/**
 * One URL per host of a URL that names several (libpq's `postgresql://user@h1:5432,h2:5433/db?…`, which WHATWG URL
 * parsing refuses): the same URL with each host alone, in order. A URL with one host is returned as it is.
 */
export function urlPerHost(v: string): string[] {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/i.exec(v);
  if (!m || !m[3].includes(',')) return [v];
  return m[3].split(',').map((host) => `${m[1]}${m[2] ?? ''}${host}${m[4]}`);
}

const splitUrls = (v: string) => v.split(',').map((u) => u.trim()).filter((u) => u !== '');

const formatter = SchemaIssue.makeFormatterStandardSchemaV1();

function finish(k: Kind, decoded: unknown, text: string): unknown {
  if (k.t === 'bool') return decoded === 'true' || decoded === '1';
  if (k.t === 'bytes') return toBytes(text);
  if (k.t === 'list') return Object.freeze(text.split(/[\s,]+/).filter((s) => s !== ''));
  if (k.t === 'urls') return Object.freeze(splitUrls(text));
  return decoded;
}

/** Reads every variable of `table` from `env`; throws ConfigError naming the first bad or missing one. */
export function readVariables<T extends VariableTable>(table: T, env: Record<string, string | undefined>): Values<T> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) {
    const raw = env[name];
    const unset = raw === undefined || (raw.trim() === '' && spec.kind.t !== 'string');
    const text = unset ? spec.def : spec.kind.t === 'string' ? raw : raw.trim();
    if (text === undefined) throw new ConfigError(name, `${name} is required: expected ${expectedForm(spec.kind)}`);
    if (text === null) {
      out[name] = null;
      continue;
    }
    const exit = Schema.decodeUnknownExit(schemaFor(spec.kind) as Schema.Codec<unknown, unknown>)(spec.kind.t === 'bool' ? text.toLowerCase() : text);
    if (Exit.isFailure(exit)) {
      const failure = exit.cause.reasons.find((r) => r._tag === 'Fail') as { error: { issue: SchemaIssue.Issue } } | undefined;
      const problem = failure
        ? formatter(failure.error.issue).issues.map((x) => x.message.replace('Expected <filter>', `not ${expectedForm(spec.kind)}`)).join('; ')
        : 'invalid';
      const shown = spec.secret ? '(hidden)' : JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
      throw new ConfigError(name, `${name}: invalid value ${shown}: ${problem}; expected ${expectedForm(spec.kind)}`);
    }
    out[name] = finish(spec.kind, exit.value, text);
  }
  return Object.freeze(out) as Values<T>;
}

/** Variables set in `env` whose feature is not built yet: each is validated but has no effect, so say so once. */
export function unbuiltSettings(table: VariableTable, env: Record<string, string | undefined>): { name: string; feature: string }[] {
  return Object.entries(table)
    .filter(([name, spec]) => spec.notBuilt && env[name] !== undefined && env[name] !== '')
    .map(([name, spec]) => ({ name, feature: spec.notBuilt! }));
}
