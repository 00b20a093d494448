// The PostgreSQL access point for every api-side and catalog-side module: a pool from @effect/sql-pg
// behind a small promise interface, so domain code reads as plain async functions.
import { Cause, Effect, Exit, Queue, Redacted, Scope } from 'effect';
import { PgClient } from '@effect/sql-pg';
import * as Reactivity from 'effect/reactivity/Reactivity';
import type { Connection } from 'effect/sql/SqlConnection';
import { urlPerHost } from '../settings/variables.ts';

type Row = Record<string, unknown>;

export interface Queryable {
  query<T = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
}

export interface Db extends Queryable {
  /** Runs `fn` inside BEGIN/COMMIT on one connection; rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Runs `fn` on one reserved connection outside a transaction (session-level advisory locks). */
  withConnection<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Subscribes to NOTIFY on a channel, again after any loss of its connection (then `onResubscribed` runs:
   *  notifications sent meanwhile were missed); the returned function unsubscribes. */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    opts?: { onResubscribed?: () => void; onError?: (e: unknown) => void },
  ): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  readonly stats: { active: number; max: number };
  close(): Promise<void>;
}

export interface DbOptions {
  url: string;
  poolSize?: number;
  maxOverflow?: number;
  recycleSeconds?: number;
  applicationName?: string;
}

/** A database error carrying PostgreSQL's SQLSTATE (`23505` unique violation, `40001` serialization…). */
export class DbError extends Error {
  readonly code: string | undefined;
  readonly constraint: string | undefined;
  constructor(message: string, code: string | undefined, constraint: string | undefined) {
    super(message);
    this.name = 'DbError';
    this.code = code;
    this.constraint = constraint;
  }
}

/** What @effect/sql's SqlError wraps: the driver's error (with PostgreSQL's SQLSTATE and constraint) as its cause. */
interface DriverFailure {
  message?: unknown;
  constraint?: string;
  cause?: { message?: unknown; code?: string; constraint?: string };
}

function toDbError(e: unknown): unknown {
  const reason = typeof e === 'object' && e !== null ? (e as { reason?: DriverFailure }).reason : undefined;
  if (reason && typeof reason === 'object') {
    const cause = reason.cause ?? {};
    const message = String(cause.message ?? reason.message ?? 'database error');
    // The driver names a connection the server dropped (the server killed, a failover) by its message alone: it is
    // SQLSTATE 08006 (connection_failure), a lost connection like any other.
    const code = cause.code ?? (/^connection (closed|terminated)/i.test(message) ? '08006' : undefined);
    return new DbError(message, code, cause.constraint ?? reason.constraint);
  }
  return e;
}

async function run<A, E>(effect: Effect.Effect<A, E, never>): Promise<A> {
  const exit = await Effect.runPromiseExit(effect);
  if (Exit.isSuccess(exit)) return exit.value;
  const failure = exit.cause.reasons.find(Cause.isFailReason);
  if (failure) throw toDbError(failure.error);
  const die = exit.cause.reasons.find(Cause.isDieReason);
  throw die ? die.defect : new Error('database operation interrupted');
}

/**
 * A Db whose every statement runs on `q`, inside the transaction `q` is in: code written against a Db (which may
 * open its own transactions) then commits or rolls back together with what the caller adds. A nested `tx` is a
 * savepoint, so code that catches its own failure (a unique violation, then something else) keeps working.
 */
export function joinTransaction(q: Queryable): Db {
  let savepoints = 0;
  return {
    query: (text, params) => q.query(text, params),
    tx: async (fn) => {
      const name = `sp_${++savepoints}`;
      await q.query(`savepoint ${name}`);
      try {
        const result = await fn(q);
        await q.query(`release savepoint ${name}`);
        return result;
      } catch (e) {
        await q.query(`rollback to savepoint ${name}`).catch(() => undefined);
        throw e;
      }
    },
    withConnection: (fn) => fn(q),
    listen: () => Promise.reject(new Error('LISTEN is not available inside a transaction')),
    // Delivered when the transaction commits, and not at all when it rolls back.
    notify: async (channel, payload) => {
      await q.query('select pg_notify($1, $2)', [channel, payload]);
    },
    stats: { active: 1, max: 1 },
    close: async () => undefined,
  };
}

