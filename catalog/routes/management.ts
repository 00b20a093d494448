// Warehouse management for the api (not part of the Iceberg REST protocol): the api binds each Eider catalog to
// a storage backend by creating a warehouse here. Secrets go in and never come out.
import type { FastifyInstance } from 'fastify';
import * as store from '../metastore.ts';
import type { Warehouse, WarehouseKind } from '../metastore.ts';
import type { VendingMode } from '../../iceberg/vendedStorage.ts';
import type { CatalogContext } from '../context.ts';
import { sendJson } from '../http.ts';
import { badRequest, CatalogError } from '../errors.ts';
import { decodeBody, NameSearchRequest, ReadOnlyRequest, RelocateRequest, RevokeCredentialRequest, WarehouseRequest } from '../requests.ts';
import { isAzureUri, isUnderRoot } from '../../iceberg/storageUri.ts';
import { normalizeRootUri } from '../storage.ts';
import { parseVendedKeyId } from '../../runtime/objectStore.ts';
import { revokeEpoch } from '../vending.ts';
import { isRoleArn } from '../../iceberg/stsRules.ts';

function warehouseOut(w: Warehouse) {
  return {
    name: w.name,
    root_uri: w.rootUri,
    kind: w.kind,
    endpoint: w.endpoint,
    region: w.region,
    path_style: w.pathStyle,
    vending: w.vending,
    role_arn: w.roleArn,
    read_only: w.readOnly,
    credential_epoch: w.credentialEpoch,
    created_at: w.createdAt,
  };
}

/** Absent, null and '' alike: not given. */
const given = <T extends string>(v: T | null | undefined): T | undefined => (v === null || v === '' ? undefined : v);

/** The storage a request names, with the rules between its fields (the schema checked each field on its own). */
function parseBody(b: typeof WarehouseRequest.Type, partial: boolean) {
  const kind = given(b.kind);
  const vending = given(b.vending);
  // azure: access_key_id is the storage account name, secret_access_key its key; credentials are vended as a SAS.
  if (vending === 'sas' && kind !== 'azure') throw badRequest('vending sas is for kind azure');
  if (kind === 'azure' && vending !== undefined && vending !== 'sas') throw badRequest('an azure warehouse vends credentials as a sas');
  const rootUri = given(b.root_uri);
  if (rootUri !== undefined && kind !== undefined && isAzureUri(rootUri) !== (kind === 'azure')) {
    throw badRequest(kind === 'azure' ? 'an azure root is az://<container>/<path>/ or abfss://<container>@<account>.dfs.core.windows.net/<path>/' : 'an S3 root is s3://<bucket>/<path>/');
  }
  const accessKeyId = given(b.access_key_id);
  const secretAccessKey = given(b.secret_access_key);
  if (!partial && (!rootUri || !accessKeyId || !secretAccessKey)) {
    throw badRequest('root_uri, access_key_id and secret_access_key are required');
  }
  // undefined: unchanged (on an update); null or '': none.
  const roleArn = b.role_arn === undefined ? undefined : (given(b.role_arn) ?? null);
  if (roleArn && !isRoleArn(roleArn)) throw badRequest('role_arn must be an IAM role ARN: arn:<partition>:iam::<12-digit account id>:role/<path/name>');
  if (roleArn && kind === 'azure') throw badRequest('role_arn is for STS vending; an azure warehouse vends a sas');
  return {
    rootUri: rootUri === undefined ? undefined : normalizeRootUri(rootUri),
    kind,
    endpoint: given(b.endpoint),
    region: given(b.region),
    accessKeyId,
    secretAccessKey,
    pathStyle: b.path_style,
    vending,
    roleArn,
  };
}

/** Without a vending mode: derived keys for Eider's object stores, the keys as they are for s3 (as before modes), a SAS for azure. */
const defaultVending = (kind: WarehouseKind): VendingMode => (kind === 'azure' ? 'sas' : kind === 's3' ? 'static' : 'derived');

const dropUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

