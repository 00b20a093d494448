// A client of the Iceberg REST catalog service for one attached catalog: config (prefix), namespaces, load with
// vended credentials, create, commit, drop and rename. JSON goes through iceberg/json.ts so 64-bit snapshot ids
// survive. The bearer token is only ever put in the Authorization header.
import { parseJson, stringifyJson } from '../../iceberg/json.ts';
import { processSpan, SpanKind, traceHeaders } from '../../telemetry/tracing.ts';
import type { TableMetadata, StructType, UnboundPartitionSpec } from '../../iceberg/metadata.ts';
import type { TableRequirement, TableUpdate } from '../../iceberg/updates.ts';
import type { IcebergAttachment } from './attachments.ts';
import { BridgeError, catalogError } from './errors.ts';

export interface LoadedTable {
  metadataLocation: string;
  metadata: TableMetadata;
  /** Vended storage configuration (`s3.access-key-id`, `s3.endpoint`, …): in memory only. */
  storage: Record<string, string>;
}

/** A REST error answer: status plus the ErrorModel type (NoSuchTableException, CommitFailedException, …). */
// A warehouse's REST prefix does not change while it exists: asked once per agent, not once per query.
const KNOWN_PREFIXES = new Map<string, string>();

export class CatalogHttpError extends BridgeError {
  readonly status: number;
  readonly type: string;
  constructor(status: number, type: string, message: string) {
    super('catalog_error', message);
    this.status = status;
    this.type = type;
  }
}

const DELEGATION = { 'x-iceberg-access-delegation': 'vended-credentials' };

/**
 * How long a request waits for a catalog service that refuses connections: it is restarting (`eider up` starts a
 * killed one again at once, and it serves about a second later), so the query waits rather than fails. A refused
 * connection never reached the service, so sending again cannot apply a commit twice.
 */
const CATALOG_RESTART_WAIT_MS = 5_000;
const refused = (e: unknown) => ((e as { cause?: { code?: string } })?.cause?.code ?? (e as { code?: string })?.code) === 'ECONNREFUSED';
const ns = (namespace: string) => encodeURIComponent(namespace);

export class IcebergCatalogClient {
  readonly name: string;
  readonly #attachment: IcebergAttachment;
  #prefix: string | null = null;

  constructor(attachment: IcebergAttachment) {
    this.name = attachment.name;
    this.#attachment = attachment;
  }

  /** `T`: the REST catalog's response shape for the route (Iceberg's REST OpenAPI); undefined for an empty body. */
  async #request<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const url = `${this.#attachment.catalog_url.replace(/\/+$/, '')}${path}`;
    let res: Response;
    const waitUntil = Date.now() + CATALOG_RESTART_WAIT_MS;
    for (;;) {
      try {
        // A client span whose context the catalog service continues; the path names the table, the token stays out.
        res = await processSpan(`catalog ${method}`, { kind: SpanKind.CLIENT, attributes: { 'url.path': path } }, () =>
          fetch(url, {
            method,
            headers: traceHeaders({
              authorization: `Bearer ${this.#attachment.token}`,
              ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
              ...headers,
            }),
            body: body === undefined ? undefined : stringifyJson(body),
            signal: AbortSignal.timeout(30_000),
          }),
        );
        break;
      } catch (error) {
        if (refused(error) && Date.now() < waitUntil) {
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        throw catalogError(`catalog ${this.name} is unreachable: ${(error as Error).message}`);
      }
    }
    const text = await res.text();
    if (res.ok) return text ? parseJson<T>(text) : (undefined as T);
    let type = 'HttpError';
    let message = text.slice(0, 300);
    try {
      const err = (JSON.parse(text) as { error?: { type?: string; message?: string } }).error;
      if (err?.type) type = err.type;
      if (err?.message) message = err.message;
    } catch {
      // not the ErrorModel: keep the raw text
    }
    if (res.status === 401 || res.status === 403) {
      throw new CatalogHttpError(res.status, type, `catalog ${this.name} refused the query's catalog token (${res.status} ${type}): ${message}`);
    }
    throw new CatalogHttpError(res.status, type, message);
  }

