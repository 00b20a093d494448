// The token a turn's tools act with: a personal access token of the asking user, minted when the turn starts,
// living at most ASSISTANT_PAT_TTL_S, and deleted when the turn ends (a turn whose replica died loses it when its
// lease lapses, see turnSlots.ts). It is an ordinary token, so the REST API judges every tool call exactly as it
// judges the user; it never leaves the process: not to the model, a log, a span or a response.
import { randomBytes } from 'node:crypto';
import { Schema } from 'effect';
import type { Db } from '../../runtime/db.ts';
import { rows, sql } from '../../runtime/sql.ts';
import { PAT_PREFIX, sha256 } from '../identity.ts';
import { appendAudit, type AuditOrigin } from '../audit.ts';
import { ensureAssistantAccount } from './serviceAccount.ts';

export interface TurnToken {
  id: string;
  token: string;
}

/** Mints the turn's token; the audit trail records the assistant's service account issuing it for the user. */
export async function mintTurnToken(db: Db, userId: string, ttlS: number, origin: AuditOrigin): Promise<TurnToken> {
  const token = PAT_PREFIX + randomBytes(32).toString('base64url');
  return db.tx(async (tx) => {
    const [row] = await rows(
      tx,
      Schema.Struct({ id: Schema.String }),
      sql`insert into access_tokens (user_id, token_hash, expires_at) values (${userId}, ${sha256(token)}, now() + make_interval(secs => ${ttlS})) returning id`,
    );
    const assistant = await ensureAssistantAccount(tx);
    await appendAudit(tx, origin, {
      action: 'token.create',
      outcome: 'success',
      actor: { kind: 'service_account', id: assistant, email: null },
      target: { kind: 'access_token', id: row.id },
      details: { purpose: 'assistant_turn', user_id: userId, expires_in_s: ttlS },
    });
    return { id: row.id, token };
  });
}

export async function revokeTurnToken(db: Db, tokenId: string, origin: AuditOrigin): Promise<void> {
  await db.tx(async (tx) => {
    const gone = await rows(tx, Schema.Struct({ user_id: Schema.String }), sql`delete from access_tokens where id = ${tokenId} returning user_id`);
    if (!gone.length) return;
    const assistant = await ensureAssistantAccount(tx);
    await appendAudit(tx, origin, {
      action: 'token.revoke',
      outcome: 'success',
      actor: { kind: 'service_account', id: assistant, email: null },
      target: { kind: 'access_token', id: tokenId },
      details: { purpose: 'assistant_turn', user_id: gone[0].user_id },
    });
  });
}
