// The table routes of the Iceberg REST catalog: list, create, load (ETag / If-None-Match), exists, commit, drop,
// rename, multi-table transactions and credentials.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { parseJson, stringifyJson } from '../../iceberg/json.ts';
import type { TableMetadata } from '../../iceberg/metadata.ts';
import * as store from '../metastore.ts';
import type { Warehouse } from '../metastore.ts';
import type { CatalogContext } from '../context.ts';
import type { CommitRequest, CreateTableRequest, LoadedTable } from '../tables.ts';
import { atOnce, sendJson, namespaceParam, pageParams, pageToken, requestWarehouse } from '../http.ts';
import { CommitTableRequest, CommitTransactionRequest, CreateTableRequest as CreateTableBody, decodeBody, RenameTableRequest } from '../requests.ts';
import { badRequest } from '../errors.ts';
import { vendCredentials, wantsVendedCredentials } from '../vending.ts';

type NsParams = { prefix: string; namespace: string };
type TableParams = NsParams & { table: string };

const DELEGATION = 'x-iceberg-access-delegation';

function etagOf(metadataLocation: string, snapshots: string): string {
  return `"${createHash('sha256').update(`${metadataLocation}|${snapshots}`).digest('hex').slice(0, 40)}"`;
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const v = t.trim().replace(/^W\//, '');
    return v === '*' || v === etag;
  });
}

/** Snapshots referenced by a branch or tag only (snapshots=refs). */
function onlyRefSnapshots(json: string): string {
  const m = parseJson<TableMetadata>(json);
  const ids = new Set(Object.values(m.refs).map((r) => BigInt(r['snapshot-id'])));
  return stringifyJson({ ...m, snapshots: m.snapshots.filter((s) => ids.has(BigInt(s['snapshot-id']))) });
}

/** LoadTableResult, with the stored metadata text spliced in as is (no parse/serialize on the hot path). */
function sendLoadResult(
  reply: FastifyReply,
  loaded: LoadedTable,
  metadataJson: string,
  extra: { config: Record<string, string>; 'storage-credentials'?: unknown[] },
): FastifyReply {
  const parts = [
    `"metadata-location":${loaded.metadataLocation === null ? 'null' : JSON.stringify(loaded.metadataLocation)}`,
    `"metadata":${metadataJson}`,
    `"config":${JSON.stringify(extra.config)}`,
  ];
  if (extra['storage-credentials']) parts.push(`"storage-credentials":${JSON.stringify(extra['storage-credentials'])}`);
  return reply.code(200).type('application/json').send(`{${parts.join(',')}}`);
}

function locationOf(metadataJson: string): string {
  const m = /"location"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(metadataJson);
  return m ? JSON.parse(m[1]) : parseJson<TableMetadata>(metadataJson).location;
}

