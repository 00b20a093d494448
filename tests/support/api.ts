// Starts a real api (in this process, on an ephemeral port) over a fresh database, with small helpers to act as
// its users. Nothing here is a stand-in: requests go over HTTP to the real server.
import { expect } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { startApi, type RunningApi } from '../../bin/api.ts';
import { freshDatabase, type TestDatabase } from './database.ts';
import { startCatalogStack, STACK_CLIENT, type CatalogStack } from './catalogStack.ts';
import { createTracing } from '../../telemetry/tracing.ts';

export const SETUP_TOKEN = 'test-setup-token-0123456789';
export const ADMIN = { email: 'admin@example.com', password: 'admin-password-1', name: 'Admin' };

export interface TestApi {
  api: RunningApi;
  database: TestDatabase;
  url: string;
  dataDir: string;
  req(method: string, path: string, opts?: { body?: unknown; rawBody?: string; headers?: Record<string, string>; as?: Caller }): Promise<Res>;
  close(): Promise<void>;
}

export interface Res {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A way to authenticate: a session cookie, a bearer token, or both. */
export interface Caller {
  cookie?: string;
  token?: string;
}

export async function startTestApi(env: Record<string, string> = {}, opts: { database?: TestDatabase } = {}): Promise<TestApi> {
  const database = opts.database ?? (await freshDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), 'eider-api-'));
  const config = loadConfig({
    DATABASE_URL: database.url,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SETUP_TOKEN,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const api = await startApi({ config, logger: createLogger({ level: 'silent' }) });
  const url = api.url;
  return {
    api,
    database,
    url,
    dataDir,
    req: requestsTo(url),
    async close() {
      await api.close();
      if (!opts.database) await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Requests to the api at `url` (JSON in and out), as `defaultAs` unless a request names its own caller. */
export function requestsTo(url: string, defaultAs?: Caller): TestApi['req'] {
  return async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    const as = o.as ?? defaultAs;
    if (o.body !== undefined || o.rawBody !== undefined) headers['content-type'] ??= 'application/json';
    if (as?.cookie) headers.cookie = as.cookie;
    if (as?.token) headers.authorization = `Bearer ${as.token}`;
    const r = await fetch(url + path, {
      method,
      headers,
      body: o.rawBody ?? (o.body !== undefined ? JSON.stringify(o.body) : undefined),
    });
    const text = await r.text();
    let body: any = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    return { status: r.status, headers: r.headers, body, text };
  };
}

export function cookieFrom(res: Res): string {
  const set = res.headers.get('set-cookie') ?? '';
  return set.split(';')[0];
}

/** Creates the first admin and signs in: returns the admin's cookie and a personal token. */
export async function setupAdmin(t: Pick<TestApi, 'req'>): Promise<SignedIn> {
  const r = await t.req('POST', '/api/setup/admin', { body: ADMIN, headers: { 'x-setup-token': SETUP_TOKEN } });
  if (r.status !== 201) throw new Error(`setup failed: ${r.status} ${r.text}`);
  return signIn(t, ADMIN.email, ADMIN.password);
}

/** A signed-in user: both ways to authenticate as them. */
export interface SignedIn extends Caller {
  id: string;
  cookie: string;
  token: string;
}

export async function signIn(t: Pick<TestApi, 'req'>, email: string, password: string): Promise<SignedIn> {
  const login = await t.req('POST', '/api/auth/login', { body: { email, password } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  const cookie = cookieFrom(login);
  const pat = await t.req('POST', '/api/me/pats', { body: { expires_in_days: 30 }, as: { cookie } });
  if (pat.status !== 201) throw new Error(`pat failed: ${pat.status} ${pat.text}`);
  return { id: login.body.id, cookie, token: pat.body.token };
}

let seq = 0;
/** A new local user created by the admin, signed in. */
export async function newUser(t: TestApi, admin: Caller, role: 'admin' | 'member' = 'member'): Promise<Caller & { id: string; email: string }> {
  const email = `user${++seq}-${Date.now()}@example.com`;
  const password = 'user-password-1';
  const r = await t.req('POST', '/api/admin/users', { body: { email, name: `User ${seq}`, password, role }, as: admin });
  if (r.status !== 201) throw new Error(`create user failed: ${r.status} ${r.text}`);
  return { ...(await signIn(t, email, password)), email };
}

export interface TestStack extends TestApi {
  stack: CatalogStack;
}

/**
 * The api with a real catalog service and bundled object store beside it, configured as `eider up` configures
 * them: the bundled `warehouse` catalog is registered as a warehouse at startup.
 */
export async function startTestStack(env: Record<string, string> = {}): Promise<TestStack> {
  const database = await freshDatabase();
  // Given an OTLP endpoint, the catalog service traces too, under its own name (as `eider up` starts it).
  const tracing = env.OTEL_EXPORTER_OTLP_ENDPOINT ? createTracing({ serviceName: 'eider-catalog', endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT }) : undefined;
  const stack = await startCatalogStack({ db: database.db, tracing });
  const t = await startTestApi({ ...(await stackEnv(stack)), ...env }, { database });
  const close = t.close;
  return {
    ...t,
    stack,
    async close() {
      await close();
      await stack.close();
      await tracing?.shutdown();
      await database.drop();
    },
  };
}

/**
 * Another api replica beside `t`: the same database, catalog service and object store, as replica `replicaId`.
 * `env` holds what replicas must share with `t` (INTERNAL_API_SECRET, the features turned on).
 */
export async function secondReplica(t: TestStack, replicaId: string, env: Record<string, string> = {}): Promise<TestApi> {
  return startTestApi({ ...(await stackEnv(t.stack)), REPLICA_ID: replicaId, ...env }, { database: t.database });
}

/** What an api needs to use `stack`'s object store and catalog service, as `eider up` configures it. */
export async function stackEnv(stack: CatalogStack): Promise<Record<string, string>> {
  const rootKey = (await stack.s3.config.credentials()) as { accessKeyId: string; secretAccessKey: string };
  return {
    STORE_ENDPOINT: stack.store.endpoint,
    OBJECT_STORE_ACCESS_KEY: rootKey.accessKeyId,
    OBJECT_STORE_SECRET_KEY: rootKey.secretAccessKey,
    CATALOG_URL: stack.catalog.url,
    CATALOG_CLIENT_ID: STACK_CLIENT.id,
    CATALOG_CLIENT_SECRET: STACK_CLIENT.secret,
  };
}

/** Runs `sql` on `agentId` in the default workspace as `as`: submitted (202), waited for (`waitS`), and done. */
export async function runDone(t: TestApi, as: Caller, agentId: string, sql: string, waitS = 30): Promise<{ id: string; [k: string]: any }> {
  const s = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: agentId }, as });
  expect(s.status, s.text).toBe(202);
  const done = await t.req('GET', `/api/queries/${s.body.id}?wait_timeout_s=${waitS}`, { as });
  expect(done.body.status, done.body.error).toBe('done');
  return done.body;
}
