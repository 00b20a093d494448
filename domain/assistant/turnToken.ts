// The token a turn's tools act with: a personal access token of the asking user, minted when the turn starts,
// living at most ASSISTANT_PAT_TTL_S, and deleted when the turn ends (a turn whose replica died loses it when its
// lease lapses, see turnSlots.ts). It is an ordinary token, so the REST API judges every tool call exactly as it
// judges the user; it never leaves the process: not to the model, a log, a span or a response.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../runtime/db.ts';
import { PAT_PREFIX, sha256 } from '../identity.ts';

export interface TurnToken {
  id: string;
  token: string;
}

export async function mintTurnToken(q: Queryable, userId: string, ttlS: number): Promise<TurnToken> {
  const token = PAT_PREFIX + randomBytes(32).toString('base64url');
  const [row] = await q.query<{ id: string }>(
    `insert into access_tokens (user_id, token_hash, expires_at) values ($1, $2, now() + make_interval(secs => $3)) returning id`,
    [userId, sha256(token), ttlS],
  );
  return { id: row.id, token };
}

export async function revokeTurnToken(q: Queryable, tokenId: string): Promise<void> {
  await q.query(`delete from access_tokens where id = $1`, [tokenId]);
}
