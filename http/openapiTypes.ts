// TypeScript types for the web app, written from the server's OpenAPI document: one `<Operation>Response` per
// operation that answers JSON (the union of its 2xx bodies) and one `<Operation>Body` per JSON request body, named
// from the operationId, and one `Operations` map from 'METHOD /path/{param}' to the operation's path parameters,
// query, body and response, which the app's typed client (ui/src/api/call.ts) reads, so a call's types come from
// its path. A server change that breaks the app fails its typecheck (tests/openapiTypes.test.ts keeps the generated
// file current).

/** A JSON Schema as effect's toJsonSchema writes them (inlined): the keywords read here. */
interface JsonSchema {
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  type?: string | string[];
  prefixItems?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
}

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}

type OpenApiContent = Record<string, { schema?: JsonSchema } | undefined>;

/** An operation of the OpenAPI document, as far as the generator reads it. */
export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { content?: OpenApiContent };
  responses?: Record<string, { content?: OpenApiContent } | undefined>;
}

type Operation = OpenApiOperation & { operationId: string };

const pascal = (operationId: string) => operationId.split(/[_\W]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  return unique.length === 1 ? unique[0] : unique.map((p) => (p.includes(' | ') && !p.startsWith('{') ? `(${p})` : p)).join(' | ');
}

/** One JSON Schema (as effect's toJsonSchema writes them, inlined) as a TypeScript type expression. */
export function typeOf(schema: JsonSchema | undefined, indent = ''): string {
  if (!schema || typeof schema !== 'object' || Object.keys(schema).length === 0) return 'unknown';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map((v) => JSON.stringify(v)));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return union(alternatives.map((s) => typeOf(s, indent)));
  if (Array.isArray(schema.type)) return union(schema.type.map((t) => typeOf({ ...schema, type: t }, indent)));
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (Array.isArray(schema.prefixItems)) {
        const head = schema.prefixItems.map((s) => typeOf(s, indent));
        const rest = schema.items ? [`...${arrayOf(typeOf(schema.items, indent))}`] : [];
        return `[${[...head, ...rest].join(', ')}]`;
      }
      return arrayOf(typeOf(schema.items, indent));
    }
    case 'object':
      return objectOf(schema, indent);
    default:
      return schema.properties ? objectOf(schema, indent) : 'unknown';
  }
}

