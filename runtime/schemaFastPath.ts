// A fast path for effect Schema parsing of plain shapes, used where many values pass one schema: rows at the database
// boundary (runtime/sql.ts `rows`) and reply bodies (http/server.ts). Effect's interpreter costs tens of microseconds
// a value (a record takes its generator path, every field an Exit), which was most of the api's CPU for a list of
// 10,000 agents. The schema stays the only definition of the shape: a function is compiled from its AST for the
// nodes whose rules are plain (keywords, literals, structs, string-keyed records, arrays, unions, valid dates, and
// any filter, run as the schema runs it); any other node has no fast path. The fast path answers only when the value
// passes; otherwise (a refusal, or a union two members accept) it says "not sure" and the caller runs the schema
// itself, so refusals and their messages are the schema's own. tests/schemaFastPath.test.ts compares the two.
import { Schema, SchemaAST } from 'effect';

/** The fast path's "not sure": the caller parses with the schema itself. */
export const NOT_SURE: unique symbol = Symbol('not sure');
type Fast = (input: unknown) => unknown;

// the options a parse without any runs with (effect's defaultParseOptions)
const OPTIONS: SchemaAST.ParseOptions = {};
const DATE_AST = Schema.Date.ast;

const decoders = new WeakMap<SchemaAST.AST, Fast | null>();

/** The fast decoder of `schema` (what `Schema.decodeUnknownExit` would answer on success), if its shape is plain. */
export function fastDecoder(schema: Schema.Top): Fast | undefined {
  return cached(schema.ast);
}

/** The fast encoder of `schema` (what `Schema.encodeUnknownExit` would answer on success), if its shape is plain:
 *  encoding is decoding with the flipped AST, as effect does it. */
export function fastEncoder(schema: Schema.Top): Fast | undefined {
  return cached(SchemaAST.flip(schema.ast));
}

function cached(ast: SchemaAST.AST): Fast | undefined {
  let fast = decoders.get(ast);
  if (fast === undefined) {
    fast = compile(ast) ?? null;
    decoders.set(ast, fast);
  }
  return fast ?? undefined;
}

function compile(ast: SchemaAST.AST): Fast | undefined {
  // An encoding (a transformation), a constructor default, or checks on the encoded side: no fast path.
  if (ast.encoding !== undefined || ast.context?.constructorDefault !== undefined) return undefined;
  if ('encodingChecks' in ast && ast.encodingChecks !== undefined) return undefined;
  const base = compileBase(ast);
  if (!base || !ast.checks) return base;
  const checks = flatChecks(ast.checks);
  return (input) => {
    const out = base(input);
    if (out === NOT_SURE) return out;
    for (const check of checks) if (check.run(out, ast, OPTIONS) !== undefined) return NOT_SURE;
    return out;
  };
}

function flatChecks(checks: SchemaAST.Checks): SchemaAST.Filter<unknown>[] {
  return checks.flatMap((c) => (c._tag === 'FilterGroup' ? flatChecks(c.checks) : [c]));
}

const refine =
  (ok: (u: unknown) => boolean): Fast =>
  (u) =>
    ok(u) ? u : NOT_SURE;

function compileBase(ast: SchemaAST.AST): Fast | undefined {
  switch (ast._tag) {
    case 'String':
      return refine((u) => typeof u === 'string');
    case 'Number':
      return refine((u) => typeof u === 'number');
    case 'Boolean':
      return refine((u) => typeof u === 'boolean');
    case 'Null':
      return refine((u) => u === null);
    case 'Undefined':
      return refine((u) => u === undefined);
    case 'Unknown':
    case 'Any':
      return (u) => u;
    case 'Literal': {
      const literal = ast.literal;
      return refine((u) => u === literal);
    }
    case 'Declaration':
      return ast === DATE_AST ? refine((u) => u instanceof Date && !Number.isNaN(u.getTime())) : undefined;
    case 'Union':
      return compileUnion(ast);
    case 'Arrays':
      return compileArray(ast);
    case 'Objects':
      return compileObject(ast);
    default:
      return undefined;
  }
}

/** The member that accepts the value. Two accepting members: the schema's own order of candidates decides. */
function compileUnion(ast: SchemaAST.Union): Fast | undefined {
  const members: Fast[] = [];
  for (const t of ast.types) {
    const m = compile(t);
    if (!m) return undefined;
    members.push(m);
  }
  return (input) => {
    let found: unknown = NOT_SURE;
    for (const m of members) {
      const out = m(input);
      if (out === NOT_SURE) continue;
      if (found !== NOT_SURE) return NOT_SURE;
      found = out;
    }
    return found;
  };
}

/** An array of one element schema (Schema.Array), read index by index into a new array. */
function compileArray(ast: SchemaAST.Arrays): Fast | undefined {
  if (ast.elements.length !== 0 || ast.rest.length !== 1) return undefined;
  const item = compile(ast.rest[0]);
  if (!item) return undefined;
  return (input) => {
    if (!Array.isArray(input)) return NOT_SURE;
    const out = new Array<unknown>(input.length);
    for (let i = 0; i < input.length; i++) {
      const v = item(input[i]);
      if (v === NOT_SURE) return NOT_SURE;
      out[i] = v;
    }
    return out;
  };
}

/** A struct (its fields in order, undeclared keys dropped) or a record keyed by any string, never both. */
function compileObject(ast: SchemaAST.Objects): Fast | undefined {
  const isObject = (u: unknown): u is Record<PropertyKey, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u);
  if (ast.propertySignatures.length > 0 && ast.indexSignatures.length === 0) {
    const fields: Array<{ name: PropertyKey; parse: Fast; optional: boolean }> = [];
    for (const ps of ast.propertySignatures) {
      const parse = compile(ps.type);
      if (!parse) return undefined;
      fields.push({ name: ps.name, parse, optional: SchemaAST.isOptional(ps.type) });
    }
    return (input) => {
      if (!isObject(input)) return NOT_SURE;
      const out: Record<PropertyKey, unknown> = {};
      for (const f of fields) {
        // as the schema reads a key: inherited keys count, but for __proto__
        if (!(f.name === '__proto__' ? Object.hasOwn(input, f.name) : f.name in input)) {
          if (f.optional) continue;
          return NOT_SURE;
        }
        const v = f.parse(input[f.name]);
        if (v === NOT_SURE) return NOT_SURE;
        assign(out, f.name, v);
      }
      return out;
    };
  }
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 1 && ast.indexSignatures[0].parameter === SchemaAST.string) {
    const value = compile(ast.indexSignatures[0].type);
    if (!value) return undefined;
    return (input) => {
      if (!isObject(input)) return NOT_SURE;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(input)) {
        const v = value(input[key]);
        if (v === NOT_SURE) return NOT_SURE;
        assign(out, key, v);
      }
      return out;
    };
  }
  return undefined;
}

function assign(out: Record<PropertyKey, unknown>, key: PropertyKey, value: unknown) {
  if (key === '__proto__') Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  else out[key] = value;
}
