// The api's HTTP client for the Iceberg REST catalog service (I3: catalog structure lives there, never in our
// database). It holds one OAuth2 client-credentials token, refreshed before it expires and re-fetched once when the
// service answers 401 (a rotated CATALOG_CLIENT_SECRET invalidates every token issued before), and speaks the
// warehouse management routes plus the REST routes the control plane needs. Bodies are parsed 64-bit-safe:
// snapshot ids exceed 2^53 and JSON.parse would round them.
import type { Config } from './config.ts';
import { parseJson, stringifyJson } from '../iceberg/json.ts';
import { SpanKind, traceHeaders, type Tracing } from '../telemetry/tracing.ts';
import type { VendingMode } from '../iceberg/vendedStorage.ts';

export interface CatalogClientOptions {
  /** Base URL of the catalog service, e.g. http://127.0.0.1:8181 */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Per-request timeout; the catalog answers in milliseconds, so a hung call is a fault, not load. */
  timeoutMs?: number;
  /** each call is a client span whose traceparent the catalog service continues */
  tracing?: Tracing;
}

/** Connection settings of a warehouse as the management API takes them. Secrets go in and never come out. */
export interface WarehouseInput {
  name: string;
  root_uri: string;
  kind: 'object_store' | 's3' | 'azure';
  endpoint: string | null;
  region: string;
  access_key_id: string;
  secret_access_key: string;
  path_style: boolean;
  /** How the service vends credentials: derived (Eider's stores), sts (a store's STS AssumeRole), static (the keys as they are), sas (azure). */
  vending: VendingMode;
  /** sts: the IAM role AssumeRole assumes (AWS requires one); null clears it. */
  role_arn?: string | null;
}

export interface WarehouseInfo {
  name: string;
  root_uri: string;
  kind: 'object_store' | 's3' | 'azure';
  endpoint: string | null;
  region: string;
  path_style: boolean;
  vending?: VendingMode;
  /** Absent from services older than role_arn. */
  role_arn?: string | null;
  read_only?: boolean;
  credential_epoch: number;
  created_at: string;
}

export interface LoadedTable<M> {
  metadataLocation: string | null;
  metadata: M;
  config: Record<string, string>;
}

/** An answer of the catalog service that is not a success: `type` is the Iceberg exception name. */
export class CatalogServiceError extends Error {
  readonly status: number;
  readonly type: string;
  constructor(status: number, type: string, message: string) {
    super(message);
    this.name = 'CatalogServiceError';
    this.status = status;
    this.type = type;
  }
}

/** The catalog service could not be reached at all (refused, timed out). */
export class CatalogUnreachableError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'CatalogUnreachableError';
  }
}

/** A LoadTableResult as the REST catalog protocol answers it (create and load). */
interface LoadTableBody {
  'metadata-location'?: string | null;
  metadata: unknown;
  config?: Record<string, string>;
}

const parseBody = (text: string): unknown => (text ? parseJson(text) : undefined);

/** Namespace levels joined by U+001F, the REST path encoding of multi-level namespaces. */
const nsPath = (ns: readonly string[]) => encodeURIComponent(ns.join('\u001f'));
const seg = encodeURIComponent;

// Refresh when less than this share of the token's life is left, so no request carries an expiring token.
const REFRESH_AT_REMAINING = 0.2;

export class CatalogClient {
  readonly baseUrl: string;
  private readonly clientId: string;
  private readonly clientSecret: string;
  private readonly timeoutMs: number;
  private readonly tracing: Tracing | undefined;
  private cached: { token: string; expiresAt: number; refreshAt: number } | undefined;
  private inflight: Promise<{ token: string; expiresAt: number }> | undefined;
  private readonly scoped = new Map<string, { token: string; expiresAt: number }>();

  constructor(opts: CatalogClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.clientId = opts.clientId;
    this.clientSecret = opts.clientSecret;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.tracing = opts.tracing;
  }

  /**
   * A bearer token for the catalog and when it expires, for handing to an agent with a dispatch: agents load
   * tables and get vended storage credentials with it. Never log it.
   */
  async catalogToken(): Promise<{ token: string; expiresAt: Date }> {
    const t = await this.token();
    return { token: t.token, expiresAt: new Date(t.expiresAt) };
  }

