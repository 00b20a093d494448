// TRUSTED_PROXIES: the peers whose X-Forwarded-For the api believes. An agent's result address is where the api
// later sends a Bearer token, so a header from anyone else must not choose it (SSRF into the private network).
import { BlockList, isIP } from 'node:net';

export interface TrustedProxies {
  list: BlockList;
  trusts(address: string): boolean;
}

const strip = (a: string) => (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a);

/** Parses a comma-separated list of addresses and CIDR ranges; throws naming the bad entry. */
export function parseTrustedProxies(value: string): TrustedProxies {
  const list = new BlockList();
  for (const raw of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [addr, bits, extra] = raw.split('/');
    const family = isIP(addr);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || extra !== undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new Error(`TRUSTED_PROXIES: '${raw}' is not an IP address or CIDR range (expected e.g. 10.0.0.0/8,::1)`);
    }
    list.addSubnet(addr, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return {
    list,
    trusts: (address: string) => {
      const a = strip(address);
      const family = isIP(a);
      return family !== 0 && list.check(a, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

// Addresses an agent may never name as its own: unspecified, link-local (cloud metadata at 169.254.169.254),
// multicast and broadcast.
const NEVER = new BlockList();
NEVER.addSubnet('0.0.0.0', 8, 'ipv4');
NEVER.addSubnet('169.254.0.0', 16, 'ipv4');
NEVER.addSubnet('224.0.0.0', 4, 'ipv4');
NEVER.addAddress('255.255.255.255', 'ipv4');
NEVER.addAddress('::', 'ipv6');
NEVER.addSubnet('fe80::', 10, 'ipv6');
NEVER.addSubnet('ff00::', 8, 'ipv6');

/**
 * The client address of a connection: the peer, unless the peer is a trusted proxy; then X-Forwarded-For read from
 * the right, skipping trusted proxies, to the first address a trusted proxy saw. Anything that is not a usable IP
 * address falls back to the peer.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  const direct = strip(peer);
  if (!forwardedFor || !trusted.trusts(direct)) return direct;
  const hops = forwardedFor.split(',').map((s) => strip(s.trim()));
  let candidate = direct;
  for (let i = hops.length - 1; i >= 0; i--) {
    candidate = hops[i];
    if (!trusted.trusts(candidate)) break;
  }
  const family = isIP(candidate);
  if (!family || NEVER.check(candidate, family === 6 ? 'ipv6' : 'ipv4')) return direct;
  return candidate;
}