  async #base(): Promise<string> {
    if (this.#prefix === null) {
      const key = `${this.#attachment.catalog_url}\0${this.#attachment.warehouse}`;
      let base = KNOWN_PREFIXES.get(key);
      if (base === undefined) {
        const config = await this.#request<{ defaults?: { prefix?: string }; overrides?: { prefix?: string } } | undefined>('GET', `/v1/config?warehouse=${encodeURIComponent(this.#attachment.warehouse)}`);
        const prefix = config?.overrides?.prefix ?? config?.defaults?.prefix ?? '';
        base = prefix ? `/v1/${encodeURIComponent(prefix)}` : '/v1';
        KNOWN_PREFIXES.set(key, base);
      }
      this.#prefix = base;
    }
    return this.#prefix;
  }

  async listNamespaces(): Promise<string[]> {
    const base = await this.#base();
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.#request<ListPage & { namespaces: string[][] }>('GET', `${base}/namespaces${token ? `?pageToken=${encodeURIComponent(token)}` : ''}`);
      for (const n of page.namespaces) if (n.length === 1) out.push(n[0]);
      token = page['next-page-token'] ?? undefined;
    } while (token);
    return out;
  }

  async createNamespace(namespace: string): Promise<void> {
    await this.#request('POST', `${await this.#base()}/namespaces`, { namespace: [namespace], properties: {} });
  }

  async dropNamespace(namespace: string): Promise<void> {
    await this.#request('DELETE', `${await this.#base()}/namespaces/${ns(namespace)}`);
  }

  async listTables(namespace: string): Promise<string[]> {
    const base = await this.#base();
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.#request<ListPage & { identifiers: Array<{ name: string }> }>('GET', `${base}/namespaces/${ns(namespace)}/tables${token ? `?pageToken=${encodeURIComponent(token)}` : ''}`);
      for (const id of page.identifiers) out.push(id.name);
      token = page['next-page-token'] ?? undefined;
    } while (token);
    return out;
  }

  /** The table with credentials vended for it, or null when it does not exist. */
  async loadTable(namespace: string, table: string): Promise<LoadedTable | null> {
    try {
      const body = await this.#request<LoadTableResult>('GET', `${await this.#base()}/namespaces/${ns(namespace)}/tables/${encodeURIComponent(table)}`, undefined, DELEGATION);
      return loaded(body);
    } catch (error) {
      if (error instanceof CatalogHttpError && error.status === 404) return null;
      throw error;
    }
  }

  /** `stage`: the catalog only prepares the table's metadata (and credentials for its location); nothing exists
   *  until a commit with `assert-create` and `creationUpdates` of it (a CREATE TABLE … AS SELECT made whole). */
  async createTable(namespace: string, table: string, schema: StructType, spec: UnboundPartitionSpec, opts: { stage?: boolean } = {}): Promise<LoadedTable> {
    const body = await this.#request<LoadTableResult>(
      'POST',
      `${await this.#base()}/namespaces/${ns(namespace)}/tables`,
      { name: table, schema, 'partition-spec': spec, properties: { 'write.format.default': 'parquet' }, ...(opts.stage ? { 'stage-create': true } : {}) },
      DELEGATION,
    );
    return loaded(body);
  }

  /** Commits; a failed requirement is a CatalogHttpError with status 409. */
  async commit(namespace: string, table: string, requirements: TableRequirement[], updates: TableUpdate[]): Promise<TableMetadata> {
    const body = await this.#request<{ metadata: TableMetadata }>('POST', `${await this.#base()}/namespaces/${ns(namespace)}/tables/${encodeURIComponent(table)}`, {
      identifier: { namespace: [namespace], name: table },
      requirements,
      updates,
    });
    return body.metadata;
  }

  async dropTable(namespace: string, table: string, purge: boolean): Promise<void> {
    await this.#request('DELETE', `${await this.#base()}/namespaces/${ns(namespace)}/tables/${encodeURIComponent(table)}?purgeRequested=${purge}`);
  }

  async renameTable(namespace: string, from: string, toNamespace: string, to: string): Promise<void> {
    await this.#request('POST', `${await this.#base()}/tables/rename`, {
      source: { namespace: [namespace], name: from },
      destination: { namespace: [toNamespace], name: to },
    });
  }
}

/** A list route's page: the token of the next one, absent or null on the last. */
interface ListPage {
  'next-page-token'?: string | null;
}

/** The REST catalog's LoadTableResult (a load, a create). */
interface LoadTableResult {
  'metadata-location': string;
  metadata: TableMetadata;
  config?: Record<string, string>;
  'storage-credentials'?: Array<{ prefix: string; config: Record<string, string> }>;
}

function loaded(body: LoadTableResult): LoadedTable {
  const storage: Record<string, string> = { ...(body.config ?? {}) };
  // storage-credentials (newer clients) take precedence over config for the table's own prefix.
  const creds = body['storage-credentials'];
  if (creds?.length) Object.assign(storage, creds[0].config);
  return { metadataLocation: body['metadata-location'], metadata: body.metadata, storage };
}