/** Failures of reaching the database rather than of the statement: a refused or lost connection (the errno of the
 *  socket), SQLSTATE class 08, a server shutting down or starting (57P01–57P03), or out of connections (53300). */
// 25006 (read-only transaction): a write reached a server that is (now) a standby, as after a failover.
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300', '25006']);

/** Whether `e` (or what it wraps) says the database could not be reached, which a retry later may get past. */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    if (c instanceof DbError && c.code !== undefined && (UNREACHABLE.has(c.code) || c.code.startsWith('08'))) return true;
  }
  return false;
}

export function isUniqueViolation(e: unknown): boolean {
  return e instanceof DbError && e.code === '23505';
}

export async function connectDb(opts: DbOptions): Promise<Db> {
  const max = (opts.poolSize ?? 5) + (opts.maxOverflow ?? 10);
  const open = async (url: string): Promise<Pool> => {
    const scope = Effect.runSync(Scope.make());
    const client = await run(
      PgClient.make({
        url: Redacted.make(url),
        maxConnections: max,
        minConnections: 0,
        connectionTTL: `${opts.recycleSeconds ?? 1800} seconds`,
        idleTimeout: '60 seconds',
        connectTimeout: '10 seconds',
        applicationName: opts.applicationName ?? 'eider',
      }).pipe(Scope.provide(scope), Effect.provide(Reactivity.layer)),
    );
    return { client, scope };
  };
  // Several hosts (libpq's `postgresql://u@primary:5432,standby:5432/db`): the pool goes to the first that accepts
  // writes, and finds it again whenever the one in use is lost or turns read-only (a failover), instead of staying
  // on a demoted primary (target_session_attrs=read-write).
  const hosts = urlPerHost(opts.url);
  let pool = hosts.length === 1 ? await open(hosts[0]) : await writablePool(hosts, open);
  let finding: Promise<void> | null = null;
  let lastFind = 0;
  const findWriter = (e: unknown) => {
    if (hosts.length === 1 || finding || !isDatabaseUnavailable(e) || Date.now() - lastFind < 500) return;
    lastFind = Date.now();
    finding = writablePool(hosts, open)
      .then((next) => {
        const old = pool;
        pool = next;
        void Effect.runPromise(Scope.close(old.scope, Exit.void)).catch(() => undefined);
      })
      .catch(() => undefined)
      .finally(() => {
        finding = null;
      });
  };
  // A statement still running on a pool that a failover replaced fails when that pool is closed ("Connection closed",
  // or its fiber interrupted): that is the database moving, to be retried like any lost connection (08006), not a
  // fault of the request.
  const onFailure = async <T>(used: Pool, p: () => Promise<T>): Promise<T> => {
    try {
      return await p();
    } catch (e) {
      const moved = used !== pool && !isDatabaseUnavailable(e);
      const failure = moved ? Object.assign(new DbError('the connection was closed by a failover to another host; try again', '08006', undefined), { cause: e }) : e;
      findWriter(failure);
      throw failure;
    }
  };
  let active = 0;
  const track = async <T>(p: () => Promise<T>): Promise<T> => {
    active++;
    try {
      return await p();
    } finally {
      active--;
    }
  };

  const query = <T,>(text: string, params: readonly unknown[] = []) =>
    track(() => {
      const used = pool;
      return onFailure(used, () => run(used.client.unsafe<T & object>(text, params as unknown[])));
    }) as Promise<T[]>;

  const onReserved = <T,>(fn: (conn: Connection) => Promise<T>): Promise<T> =>
    track(() => {
      const used = pool;
      return onFailure(used, () =>
        run(
          Effect.scoped(
            Effect.flatMap(used.client.reserve, (conn) =>
              Effect.tryPromise({ try: () => fn(conn), catch: (e) => e }),
            ),
          ),
        ),
      );
    });

  const connQuery = (conn: Connection): Queryable => ({
    query: <T,>(text: string, params: readonly unknown[] = []) =>
      run(conn.execute(text, params, undefined)) as Promise<T[]>,
  });

  return {
    query,
    tx: (fn) =>
      onReserved(async (conn) => {
        const q = connQuery(conn);
        await run(conn.executeUnprepared('BEGIN', [], undefined));
        try {
          const result = await fn(q);
          await run(conn.executeUnprepared('COMMIT', [], undefined));
          return result;
        } catch (e) {
          await run(conn.executeUnprepared('ROLLBACK', [], undefined)).catch(() => undefined);
          throw e;
        }
      }),
    withConnection: (fn) => onReserved((conn) => fn(connQuery(conn))),
    listen: async (channel, onPayload, opts = {}) => {
      let open = true;
      let scope: Scope.Closeable | null = null;
      let retry: NodeJS.Timeout | undefined;
      let pending: Promise<unknown> = Promise.resolve();
      // A LISTEN lives on one connection: when that connection is lost (a restart, pg_terminate_backend, a network
      // cut), the pump fails and the channel is subscribed again on a new one, with backoff until it works.
      const subscribe = async (): Promise<void> => {
        const s = Effect.runSync(Scope.make());
        const used = pool;
        const queue = await onFailure(used, () => run(used.client.listen(channel).pipe(Scope.provide(s))));
        // Unsubscribed while this connection was being reserved: it must go back, or closing the pool waits on it.
        if (!open) {
          await Effect.runPromise(Scope.close(s, Exit.void));
          return;
        }
        scope = s;
        void Effect.runPromise(
          Effect.forever(Effect.flatMap(Queue.take(queue), (n) => Effect.sync(() => onPayload(n.payload)))),
        ).catch((e) => {
          void Effect.runPromise(Scope.close(s, Exit.void)).catch(() => undefined);
          if (open) resubscribe(e, 0);
        });
      };
      const resubscribe = (cause: unknown, attempt: number) => {
        opts.onError?.(cause);
        retry = setTimeout(() => {
          if (!open) return;
          pending = subscribe().then(
            () => open && opts.onResubscribed?.(),
            (e) => open && resubscribe(e, attempt + 1),
          );
        }, Math.min(5_000, 100 * 2 ** attempt));
        retry.unref();
      };
      await subscribe();
      return async () => {
        if (!open) return;
        open = false;
        clearTimeout(retry);
        await pending;
        if (scope) await Effect.runPromise(Scope.close(scope, Exit.void));
      };
    },
    notify: async (channel, payload) => {
      await query('select pg_notify($1, $2)', [channel, payload]);
    },
    get stats() {
      return { active, max };
    },
    close: async () => {
      await finding;
      await Effect.runPromise(Scope.close(pool.scope, Exit.void));
    },
  };
}

interface Pool {
  client: PgClient.PgClient;
  scope: Scope.Closeable;
}

/** The pool of the first host that is not in recovery (a primary), in the order given; throws the last failure. */
async function writablePool(hosts: readonly string[], open: (url: string) => Promise<Pool>): Promise<Pool> {
  let last: unknown = new DbError('no database host accepts writes', '08001', undefined);
  for (const url of hosts) {
    let candidate: Pool | undefined;
    try {
      candidate = await open(url);
      const [row] = await run(candidate.client.unsafe<{ standby: boolean }>('select pg_is_in_recovery() as standby', []));
      if (row && !row.standby) return candidate;
      last = new DbError('the database host is a standby (read-only)', '25006', undefined);
    } catch (e) {
      last = e;
    }
    if (candidate) await Effect.runPromise(Scope.close(candidate.scope, Exit.void)).catch(() => undefined);
  }
  throw last;
}
