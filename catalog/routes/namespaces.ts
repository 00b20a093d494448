// GET /v1/config and the namespace routes of the Iceberg REST catalog, under the warehouse prefix.
import type { FastifyInstance } from 'fastify';
import * as store from '../metastore.ts';
import type { CatalogContext } from '../context.ts';
import { atOnce, sendJson, namespaceParam, pageParams, pageToken } from '../http.ts';
import { badRequest, unprocessable } from '../errors.ts';
import { CreateNamespaceRequest, decodeBody, UpdateNamespacePropertiesRequest } from '../requests.ts';

type NsParams = { prefix: string; namespace: string };

/** Endpoints this server implements, announced in GET /v1/config so clients need not probe. */
const ENDPOINTS = [
  'GET /v1/{prefix}/namespaces',
  'POST /v1/{prefix}/namespaces',
  'GET /v1/{prefix}/namespaces/{namespace}',
  'HEAD /v1/{prefix}/namespaces/{namespace}',
  'DELETE /v1/{prefix}/namespaces/{namespace}',
  'POST /v1/{prefix}/namespaces/{namespace}/properties',
  'GET /v1/{prefix}/namespaces/{namespace}/tables',
  'POST /v1/{prefix}/namespaces/{namespace}/tables',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials',
  'POST /v1/{prefix}/tables/rename',
  'POST /v1/{prefix}/transactions/commit',
];

export function namespaceRoutes(app: FastifyInstance, ctx: CatalogContext): void {
  app.get<{ Querystring: { warehouse?: string } }>('/v1/config', async (req, reply) => {
    const name = req.query.warehouse;
    if (!name) throw badRequest('the warehouse query parameter is required (one catalog service hosts many warehouses)');
    await store.getWarehouse(ctx.db, name);
    return sendJson(reply, 200, { defaults: {}, overrides: { prefix: name }, endpoints: ENDPOINTS });
  });

  app.get<{ Params: { prefix: string }; Querystring: { parent?: string; pageToken?: string; pageSize?: string } }>(
    '/v1/:prefix/namespaces',
    async (req, reply) => {
      const prefix = req.params.prefix;
      // The warehouse is read beside its namespaces (atOnce): its absence is still the answer when both are missing.
      const [, { page, namespaces }] = await atOnce(store.getWarehouse(ctx.db, prefix), async () => {
        const parent = req.query.parent ? namespaceParam(req.query.parent) : [];
        if (parent.length) await store.getNamespace(ctx.db, prefix, parent);
        const page = pageParams(req.query);
        return { page, namespaces: await store.listNamespaces(ctx.db, prefix, parent, page.after, page.limit) };
      });
      const full = page.paged && namespaces.length === page.limit;
      return sendJson(reply, 200, {
        namespaces,
        ...(full ? { 'next-page-token': pageToken(store.nsKey(namespaces[namespaces.length - 1])) } : {}),
      });
    },
  );

  app.post<{ Params: { prefix: string } }>('/v1/:prefix/namespaces', async (req, reply) => {
    const w = await store.getWarehouse(ctx.db, req.params.prefix);
    const body = decodeBody(CreateNamespaceRequest, req.body, 'CreateNamespaceRequest');
    const ns = [...body.namespace];
    const properties = { ...body.properties };
    await store.createNamespace(ctx.db, w.name, ns, properties);
    return sendJson(reply, 200, { namespace: ns, properties });
  });

  app.get<{ Params: NsParams }>('/v1/:prefix/namespaces/:namespace', async (req, reply) => {
    const w = await store.getWarehouse(ctx.db, req.params.prefix);
    const row = await store.getNamespace(ctx.db, w.name, namespaceParam(req.params.namespace));
    return sendJson(reply, 200, { namespace: row.namespace, properties: row.properties });
  });

  app.head<{ Params: NsParams }>('/v1/:prefix/namespaces/:namespace', async (req, reply) => {
    const w = await store.getWarehouse(ctx.db, req.params.prefix);
    const row = await store.findNamespace(ctx.db, w.name, namespaceParam(req.params.namespace));
    return reply.code(row ? 204 : 404).send();
  });

  app.delete<{ Params: NsParams }>('/v1/:prefix/namespaces/:namespace', async (req, reply) => {
    const w = await store.getWarehouse(ctx.db, req.params.prefix);
    const ns = namespaceParam(req.params.namespace);
    await ctx.db.tx((q) => store.deleteNamespace(q, w.name, ns));
    return reply.code(204).send();
  });

  app.post<{ Params: NsParams }>(
    '/v1/:prefix/namespaces/:namespace/properties',
    async (req, reply) => {
      const w = await store.getWarehouse(ctx.db, req.params.prefix);
      const ns = namespaceParam(req.params.namespace);
      const body = decodeBody(UpdateNamespacePropertiesRequest, req.body, 'UpdateNamespacePropertiesRequest');
      const removals = body.removals ?? [];
      const updates = { ...body.updates };
      const both = removals.filter((k) => k in updates);
      if (both.length) throw unprocessable(`properties both updated and removed: ${both.join(', ')}`);
      const result = await ctx.db.tx(async (q) => {
        const row = await store.getNamespace(q, w.name, ns, true);
        const props = { ...row.properties };
        const removed: string[] = [];
        const missing: string[] = [];
        for (const k of removals) {
          if (k in props) {
            delete props[k];
            removed.push(k);
          } else missing.push(k);
        }
        Object.assign(props, updates);
        await store.setNamespaceProperties(q, w.name, ns, props);
        return { updated: Object.keys(updates), removed, missing };
      });
      return sendJson(reply, 200, result);
    },
  );
}
