// Whether this workspace's assistant answers: the rail shows its button only then (Ctrl+I opens the panel anyway,
// and the panel says why it is unavailable, e.g. switched off on the server).
import { useAsync } from '../app/useAsync.ts';
import { listConversations } from './assistantApi.ts';

export function useAssistantAvailable(ws: string | null | undefined): boolean {
  const probe = useAsync((signal) => (ws ? listConversations(ws, signal).then(() => true, () => false) : Promise.resolve(false)), [ws]);
  return probe.data === true;
}
