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
});
