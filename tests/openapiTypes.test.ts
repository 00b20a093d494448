// The web app's API types (ui/src/api/generated.ts) are the server's contract: written from the same route
// declarations that validate requests and document /api/openapi.json. A server change that the app's committed
// types do not reflect fails here; regenerate with UPDATE_GENERATED=1 (or `node bin/eider.ts openapi --typescript`).
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '../http/openapi.ts';
import { typeOf, typesFromOpenApi } from '../http/openapiTypes.ts';
import { allRoutes } from '../http/routes/index.ts';
import { startTestApi } from './support/api.ts';

const GENERATED = join(import.meta.dirname, '..', 'ui', 'src', 'api', 'generated.ts');

describe('web app API types', () => {
  it('are current with the route declarations', async () => {
    const text = typesFromOpenApi((await openApiDocument(allRoutes, 'test')) as any);
    if (process.env.UPDATE_GENERATED) writeFileSync(GENERATED, text);
    expect(readFileSync(GENERATED, 'utf8')).toBe(text);
  });

  it('come from the same document the running server serves', async () => {
    const t = await startTestApi();
    try {
      const served = (await t.req('GET', '/api/openapi.json')).body as any;
      const offline = (await openApiDocument(allRoutes, served.info.version)) as any;
      expect(Object.keys(offline.paths).sort()).toEqual(Object.keys(served.paths).sort());
      expect(typesFromOpenApi(offline)).toBe(typesFromOpenApi(served));
    } finally {
      await t.close();
    }
  });

  it('spell JSON Schema as TypeScript', () => {
    expect(typeOf({ type: 'object', properties: { a: { type: 'string' }, b: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }, required: ['a'] })).toBe(
      '{\n  a: string;\n  b?: number | null;\n}',
    );
    expect(typeOf({ type: 'array', items: { enum: ['x', 'y'] } })).toBe('Array<"x" | "y">');
    expect(typeOf({ type: 'object', additionalProperties: { type: 'boolean' } })).toBe('Record<string, boolean>');
    expect(typeOf({})).toBe('unknown');
  });

  it('map each operation by method and path template to its path parameters, query, body and answer', () => {
    const text = typesFromOpenApi({
      paths: {
        '/api/things/{thing_id}': {
          get: {
            operationId: 'get_thing',
            parameters: [
              { in: 'path', name: 'thing_id', required: true, schema: { type: 'string' } },
              { in: 'query', name: 'limit', required: false, schema: { type: 'string' } },
              { in: 'query', name: 'kind', required: false, schema: { anyOf: [{ enum: ['a', 'b'] }, { type: 'array', items: { enum: ['a', 'b'] } }] } },
            ],
            responses: { 200: { content: { 'application/json': { schema: { type: 'object', properties: { status: { enum: ['x', 'y'] } }, required: ['status'] } } } } },
          },
          delete: { operationId: 'delete_thing', parameters: [{ in: 'path', name: 'thing_id', required: true, schema: { type: 'string' } }], responses: { 204: {} } },
        },
      },
    });
    expect(text).toContain('export type GetThingResponse = {\n  status: "x" | "y";\n};');
    expect(text).toContain(
      [
        '  "GET /api/things/{thing_id}": {',
        '    path: {\n      thing_id: string;\n    };',
        // a query string carries text: a number is accepted where the server reads a string
        '    query: {\n      limit?: string | number;\n      kind?: ("a" | "b") | (Array<"a" | "b">);\n    };',
        '    body: never;',
        '    response: GetThingResponse;',
      ].join('\n'),
    );
    expect(text).toContain('  "DELETE /api/things/{thing_id}": {\n    path: {\n      thing_id: string;\n    };\n    query: never;\n    body: never;\n    response: void;');
    expect(text).toContain('export const queryLiterals = {\n  "GET /api/things/{thing_id}": {\n    kind: ["a", "b"],\n  },\n} as const;');
  });
});
