// Elastic compute providers: what starts and stops the machines elastic agents run on (a local process, a Docker
// container, a cloud container group). The elastic-agent actor calls them through this interface only; which one
// runs is ELASTIC_PROVIDER, wired in bin/api.ts. Every call must tolerate repetition (effects run at least once).

export interface ProvisionRequest {
  /** The elastic incarnation's id: the instance's idempotency key and its name at the provider. */
  elasticId: string;
  agentId: string;
  /** The agent's display name (AGENT_NAME). */
  name: string;
  cpu: number;
  memoryGb: number;
  /** The agent's whole environment (CONTROL_PLANE_URL, BOOTSTRAP_TOKEN, AGENT_NAME, ELASTIC_AGENT_ENV…). */
  env: Record<string, string>;
}

export interface ManagedInstance {
  /** What `terminate` takes. */
  providerRef: string;
  /** The incarnation it was started for (from the provider's own labels, tags or files). */
  elasticId: string;
  /** false once the instance stopped on its own (exited container, dead process): nothing dials home from it. */
  running: boolean;
}

/** A provider refusing to start an instance (no room, bad configuration): the agent fails with this message. */
export class ProvisionRefused extends Error {}

export interface ComputeProvider {
  readonly name: 'process' | 'docker' | 'cloud_container' | 'null';
  /** Starts (or finds, when one exists for `elasticId`) the instance; resolves once the provider accepted it. */
  provision(req: ProvisionRequest): Promise<{ providerRef: string }>;
  /** Stops and removes the instance; an instance already gone is not an error. */
  terminate(providerRef: string): Promise<void>;
  /** Every instance this provider manages (for the reaper's reconciliation). */
  list(): Promise<ManagedInstance[]>;
  /** Hourly cost of a size in the configured currency, or null when this provider has no price (local compute). */
  hourlyCost(cpu: number, memoryGb: number): number | null;
}
