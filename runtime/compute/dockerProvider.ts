// Elastic agents as Docker containers, through the Engine API (v1.41: Docker 20.10, Debian's docker.io, and every
// later engine) of one daemon reached over TCP or a unix socket. The container name carries the elastic id, so a repeated provision finds the container it created; labels
// carry the size, so the capacity check needs no state of its own.
import { request } from 'node:http';
import { AGENT_IMAGE_USER } from './agentImage.ts';
import { ProvisionRefused, type ComputeProvider, type ManagedInstance, type ProvisionRequest } from './provider.ts';

export interface DockerProviderOptions {
  /** tcp://host:port, http://host:port or unix:///path/to/docker.sock */
  host: string;
  network: string;
  image: string;
  /** CPUs and GiB of memory left to the host itself and to whatever else runs on it. */
  reserveCpu: number;
  reserveMemoryGb: number;
  pidsLimit?: number;
}

const API = '/v1.41';
const GIB = 2 ** 30;
const TIMEOUT_MS = 30_000;
const LABEL = {
  managed: 'io.eider.managed',
  elasticId: 'io.eider.elastic-id',
  agentId: 'io.eider.agent-id',
  cpu: 'io.eider.cpu',
  memoryGb: 'io.eider.memory-gb',
} as const;
const MANAGED_FILTER = encodeURIComponent(JSON.stringify({ label: [`${LABEL.managed}=true`] }));

export interface Target {
  socketPath?: string;
  hostname?: string;
  port?: number;
}

function parseHost(host: string): Target {
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  const url = host.startsWith('tcp://') ? `http://${host.slice('tcp://'.length)}` : host;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // the host itself stays out of the message: it comes from the environment
    throw new Error('docker host is not a valid tcp://, http:// or unix:// address');
  }
  if (u.protocol !== 'http:') throw new Error('docker host must be tcp://, http:// or unix://');
  return { hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : 2375 };
}

/** The daemon's answer: its JSON taken as `T` (each field read is checked), or the text of a non-JSON error. */
export interface Answer<T = unknown> {
  status: number;
  body: T | null;
}

/** The fields read from a container as the daemon lists or inspects it. */
interface DockerContainer {
  Id?: unknown;
  State?: unknown;
  Labels?: Record<string, string> | null;
}
const idOf = (c: DockerContainer | null) => (typeof c?.Id === 'string' && c.Id ? c.Id : undefined);

