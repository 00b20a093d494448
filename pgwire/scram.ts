// SCRAM-SHA-256 (RFC 5802 / 7677, as PostgreSQL speaks it) for connections without TLS. The password is a token,
// and the api keeps only the token's hash, so a token's verifier (salt, StoredKey, ServerKey: never the token) is
// recorded when the token authenticates over TLS with cleartext; from then on the same token authenticates with
// SCRAM. The server names one salt per user, so each of the user's verifiers is tried against the client's proof.
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../runtime/db.ts';
import type { Principal, UserRow } from '../domain/identity.ts';

const ITERATIONS = 4096;

export interface Verifier {
  tokenId: string;
  salt: string;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
const sha = (b: Buffer) => createHash('sha256').update(b).digest();

function verifierOf(token: string, salt: Buffer, iterations = ITERATIONS): { storedKey: Buffer; serverKey: Buffer } {
  const salted = pbkdf2Sync(token, salt, iterations, 32, 'sha256');
  return { storedKey: sha(hmac(salted, 'Client Key')), serverKey: hmac(salted, 'Server Key') };
}

/** Records the token's verifier with the user's salt (a new one for the user's first). */
export async function rememberScramVerifier(db: Queryable, tokenId: string, userId: string, token: string): Promise<void> {
  const [known] = await db.query<{ salt: string; iterations: number; token_id: string }>(
    `select salt, iterations, token_id from pgwire_scram_verifiers where user_id = $1 order by token_id = $2 desc limit 1`,
    [userId, tokenId],
  );
  if (known?.token_id === tokenId) return;
  const salt = known ? Buffer.from(known.salt, 'base64') : randomBytes(16);
  const iterations = known?.iterations ?? ITERATIONS;
  const v = verifierOf(token, salt, iterations);
  await db.query(
    `insert into pgwire_scram_verifiers (token_id, user_id, salt, iterations, stored_key, server_key) values ($1, $2, $3, $4, $5, $6) on conflict (token_id) do nothing`,
    [tokenId, userId, salt.toString('base64'), iterations, v.storedKey.toString('base64'), v.serverKey.toString('base64')],
  );
}

/** The verifiers of the live tokens of the user the startup names (by email, else by name). */
export async function scramVerifiersOf(db: Queryable, user: string): Promise<Verifier[]> {
  const rows = await db.query<{ token_id: string; salt: string; iterations: number; stored_key: string; server_key: string }>(
    `select v.token_id, v.salt, v.iterations, v.stored_key, v.server_key
       from pgwire_scram_verifiers v join access_tokens t on t.id = v.token_id join users u on u.id = t.user_id
      where (lower(u.email) = lower($1) or u.name = $1) and u.is_active and t.revoked_at is null and (t.expires_at is null or t.expires_at > now())`,
    [user],
  );
  return rows.map((r) => ({ tokenId: r.token_id, salt: r.salt, iterations: r.iterations, storedKey: Buffer.from(r.stored_key, 'base64'), serverKey: Buffer.from(r.server_key, 'base64') }));
}

/** The principal a token id stands for, with the checks principalFromToken makes (live token, active user). */
export async function principalFromTokenId(db: Queryable, tokenId: string): Promise<Principal | undefined> {
  const [r] = await db.query<UserRow>(
    `select u.id, u.email, u.name, u.role, u.kind, u.auth_provider, u.password_hash, u.is_active, u.created_at
       from access_tokens t join users u on u.id = t.user_id
      where t.id = $1 and t.revoked_at is null and (t.expires_at is null or t.expires_at > now()) and u.is_active`,
    [tokenId],
  );
  if (!r) return undefined;
  await db.query(`update access_tokens set last_used_at = now() where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`, [tokenId]);
  return { user: r, via: 'token', tokenId };
}

/** One exchange: client-first → server-first, client-final → server-final (or null: refused). */
export class ScramServer {
  step: 'initial' | 'final' = 'initial';
  #verifiers: Verifier[] = [];
  #clientFirstBare = '';
  #serverFirst = '';
  #nonce = '';

  clientFirst(message: string, verifiers: Verifier[]): string | null {
    // gs2 header: no channel binding ('n') or client supports it but the server did not offer it ('y').
    const m = /^([ny]),[^,]*,(.*)$/.exec(message);
    if (!m) return null;
    this.#clientFirstBare = m[2];
    const nonce = /(?:^|,)r=([^,]+)/.exec(this.#clientFirstBare)?.[1];
    if (!nonce) return null;
    // One salt per user; an unknown user gets a random one, so the answer tells nothing about who exists.
    this.#verifiers = verifiers.filter((v) => v.salt === verifiers[0]?.salt);
    const salt = verifiers[0]?.salt ?? randomBytes(16).toString('base64');
    const iterations = verifiers[0]?.iterations ?? ITERATIONS;
    this.#nonce = nonce + randomBytes(18).toString('base64');
    this.#serverFirst = `r=${this.#nonce},s=${salt},i=${iterations}`;
    this.step = 'final';
    return this.#serverFirst;
  }

  clientFinal(message: string): { tokenId: string; serverFinal: string } | null {
    const proofAt = message.lastIndexOf(',p=');
    if (proofAt < 0) return null;
    const withoutProof = message.slice(0, proofAt);
    const proof = Buffer.from(message.slice(proofAt + 3), 'base64');
    if (/(?:^|,)r=([^,]+)/.exec(withoutProof)?.[1] !== this.#nonce) return null;
    const auth = `${this.#clientFirstBare},${this.#serverFirst},${withoutProof}`;
    for (const v of this.#verifiers) {
      const signature = hmac(v.storedKey, auth);
      if (proof.length !== signature.length) continue;
      const clientKey = Buffer.from(proof.map((b, i) => b ^ signature[i]));
      if (timingSafeEqual(sha(clientKey), v.storedKey)) {
        return { tokenId: v.tokenId, serverFinal: `v=${hmac(v.serverKey, auth).toString('base64')}` };
      }
    }
    return null;
  }
}
