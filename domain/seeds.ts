// The seeds table: one row per piece of data the api seeds once across replicas (the sample table), with the query
// carrying the current attempt, its outcome and when a failed one is tried again.
import type { Queryable } from '../runtime/db.ts';
import { readQuery } from './queries.ts';

export interface SeedState {
  status: 'absent' | 'running' | 'done' | 'failed';
  error: string | null;
  attempts: number;
  retry_at: Date | null;
}

/** A seed as the database records it (every replica reads the same row). */
export async function seedState(q: Queryable, name: string): Promise<SeedState> {
  const [row] = await q.query<{ status: 'running' | 'done' | 'failed'; error: string | null; attempts: number; retry_at: Date | null }>(
    `select status, error, attempts, retry_at from seeds where name = $1`,
    [name],
  );
  return row ?? { status: 'absent', error: null, attempts: 0, retry_at: null };
}

/** A seed's attempt in progress: its status, query and count, whether a failed one is due again, and how its
 *  query stands. */
export async function seedAttempt(q: Queryable, name: string) {
  const [seed] = await q.query<{ status: string; query_id: string | null; attempts: number; due: boolean }>(
    `select status, query_id, attempts, coalesce(retry_at <= now(), true) as due from seeds where name = $1`,
    [name],
  );
  if (!seed) return undefined;
  const query = seed.status === 'running' && seed.query_id ? await readQuery(q, seed.query_id) : undefined;
  return { ...seed, query: query ? { status: query.status, error: query.error } : undefined };
}

export async function markSeedDone(q: Queryable, name: string): Promise<void> {
  await q.query(`update seeds set status = 'done', error = null, updated_at = now() where name = $1`, [name]);
}

/** A failed attempt: its error, and the next one due after `retryInS`. */
export async function markSeedFailed(q: Queryable, name: string, error: string, retryInS: number): Promise<void> {
  await q.query(`update seeds set status = 'failed', error = $2, retry_at = now() + make_interval(secs => $3), updated_at = now() where name = $1`, [name, error, retryInS]);
}

/** A new attempt running as query `queryId` (the first, or one more). */
export async function startSeedAttempt(q: Queryable, name: string, queryId: string): Promise<void> {
  await q.query(
    `insert into seeds (name, status, query_id, attempts) values ($1, 'running', $2, 1)
     on conflict (name) do update set status = 'running', query_id = $2, attempts = seeds.attempts + 1, retry_at = null, updated_at = now()`,
    [name, queryId],
  );
}