const arrayOf = (item: string) => (/^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`);

function objectOf(schema: JsonSchema, indent: string): string {
  const props = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  // Structs are written with `additionalProperties: true` (decoding tolerates extra keys), but the fields are the
  // contract: an index signature there would let the app read a misspelt field as `unknown` without an error.
  const index = extra && typeof extra === 'object' ? typeOf(extra, `${indent}  `) : !props.length ? 'unknown' : null;
  if (!props.length) return index ? `Record<string, ${index}>` : '{}';
  const required = new Set<string>(schema.required ?? []);
  const inner = `${indent}  `;
  const lines = props.map(([name, s]) => `${inner}${IDENT.test(name) ? name : JSON.stringify(name)}${required.has(name) ? '' : '?'}: ${typeOf(s, inner)};`);
  if (index) lines.push(`${inner}[key: string]: ${index === 'unknown' ? 'unknown' : `${index} | undefined`};`);
  return `{\n${lines.join('\n')}\n${indent}}`;
}

/** The whole generated module for an OpenAPI document. */
export function typesFromOpenApi(doc: { paths: Record<string, Record<string, OpenApiOperation | undefined>> }): string {
  const out: string[] = [
    '// Generated from the server\'s OpenAPI document by `node bin/eider.ts openapi --typescript` (http/openapiTypes.ts).',
    '// Do not edit: tests/openapiTypes.test.ts fails when this file and the server disagree.',
  ];
  const ops: [string, Operation][] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) if (op?.operationId) ops.push([`${method.toUpperCase()} ${path}`, { ...op, operationId: op.operationId }]);
  }
  ops.sort((a, b) => a[1].operationId.localeCompare(b[1].operationId));
  for (const [where, op] of ops) {
    const name = pascal(op.operationId);
    const bodies = Object.entries(op.responses ?? {})
      .filter(([status]) => /^2\d\d$/.test(status))
      .map(([, r]) => r?.content?.['application/json']?.schema)
      .filter((s): s is JsonSchema => !!s && s.type !== 'null');
    const request = op.requestBody?.content?.['application/json']?.schema;
    if (!bodies.length && !request) continue;
    out.push('', `/** ${where}: ${String(op.summary ?? '').replace(/\*\//g, '*\\/')} */`);
    if (bodies.length) out.push(`export type ${name}Response = ${union(bodies.map((s) => typeOf(s)))};`);
    if (request) out.push(`export type ${name}Body = ${typeOf(request)};`);
  }
  out.push('', ...operationsMap(ops), '', ...queryLiterals(ops));
  return `${out.join('\n')}\n`;
}

/** A query string carries text: a parameter the server reads as a string also accepts a number, written in decimal. */
function queryTypeOf(schema: JsonSchema | undefined): string {
  const widen = (s: unknown): unknown => {
    if (Array.isArray(s)) return s.map(widen);
    if (!s || typeof s !== 'object') return s;
    const o = s as JsonSchema;
    if (o.type === 'string' && !('const' in o) && !o.enum) return { anyOf: [{ type: 'string' }, { type: 'number' }] };
    return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, widen(v)]));
  };
  return typeOf(widen(schema) as JsonSchema | undefined, '      ');
}

function paramsOf(op: Operation, where: 'path' | 'query'): string {
  const params = (op.parameters ?? []).filter((p) => p.in === where);
  if (!params.length) return 'never';
  const field = (p: OpenApiParameter) => `${IDENT.test(p.name) ? p.name : JSON.stringify(p.name)}${p.required ? '' : '?'}`;
  const lines = params.map((p) => `      ${field(p)}: ${where === 'path' ? 'string' : queryTypeOf(p.schema)};`);
  return `{\n${lines.join('\n')}\n    }`;
}

/** The literal values a schema allows (an enum, a const, or an array or union of them), or null when it allows more. */
function literalsOf(schema: JsonSchema | undefined): unknown[] | null {
  if (!schema || typeof schema !== 'object') return null;
  if ('const' in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  if (schema.type === 'array') return literalsOf(schema.items);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(alternatives)) return null;
  const all = alternatives.map(literalsOf);
  return all.every(Boolean) ? [...new Set(all.flat())] : null;
}

/**
 * The values of each query parameter that accepts a fixed set, by operation, as a value: a screen's filter offers
 * these, so its choices follow the server's (the types alone cannot give a list to render).
 */
function queryLiterals(ops: [string, Operation][]): string[] {
  const out = ['/** The values each query parameter with a fixed set accepts, by operation (filters offer these). */', 'export const queryLiterals = {'];
  for (const [where, op] of [...ops].sort((a, b) => a[0].localeCompare(b[0]))) {
    const params = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, literalsOf(p.schema)] as const);
    const fixed = params.filter(([, values]) => values && values.length > 1);
    if (!fixed.length) continue;
    out.push(`  ${JSON.stringify(where)}: {`);
    for (const [name, values] of fixed) out.push(`    ${IDENT.test(name) ? name : JSON.stringify(name)}: [${values!.map((v) => JSON.stringify(v)).join(', ')}],`);
    out.push('  },');
  }
  out.push('} as const;');
  return out;
}

/**
 * 'METHOD /path/{param}' → what a call of that operation sends and gets: `never` where it sends no path parameters,
 * query or body; `void` where it answers no JSON (204).
 */
function operationsMap(ops: [string, Operation][]): string[] {
  const out = ['/** Every operation by its method and path template: what a call sends and what it answers. */', 'export interface Operations {'];
  for (const [where, op] of [...ops].sort((a, b) => a[0].localeCompare(b[0]))) {
    const name = pascal(op.operationId);
    const answers = Object.entries(op.responses ?? {}).some(
      ([status, r]) => /^2\d\d$/.test(status) && !!r?.content?.['application/json']?.schema && r.content['application/json'].schema.type !== 'null',
    );
    const sends = Boolean(op.requestBody?.content?.['application/json']?.schema);
    out.push(
      `  ${JSON.stringify(where)}: {`,
      `    path: ${paramsOf(op, 'path')};`,
      `    query: ${paramsOf(op, 'query')};`,
      `    body: ${sends ? `${name}Body` : 'never'};`,
      `    response: ${answers ? `${name}Response` : 'void'};`,
      '  };',
    );
  }
  out.push('}');
  return out;
}
