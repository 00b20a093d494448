// Elastic agents as Azure Container Instances container groups (ARM REST, api-version 2023-05-01), one group per
// incarnation, named after its elastic id so the PUT is idempotent, placed in a VNet subnet (no public address) and
// tagged so `list` can tell ours from anything else in the resource group.
import { ProvisionRefused, type ComputeProvider, type ManagedInstance } from './provider.ts';

export interface CloudContainerProviderOptions {
  subscriptionId: string;
  resourceGroup: string;
  /** Full resource id of the delegated subnet the groups join. */
  subnetId: string;
  location: string;
  image: string;
  /** Registry login server (myacr.azurecr.io) pulled from with `registryIdentityId`; both null for a public image. */
  registryServer: string | null;
  /** Resource id of the user-assigned identity allowed to pull from the registry. */
  registryIdentityId: string | null;
  priceVcpuHour: number;
  priceMemoryGbHour: number;
  /** default https://management.azure.com */
  managementUrl?: string;
  /** An ARM bearer token (see azureManagementToken). */
  token: () => Promise<string>;
}

const API_VERSION = '2023-05-01';
const TIMEOUT_MS = 60_000;
const TAG = { managed: 'eider-managed', elasticId: 'eider-elastic-id', agentId: 'eider-agent-id' } as const;
/** Variables whose value ACI must not show back (portal, GET): sent as secureValue. */
const SECRET_NAME = /^BOOTSTRAP_TOKEN$|_(TOKEN|SECRET|KEY|PASSWORD)$/;

/** The agent's environment values to mask: every secret, and any other value long enough not to mangle the text. */
function maskable(env: Record<string, string>): string[] {
  return Object.entries(env)
    .filter(([k, v]) => v.length >= (SECRET_NAME.test(k) ? 4 : 8))
    .map(([, v]) => v);
}

/** A page of ARM's container group list, as far as it is read (every field checked before use). */
interface ContainerGroupPage {
  value?: Array<{ id?: unknown; tags?: Record<string, unknown>; properties?: { instanceView?: { state?: unknown }; provisioningState?: unknown } } | null>;
  nextLink?: unknown;
}

/** ARM's error body is {error: {code, message}}; values the caller knows to be sensitive are masked out of it. */
async function armError(what: string, res: Response, mask: string[]): Promise<Error> {
  let detail = '';
  try {
    const b = (await res.json()) as { error?: { code?: unknown; message?: unknown }; code?: unknown; message?: unknown } | null;
    const e = b?.error ?? b;
    detail = [e?.code, e?.message].filter((x) => typeof x === 'string' && x).join(': ');
  } catch {
    // no JSON body
  }
  for (const v of mask) detail = detail.replaceAll(v, '***');
  return new Error(`azure container instances ${what} answered ${res.status}${detail ? `: ${detail}` : ''}`);
}

export function cloudContainerProvider(opts: CloudContainerProviderOptions): ComputeProvider {
  const mgmt = (opts.managementUrl ?? 'https://management.azure.com').replace(/\/+$/, '');
  const groupsPath =
    `/subscriptions/${encodeURIComponent(opts.subscriptionId)}/resourceGroups/${encodeURIComponent(opts.resourceGroup)}` +
    '/providers/Microsoft.ContainerInstance/containerGroups';

  async function arm(method: string, url: string, body?: unknown): Promise<Response> {
    const token = await opts.token();
    return fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  }

  return {
    name: 'cloud_container',

    async provision(req) {
      if (!(req.cpu > 0) || !(req.memoryGb > 0)) throw new ProvisionRefused('an elastic agent needs a positive CPU and memory size');
      // ACI names are lowercase letters, digits and hyphens; the tag keeps the id as given
      const path = `${groupsPath}/eider-agent-${req.elasticId.toLowerCase()}`;
      const withRegistry = Boolean(opts.registryServer && opts.registryIdentityId);
      const body = {
        location: opts.location,
        tags: { [TAG.managed]: 'true', [TAG.elasticId]: req.elasticId, [TAG.agentId]: req.agentId },
        ...(opts.registryIdentityId
          ? { identity: { type: 'UserAssigned', userAssignedIdentities: { [opts.registryIdentityId]: {} } } }
          : {}),
        properties: {
          osType: 'Linux',
          restartPolicy: 'Never',
          sku: 'Standard',
          subnetIds: [{ id: opts.subnetId }],
          ...(withRegistry ? { imageRegistryCredentials: [{ server: opts.registryServer, identity: opts.registryIdentityId }] } : {}),
          containers: [
            {
              name: 'agent',
              properties: {
                image: opts.image,
                resources: { requests: { cpu: req.cpu, memoryInGB: req.memoryGb } },
                environmentVariables: Object.entries(req.env).map(([name, v]) =>
                  SECRET_NAME.test(name) ? { name, secureValue: v } : { name, value: v },
                ),
              },
            },
          ],
        },
      };
      const res = await arm('PUT', `${mgmt}${path}?api-version=${API_VERSION}`, body);
      if (!res.ok) throw await armError('create', res, maskable(req.env));
      let id: unknown;
      try {
        id = ((await res.json()) as { id?: unknown } | null)?.id;
      } catch {
        // an empty body still means accepted; the id is the path
      }
      return { providerRef: typeof id === 'string' && id.startsWith('/') ? id : path };
    },

    async terminate(providerRef) {
      // the ref is appended to the management URL, so it must be a resource path and nothing else
      if (!providerRef.startsWith('/subscriptions/')) throw new Error('not a container group resource id');
      const res = await arm('DELETE', `${mgmt}${providerRef}?api-version=${API_VERSION}`);
      if (![200, 202, 204, 404].includes(res.status)) throw await armError('delete', res, []);
      await res.body?.cancel();
    },

    async list() {
      const out: ManagedInstance[] = [];
      let url: string | undefined = `${mgmt}${groupsPath}?api-version=${API_VERSION}`;
      while (url) {
        // the bearer token goes to the management endpoint only, whatever a nextLink says
        if (new URL(url).origin !== new URL(mgmt).origin) throw new Error('container group list nextLink leaves the management endpoint');
        const res = await arm('GET', url);
        if (!res.ok) throw await armError('list', res, []);
        const page = (await res.json()) as ContainerGroupPage | null;
        for (const g of page?.value ?? []) {
          const elasticId = g?.tags?.[TAG.elasticId];
          if (g?.tags?.[TAG.managed] !== 'true' || typeof g?.id !== 'string' || typeof elasticId !== 'string') continue;
          const stopped = g.properties?.instanceView?.state === 'Stopped' || g.properties?.provisioningState === 'Failed';
          out.push({ providerRef: g.id, elasticId, running: !stopped });
        }
        url = typeof page?.nextLink === 'string' && page.nextLink ? page.nextLink : undefined;
      }
      return out;
    },

    hourlyCost(cpu, memoryGb) {
      return Math.round((cpu * opts.priceVcpuHour + memoryGb * opts.priceMemoryGbHour) * 1e4) / 1e4;
    },
  };
}

