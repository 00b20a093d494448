// The network elastic agents' containers join: a user-defined Docker bridge marked internal (no route out of the
// host, no traffic between containers), on which the host itself answers only on the ports of the control plane,
// the catalog service and the object store. Docker's own rules cover forwarding; what a container may open on the
// host is an iptables chain of ours on the bridge's input.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { dockerCall } from './dockerProvider.ts';

export interface AgentNetworkOptions {
  socketPath: string;
  name: string;
  /** TCP ports on the host (the api or load balancer, the catalog service, the object store) agents may reach. */
  allowPorts: readonly number[];
}

export interface AgentNetwork {
  name: string;
  /** The bridge's interface on the host. */
  bridge: string;
  /** The host's address on the bridge: where agents reach the control plane, catalog and object store. */
  gateway: string;
  subnet: string;
}

/** A call of the Engine API on the daemon's socket (the provider's own client). */
const engine = (socketPath: string, method: string, path: string, body?: unknown) => dockerCall<DockerNetwork>({ socketPath }, method, path, body);

/** The fields read from a network as the daemon inspects it. */
interface DockerNetwork {
  Id?: unknown;
  Internal?: unknown;
  Options?: Record<string, string>;
  IPAM?: { Config?: Array<{ Gateway?: string; Subnet?: string }> };
}

/** The bridge interface and chain names for a network name (an interface name has at most 15 characters). */
function agentNetworkNames(name: string): { bridge: string; chain: string } {
  const h = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return { bridge: `eider-${h}`, chain: `EIDER-AGENTS-${h}` };
}

const iptables = (...args: string[]) => execFileSync('iptables', ['-w', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
const iptablesOk = (...args: string[]) => {
  try {
    iptables(...args);
    return true;
  } catch {
    return false;
  }
};

/** Creates the network when missing and (re)writes its input rules; repeatable. Needs root (iptables). */
export async function ensureAgentNetwork(opts: AgentNetworkOptions): Promise<AgentNetwork> {
  const { bridge, chain } = agentNetworkNames(opts.name);
  let net = await engine(opts.socketPath, 'GET', `/networks/${encodeURIComponent(opts.name)}`);
  if (net.status === 404) {
    const created = await engine(opts.socketPath, 'POST', '/networks/create', {
      Name: opts.name,
      Driver: 'bridge',
      Internal: true,
      CheckDuplicate: true,
      Labels: { 'io.eider.managed': 'true' },
      Options: { 'com.docker.network.bridge.name': bridge, 'com.docker.network.bridge.enable_icc': 'false' },
    });
    if (created.status !== 201 && created.status !== 409) throw new Error(`docker network create ${opts.name} answered ${created.status}: ${JSON.stringify(created.body)}`);
    net = await engine(opts.socketPath, 'GET', `/networks/${encodeURIComponent(opts.name)}`);
  }
  if (net.status !== 200) throw new Error(`docker network inspect ${opts.name} answered ${net.status}: ${JSON.stringify(net.body)}`);
  if (net.body?.Internal !== true) throw new Error(`docker network ${opts.name} exists but is not internal: agents on it could reach anything`);
  const ifname = net.body?.Options?.['com.docker.network.bridge.name'] ?? `br-${String(net.body?.Id).slice(0, 12)}`;
  const config = net.body?.IPAM?.Config?.[0];
  if (!config?.Gateway || !config?.Subnet) throw new Error(`docker network ${opts.name} has no gateway address`);

  // Our chain, rewritten whole: replies to what the host opened, the allowed ports, nothing else.
  if (!iptablesOk('-N', chain)) iptables('-F', chain);
  iptables('-A', chain, '-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT');
  for (const port of opts.allowPorts) iptables('-A', chain, '-p', 'tcp', '--dport', String(port), '-j', 'ACCEPT');
  iptables('-A', chain, '-j', 'DROP');
  if (!iptablesOk('-C', 'INPUT', '-i', ifname, '-j', chain)) iptables('-I', 'INPUT', '-i', ifname, '-j', chain);
  return { name: opts.name, bridge: ifname, gateway: config.Gateway, subnet: config.Subnet };
}

/** Removes the network and its input rules (tests, and an operator tearing it down). */
export async function removeAgentNetwork(socketPath: string, name: string): Promise<void> {
  const { chain } = agentNetworkNames(name);
  const net = await engine(socketPath, 'GET', `/networks/${encodeURIComponent(name)}`);
  const ifname = net.status === 200 ? (net.body?.Options?.['com.docker.network.bridge.name'] ?? `br-${String(net.body?.Id).slice(0, 12)}`) : agentNetworkNames(name).bridge;
  while (iptablesOk('-D', 'INPUT', '-i', ifname, '-j', chain));
  if (iptablesOk('-F', chain)) iptablesOk('-X', chain);
  if (net.status === 200) {
    const r = await engine(socketPath, 'DELETE', `/networks/${encodeURIComponent(name)}`);
    if (r.status !== 204 && r.status !== 404) throw new Error(`docker network rm ${name} answered ${r.status}: ${JSON.stringify(r.body)}`);
  }
}
