// The schema fast path (runtime/schemaFastPath.ts) against effect's own parser, on every reply schema the routes
// declare and on shapes chosen for their edges: whenever the schema refuses a value the fast path is not sure, and
// whenever the fast path answers, it answers what the schema answers, down to the order of keys in its JSON.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Exit, Schema, SchemaAST } from 'effect';
import { fastDecoder, fastEncoder, NOT_SURE } from '../runtime/schemaFastPath.ts';
import { allRoutes } from '../http/routes/index.ts';

/** Values shaped like the AST (what a handler or a row holds), and now and then something else in their place. */
function valuesOf(ast: SchemaAST.AST, depth = 0): fc.Arbitrary<unknown> {
  const other = fc.oneof(fc.constant(null), fc.constant(undefined), fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.array(fc.integer(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
  return fc.oneof({ weight: 12, arbitrary: shaped(ast, depth) }, { weight: 1, arbitrary: other });
}

function shaped(ast: SchemaAST.AST, depth: number): fc.Arbitrary<unknown> {
  switch (ast._tag) {
    case 'String':
      return fc.oneof(fc.string(), fc.constantFrom('', 'a', '__proto__'));
    case 'Number':
      return fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 1.5, Number.NaN, Infinity, 2 ** 53));
    case 'Boolean':
      return fc.boolean();
    case 'Null':
      return fc.constant(null);
    case 'Undefined':
      return fc.constant(undefined);
    case 'Literal':
      return fc.constant(ast.literal);
    case 'Declaration':
      return fc.date({ noInvalidDate: false });
    case 'Union':
      return fc.oneof(...ast.types.map((t) => valuesOf(t, depth + 1)));
    case 'Arrays':
      return ast.rest.length === 1 && depth < 6 ? fc.array(valuesOf(ast.rest[0], depth + 1), { maxLength: 3 }) : fc.constant([]);
    case 'Objects': {
      if (depth >= 6) return fc.constant({});
      const fields = Object.fromEntries(ast.propertySignatures.map((ps) => [String(ps.name), valuesOf(ps.type, depth + 1)]));
      const extra = ast.indexSignatures.length ? fc.dictionary(fc.string({ maxLength: 4 }), valuesOf(ast.indexSignatures[0].type, depth + 1), { maxKeys: 3 }) : fc.constant({});
      // Every field, some dropped (required or not), an undeclared key or two.
      return fc.tuple(fc.record(fields, { requiredKeys: [] }), fc.record(fields), extra, fc.boolean()).map(([some, all, more, full]) => ({ ...more, ...(full ? all : some) }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** The fast path and the schema agree on `value`. */
function agree(fast: (u: unknown) => unknown, parse: (u: unknown) => Exit.Exit<unknown, unknown>, value: unknown) {
  const exit = parse(value);
  const out = fast(value);
  if (Exit.isFailure(exit)) {
    expect(out).toBe(NOT_SURE);
    return;
  }
  if (out === NOT_SURE) return;
  expect(out).toStrictEqual(exit.value);
  expect(JSON.stringify(out)).toBe(JSON.stringify(exit.value));
}

function check(name: string, schema: Schema.Top, runs = 300) {
  const codec = schema as Schema.Codec<unknown, unknown>;
  const encoder = fastEncoder(schema);
  if (encoder) {
    const encode = Schema.encodeUnknownExit(codec);
    fc.assert(
      fc.property(valuesOf(SchemaAST.flip(schema.ast)), (v) => agree(encoder, encode, v)),
      { numRuns: runs },
    );
  }
  const decoder = fastDecoder(schema);
  if (decoder) {
    const decode = Schema.decodeUnknownExit(codec);
    fc.assert(
      fc.property(valuesOf(schema.ast), (v) => agree(decoder, decode, v)),
      { numRuns: runs },
    );
  }
  return { name, fast: Boolean(encoder || decoder) };
}

const Point = Schema.Struct({ x: Schema.Finite, y: Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 10 })) });
const edges: Record<string, Schema.Top> = {
  'keywords and literals': Schema.Struct({ s: Schema.String, n: Schema.Number, b: Schema.Boolean, l: Schema.Literals(['a', 'b', 1]), u: Schema.Unknown, z: Schema.Null }),
  checks: Schema.Struct({ point: Point, name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(3)) }),
  'a check on the struct': Point.check(Schema.makeFilter((p) => p.x < p.y)),
  'optional keys': Schema.Struct({ a: Schema.optionalKey(Schema.String), b: Schema.optional(Schema.Number), c: Schema.UndefinedOr(Schema.Boolean) }),
  records: Schema.Struct({ any: Schema.Record(Schema.String, Schema.Unknown), counts: Schema.Record(Schema.String, Schema.Finite) }),
  'nullable dates and arrays': Schema.Struct({ at: Schema.NullOr(Schema.Date), list: Schema.Array(Schema.NullOr(Schema.String)) }),
  // {a, b} passes both members: which one the schema picks is its own rule, so the fast path is not sure
  'overlapping union': Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Struct({ a: Schema.String, b: Schema.Number })]),
  'a key named __proto__': Schema.Struct({ ['__proto__']: Schema.String, k: Schema.Number }),
  'a transformation (no fast path)': Schema.Struct({ n: Schema.NumberFromString }),
};

describe('the schema fast path answers what the schema answers', () => {
  it('on shapes chosen for their edges', () => {
    const fast = Object.entries(edges).map(([name, s]) => check(name, s, 300));
    // every edge but the transformation has a fast path, so the comparisons above ran
    expect(fast.filter((f) => !f.fast).map((f) => f.name)).toEqual(['a transformation (no fast path)']);
  });

  it('on every reply schema of every route', () => {
    let compared = 0;
    for (const def of allRoutes) {
      for (const schema of Object.values(def.responses)) {
        if (schema && check(def.operationId, schema, 20).fast) compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('the agents listings take it', () => {
    for (const id of ['list_agents', 'list_admin_agents', 'list_agent_metrics']) {
      const def = allRoutes.find((r) => r.operationId === id)!;
      expect(fastEncoder(def.responses[200]!), id).toBeDefined();
    }
  });

  it('an overlapping union is left to the schema, whose first member wins', () => {
    const schema = edges['overlapping union'];
    const value = { a: 'x', b: 1 };
    expect(fastEncoder(schema)!(value)).toBe(NOT_SURE);
    expect(Schema.encodeUnknownSync(schema as Schema.Codec<unknown, unknown>)(value)).toEqual({ a: 'x' });
  });
});
