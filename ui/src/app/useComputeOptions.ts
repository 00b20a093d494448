// The sizes elastic compute can provision. Only agent managers may read them (anyone else is answered 403), so for
// others (and callers that do not want them) this asks nothing and answers null: "unknown", not "elastic compute is off".
import { call } from '../api/client.ts';
import type { ComputeOption } from '../api/types.ts';
import { hasPermission, useSession } from './session.tsx';
import { useAsync, type Async } from './useAsync.ts';

export function useComputeOptions(wanted = true): Async<ComputeOption[] | null> {
  const { user } = useSession();
  const ask = wanted && hasPermission(user, 'agents:manage');
  return useAsync((signal) => (ask ? call('GET /api/admin/agents/compute-options', { signal }) : Promise.resolve(null)), [ask]);
}

/** The currency compute is priced in: the chosen size's, else the first size's (one provider prices them all). */
export function currencyOf(options: ComputeOption[] | null | undefined, size?: string): string | null {
  if (!options?.length) return null;
  return (options.find((o) => o.size === size) ?? options[0]).currency;
}
