// The OpenAPI document: each route's declaration becomes its operation (the server registers these with
// @fastify/swagger), and the same document can be built offline, without a database, for `eider openapi` and for
// generating the web app's API types.
import Fastify from 'fastify';
import swagger from '@fastify/swagger';
import { jsonSchemaOf, type RouteDef } from './route.ts';
import type { OpenApiOperation } from './openapiTypes.ts';

/** The OpenAPI document: its info and its operations by path and method. */
export interface OpenApiDocument {
  info: { version: string; [key: string]: unknown };
  paths: Record<string, Record<string, OpenApiOperation | undefined>>;
  [key: string]: unknown;
}

export function swaggerOptions(version: string) {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Eider API', version, description: 'Control plane for SQL analytics over Apache Iceberg tables' },
      components: {
        securitySchemes: {
          cookieAuth: { type: 'apiKey' as const, in: 'cookie', name: 'session' },
          bearerAuth: { type: 'http' as const, scheme: 'bearer' },
        },
      },
    },
  };
}

/** One route's Fastify schema, from which @fastify/swagger writes its operation. */
export function openApiSchema(def: RouteDef) {
  const responses: Record<string, unknown> = {};
  for (const [status, s] of Object.entries(def.responses)) {
    responses[status] = s ? jsonSchemaOf(s) : { type: 'null', description: 'empty' };
  }
  const security: Array<Record<string, string[]>> = def.access.kind === 'public' ? [] : [{ cookieAuth: [] }, { bearerAuth: [] }];
  return {
    operationId: def.operationId,
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: def.tags,
    security,
    ...(def.params ? { params: jsonSchemaOf(def.params) } : {}),
    ...(def.query ? { querystring: jsonSchemaOf(def.query) } : {}),
    ...(def.body ? { body: jsonSchemaOf(def.body) } : {}),
    response: responses,
  };
}

/** The document the running server serves at /api/openapi.json, built from the declarations alone. */
export async function openApiDocument(routes: readonly RouteDef[], version: string): Promise<OpenApiDocument> {
  const app = Fastify({ logger: false });
  await app.register(swagger, swaggerOptions(version));
  for (const def of routes) {
    app.route({ method: def.method, url: def.path, schema: openApiSchema(def), handler: async () => undefined });
  }
  await app.ready();
  // Read back as the generator and the tests read it (the plugin types it as any OpenAPI version's document).
  const doc = app.swagger() as unknown as OpenApiDocument;
  await app.close();
  return doc;
}
