/**
 * Work a server repeats in the background (closing billing periods, reading deposits): a pass at
 * start, then one every `everyMs`; a pass asked for while one runs joins it instead of doubling
 * it; a pass that fails is reported and the next one tries again; stop() waits for the one running.
 */
export class RepeatingPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly everyMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.everyMs);
    this.timer.unref();
  }

  /** One pass now (tests, and the timer). */
  tick(): Promise<void> {
    this.running ??= this.pass()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