export interface AzureTokenOptions {
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  /** default http://169.254.169.254 */
  imdsUrl?: string;
  /** default https://login.microsoftonline.com */
  loginUrl?: string;
}

const RESOURCE = 'https://management.azure.com/';
const REFRESH_EARLY_MS = 5 * 60_000;

/**
 * ARM tokens from a service principal (client credentials) when tenant, client and secret are all set, else from the
 * managed identity of the machine (IMDS). One token is kept until five minutes before it expires, and concurrent
 * callers share one request.
 */
export function azureManagementToken(opts: AzureTokenOptions): () => Promise<string> {
  let cached: { token: string; refreshAt: number } | null = null;
  let inflight: Promise<string> | null = null;

  async function fetchToken(): Promise<{ token: string; expiresAt: number }> {
    let res: Response;
    if (opts.tenantId && opts.clientId && opts.clientSecret) {
      const login = (opts.loginUrl ?? 'https://login.microsoftonline.com').replace(/\/+$/, '');
      res = await fetch(`${login}/${encodeURIComponent(opts.tenantId)}/oauth2/v2.0/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: opts.clientId,
          client_secret: opts.clientSecret,
          scope: `${RESOURCE}.default`,
        }).toString(),
        signal: AbortSignal.timeout(30_000),
      });
    } else {
      const imds = (opts.imdsUrl ?? 'http://169.254.169.254').replace(/\/+$/, '');
      const q = new URLSearchParams({ 'api-version': '2018-02-01', resource: RESOURCE });
      res = await fetch(`${imds}/metadata/identity/oauth2/token?${q}`, {
        headers: { Metadata: 'true' },
        signal: AbortSignal.timeout(30_000),
      });
    }
    const body = (await res.json().catch(() => null)) as { access_token?: unknown; error?: unknown; expires_on?: unknown; expires_in?: unknown } | null;
    if (!res.ok || typeof body?.access_token !== 'string') {
      // only the OAuth error code: the description can quote the client id or tenant
      const code = typeof body?.error === 'string' ? `: ${body.error}` : '';
      throw new Error(`azure management token request answered ${res.status}${code}`);
    }
    // IMDS gives expires_on (epoch seconds, as a string); Entra ID gives expires_in (seconds)
    const expiresOn = Number(body.expires_on);
    const expiresIn = Number(body.expires_in);
    const expiresAt = Number.isFinite(expiresOn) && expiresOn > 0
      ? expiresOn * 1000
      : Date.now() + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600) * 1000;
    return { token: body.access_token, expiresAt };
  }

  return async () => {
    if (cached && Date.now() < cached.refreshAt) return cached.token;
    inflight ??= fetchToken()
      .then(({ token, expiresAt }) => {
        cached = { token, refreshAt: expiresAt - REFRESH_EARLY_MS };
        return token;
      })
      .finally(() => {
        inflight = null;
      });
    return inflight;
  };
}
