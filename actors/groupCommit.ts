// Group commit for transitions. Under load, the cost of a transition is dominated by its commit (the WAL flush and
// the commit's bookkeeping), not by its rows: transitions of different actors that become ready while earlier ones
// are being written are therefore written together, in order, in one transaction, and commit once. Alone (one
// actor, or a quiet host) a transition is written at once as its own statement, exactly as without grouping.
//
// Failure keeps each transition's outcome exact, because a delivery must never apply an event twice:
// - a statement of the group fails: the transaction rolled back before its COMMIT was sent, so nothing of the group
//   committed; each member is then written again alone, and only the one at fault sees its error;
// - the COMMIT fails (the connection lost around it): the outcome is unknown for all, and every member gets the
//   error, which the delivery loop handles by reading back whether its transition committed.
// Members touch different actors (each actor has one delivery in flight per replica); they are written in key order
// so two groups on different replicas take their row locks in the same order. A group waits on every row lock its
// members need, so no code may await a send while its own transaction holds a lock on an entity row (no code does):
// that wait would pass through this process, where PostgreSQL's deadlock detector cannot see it.
import type { Db, Queryable } from '../runtime/db.ts';

/** One transition's write: run on the group's transaction (or alone on the pool); the new version, or null when
 *  the version check was lost. `needsTx`: alone it still needs a transaction of its own (an onPersist hook). */
export interface GroupedWrite {
  key: string;
  needsTx: boolean;
  run(q: Queryable): Promise<number | null>;
}

interface Pending {
  write: GroupedWrite;
  resolve(v: number | null): void;
  reject(e: unknown): void;
}

export interface GroupCommitOptions {
  /** Groups written at once (connections used); a transition arriving while all are busy joins the next group. */
  writers?: number;
  /** Transitions in one group at most. */
  maxGroup?: number;
}

export class GroupCommit {
  private readonly db: Db;
  private readonly writers: number;
  private readonly maxGroup: number;
  private readonly queue: Pending[] = [];
  private active = 0;

  constructor(db: Db, opts: GroupCommitOptions = {}) {
    this.db = db;
    this.writers = Math.max(1, opts.writers ?? 4);
    this.maxGroup = Math.max(1, opts.maxGroup ?? 64);
  }

  write(w: GroupedWrite): Promise<number | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write: w, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.active < this.writers && this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxGroup);
      this.active++;
      void this.commit(group).finally(() => {
        this.active--;
        this.pump();
      });
    }
  }

  private async commit(group: Pending[]): Promise<void> {
    if (group.length === 1) return this.alone(group[0]);
    group.sort((a, b) => (a.write.key < b.write.key ? -1 : a.write.key > b.write.key ? 1 : 0));
    const versions: (number | null)[] = [];
    let statementFailed = false;
    try {
      await this.db.tx(async (tx) => {
        for (const p of group) {
          try {
            versions.push(await p.write.run(tx));
          } catch (e) {
            statementFailed = true;
            throw e;
          }
        }
      });
    } catch (e) {
      if (!statementFailed) {
        for (const p of group) p.reject(e);
        return;
      }
      // Rolled back before COMMIT: nothing committed, so each is written again on its own.
      for (const p of group) await this.alone(p);
      return;
    }
    group.forEach((p, i) => p.resolve(versions[i]));
  }

  private async alone(p: Pending): Promise<void> {
    try {
      p.resolve(p.write.needsTx ? await this.db.tx((tx) => p.write.run(tx)) : await p.write.run(this.db));
    } catch (e) {
      p.reject(e);
    }
  }
}
