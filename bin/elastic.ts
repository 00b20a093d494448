// Wires elastic compute (ELASTIC_COMPUTE_ENABLED): the provider ELASTIC_PROVIDER names, the environment a
// provisioned agent starts with, and the settings the pool and the elastic-agent actors follow.
import { join, resolve } from 'node:path';
import type { Config } from '../runtime/config.ts';
import type { Db } from '../runtime/db.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ComputeProvider } from '../runtime/compute/provider.ts';
import { processProvider } from '../runtime/compute/processProvider.ts';
import { nullProvider } from '../runtime/compute/nullProvider.ts';
import { dockerProvider } from '../runtime/compute/dockerProvider.ts';
import { azureManagementToken, cloudContainerProvider } from '../runtime/compute/cloudContainerProvider.ts';
import { elasticCompute, type ElasticCompute } from '../actors/elasticCompute.ts';
import type { AgentLink } from '../actors/agentLink.ts';
import type { ElasticSettings } from '../domain/elastic.ts';
import { agentEnvironment } from './agentEnv.ts';

const EIDER = join(import.meta.dirname, 'eider.ts');

const localProvider = (dataDir: string) => processProvider({ root: join(resolve(dataDir), 'elastic'), command: [process.execPath, EIDER, 'agent'] });

export function computeProvider(config: Config): ComputeProvider {
  switch (config.ELASTIC_PROVIDER) {
    case 'process':
      return localProvider(config.DATA_DIR);
    case 'docker':
      return dockerProvider({
        host: config.ELASTIC_DOCKER_HOST,
        network: config.ELASTIC_DOCKER_NETWORK,
        image: config.ELASTIC_AGENT_IMAGE,
        reserveCpu: config.ELASTIC_DOCKER_RESERVE_CPU,
        reserveMemoryGb: config.ELASTIC_DOCKER_RESERVE_MEMORY_GB,
      });
    case 'cloud_container':
      return cloudContainerProvider({
        subscriptionId: config.ELASTIC_CLOUD_SUBSCRIPTION_ID!,
        resourceGroup: config.ELASTIC_CLOUD_RESOURCE_GROUP!,
        subnetId: config.ELASTIC_CLOUD_SUBNET_ID!,
        location: config.ELASTIC_CLOUD_LOCATION,
        image: config.ELASTIC_AGENT_IMAGE,
        registryServer: config.ELASTIC_REGISTRY_SERVER,
        registryIdentityId: config.ELASTIC_REGISTRY_IDENTITY_ID,
        priceVcpuHour: config.ELASTIC_CLOUD_PRICE_VCPU_HOUR,
        priceMemoryGbHour: config.ELASTIC_CLOUD_PRICE_MEMORY_GB_HOUR,
        token: azureManagementToken({ tenantId: config.AZURE_TENANT_ID || undefined, clientId: config.AZURE_CLIENT_ID || undefined, clientSecret: config.AZURE_CLIENT_SECRET || undefined }),
      });
    default:
      return nullProvider();
  }
}

export function elasticSettings(config: Config, provider: ComputeProvider): ElasticSettings {
  return {
    enabled: config.ELASTIC_COMPUTE_ENABLED,
    provider: provider.name,
    defaultCpu: config.ELASTIC_DEFAULT_CPU,
    defaultMemoryGb: config.ELASTIC_DEFAULT_MEMORY_GB,
    maxAgentsPerPool: config.ELASTIC_MAX_AGENTS_PER_POOL,
    provisioningDeadlineMs: config.ELASTIC_PROVISIONING_DEADLINE_S * 1000,
    idleTimeoutMs: config.ELASTIC_IDLE_TIMEOUT_S * 1000,
    maxLifetimeMs: config.ELASTIC_MAX_LIFETIME_S * 1000,
    currency: config.ELASTIC_CLOUD_PRICE_CURRENCY,
    hourlyCost: (cpu, memoryGb) => provider.hourlyCost(cpu, memoryGb),
    agentCatalogUrl: config.ELASTIC_AGENT_CATALOG_BASE_URL,
  };
}

/** Elastic compute when enabled, else undefined (elastic routes answer 422, no reaper runs). */
export function startElasticCompute(deps: { config: Config; db: Db; link: AgentLink; logger: Logger }): ElasticCompute | undefined {
  const { config, db } = deps;
  if (!config.ELASTIC_COMPUTE_ENABLED) return undefined;
  const provider = computeProvider(config);
  const local = provider.name === 'process';
  return elasticCompute({
    db,
    settings: elasticSettings(config, provider),
    provider,
    link: deps.link,
    logger: deps.logger.child({ part: 'elastic' }),
    async agentEnv(extra) {
      const configured = config.ELASTIC_CONTROL_PLANE_URL as unknown;
      let controlPlane = Array.isArray(configured) ? configured.join(',') : ((configured as string | null) ?? '');
      if (!controlPlane) {
        // A local process dials the live replicas on this machine, like the bundled agent of `eider up`.
        const replicas = await db.query<{ internal_url: string }>(`select internal_url from replicas where not draining order by id`);
        controlPlane = replicas.map((r) => `${r.internal_url.replace(/^http/, 'ws')}/agents/connect`).join(',');
      }
      const connection = { CONTROL_PLANE_URL: controlPlane, ...extra };
      const own = config.ELASTIC_AGENT_ENV as Record<string, unknown>;
      const applied = Object.fromEntries(Object.entries(own).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
      // A local agent inherits the allow-listed basics (PATH, HOME…) as the bundled one does; a container or a
      // cloud instance starts from its image's environment. ELASTIC_AGENT_ENV is applied last.
      const base = local
        ? agentEnvironment(process.env, { RESULTS_HTTP_PORT: '0', RESULTS_HTTP_HOST: '127.0.0.1', ...connection })
        : connection;
      return { ...base, ...applied };
    },
  });
}

/**
 * Stops every elastic `process` agent under DATA_DIR/elastic (`eider up` stopping, its api replicas already down):
 * each was started in a process group of its own, so nothing else would. Their elastic actors find them gone at the
 * next start (the elastic reaper's reconciliation).
 */
export async function stopLocalElasticAgents(dataDir: string, logger: Logger): Promise<number> {
  const provider = localProvider(dataDir);
  const running = (await provider.list()).filter((i) => i.running);
  await Promise.all(running.map((i) => provider.terminate(i.providerRef)));
  if (running.length) logger.info({ agents: running.length }, 'elastic agents stopped');
  return running.length;
}