export function tableRoutes(app: FastifyInstance, ctx: CatalogContext): void {
  const credentialsFor = (w: Warehouse, location: string) => vendCredentials(w, ctx.storage.secretOf(w), location, ctx.credentialTtlSeconds);

  app.get<{ Params: NsParams; Querystring: { pageToken?: string; pageSize?: string } }>(
    '/v1/:prefix/namespaces/:namespace/tables',
    async (req, reply) => {
      const w = await store.getWarehouse(ctx.db, req.params.prefix);
      const ns = namespaceParam(req.params.namespace);
      await store.getNamespace(ctx.db, w.name, ns);
      const page = pageParams(req.query);
      const names = await store.listTables(ctx.db, w.name, ns, page.after, page.limit);
      const full = page.paged && names.length === page.limit;
      return sendJson(reply, 200, {
        identifiers: names.map((name) => ({ namespace: ns, name })),
        ...(full ? { 'next-page-token': pageToken(names[names.length - 1]) } : {}),
      });
    },
  );

  app.post<{ Params: NsParams }>('/v1/:prefix/namespaces/:namespace/tables', async (req, reply) => {
    const w = await requestWarehouse(ctx.db, req, req.params.prefix);
    const ns = namespaceParam(req.params.namespace);
    // The schema, partition spec and sort order are Iceberg's own shapes: tables.ts and iceberg/ check them.
    const loaded = await ctx.tables.create(w, ns, decodeBody(CreateTableBody, req.body, 'CreateTableRequest') as unknown as CreateTableRequest);
    const vended = wantsVendedCredentials(req.headers[DELEGATION]) ? await credentialsFor(w, loaded.metadata!.location) : undefined;
    if (loaded.metadataLocation) reply.header('etag', etagOf(loaded.metadataLocation, 'all'));
    return sendLoadResult(reply, loaded, loaded.metadataJson, vended ?? { config: {} });
  });

  app.get<{ Params: TableParams; Querystring: { snapshots?: string } }>(
    '/v1/:prefix/namespaces/:namespace/tables/:table',
    async (req, reply) => {
      const prefix = req.params.prefix;
      const snapshots = req.query.snapshots ?? 'all';
      // The warehouse (for vending) and the table's row are read at once (atOnce).
      const [w, loaded] = await atOnce(store.getWarehouse(ctx.db, prefix), () => {
        const id = { namespace: namespaceParam(req.params.namespace), name: req.params.table };
        if (snapshots !== 'all' && snapshots !== 'refs') throw badRequest('snapshots must be all or refs');
        return ctx.tables.load(prefix, id);
      });
      const etag = etagOf(loaded.metadataLocation!, snapshots);
      reply.header('etag', etag);
      if (matchesEtag(req.headers['if-none-match'], etag)) return reply.code(304).send();
      const json = snapshots === 'refs' ? onlyRefSnapshots(loaded.metadataJson) : loaded.metadataJson;
      const vended = wantsVendedCredentials(req.headers[DELEGATION]) ? await credentialsFor(w, locationOf(loaded.metadataJson)) : undefined;
      return sendLoadResult(reply, loaded, json, vended ?? { config: {} });
    },
  );

  app.head<{ Params: TableParams }>('/v1/:prefix/namespaces/:namespace/tables/:table', async (req, reply) => {
    const w = await store.getWarehouse(ctx.db, req.params.prefix);
    const found = await store.findTableLocation(ctx.db, w.name, namespaceParam(req.params.namespace), req.params.table);
    return reply.code(found ? 204 : 404).send();
  });

  app.post<{ Params: TableParams }>('/v1/:prefix/namespaces/:namespace/tables/:table', async (req, reply) => {
    const w = await requestWarehouse(ctx.db, req, req.params.prefix);
    const id = { namespace: namespaceParam(req.params.namespace), name: req.params.table };
    const body = decodeBody(CommitTableRequest, req.body, 'CommitTableRequest');
    const given = body.identifier;
    if (given && (given.name !== id.name || given.namespace.join('\u001f') !== id.namespace.join('\u001f'))) {
      throw badRequest('the identifier in the body does not match the path');
    }
    // Each requirement and update is checked by iceberg/updates.ts as it applies.
    const result = await ctx.tables.commit(w, id, body as unknown as CommitRequest);
    reply.header('etag', etagOf(result.metadataLocation!, 'all'));
    return reply.code(200).type('application/json').send(`{"metadata-location":${JSON.stringify(result.metadataLocation)},"metadata":${result.metadataJson}}`);
  });

  app.delete<{ Params: TableParams; Querystring: { purgeRequested?: string } }>(
    '/v1/:prefix/namespaces/:namespace/tables/:table',
    async (req, reply) => {
      const w = await requestWarehouse(ctx.db, req, req.params.prefix);
      const id = { namespace: namespaceParam(req.params.namespace), name: req.params.table };
      const purge = req.query.purgeRequested === 'true';
      const { purgedFiles, keptFiles } = await ctx.tables.drop(w, id, purge);
      if (purge) req.log.info({ warehouse: w.name, table: [...id.namespace, id.name].join('.'), purgedFiles, keptFiles }, 'table purged');
      return reply.code(204).send();
    },
  );

  app.get<{ Params: TableParams }>('/v1/:prefix/namespaces/:namespace/tables/:table/credentials', async (req, reply) => {
    const prefix = req.params.prefix;
    const [w, loaded] = await atOnce(store.getWarehouse(ctx.db, prefix), () => ctx.tables.load(prefix, { namespace: namespaceParam(req.params.namespace), name: req.params.table }));
    const vended = await credentialsFor(w, locationOf(loaded.metadataJson));
    return sendJson(reply, 200, { 'storage-credentials': vended['storage-credentials'] });
  });

  app.post<{ Params: { prefix: string } }>(
    '/v1/:prefix/tables/rename',
    async (req, reply) => {
      const w = await requestWarehouse(ctx.db, req, req.params.prefix);
      const { source, destination } = decodeBody(RenameTableRequest, req.body, 'RenameTableRequest');
      await ctx.tables.rename(w, { namespace: [...source.namespace], name: source.name }, { namespace: [...destination.namespace], name: destination.name });
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { prefix: string } }>(
    '/v1/:prefix/transactions/commit',
    async (req, reply) => {
      const w = await requestWarehouse(ctx.db, req, req.params.prefix);
      const changes = decodeBody(CommitTransactionRequest, req.body, 'CommitTransactionRequest')['table-changes'];
      await ctx.tables.commitTransaction(
        w,
        changes.map((c) => ({ ...(c as unknown as CommitRequest), identifier: { namespace: [...c.identifier.namespace], name: c.identifier.name } })),
      );
      return reply.code(204).send();
    },
  );
}
