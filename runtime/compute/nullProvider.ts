// ELASTIC_PROVIDER=null, the spec's default: no compute at all.
import type { ComputeProvider } from './provider.ts';

/** ELASTIC_PROVIDER=null: accepts every request and starts nothing (the agent never dials home and is failed at
 *  its provisioning deadline). */
export function nullProvider(): ComputeProvider {
  return {
    name: 'null',
    provision: async (req) => ({ providerRef: `null:${req.elasticId}` }),
    terminate: async () => undefined,
    list: async () => [],
    hourlyCost: () => null,
  };
}