export function managementRoutes(app: FastifyInstance, ctx: CatalogContext): void {
  app.post('/management/v1/warehouses', async (req, reply) => {
    const b = decodeBody(WarehouseRequest, req.body, 'warehouse');
    if (typeof b.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(b.name)) {
      throw badRequest('name must be 1-128 characters of letters, digits, _ . -');
    }
    const p = parseBody(b, false);
    const kind = p.kind ?? 'object_store';
    const w = await store.insertWarehouse(ctx.db, {
      name: b.name,
      rootUri: p.rootUri!,
      kind,
      endpoint: p.endpoint ?? null,
      region: p.region ?? 'us-east-1',
      accessKeyId: p.accessKeyId!,
      secretAccessKey: ctx.storage.seal(p.secretAccessKey!),
      pathStyle: p.pathStyle ?? true,
      vending: p.vending ?? defaultVending(kind),
      roleArn: p.roleArn ?? null,
    });
    return sendJson(reply, 201, warehouseOut(w));
  });

  app.get('/management/v1/warehouses', async (_req, reply) => {
    return sendJson(reply, 200, { warehouses: (await store.listWarehouses(ctx.db)).map(warehouseOut) });
  });

  app.get<{ Params: { name: string } }>('/management/v1/warehouses/:name', async (req, reply) => {
    return sendJson(reply, 200, warehouseOut(await store.getWarehouse(ctx.db, req.params.name)));
  });

  // The column count of many tables in one request (the api's lineage graph names up to 500 tables): one statement
  // instead of a loadTable each. Tables that do not exist are left out of the answer.
  app.post<{ Params: { name: string }; Body: { tables?: unknown } }>('/management/v1/warehouses/:name/column-counts', async (req, reply) => {
    const tables = req.body?.tables;
    if (!Array.isArray(tables) || tables.length > 1000) throw badRequest('tables must be an array of at most 1000 {namespace, name}');
    const wanted = tables.map((t: { namespace?: unknown; name?: unknown }) => {
      const ns = t?.namespace;
      if (!Array.isArray(ns) || ns.length === 0 || !ns.every((l) => typeof l === 'string') || typeof t.name !== 'string') {
        throw badRequest('each table is {namespace: string[], name: string}');
      }
      return { namespace: ns as string[], name: t.name };
    });
    await store.getWarehouse(ctx.db, req.params.name);
    return sendJson(reply, 200, { tables: await store.columnCounts(ctx.db, req.params.name, wanted) });
  });

  // Name search for the api's catalog search (docs/catalog.md "Name search"): namespaces and tables with a word
  // of their name starting with q, best first, at most limit of them and whether there are more.
  app.post<{ Params: { name: string } }>('/management/v1/warehouses/:name/search', async (req, reply) => {
    const body = decodeBody(NameSearchRequest, req.body, 'name search');
    await store.getWarehouse(ctx.db, req.params.name);
    const scope = body.scope ? { schemas: [...body.scope.schemas], visibleSchemas: [...body.scope.visible_schemas], tables: [...body.scope.tables] } : undefined;
    const found = await store.searchNames(ctx.db, req.params.name, body.q, body.limit, scope);
    return sendJson(reply, 200, { matches: found.matches, has_more: found.hasMore });
  });

  // Connection changes (rotated keys, new endpoint) revoke every credential vended before.
  app.put<{ Params: { name: string } }>('/management/v1/warehouses/:name', async (req, reply) => {
    const p = parseBody(decodeBody(WarehouseRequest, req.body, 'warehouse'), true);
    const patch = dropUndefined({ ...p, secretAccessKey: p.secretAccessKey === undefined ? undefined : ctx.storage.seal(p.secretAccessKey) });
    const w = await ctx.db.tx((q) => store.updateWarehouseConnection(q, req.params.name, patch));
    return sendJson(reply, 200, warehouseOut(w));
  });

  // A storage migration marks the warehouse read-only while it copies it (every change answers 403); the cutover
  // (or a cancelled or failed migration) clears the mark.
  app.put<{ Params: { name: string } }>('/management/v1/warehouses/:name/read-only', async (req, reply) => {
    const { read_only } = decodeBody(ReadOnlyRequest, req.body, 'read-only request');
    const w = await store.setWarehouseReadOnly(ctx.db, req.params.name, read_only);
    return sendJson(reply, 200, warehouseOut(w));
  });

  app.delete<{ Params: { name: string } }>('/management/v1/warehouses/:name', async (req, reply) => {
    await ctx.db.tx((q) => store.deleteWarehouse(q, req.params.name));
    return reply.code(204).send();
  });

  /**
   * A storage migration's cutover: every table of the warehouse moves to its copy under the new root and the
   * warehouse to the new storage, in one transaction. Each table must still be at the metadata file the migration
   * copied (`from`), and the tables named must be exactly the warehouse's: anything else is 409 and nothing moves.
   * Repeating a relocation that already happened is a no-op (a resumed cutover).
   */
  app.post<{ Params: { name: string } }>('/management/v1/warehouses/:name/relocate', async (req, reply) => {
    const b = decodeBody(RelocateRequest, req.body, 'relocation');
    const p = parseBody(b, false);
    const tables = b.tables.map((t) => ({ namespace: [...t.namespace], name: t.name, from: t.from, to: t.to, metadataJson: t.metadata_json }));
    for (const t of tables) {
      if (!isUnderRoot(t.to, p.rootUri!)) throw badRequest(`${t.to} is not under the new root ${p.rootUri}`);
    }
    const out = await ctx.db.tx(async (q) => {
      const w = await store.getWarehouse(q, req.params.name, true);
      const current = await store.lockWarehouseTables(q, w.name);
      const key = (ns: readonly string[], name: string) => `${ns.join('\u001f')}\u0000${name}`;
      const given = new Map(tables.map((t) => [key(t.namespace, t.name), t]));
      if (w.rootUri === p.rootUri && current.every((c) => given.get(key(c.namespace, c.name))?.to === c.metadataLocation) && current.length === tables.length) {
        return { warehouse: w, moved: 0 };
      }
      const missing = current.filter((c) => !given.has(key(c.namespace, c.name)));
      if (missing.length || current.length !== tables.length) {
        throw new CatalogError(409, 'CommitFailedException', `the warehouse's tables changed since the migration listed them (${missing.map((m) => [...m.namespace, m.name].join('.')).join(', ') || 'a table was dropped'})`);
      }
      for (const c of current) {
        const t = given.get(key(c.namespace, c.name))!;
        if (c.metadataLocation !== t.from) throw new CatalogError(409, 'CommitFailedException', `table ${[...c.namespace, c.name].join('.')} changed since the migration copied it`);
      }
      for (const t of tables) await store.relocateTable(q, w.name, t.namespace, t.name, t.to, t.metadataJson);
      const next = await store.updateWarehouseConnection(q, w.name, {
        rootUri: p.rootUri,
        kind: p.kind ?? w.kind,
        endpoint: p.endpoint ?? null,
        region: p.region ?? w.region,
        accessKeyId: p.accessKeyId,
        secretAccessKey: ctx.storage.seal(p.secretAccessKey!),
        pathStyle: p.pathStyle ?? w.pathStyle,
        vending: p.vending ?? defaultVending(p.kind ?? w.kind),
        roleArn: p.roleArn ?? null,
      }, { relocating: true });
      return { warehouse: await store.setWarehouseReadOnly(q, next.name, false), moved: tables.length };
    });
    return sendJson(reply, 200, { ...warehouseOut(out.warehouse), tables_moved: out.moved });
  });

  /**
   * Revokes every credential vended for the warehouse so far by bumping its credential epoch. Derived keys ask the
   * metastore at every request; an azure SAS is bound to the epoch's stored access policy, which is replaced here (a
   * failure to reach the account answers 503: the epoch is bumped, the old SAS still works until it expires or the
   * call is repeated). sts and static credentials are not revocable by the catalog.
   */
  app.post<{ Params: { name: string } }>('/management/v1/warehouses/:name/revoke-credentials', async (req, reply) => {
    const epoch = await store.bumpCredentialEpoch(ctx.db, req.params.name);
    const w = await store.getWarehouse(ctx.db, req.params.name);
    await revokeEpoch(w, ctx.storage.secretOf(w));
    return sendJson(reply, 200, { credential_epoch: epoch });
  });

  /** Revokes one vended credential by its access key id. */
  app.post<{ Params: { name: string } }>(
    '/management/v1/warehouses/:name/credentials/revoke',
    async (req, reply) => {
      const id = decodeBody(RevokeCredentialRequest, req.body, 'revocation').access_key_id;
      await store.getWarehouse(ctx.db, req.params.name);
      const claims = parseVendedKeyId(id);
      if (!claims || claims.warehouse !== req.params.name) throw badRequest('access_key_id is not a credential vended for this warehouse');
      // Kept until the key expires; the store refuses it after that anyway.
      await store.revokeCredential(ctx.db, id, req.params.name, new Date(claims.expiresAt * 1000));
      return reply.code(204).send();
    },
  );
}
