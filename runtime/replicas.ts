// The replica registry: each api process holds a row in `replicas` and heartbeats it. A second live process with
// the same REPLICA_ID is refused at startup; a replica whose heartbeat is older than AGENT_PRESENCE_TTL_S counts as
// gone (its actors and pending effects are then adopted by the others).
import { randomUUID } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import type { Db } from './db.ts';
import type { Logger } from './logger.ts';

export class ReplicaIdTakenError extends Error {
  constructor(id: string, ageS: number) {
    super(
      `REPLICA_ID ${id} is held by a live replica (heartbeat ${ageS.toFixed(0)} s ago); give each replica its own REPLICA_ID, or wait until that one stops`,
    );
    this.name = 'ReplicaIdTakenError';
  }
}

export interface ReplicaRegistration {
  readonly id: string;
  readonly instance: string;
  internalUrl: string;
  /** Records the address peers reach this replica at (known once it listens). */
  setInternalUrl(url: string): Promise<void>;
  setDraining(): Promise<void>;
  /** Stops heartbeating and removes the row. */
  stop(): Promise<void>;
}

/** `auto` resolves to the platform's replica name (HOSTNAME), else the host name. */
export function resolveReplicaId(configured: string, env: Record<string, string | undefined> = process.env): string {
  return configured === 'auto' ? env.HOSTNAME || hostname() : configured;
}

/** `auto` resolves to this host's first external IPv4 address (else loopback) on the api's port. */
export function resolveInternalUrl(configured: string, port: number): string {
  if (configured !== 'auto') return configured;
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal);
  return `http://${external?.address ?? '127.0.0.1'}:${port}`;
}

/** A row left by a process on this host that no longer runs (a crash, then a restart under the same id). */
function isDeadLocalProcess(row: { host: string | null; pid: number | null }): boolean {
  if (row.host !== hostname() || row.pid === null || row.pid === process.pid) return false;
  try {
    process.kill(row.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** How often a replica heartbeats (and gone replicas are looked for): three beats per presence TTL, at most every
 *  10 s, so one late beat never makes a live replica look gone. */
export const presenceBeatMs = (presenceTtlS: number) => Math.max(200, Math.min(10_000, (presenceTtlS * 1000) / 3));

export async function registerReplica(opts: {
  db: Db;
  id: string;
  internalUrl: string;
  presenceTtlS: number;
  logger: Logger;
}): Promise<ReplicaRegistration> {
  const { db, id, presenceTtlS, logger } = opts;
  const instance = randomUUID();
  const claim = async (force: boolean) =>
    db.query<{ instance: string }>(
      `insert into replicas (id, instance, internal_url, host, pid) values ($1, $2::uuid, $3, $4, $5)
       on conflict (id) do update set instance = excluded.instance, internal_url = excluded.internal_url,
         host = excluded.host, pid = excluded.pid, started_at = now(), heartbeat_at = now(), draining = false
       where $6 or replicas.heartbeat_at < now() - make_interval(secs => $7)
       returning instance::text`,
      [id, instance, opts.internalUrl, hostname(), process.pid, force, presenceTtlS],
    );
  let won = (await claim(false)).length === 1;
  if (!won) {
    const [row] = await db.query<{ host: string | null; pid: number | null; age: number }>(
      `select host, pid, extract(epoch from now() - heartbeat_at)::float8 as age from replicas where id = $1`,
      [id],
    );
    if (row && isDeadLocalProcess(row)) won = (await claim(true)).length === 1;
    if (!won) throw new ReplicaIdTakenError(id, row?.age ?? 0);
  }

  const reg: ReplicaRegistration = {
    id,
    instance,
    internalUrl: opts.internalUrl,
    async setInternalUrl(url) {
      reg.internalUrl = url;
      await db.query(`update replicas set internal_url = $3 where id = $1 and instance = $2::uuid`, [id, instance, url]);
    },
    async setDraining() {
      await db.query(`update replicas set draining = true where id = $1 and instance = $2::uuid`, [id, instance]);
    },
    async stop() {
      clearInterval(timer);
      await db.query(`delete from replicas where id = $1 and instance = $2::uuid`, [id, instance]).catch(() => undefined);
    },
  };
  const timer = setInterval(
    () => {
      db.query(
        `insert into replicas (id, instance, internal_url, host, pid) values ($1, $2::uuid, $3, $4, $5)
         on conflict (id) do update set heartbeat_at = now() where replicas.instance = $2::uuid
         returning 1`,
        [id, instance, reg.internalUrl, hostname(), process.pid],
      ).then(
        (rows) => {
          if (rows.length === 0) logger.error({ replica: id }, 'another process took over this REPLICA_ID while this one was silent');
        },
        (e) => logger.warn({ err: (e as Error).message }, 'replica heartbeat failed'),
      );
    },
    presenceBeatMs(presenceTtlS),
  );
  timer.unref();
  return reg;
}

/** Replicas whose heartbeat is older than the TTL: their rows go, and the caller adopts what they owned. */
export async function removeGoneReplicas(db: Db, presenceTtlS: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `delete from replicas where heartbeat_at < now() - make_interval(secs => $1) returning id`,
    [presenceTtlS],
  );
  return rows.map((r) => r.id);
}