/** The daemon's answers are JSON or empty (204, 304); anything else is kept as text for the error message. */
export function dockerCall<T = unknown>(target: Target, method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...target,
        method,
        path: API + path,
        headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T | null });
        });
      },
    );
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`docker ${method} ${path.split('?')[0]} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

const SECRET_NAME = /^BOOTSTRAP_TOKEN$|_(TOKEN|SECRET|KEY|PASSWORD)$/;

/** The agent's environment values to mask: every secret, and any other value long enough not to mangle the text. */
function maskable(env: Record<string, string>): string[] {
  return Object.entries(env)
    .filter(([k, v]) => v.length >= (SECRET_NAME.test(k) ? 4 : 8))
    .map(([, v]) => v);
}

/** What the daemon said, without the agent's environment values (the bootstrap token above all). */
function dockerError(method: string, path: string, a: Answer, mask: string[] = []): Error {
  const said = typeof a.body === 'object' && a.body ? (a.body as { message?: unknown }).message : undefined;
  let message = typeof said === 'string' ? said : String(a.body ?? '');
  for (const v of mask) message = message.replaceAll(v, '***');
  return new Error(`docker ${method} ${path.split('?')[0]} answered ${a.status}${message ? `: ${message}` : ''}`);
}

const labelNumber = (labels: Record<string, string> | null | undefined, key: string) => {
  const n = Number(labels?.[key]);
  return Number.isFinite(n) ? n : 0;
};

export function dockerProvider(opts: DockerProviderOptions): ComputeProvider {
  const target = parseHost(opts.host);

  async function call<T = unknown>(method: string, path: string, body?: unknown, ok: number[] = [], mask: string[] = []): Promise<Answer<T>> {
    const a = await dockerCall<T>(target, method, path, body);
    if ((a.status >= 200 && a.status < 300) || ok.includes(a.status)) return a;
    throw dockerError(method, path, a, mask);
  }

  async function checkCapacity(req: ProvisionRequest) {
    const info = (await call<{ NCPU?: unknown; MemTotal?: unknown }>('GET', '/info')).body;
    const totalCpu = Number(info?.NCPU);
    const totalMemGb = Number(info?.MemTotal) / GIB;
    if (!Number.isFinite(totalCpu) || !Number.isFinite(totalMemGb)) throw new Error('docker /info has no NCPU or MemTotal');
    const filter = encodeURIComponent(JSON.stringify({ label: [`${LABEL.managed}=true`], status: ['running'] }));
    const running = (await call<Array<DockerContainer | null>>('GET', `/containers/json?filters=${filter}`)).body ?? [];
    let usedCpu = 0;
    let usedMemGb = 0;
    for (const c of running) {
      // a repeated provision must not count the container it is about to find again
      if (c?.Labels?.[LABEL.elasticId] === req.elasticId) continue;
      usedCpu += labelNumber(c?.Labels, LABEL.cpu);
      usedMemGb += labelNumber(c?.Labels, LABEL.memoryGb);
    }
    const freeCpu = totalCpu - opts.reserveCpu - usedCpu;
    const freeMemGb = totalMemGb - opts.reserveMemoryGb - usedMemGb;
    if (req.cpu > freeCpu || req.memoryGb > freeMemGb) {
      const r = (n: number) => Math.round(n * 100) / 100;
      throw new ProvisionRefused(
        `no room on the docker host for ${r(req.cpu)} CPU / ${r(req.memoryGb)} GB: ` +
          `${r(usedCpu)} CPU / ${r(usedMemGb)} GB in use by elastic agents of ${r(totalCpu)} CPU / ${r(totalMemGb)} GB, ` +
          `${r(opts.reserveCpu)} CPU / ${r(opts.reserveMemoryGb)} GB reserved`,
      );
    }
  }

  return {
    name: 'docker',

    async provision(req) {
      await checkCapacity(req);
      const name = `eider-agent-${req.elasticId}`;
      const env: Record<string, string> = { AGENT_DATA_DIR: '/data', DATA_DIR: '/data', ...req.env };
      const mask = maskable(req.env);
      const memoryBytes = Math.round(req.memoryGb * GIB);
      const body = {
        Image: opts.image,
        Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
        Labels: {
          [LABEL.managed]: 'true',
          [LABEL.elasticId]: req.elasticId,
          [LABEL.agentId]: req.agentId,
          [LABEL.cpu]: String(req.cpu),
          [LABEL.memoryGb]: String(req.memoryGb),
        },
        // Not root: nobody, whatever the image says (the data tmpfs below is that user's).
        User: AGENT_IMAGE_USER,
        HostConfig: {
          ReadonlyRootfs: true,
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges:true'],
          PidsLimit: opts.pidsLimit ?? 512,
          NanoCpus: Math.round(req.cpu * 1e9),
          Memory: memoryBytes,
          NetworkMode: opts.network,
          Tmpfs: {
            '/tmp': 'rw,noexec,nosuid,nodev,size=1g,mode=1777',
            // tmpfs pages count against the container's memory limit, so a larger size could never be filled
            '/data': `rw,nosuid,nodev,size=${Math.max(1, Math.floor(memoryBytes / 2 ** 20))}m,mode=0700,uid=65534,gid=65534`,
          },
          RestartPolicy: { Name: 'no' },
        },
      };
      const created = await call<DockerContainer>('POST', `/containers/create?name=${encodeURIComponent(name)}`, body, [409], mask);
      let id = created.status === 409 ? undefined : idOf(created.body);
      if (!id) {
        // 409: the name is taken by the container an earlier attempt created
        id = idOf((await call<DockerContainer>('GET', `/containers/${encodeURIComponent(name)}/json`, undefined, [], mask)).body);
        if (!id) throw new Error(`docker inspect of ${name} returned no Id`);
      }
      await call('POST', `/containers/${encodeURIComponent(id)}/start`, undefined, [304], mask);
      return { providerRef: id };
    },

    async terminate(providerRef) {
      await call('DELETE', `/containers/${encodeURIComponent(providerRef)}?force=true&v=true`, undefined, [404]);
    },

    async list() {
      const all = (await call<Array<DockerContainer | null>>('GET', `/containers/json?all=true&filters=${MANAGED_FILTER}`)).body ?? [];
      const out: ManagedInstance[] = [];
      for (const c of all) {
        const elasticId = c?.Labels?.[LABEL.elasticId];
        if (typeof c?.Id !== 'string' || typeof elasticId !== 'string') continue;
        out.push({ providerRef: c.Id, elasticId, running: c.State === 'running' });
      }
      return out;
    },

    hourlyCost() {
      return null;
    },
  };
}
