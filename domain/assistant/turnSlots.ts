// Running turns as rows (assistant_turns): at most one per conversation, and at most ASSISTANT_MAX_CONCURRENCY in
// the whole deployment, whichever replica runs them. A turn holds a lease it renews while it runs; a replica that
// dies leaves a row whose lease lapses, and the next claim removes it (and revokes its turn token), so a crash
// never keeps a slot or a token alive past the lease.
import { Schema } from 'effect';
import type { Db, Queryable } from '../../runtime/db.ts';
import { exec, rows, sql } from '../../runtime/sql.ts';
import { AppError, conflict } from '../errors.ts';

/** How long a turn's slot lives without renewal; a running turn renews it every third of this. */
export const LEASE_S = 60;

export interface ClaimInput {
  conversationId: string;
  userId: string;
  replicaId: string;
  cap: number;
}

/** Takes a slot for a turn of this conversation: 409 turn_in_progress when it has one, 429 assistant_busy when full. */
export async function claimTurn(db: Db, c: ClaimInput): Promise<string> {
  return db.tx(async (tx) => {
    // One claim at a time deployment-wide: the count and the insert must not interleave with another claim's.
    await exec(tx, sql`select pg_advisory_xact_lock(hashtext('eider:assistant-turns'))`);
    await exec(
      tx,
      sql`with lapsed as (delete from assistant_turns where lease_until <= now() returning token_id)
          delete from access_tokens where id in (select token_id from lapsed where token_id is not null)`,
    );
    const [r] = await rows(
      tx,
      Schema.Struct({ mine: Schema.Boolean, running: Schema.Number }),
      sql`select exists(select 1 from assistant_turns where conversation_id = ${c.conversationId}) as mine,
                 (select count(*)::int from assistant_turns) as running`,
    );
    if (r.mine) throw conflict('this conversation has a turn under way; wait for it to end', 'turn_in_progress');
    if (r.running >= c.cap) {
      throw new AppError(
        429,
        'assistant_busy',
        `the assistant is running ${r.running} turns, its limit (ASSISTANT_MAX_CONCURRENCY=${c.cap}); try again shortly`,
        { running: r.running, limit: c.cap },
        { 'retry-after': '5' },
      );
    }
    const [row] = await rows(
      tx,
      Schema.Struct({ id: Schema.String }),
      sql`insert into assistant_turns (conversation_id, user_id, replica_id, lease_until)
          values (${c.conversationId}, ${c.userId}, ${c.replicaId}, now() + make_interval(secs => ${LEASE_S})) returning id`,
    );
    return row.id;
  });
}

export async function setTurnToken(q: Queryable, turnId: string, tokenId: string): Promise<void> {
  await exec(q, sql`update assistant_turns set token_id = ${tokenId} where id = ${turnId}`);
}

export async function renewTurn(q: Queryable, turnId: string): Promise<void> {
  await exec(q, sql`update assistant_turns set lease_until = now() + make_interval(secs => ${LEASE_S}) where id = ${turnId}`);
}

export async function releaseTurn(q: Queryable, turnId: string): Promise<void> {
  await exec(q, sql`delete from assistant_turns where id = ${turnId}`);
}
