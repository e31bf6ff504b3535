/**
 * At most `size` jobs at once in this process. The loop takes a free slot or none (`tryTake`);
 * a caller running its own job (a synchronous analysis request) waits its turn (`take`), so a
 * burst of requests queues here rather than running past the limit.
 */
export class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  tryTake(): boolean {
    if (this.used >= this.size) return false;
    this.used++;
    return true;
  }

  async take(): Promise<void> {
    if (this.tryTake()) return;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the slot to the longest waiting caller, or frees it. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.used--;
  }
}
