// The docker and Azure Container Instances providers against stand-in servers that implement only the endpoints the
// providers use, answer the way the published APIs do (Docker Engine API v1.41, ARM ContainerInstance 2023-05-01,
// Entra ID client credentials, IMDS) and refuse, with a 400, any request whose shape those APIs would refuse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ProvisionRefused, type ProvisionRequest } from './provider.ts';
import { dockerProvider } from './dockerProvider.ts';
import { azureManagementToken, cloudContainerProvider } from './cloudContainerProvider.ts';

interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  raw: string;
  body: any;
}

type Handler = (r: Recorded, res: ServerResponse) => void;

function send(res: ServerResponse, status: number, body?: unknown) {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** An HTTP server on 127.0.0.1:0 or on a unix socket that records every request before handling it. */
async function standIn(handler: Handler, socketPath?: string) {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const u = new URL(req.url ?? '/', 'http://stand-in');
      let body: any = null;
      if (raw && (req.headers['content-type'] ?? '').includes('application/json')) {
        try {
          body = JSON.parse(raw);
        } catch {
          send(res, 400, { message: 'invalid JSON' });
          return;
        }
      }
      const r: Recorded = { method: req.method ?? '', path: u.pathname, query: u.searchParams, headers: req.headers, raw, body };
      requests.push(r);
      try {
        handler(r, res);
      } catch (e) {
        send(res, 500, { message: `stand-in failed: ${(e as Error).message}` });
      }
    });
  });
  await new Promise<void>((resolve) => (socketPath ? server.listen(socketPath, resolve) : server.listen(0, '127.0.0.1', resolve)));
  const addr = server.address();
  const url = typeof addr === 'object' && addr ? `http://127.0.0.1:${addr.port}` : '';
  return { server, requests, url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const isStringMap = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
const isInt = (v: unknown) => Number.isInteger(v);

// ---------------------------------------------------------------------------------------------------------------
// Docker Engine API stand-in
// ---------------------------------------------------------------------------------------------------------------

interface FakeContainer {
  Id: string;
  Name: string;
  Labels: Record<string, string>;
  State: 'created' | 'running' | 'exited';
  create: any;
}

/** What the Engine API requires of a create body, plus the hardening the provider promises. */
function createBodyProblems(b: any): string[] {
  const p: string[] = [];
  if (typeof b?.Image !== 'string' || !b.Image) p.push('Image must be a non-empty string');
  if (!Array.isArray(b?.Env) || !b.Env.every((e: unknown) => typeof e === 'string' && /^[^=]+=/.test(e))) p.push('Env must be an array of "K=V"');
  if (!isStringMap(b?.Labels)) p.push('Labels must map strings to strings');
  const h = b?.HostConfig;
  if (!h || typeof h !== 'object') return [...p, 'HostConfig missing'];
  if (h.ReadonlyRootfs !== true) p.push('HostConfig.ReadonlyRootfs must be true');
  if (JSON.stringify(h.CapDrop) !== '["ALL"]') p.push('HostConfig.CapDrop must be ["ALL"]');
  if (!Array.isArray(h.SecurityOpt) || !h.SecurityOpt.includes('no-new-privileges:true')) p.push('HostConfig.SecurityOpt needs no-new-privileges:true');
  if (!isInt(h.PidsLimit) || h.PidsLimit <= 0) p.push('HostConfig.PidsLimit must be a positive integer');
  if (!isInt(h.NanoCpus) || h.NanoCpus <= 0) p.push('HostConfig.NanoCpus must be a positive integer');
  if (!isInt(h.Memory) || h.Memory <= 0) p.push('HostConfig.Memory must be a positive integer (bytes)');
  if (typeof h.NetworkMode !== 'string' || !h.NetworkMode) p.push('HostConfig.NetworkMode must be a string');
  if (!isStringMap(h.Tmpfs)) p.push('HostConfig.Tmpfs must map paths to option strings');
  if (!['no', 'always', 'unless-stopped', 'on-failure', ''].includes(h.RestartPolicy?.Name)) p.push('HostConfig.RestartPolicy.Name is invalid');
  return p;
}

function fakeDocker() {
  const byName = new Map<string, FakeContainer>();
  const info = { NCPU: 8, MemTotal: 16 * 2 ** 30 };
  let failCreate: { status: number; message: string } | null = null;
  const find = (ref: string) => byName.get(ref) ?? [...byName.values()].find((c) => c.Id === ref || c.Id.startsWith(ref));

  const handler: Handler = (r, res) => {
    if (!r.path.startsWith('/v1.41/')) return send(res, 400, { message: `client version missing from ${r.path}` });
    const path = r.path.slice('/v1.41'.length);
    let m: RegExpMatchArray | null;
    if (r.method === 'GET' && path === '/info') return send(res, 200, { ...info, ServerVersion: '24.0.7' });
    if (r.method === 'GET' && path === '/containers/json') {
      const raw = r.query.get('filters');
      let filters: Record<string, string[]> = {};
      if (raw) {
        try {
          filters = JSON.parse(raw);
        } catch {
          return send(res, 400, { message: 'invalid filter' });
        }
        if (!Object.values(filters).every((v) => Array.isArray(v))) return send(res, 400, { message: 'filters must map to arrays' });
      }
      const all = r.query.get('all') === 'true' || r.query.get('all') === '1';
      const rows = [...byName.values()].filter(
        (c) =>
          (all || c.State === 'running') &&
          (filters.label ?? []).every((l) => {
            const [k, v] = l.split('=');
            return v === undefined ? k in c.Labels : c.Labels[k] === v;
          }) &&
          (filters.status ?? [c.State]).includes(c.State),
      );
      return send(res, 200, rows.map((c) => ({ Id: c.Id, Names: [`/${c.Name}`], Image: c.create.Image, Labels: c.Labels, State: c.State, Status: c.State })));
    }
    if (r.method === 'POST' && path === '/containers/create') {
      if (!(r.headers['content-type'] ?? '').includes('application/json')) return send(res, 400, { message: 'Content-Type must be application/json' });
      const name = r.query.get('name') ?? '';
      if (!/^\/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$/.test(name)) return send(res, 400, { message: `Invalid container name (${name})` });
      const problems = createBodyProblems(r.body);
      if (problems.length) return send(res, 400, { message: problems.join('; ') });
      if (failCreate) return send(res, failCreate.status, { message: failCreate.message });
      const existing = byName.get(name);
      if (existing) {
        return send(res, 409, {
          message: `Conflict. The container name "/${name}" is already in use by container "${existing.Id}". You have to remove (or rename) that container to be able to reuse that name.`,
        });
      }
      const c: FakeContainer = { Id: randomUUID().replaceAll('-', '') + randomUUID().replaceAll('-', ''), Name: name, Labels: r.body.Labels ?? {}, State: 'created', create: r.body };
      byName.set(name, c);
      return send(res, 201, { Id: c.Id, Warnings: [] });
    }
    if (r.method === 'GET' && (m = /^\/containers\/([^/]+)\/json$/.exec(path))) {
      const c = find(decodeURIComponent(m[1]));
      if (!c) return send(res, 404, { message: `No such container: ${m[1]}` });
      return send(res, 200, { Id: c.Id, Name: `/${c.Name}`, State: { Status: c.State, Running: c.State === 'running' }, Config: { Labels: c.Labels } });
    }
    if (r.method === 'POST' && (m = /^\/containers\/([^/]+)\/start$/.exec(path))) {
      const c = find(decodeURIComponent(m[1]));
      if (!c) return send(res, 404, { message: `No such container: ${m[1]}` });
      if (c.State === 'running') return send(res, 304);
      c.State = 'running';
      return send(res, 204);
    }
    if (r.method === 'DELETE' && (m = /^\/containers\/([^/]+)$/.exec(path))) {
      const c = find(decodeURIComponent(m[1]));
      if (!c) return send(res, 404, { message: `No such container: ${m[1]}` });
      if (c.State === 'running' && r.query.get('force') !== 'true') {
        return send(res, 409, { message: 'You cannot remove a running container. Stop the container before attempting removal or force remove' });
      }
      byName.delete(c.Name);
      return send(res, 204);
    }
    return send(res, 404, { message: `page not found: ${r.method} ${r.path}` });
  };
  return {
    handler,
    byName,
    info,
    failNextCreates(f: { status: number; message: string } | null) {
      failCreate = f;
    },
  };
}

const TOKEN = 'bt_' + 'x'.repeat(40);
const request = (over: Partial<ProvisionRequest> = {}): ProvisionRequest => {
  const elasticId = over.elasticId ?? randomUUID();
  return {
    elasticId,
    agentId: over.agentId ?? randomUUID(),
    name: 'elastic-1',
    cpu: 2,
    memoryGb: 4,
    env: { CONTROL_PLANE_URL: 'http://cp:8080', BOOTSTRAP_TOKEN: TOKEN, AGENT_NAME: 'elastic-1', ELASTIC_AGENT_ENV: 'test' },
    ...over,
  };
};

describe('dockerProvider', () => {
  const docker = fakeDocker();
  let srv: Awaited<ReturnType<typeof standIn>>;
  const provider = () =>
    dockerProvider({ host: srv.url.replace('http://', 'tcp://'), network: 'eider-net', image: 'eider/agent:test', reserveCpu: 1, reserveMemoryGb: 2 });

  beforeAll(async () => {
    srv = await standIn(docker.handler);
  });
  afterAll(async () => srv?.close());

  const since = (n: number) => srv.requests.slice(n).map((r) => `${r.method} ${r.path}`);

  it('provision checks capacity, creates a hardened, labelled container and starts it', async () => {
    docker.byName.clear();
    const p = provider();
    const req = request({ cpu: 1.5, memoryGb: 3 });
    const n = srv.requests.length;
    const { providerRef } = await p.provision(req);
    expect(since(n)).toEqual([
      'GET /v1.41/info',
      'GET /v1.41/containers/json',
      'POST /v1.41/containers/create',
      `POST /v1.41/containers/${providerRef}/start`,
    ]);
    const listing = srv.requests[n + 1];
    expect(JSON.parse(listing.query.get('filters')!)).toMatchObject({ label: ['io.eider.managed=true'] });
    const create = srv.requests[n + 2];
    expect(create.query.get('name')).toBe(`eider-agent-${req.elasticId}`);
    expect(create.headers['content-type']).toMatch(/application\/json/);
    const b = create.body;
    expect(b.Image).toBe('eider/agent:test');
    expect(b.Labels).toEqual({
      'io.eider.managed': 'true',
      'io.eider.elastic-id': req.elasticId,
      'io.eider.agent-id': req.agentId,
      'io.eider.cpu': '1.5',
      'io.eider.memory-gb': '3',
    });
    expect(b.HostConfig).toMatchObject({
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges:true'],
      PidsLimit: 512,
      NanoCpus: 1_500_000_000,
      Memory: 3 * 2 ** 30,
      NetworkMode: 'eider-net',
      RestartPolicy: { Name: 'no' },
    });
    expect(b.HostConfig.Tmpfs['/tmp']).toBe('rw,noexec,nosuid,nodev,size=1g,mode=1777');
    expect(b.HostConfig.Tmpfs['/data']).toMatch(/^rw,nosuid,nodev,size=\d+[kmg],mode=0700,uid=65534,gid=65534$/);
    expect(b.User).toBe('65534:65534');
    expect(b.Env).toEqual(
      expect.arrayContaining([
        'CONTROL_PLANE_URL=http://cp:8080',
        `BOOTSTRAP_TOKEN=${TOKEN}`,
        'AGENT_NAME=elastic-1',
        'ELASTIC_AGENT_ENV=test',
        'AGENT_DATA_DIR=/data',
        'DATA_DIR=/data',
      ]),
    );
    expect(b.Env).toHaveLength(6);
    expect(docker.byName.get(`eider-agent-${req.elasticId}`)).toMatchObject({ Id: providerRef, State: 'running' });
  });

  it('keeps AGENT_DATA_DIR and DATA_DIR from the request and honours pidsLimit', async () => {
    const p = dockerProvider({ host: srv.url, network: 'n', image: 'eider/agent:test', reserveCpu: 0, reserveMemoryGb: 0, pidsLimit: 64 });
    const n = srv.requests.length;
    await p.provision(request({ cpu: 0.5, memoryGb: 0.5, env: { AGENT_DATA_DIR: '/data/agent', DATA_DIR: '/elsewhere' } }));
    const create = srv.requests.slice(n).find((r) => r.path.endsWith('/containers/create'))!;
    expect(create.body.Env.sort()).toEqual(['AGENT_DATA_DIR=/data/agent', 'DATA_DIR=/elsewhere']);
    expect(create.body.HostConfig.PidsLimit).toBe(64);
  });

  it('a repeated provision reuses the container (409 → inspect → start answers 304)', async () => {
    docker.byName.clear();
    const p = provider();
    const req = request({ cpu: 4, memoryGb: 8 });
    const first = await p.provision(req);
    const n = srv.requests.length;
    // the same incarnation again: its own running container must not count against the capacity it asks for
    const again = await p.provision(req);
    expect(again.providerRef).toBe(first.providerRef);
    expect(since(n)).toEqual([
      'GET /v1.41/info',
      'GET /v1.41/containers/json',
      'POST /v1.41/containers/create',
      `GET /v1.41/containers/eider-agent-${req.elasticId}/json`,
      `POST /v1.41/containers/${first.providerRef}/start`,
    ]);
    expect(docker.byName.size).toBe(1);
  });

  it('refuses with ProvisionRefused, naming the numbers, when CPU or memory would exceed the host minus the reserve', async () => {
    docker.byName.clear();
    const p = provider();
    await p.provision(request({ cpu: 4, memoryGb: 8 })); // host 8 CPU / 16 GB, 1 CPU / 2 GB reserved
    const n = srv.requests.length;
    const cpuErr = await p.provision(request({ cpu: 3.5, memoryGb: 1 })).catch((e) => e);
    expect(cpuErr).toBeInstanceOf(ProvisionRefused);
    expect(cpuErr.message).toMatch(/3\.5 CPU/);
    expect(cpuErr.message).toMatch(/4 CPU \/ 8 GB in use/);
    expect(cpuErr.message).toMatch(/8 CPU \/ 16 GB/);
    expect(cpuErr.message).toMatch(/1 CPU \/ 2 GB reserved/);
    const memErr = await p.provision(request({ cpu: 1, memoryGb: 6.5 })).catch((e) => e);
    expect(memErr).toBeInstanceOf(ProvisionRefused);
    expect(memErr.message).toMatch(/6\.5 GB/);
    expect(since(n).filter((x) => x.includes('/containers/create'))).toEqual([]);
    // exactly what is left still fits
    await expect(p.provision(request({ cpu: 3, memoryGb: 6 }))).resolves.toHaveProperty('providerRef');
    // an exited container holds nothing
    for (const c of docker.byName.values()) c.State = 'exited';
    await expect(p.provision(request({ cpu: 7, memoryGb: 14 }))).resolves.toHaveProperty('providerRef');
  });

  it('terminate force-removes with volumes, and an already removed container is success', async () => {
    docker.byName.clear();
    const p = provider();
    const { providerRef } = await p.provision(request());
    const n = srv.requests.length;
    await p.terminate(providerRef);
    await p.terminate(providerRef);
    const deletes = srv.requests.slice(n);
    expect(deletes.map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE /v1.41/containers/${providerRef}`, `DELETE /v1.41/containers/${providerRef}`]);
    for (const d of deletes) expect(Object.fromEntries(d.query)).toEqual({ force: 'true', v: 'true' });
    expect(docker.byName.size).toBe(0);
  });

  it('list maps every managed container (running or not) from its labels, and skips unmanaged ones', async () => {
    docker.byName.clear();
    const p = provider();
    const a = request();
    const b = request();
    const ra = await p.provision(a);
    const rb = await p.provision(b);
    docker.byName.get(`eider-agent-${b.elasticId}`)!.State = 'exited';
    docker.byName.set('someone-else', { Id: 'f'.repeat(64), Name: 'someone-else', Labels: {}, State: 'running', create: { Image: 'x' } });
    const n = srv.requests.length;
    const listed = await p.list();
    const q = srv.requests[n].query;
    expect(srv.requests[n].path).toBe('/v1.41/containers/json');
    expect(q.get('all')).toBe('true');
    expect(JSON.parse(q.get('filters')!)).toEqual({ label: ['io.eider.managed=true'] });
    expect(listed.sort((x, y) => x.elasticId.localeCompare(y.elasticId))).toEqual(
      [
        { providerRef: ra.providerRef, elasticId: a.elasticId, running: true },
        { providerRef: rb.providerRef, elasticId: b.elasticId, running: false },
      ].sort((x, y) => x.elasticId.localeCompare(y.elasticId)),
    );
    expect(p.hourlyCost(2, 4)).toBeNull();
    expect(p.name).toBe('docker');
  });

  it("a non-2xx answer is an Error with the status and the daemon's message, never an environment value", async () => {
    docker.byName.clear();
    const p = provider();
    docker.failNextCreates({ status: 404, message: 'No such image: eider/agent:test' });
    try {
      await expect(p.provision(request())).rejects.toThrow(/404: No such image: eider\/agent:test/);
      docker.failNextCreates({ status: 500, message: `invalid environment BOOTSTRAP_TOKEN=${TOKEN}` });
      const e = await p.provision(request()).catch((x) => x);
      expect(e).toBeInstanceOf(Error);
      expect(e).not.toBeInstanceOf(ProvisionRefused);
      expect(e.message).toMatch(/500: invalid environment BOOTSTRAP_TOKEN=\*\*\*/);
      expect(e.message).not.toContain(TOKEN);
    } finally {
      docker.failNextCreates(null);
    }
    // a bad host is refused when the provider is built, without echoing the (environment-supplied) address
    expect(() => dockerProvider({ host: 'ftp://secret-host:1', network: 'n', image: 'i', reserveCpu: 0, reserveMemoryGb: 0 })).toThrow(
      /^docker host must be tcp:\/\/, http:\/\/ or unix:\/\/$/,
    );
  });

  it('speaks the same API over a unix socket', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eider-docker-'));
    const sock = join(dir, 'docker.sock');
    const local = fakeDocker();
    const s = await standIn(local.handler, sock);
    try {
      const p = dockerProvider({ host: `unix://${sock}`, network: 'bridge', image: 'eider/agent:test', reserveCpu: 0, reserveMemoryGb: 0 });
      const req = request();
      const { providerRef } = await p.provision(req);
      expect(await p.list()).toEqual([{ providerRef, elasticId: req.elasticId, running: true }]);
      await p.terminate(providerRef);
      expect(await p.list()).toEqual([]);
      expect(s.requests.every((r) => r.path.startsWith('/v1.41/'))).toBe(true);
      expect(s.requests.map((r) => r.method + ' ' + r.path)).toContain(`DELETE /v1.41/containers/${providerRef}`);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Azure stand-in: ARM (Microsoft.ContainerInstance 2023-05-01), Entra ID token endpoint and IMDS on one server
// ---------------------------------------------------------------------------------------------------------------

const SUB = '00000000-1111-2222-3333-444444444444';
const RG = 'eider-rg';
const GROUPS = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.ContainerInstance/containerGroups`;
const SUBNET = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/agents`;
const IDENTITY = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/eider-pull`;
const TENANT = 'tenant-1';
const CLIENT = 'client-1';
const CLIENT_SECRET = 'client-secret-value';

/** ContainerGroup request-body rules from the 2023-05-01 spec (required fields, enums, types). */
function groupBodyProblems(b: any): string[] {
  const p: string[] = [];
  if (typeof b?.location !== 'string') p.push('location must be a string');
  if (b?.tags !== undefined && !isStringMap(b.tags)) p.push('tags must map strings to strings');
  if (b?.identity !== undefined) {
    if (!['SystemAssigned', 'UserAssigned', 'SystemAssigned, UserAssigned', 'None'].includes(b.identity.type)) p.push('identity.type is invalid');
    if (b.identity.type === 'UserAssigned' && (!b.identity.userAssignedIdentities || Object.keys(b.identity.userAssignedIdentities).length === 0)) {
      p.push('identity.userAssignedIdentities is required for UserAssigned');
    }
  }
  const pr = b?.properties;
  if (!pr || typeof pr !== 'object') return [...p, 'properties is required'];
  if (!['Linux', 'Windows'].includes(pr.osType)) p.push('properties.osType is required (Linux|Windows)');
  if (pr.restartPolicy !== undefined && !['Always', 'OnFailure', 'Never'].includes(pr.restartPolicy)) p.push('properties.restartPolicy is invalid');
  if (pr.sku !== undefined && !['Standard', 'Dedicated', 'Confidential'].includes(pr.sku)) p.push('properties.sku is invalid');
  if (pr.subnetIds !== undefined && !(Array.isArray(pr.subnetIds) && pr.subnetIds.every((s: any) => typeof s?.id === 'string'))) p.push('properties.subnetIds[].id is required');
  if (pr.imageRegistryCredentials !== undefined && !(Array.isArray(pr.imageRegistryCredentials) && pr.imageRegistryCredentials.every((c: any) => typeof c?.server === 'string'))) {
    p.push('properties.imageRegistryCredentials[].server is required');
  }
  if (!Array.isArray(pr.containers) || pr.containers.length === 0) return [...p, 'properties.containers is required'];
  for (const c of pr.containers) {
    if (typeof c?.name !== 'string') p.push('containers[].name is required');
    const cp = c?.properties;
    if (typeof cp?.image !== 'string') p.push('containers[].properties.image is required');
    const rq = cp?.resources?.requests;
    if (typeof rq?.cpu !== 'number' || typeof rq?.memoryInGB !== 'number') p.push('containers[].properties.resources.requests.{cpu,memoryInGB} must be numbers');
    for (const e of cp?.environmentVariables ?? []) {
      if (typeof e?.name !== 'string') p.push('environmentVariables[].name is required');
      if (e.value !== undefined && typeof e.value !== 'string') p.push('environmentVariables[].value must be a string');
      if (e.secureValue !== undefined && typeof e.secureValue !== 'string') p.push('environmentVariables[].secureValue must be a string');
    }
  }
  return p;
}

function fakeAzure(opts: { accessToken: string; expiresIn: number }) {
  const groups = new Map<string, any>();
  const tokenRequests: Recorded[] = [];
  const imdsRequests: Recorded[] = [];
  let pageSize = 2;
  let base = '';
  let failPut: { status: number; code: string; message: string } | null = null;
  const armErr = (res: ServerResponse, status: number, code: string, message: string) => send(res, status, { error: { code, message } });

  const handler: Handler = (r, res) => {
    if (r.method === 'POST' && r.path === `/${TENANT}/oauth2/v2.0/token`) {
      tokenRequests.push(r);
      const f = new URLSearchParams(r.raw);
      if (!(r.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) return send(res, 400, { error: 'invalid_request' });
      if (f.get('grant_type') !== 'client_credentials' || f.get('scope') !== 'https://management.azure.com/.default') return send(res, 400, { error: 'invalid_request' });
      if (f.get('client_id') !== CLIENT || f.get('client_secret') !== CLIENT_SECRET) {
        return send(res, 401, { error: 'invalid_client', error_description: `AADSTS7000215: Invalid client secret provided for app '${f.get('client_id')}'.` });
      }
      return send(res, 200, { token_type: 'Bearer', expires_in: opts.expiresIn, ext_expires_in: opts.expiresIn, access_token: opts.accessToken });
    }
    if (r.method === 'GET' && r.path === '/metadata/identity/oauth2/token') {
      imdsRequests.push(r);
      if (r.headers['metadata'] !== 'true') return send(res, 400, { error: 'invalid_request', error_description: 'Required metadata header not specified' });
      if (r.query.get('api-version') !== '2018-02-01' || r.query.get('resource') !== 'https://management.azure.com/') return send(res, 400, { error: 'invalid_request' });
      const now = Math.floor(Date.now() / 1000);
      return send(res, 200, {
        access_token: opts.accessToken,
        expires_in: String(opts.expiresIn),
        expires_on: String(now + opts.expiresIn),
        not_before: String(now),
        resource: 'https://management.azure.com/',
        token_type: 'Bearer',
      });
    }
    // ARM
    if (r.headers.authorization !== `Bearer ${opts.accessToken}`) return armErr(res, 401, 'AuthenticationFailed', 'Authentication failed.');
    if (r.query.get('api-version') !== '2023-05-01') return armErr(res, 400, 'InvalidApiVersionParameter', 'The api-version is invalid.');
    if (r.method === 'GET' && r.path === GROUPS) {
      const all = [...groups.values()];
      const skip = Number(r.query.get('$skipToken') ?? 0);
      const page = all.slice(skip, skip + pageSize);
      const next = skip + pageSize < all.length ? `${base}${GROUPS}?api-version=2023-05-01&$skipToken=${skip + pageSize}` : undefined;
      return send(res, 200, next ? { value: page, nextLink: next } : { value: page });
    }
    if (!r.path.startsWith(GROUPS + '/')) return armErr(res, 404, 'InvalidResourceType', 'not found');
    const name = r.path.slice(GROUPS.length + 1);
    if (r.method === 'PUT') {
      if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63) return armErr(res, 400, 'ContainerGroupNameInvalid', `The container group name '${name}' is invalid.`);
      if (!(r.headers['content-type'] ?? '').includes('application/json')) return armErr(res, 415, 'UnsupportedMediaType', 'json only');
      const problems = groupBodyProblems(r.body);
      if (problems.length) return armErr(res, 400, 'InvalidRequestContent', problems.join('; '));
      if (failPut) return armErr(res, failPut.status, failPut.code, failPut.message);
      const existed = groups.has(name);
      const stored = {
        id: r.path,
        name,
        type: 'Microsoft.ContainerInstance/containerGroups',
        location: r.body.location,
        tags: r.body.tags,
        identity: r.body.identity,
        properties: {
          ...r.body.properties,
          // secure values are never returned
          containers: r.body.properties.containers.map((c: any) => ({
            ...c,
            properties: { ...c.properties, environmentVariables: c.properties.environmentVariables?.map((e: any) => ({ name: e.name, value: e.value })) },
          })),
          provisioningState: existed ? 'Succeeded' : 'Pending',
        },
      };
      groups.set(name, stored);
      return send(res, existed ? 200 : 201, stored);
    }
    if (r.method === 'DELETE') {
      const g = groups.get(name);
      if (!g) return armErr(res, 404, 'ResourceNotFound', `The Resource 'Microsoft.ContainerInstance/containerGroups/${name}' was not found.`);
      groups.delete(name);
      return send(res, 200, g);
    }
    return armErr(res, 405, 'MethodNotAllowed', 'no');
  };
  return {
    handler,
    groups,
    tokenRequests,
    imdsRequests,
    setBase(u: string) {
      base = u;
    },
    setPageSize(n: number) {
      pageSize = n;
    },
    failNextPuts(f: typeof failPut) {
      failPut = f;
    },
  };
}

describe('cloudContainerProvider', () => {
  const azure = fakeAzure({ accessToken: 'arm-token-1', expiresIn: 3600 });
  let srv: Awaited<ReturnType<typeof standIn>>;
  const provider = (over: Partial<Parameters<typeof cloudContainerProvider>[0]> = {}) =>
    cloudContainerProvider({
      subscriptionId: SUB,
      resourceGroup: RG,
      subnetId: SUBNET,
      location: 'westeurope',
      image: 'eideracr.azurecr.io/eider/agent:test',
      registryServer: 'eideracr.azurecr.io',
      registryIdentityId: IDENTITY,
      priceVcpuHour: 0.0405,
      priceMemoryGbHour: 0.00445,
      managementUrl: srv.url,
      token: azureManagementToken({ tenantId: TENANT, clientId: CLIENT, clientSecret: CLIENT_SECRET, loginUrl: srv.url }),
      ...over,
    });

  beforeAll(async () => {
    srv = await standIn(azure.handler);
    azure.setBase(srv.url);
  });
  afterAll(async () => srv?.close());

  const armRequests = (n: number) => srv.requests.slice(n).filter((r) => r.path.startsWith('/subscriptions/'));

  it('provision PUTs a private, tagged container group with the token as a secure value', async () => {
    azure.groups.clear();
    const p = provider();
    const req = request({ cpu: 1, memoryGb: 1.5, env: { ...request().env, CATALOG_CLIENT_SECRET: 's3cr3t-value', AWS_ACCESS_KEY: 'AKIAEXAMPLE', DB_PASSWORD: 'pw-value' } });
    const n = srv.requests.length;
    const { providerRef } = await p.provision(req);
    const [put] = armRequests(n);
    const path = `${GROUPS}/eider-agent-${req.elasticId}`;
    expect(put.method).toBe('PUT');
    expect(put.path).toBe(path);
    expect(Object.fromEntries(put.query)).toEqual({ 'api-version': '2023-05-01' });
    expect(put.headers.authorization).toBe('Bearer arm-token-1');
    expect(providerRef).toBe(path);
    const b = put.body;
    expect(groupBodyProblems(b)).toEqual([]);
    expect(b.location).toBe('westeurope');
    expect(b.tags).toEqual({ 'eider-managed': 'true', 'eider-elastic-id': req.elasticId, 'eider-agent-id': req.agentId });
    expect(b.identity).toEqual({ type: 'UserAssigned', userAssignedIdentities: { [IDENTITY]: {} } });
    expect(b.properties).toMatchObject({
      osType: 'Linux',
      restartPolicy: 'Never',
      sku: 'Standard',
      subnetIds: [{ id: SUBNET }],
      imageRegistryCredentials: [{ server: 'eideracr.azurecr.io', identity: IDENTITY }],
    });
    expect(b.properties.ipAddress).toBeUndefined();
    expect(b.properties.containers).toHaveLength(1);
    const c = b.properties.containers[0];
    expect(c.name).toBe('agent');
    expect(c.properties.image).toBe('eideracr.azurecr.io/eider/agent:test');
    expect(c.properties.resources).toEqual({ requests: { cpu: 1, memoryInGB: 1.5 } });
    const env = Object.fromEntries(c.properties.environmentVariables.map((e: any) => [e.name, e]));
    expect(env.BOOTSTRAP_TOKEN).toEqual({ name: 'BOOTSTRAP_TOKEN', secureValue: TOKEN });
    expect(env.CATALOG_CLIENT_SECRET).toEqual({ name: 'CATALOG_CLIENT_SECRET', secureValue: 's3cr3t-value' });
    expect(env.AWS_ACCESS_KEY).toEqual({ name: 'AWS_ACCESS_KEY', secureValue: 'AKIAEXAMPLE' });
    expect(env.DB_PASSWORD).toEqual({ name: 'DB_PASSWORD', secureValue: 'pw-value' });
    expect(env.CONTROL_PLANE_URL).toEqual({ name: 'CONTROL_PLANE_URL', value: 'http://cp:8080' });
    expect(env.AGENT_NAME).toEqual({ name: 'AGENT_NAME', value: 'elastic-1' });
    // the token is in no plain value anywhere in the request
    for (const e of c.properties.environmentVariables) expect(e.value ?? '').not.toContain(TOKEN);
    expect(JSON.stringify(b).split(TOKEN)).toHaveLength(2);
  });

  it('without a registry identity the group has neither identity nor registry credentials', async () => {
    const p = provider({ registryServer: null, registryIdentityId: null, image: 'ghcr.io/eider/agent:test' });
    const n = srv.requests.length;
    await p.provision(request());
    const [put] = armRequests(n);
    expect(put.body.identity).toBeUndefined();
    expect(put.body.properties.imageRegistryCredentials).toBeUndefined();
  });

  it('a repeated provision PUTs the same name again and returns the same ref', async () => {
    azure.groups.clear();
    const p = provider();
    const req = request();
    const a = await p.provision(req);
    const b = await p.provision(req);
    expect(b).toEqual(a);
    expect(azure.groups.size).toBe(1);
  });

  it('terminate DELETEs the resource id; gone already is success', async () => {
    azure.groups.clear();
    const p = provider();
    const { providerRef } = await p.provision(request());
    const n = srv.requests.length;
    await p.terminate(providerRef);
    await p.terminate(providerRef);
    const dels = armRequests(n);
    expect(dels.map((r) => `${r.method} ${r.path}?${r.query}`)).toEqual([
      `DELETE ${providerRef}?api-version=2023-05-01`,
      `DELETE ${providerRef}?api-version=2023-05-01`,
    ]);
    expect(dels.every((r) => r.headers.authorization === 'Bearer arm-token-1')).toBe(true);
    expect(azure.groups.size).toBe(0);
    await expect(p.terminate('https://elsewhere.example/x')).rejects.toThrow(/not a container group resource id/);
  });

  it('list follows nextLink, keeps only eider-managed groups and maps tags and running state', async () => {
    azure.groups.clear();
    azure.setPageSize(2);
    const p = provider();
    const reqs = [request(), request(), request(), request()];
    const refs = [];
    for (const r of reqs) refs.push((await p.provision(r)).providerRef);
    const g = (i: number) => azure.groups.get(`eider-agent-${reqs[i].elasticId}`);
    g(1).properties.instanceView = { state: 'Stopped', events: [] };
    g(2).properties.provisioningState = 'Failed';
    g(3).properties.instanceView = { state: 'Running', events: [] };
    azure.groups.set('not-ours', { id: `${GROUPS}/not-ours`, name: 'not-ours', tags: { team: 'x' }, properties: { provisioningState: 'Succeeded' } });
    azure.groups.set('untagged', { id: `${GROUPS}/untagged`, name: 'untagged', properties: { provisioningState: 'Succeeded' } });
    const n = srv.requests.length;
    const listed = await p.list();
    const gets = armRequests(n);
    expect(gets).toHaveLength(3); // six groups, two a page
    expect(gets.every((r) => r.method === 'GET' && r.path === GROUPS && r.query.get('api-version') === '2023-05-01')).toBe(true);
    expect(gets.map((r) => r.query.get('$skipToken'))).toEqual([null, '2', '4']);
    expect(listed).toEqual([
      { providerRef: refs[0], elasticId: reqs[0].elasticId, running: true },
      { providerRef: refs[1], elasticId: reqs[1].elasticId, running: false },
      { providerRef: refs[2], elasticId: reqs[2].elasticId, running: false },
      { providerRef: refs[3], elasticId: reqs[3].elasticId, running: true },
    ]);
  });

  it('ARM errors surface status, code and message, with environment values masked', async () => {
    const p = provider();
    azure.failNextPuts({ status: 409, code: 'ContainerGroupQuotaReached', message: 'Resource type Microsoft.ContainerInstance/containerGroups has reached its quota.' });
    try {
      await expect(p.provision(request())).rejects.toThrow(/409: ContainerGroupQuotaReached: Resource type .* has reached its quota/);
      azure.failNextPuts({ status: 400, code: 'InvalidEnvironmentVariable', message: `The value '${TOKEN}' is invalid.` });
      const e = await p.provision(request()).catch((x) => x);
      expect(e.message).toMatch(/400: InvalidEnvironmentVariable/);
      expect(e.message).not.toContain(TOKEN);
    } finally {
      azure.failNextPuts(null);
    }
    const wrongToken = provider({ token: async () => 'stale' });
    await expect(wrongToken.list()).rejects.toThrow(/401: AuthenticationFailed/);
  });

  it('hourlyCost is vCPU and memory priced, rounded to 4 decimals', () => {
    const p = provider();
    expect(p.name).toBe('cloud_container');
    expect(p.hourlyCost(1, 1.5)).toBe(0.0472); // 0.0405 + 0.006675
    expect(p.hourlyCost(4, 16)).toBe(0.2332);
    expect(p.hourlyCost(0, 0)).toBe(0);
  });
});

describe('azureManagementToken', () => {
  let srv: Awaited<ReturnType<typeof standIn>>;
  const azure = fakeAzure({ accessToken: 'tok-a', expiresIn: 3600 });
  const shortLived = fakeAzure({ accessToken: 'tok-b', expiresIn: 200 });
  let short: Awaited<ReturnType<typeof standIn>>;
  beforeAll(async () => {
    srv = await standIn(azure.handler);
    short = await standIn(shortLived.handler);
  });
  afterAll(async () => {
    await srv?.close();
    await short?.close();
  });

  it('client credentials: one token request serves many calls, concurrent ones included', async () => {
    const before = azure.tokenRequests.length;
    const get = azureManagementToken({ tenantId: TENANT, clientId: CLIENT, clientSecret: CLIENT_SECRET, loginUrl: srv.url, imdsUrl: srv.url });
    expect(await get()).toBe('tok-a');
    expect(await get()).toBe('tok-a');
    expect(await Promise.all([get(), get()])).toEqual(['tok-a', 'tok-a']);
    expect(azure.tokenRequests.length - before).toBe(1);
    const r = azure.tokenRequests.at(-1)!;
    expect(r.method).toBe('POST');
    expect(r.path).toBe(`/${TENANT}/oauth2/v2.0/token`);
    expect(Object.fromEntries(new URLSearchParams(r.raw))).toEqual({
      grant_type: 'client_credentials',
      client_id: CLIENT,
      client_secret: CLIENT_SECRET,
      scope: 'https://management.azure.com/.default',
    });
    expect(azure.imdsRequests).toHaveLength(0);
  });

  it('managed identity (IMDS) when the service principal is incomplete: one request for two calls', async () => {
    const before = azure.imdsRequests.length;
    const get = azureManagementToken({ tenantId: TENANT, clientId: CLIENT, imdsUrl: srv.url, loginUrl: srv.url });
    expect(await Promise.all([get(), get()])).toEqual(['tok-a', 'tok-a']);
    expect(await get()).toBe('tok-a');
    expect(azure.imdsRequests.length - before).toBe(1);
    const r = azure.imdsRequests.at(-1)!;
    expect(r.method).toBe('GET');
    expect(r.headers.metadata).toBe('true');
    expect(Object.fromEntries(r.query)).toEqual({ 'api-version': '2018-02-01', resource: 'https://management.azure.com/' });
  });

  it('a token within five minutes of expiry is fetched again', async () => {
    const cc = azureManagementToken({ tenantId: TENANT, clientId: CLIENT, clientSecret: CLIENT_SECRET, loginUrl: short.url });
    await cc();
    await cc();
    expect(shortLived.tokenRequests).toHaveLength(2);
    const mi = azureManagementToken({ imdsUrl: short.url });
    await mi();
    await mi();
    expect(shortLived.imdsRequests).toHaveLength(2);
  });

  it('a refused token request names the status and OAuth error code only', async () => {
    const get = azureManagementToken({ tenantId: TENANT, clientId: CLIENT, clientSecret: 'wrong-secret', loginUrl: srv.url });
    const e = await get().catch((x) => x);
    expect(e.message).toBe('azure management token request answered 401: invalid_client');
    // a failure is not cached
    const again = await get().catch((x) => x);
    expect(again).toBeInstanceOf(Error);
  });
});
