// The assistant's service account (spec: ASSISTANT_ENABLED "creates its service account at startup"). Tools never
// act as it (a turn acts with a token of the asking user); it is the actor the audit trail names for the turn tokens
// the assistant issues and revokes on users' behalf, and administrators see it among the service accounts.
import type { Queryable } from '../../runtime/db.ts';
import { createServiceAccount } from '../identity.ts';

const ASSISTANT_ACCOUNT_NAME = 'assistant';

/** The assistant's service account id, created once (replicas starting together take turns under a lock). */
export async function ensureAssistantAccount(q: Queryable): Promise<string> {
  const find = async (tx: Queryable) =>
    (await tx.query<{ id: string }>(`select id from users where kind = 'service_account' and name = $1 order by created_at limit 1`, [ASSISTANT_ACCOUNT_NAME]))[0]?.id;
  const found = await find(q);
  if (found) return found;
  await q.query(`select pg_advisory_xact_lock(hashtext('eider:assistant-account'))`);
  return (await find(q)) ?? (await createServiceAccount(q, { name: ASSISTANT_ACCOUNT_NAME })).id;
}
