/** A FIFO async mutex: SQLite has one connection, so its transactions take turns. */
export class Mutex {
  private queue: Array<() => void> = [];
  private locked = false;

  get busy(): boolean {
    return this.locked;
  }

  async acquire(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.locked = false;
  }

  /**
   * Runs fn with the lock held: at once when it is free, else at its turn in the queue. For a
   * statement outside any transaction: better-sqlite3 runs it within fn's synchronous part, so no
   * transaction can begin around it. (Waiting for the lock to be free instead, and running after,
   * let two such waiters hand the lock back and forth forever while neither freed it.)
   */
  async runExclusive<T>(fn: () => T | PromiseLike<T>): Promise<T> {
    if (!this.locked) return fn();
    await this.acquire();
    try {
      return fn();
    } finally {
      this.release();
    }
  }
}
