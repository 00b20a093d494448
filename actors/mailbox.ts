// Per-key serial execution: work for one actor runs one item at a time in arrival order, work for different
// actors runs concurrently. Idle keys are dropped so the map holds only actors with work in flight.
export class Mailboxes {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after everything queued earlier under `key` has settled; its own result or error is returned. */
  enqueue<T>(key: string, work: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const run = prev.then(work, work);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }

  /** Resolves once every item queued so far has settled. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }

  get size(): number {
    return this.tails.size;
  }
}
