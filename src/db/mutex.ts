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

  /** Resolves once nobody holds the lock (does not take it). */
  async idle(): Promise<void> {
    while (this.locked) {
      await this.acquire();
      this.release();
    }
  }
}