  /**
   * A token limited to some warehouses, each read or write, living `ttlSeconds` (the catalog service enforces both):
   * what a dispatched query carries to its agent instead of the api's own token. Reused while it stays valid for
   * the whole of `ttlSeconds` more; never log it.
   */
  async scopedToken(scope: readonly { warehouse: string; access: 'read' | 'write' }[], ttlSeconds: number): Promise<string> {
    const text = [...scope]
      .map((s) => `warehouse:${encodeURIComponent(s.warehouse)}:${s.access}`)
      .sort()
      .join(' ');
    const now = Date.now();
    const hit = this.scoped.get(text);
    if (hit && hit.expiresAt - now > ttlSeconds * 1000) return hit.token;
    // Twice the need, so the next queries with the same scope reuse it; still short-lived.
    const ttl = Math.ceil(ttlSeconds * 2);
    const res = await this.send(`${this.baseUrl}/v1/oauth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: this.clientId, client_secret: this.clientSecret, scope: text, expires_in: String(ttl) }).toString(),
    });
    const body = await res.text();
    if (res.status !== 200) throw new CatalogServiceError(res.status, 'NotAuthorizedException', `scoped catalog token refused (${res.status})`);
    const parsed = JSON.parse(body) as { access_token: string; expires_in?: number };
    const entry = { token: parsed.access_token, expiresAt: now + Math.max(1, parsed.expires_in ?? ttl) * 1000 };
    if (this.scoped.size > 1000) this.scoped.clear();
    this.scoped.set(text, entry);
    return entry.token;
  }

  private async token(forceNew = false): Promise<{ token: string; expiresAt: number }> {
    const now = Date.now();
    if (!forceNew && this.cached && now < this.cached.refreshAt) return this.cached;
    // One token request at a time: concurrent callers share it instead of stampeding the token endpoint.
    this.inflight ??= this.fetchToken().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async fetchToken(): Promise<{ token: string; expiresAt: number }> {
    const started = Date.now();
    const res = await this.send(`${this.baseUrl}/v1/oauth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: this.clientId,
        client_secret: this.clientSecret,
        scope: 'catalog',
      }).toString(),
    });
    const text = await res.text();
    if (res.status !== 200) {
      // RFC 6749 error body ({error, error_description}); never echo the request (it holds the secret).
      let code = 'token_request_failed';
      try {
        code = JSON.parse(text).error ?? code;
      } catch {}
      throw new CatalogServiceError(res.status, 'NotAuthorizedException', `catalog token request refused (${res.status} ${code})`);
    }
    const body = JSON.parse(text) as { access_token: string; expires_in?: number };
    const lifeMs = Math.max(1, body.expires_in ?? 3600) * 1000;
    const entry = { token: body.access_token, expiresAt: started + lifeMs, refreshAt: started + lifeMs * (1 - REFRESH_AT_REMAINING) };
    this.cached = entry;
    return entry;
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    const path = new URL(url).pathname;
    const call = async () => {
      try {
        const headers = traceHeaders(init.headers as Record<string, string>);
        return await fetch(url, { ...init, headers, signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (e) {
        throw new CatalogUnreachableError(`catalog service unreachable at ${this.baseUrl}: ${(e as Error).message}`, e);
      }
    };
    if (!this.tracing?.enabled) return call();
    return this.tracing.span(`catalog ${init.method ?? 'GET'}`, { kind: SpanKind.CLIENT, attributes: { 'url.path': path } }, async (span) => {
      const res = await call();
      span.setAttribute('http.response.status_code', res.status);
      return res;
    });
  }

  /** An authenticated request; a 401 fetches a new token and retries once. Errors become CatalogServiceError. The
   *  answer is taken as `T`: the catalog service is ours (catalog/), and each method names the shape it answers. */
  private async request<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
    for (let attempt = 0; ; attempt++) {
      const { token } = await this.token(attempt > 0);
      const res = await this.send(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : stringifyJson(body),
      });
      if (res.status === 401 && attempt === 0) {
        await res.arrayBuffer();
        continue;
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = parseBody(text);
      } catch {
        parsed = undefined;
      }
      if (res.status >= 400) {
        const err = (parsed as { error?: { type?: unknown; message?: unknown } } | undefined)?.error;
        throw new CatalogServiceError(
          res.status,
          typeof err?.type === 'string' ? err.type : 'CatalogServiceError',
          typeof err?.message === 'string' ? err.message : `catalog service answered ${res.status} to ${method} ${path.split('?')[0]}`,
        );
      }
      return { status: res.status, body: parsed as T };
    }
  }

  // ---- warehouses (management API) --------------------------------------------------------------------------

  async createWarehouse(input: WarehouseInput): Promise<WarehouseInfo> {
    return (await this.request<WarehouseInfo>('POST', '/management/v1/warehouses', input)).body;
  }

  async getWarehouse(name: string): Promise<WarehouseInfo | undefined> {
    try {
      return (await this.request<WarehouseInfo>('GET', `/management/v1/warehouses/${seg(name)}`)).body;
    } catch (e) {
      if (e instanceof CatalogServiceError && e.status === 404) return undefined;
      throw e;
    }
  }

  async listWarehouses(): Promise<WarehouseInfo[]> {
    return (await this.request<{ warehouses: WarehouseInfo[] }>('GET', '/management/v1/warehouses')).body.warehouses;
  }

  /** Revokes one key derived for the warehouse (its store refuses the key from then on, until it expires). */
  async revokeCredential(warehouse: string, accessKeyId: string): Promise<void> {
    await this.request('POST', `/management/v1/warehouses/${seg(warehouse)}/credentials/revoke`, { access_key_id: accessKeyId });
  }

  /** Changes connection settings; the service revokes every credential vended before. */
  async updateWarehouse(name: string, patch: Partial<Omit<WarehouseInput, 'name'>>): Promise<WarehouseInfo> {
    return (await this.request<WarehouseInfo>('PUT', `/management/v1/warehouses/${seg(name)}`, patch)).body;
  }

  /** A storage migration's read-only mark: while set, every change to the warehouse answers 403. */
  async setWarehouseReadOnly(name: string, readOnly: boolean): Promise<WarehouseInfo> {
    return (await this.request<WarehouseInfo>('PUT', `/management/v1/warehouses/${seg(name)}/read-only`, { read_only: readOnly })).body;
  }

  /**
   * A storage migration's cutover: every table to its copy under the new root and the warehouse to the new storage,
   * in one transaction of the catalog service (409 when a table changed since it was copied; a no-op when done).
   */
  async relocateWarehouse(
    name: string,
    input: Omit<WarehouseInput, 'name'> & { tables: Array<{ namespace: string[]; name: string; from: string; to: string; metadata_json: string }> },
  ): Promise<WarehouseInfo & { tables_moved: number }> {
    return (await this.request<WarehouseInfo & { tables_moved: number }>('POST', `/management/v1/warehouses/${seg(name)}/relocate`, input)).body;
  }

  /** Drops a warehouse; the service refuses (409) while it still has namespaces. */
  async dropWarehouse(name: string): Promise<void> {
    await this.request('DELETE', `/management/v1/warehouses/${seg(name)}`);
  }

  /** The column count of each named table's current schema, one request for many (missing tables left out). */
  async columnCounts(warehouse: string, tables: ReadonlyArray<{ namespace: readonly string[]; name: string }>): Promise<Array<{ namespace: string[]; name: string; column_count: number }>> {
    return (await this.request<{ tables: Array<{ namespace: string[]; name: string; column_count: number }> }>('POST', `/management/v1/warehouses/${seg(warehouse)}/column-counts`, { tables })).body.tables;
  }

  /**
   * Namespaces (`name` null) and tables of a warehouse with a word of their name starting with `q`, whole-name matches
   * first, then by the matched term; `scope` narrows to what a scoped attachment grants (names folded to lower case).
   */
  async searchNames(
    warehouse: string,
    q: string,
    limit: number,
    scope?: { schemas: string[]; visible_schemas: string[]; tables: Array<{ schema: string; table: string }> },
  ): Promise<NameSearchAnswer> {
    return (await this.request<NameSearchAnswer>('POST', `/management/v1/warehouses/${seg(warehouse)}/search`, { q, limit, ...(scope ? { scope } : {}) })).body;
  }

  // ---- namespaces -------------------------------------------------------------------------------------------

  /** Every namespace under `parent` (top level by default), following page tokens. */
  async listNamespaces(warehouse: string, parent: readonly string[] = []): Promise<string[][]> {
    const out: string[][] = [];
    let pageToken: string | undefined;
    do {
      const q = new URLSearchParams({ pageSize: '1000' });
      if (parent.length) q.set('parent', parent.join('\u001f'));
      if (pageToken) q.set('pageToken', pageToken);
      const { body } = await this.request<{ namespaces: string[][]; 'next-page-token'?: string | null }>('GET', `/v1/${seg(warehouse)}/namespaces?${q}`);
      out.push(...body.namespaces);
      pageToken = body['next-page-token'] ?? undefined;
    } while (pageToken);
    return out;
  }

  async createNamespace(warehouse: string, ns: readonly string[], properties: Record<string, string> = {}): Promise<void> {
    await this.request('POST', `/v1/${seg(warehouse)}/namespaces`, { namespace: ns, properties });
  }

  async namespaceExists(warehouse: string, ns: readonly string[]): Promise<boolean> {
    try {
      await this.request('GET', `/v1/${seg(warehouse)}/namespaces/${nsPath(ns)}`);
      return true;
    } catch (e) {
      if (e instanceof CatalogServiceError && e.status === 404) return false;
      throw e;
    }
  }

  /** Drops a namespace; 409 NamespaceNotEmptyException while it holds tables. */
  async dropNamespace(warehouse: string, ns: readonly string[]): Promise<void> {
    await this.request('DELETE', `/v1/${seg(warehouse)}/namespaces/${nsPath(ns)}`);
  }

  // ---- tables -----------------------------------------------------------------------------------------------

  /** Every table name in a namespace, following page tokens. */
  async listTables(warehouse: string, ns: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    let pageToken: string | undefined;
    do {
      const q = new URLSearchParams({ pageSize: '1000' });
      if (pageToken) q.set('pageToken', pageToken);
      const { body } = await this.request<{ identifiers: Array<{ name: string }>; 'next-page-token'?: string | null }>('GET', `/v1/${seg(warehouse)}/namespaces/${nsPath(ns)}/tables?${q}`);
      out.push(...body.identifiers.map((i) => i.name));
      pageToken = body['next-page-token'] ?? undefined;
    } while (pageToken);
    return out;
  }

  /** Creates a table from an Iceberg schema (a CreateTableRequest); the catalog picks the location under the root. */
  async createTable<M>(warehouse: string, ns: readonly string[], request: { name: string; schema: unknown; properties?: Record<string, string> }): Promise<LoadedTable<M>> {
    const { body } = await this.request<LoadTableBody>('POST', `/v1/${seg(warehouse)}/namespaces/${nsPath(ns)}/tables`, request);
    return { metadataLocation: body['metadata-location'] ?? null, metadata: body.metadata as M, config: body.config ?? {} };
  }

  /** With `vendedCredentials`, `config` carries short-lived storage credentials for the table's location. */
  async loadTable<M>(warehouse: string, ns: readonly string[], name: string, opts: { vendedCredentials?: boolean } = {}): Promise<LoadedTable<M>> {
    const headers: Record<string, string> = opts.vendedCredentials ? { 'x-iceberg-access-delegation': 'vended-credentials' } : {};
    const { body } = await this.request<LoadTableBody>('GET', `/v1/${seg(warehouse)}/namespaces/${nsPath(ns)}/tables/${seg(name)}`, undefined, headers);
    return { metadataLocation: body['metadata-location'] ?? null, metadata: body.metadata as M, config: body.config ?? {} };
  }

  /** Drops a table; with `purge` the catalog deletes every object under the table location. */
  async dropTable(warehouse: string, ns: readonly string[], name: string, opts: { purge: boolean }): Promise<void> {
    await this.request('DELETE', `/v1/${seg(warehouse)}/namespaces/${nsPath(ns)}/tables/${seg(name)}?purgeRequested=${opts.purge}`);
  }
}

/** The client the api uses, from CATALOG_URL (else the local catalog on CATALOG_PORT) and CATALOG_CLIENT_*. */
export function catalogClientFromConfig(
  config: Pick<Config, 'CATALOG_URL' | 'CATALOG_PORT' | 'CATALOG_CLIENT_ID' | 'CATALOG_CLIENT_SECRET'>,
  tracing?: Tracing,
): CatalogClient {
  return new CatalogClient({
    baseUrl: config.CATALOG_URL ?? `http://127.0.0.1:${config.CATALOG_PORT}`,
    clientId: config.CATALOG_CLIENT_ID,
    clientSecret: config.CATALOG_CLIENT_SECRET,
    tracing,
  });
}

/** The catalog service's name search answer. */
type NameSearchAnswer = { matches: Array<{ namespace: string[]; name: string | null; whole: boolean; term: string }>; has_more: boolean };
