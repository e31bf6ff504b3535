import type { Context } from '../../context.js';
import { errorFields } from '../../log.js';
import { attemptDelivery } from './deliver.js';

export interface WebhookWorkerOptions {
  pollMs?: number;
  batch?: number;
}

/**
 * Sends due deliveries from the outbox. Deliveries are leased in the database, so any number of
 * server processes can run a worker, and a delivery in flight when a process dies is picked up
 * again once its lease runs out: nothing is lost across a restart.
 */
export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private readonly pollMs: number;
  private readonly batch: number;
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly ctx: Context,
    options: WebhookWorkerOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 1000;
    this.batch = options.batch ?? 10;
  }

  start(): void {
    this.stopped = false;
    this.unlisten ??= this.ctx.webhookBell.listen(() => this.wake());
    this.schedule(0);
  }

  /** Finishes the sends in flight, then stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    this.unlisten = undefined;
    clearTimeout(this.timer);
    await this.running;
  }

  wake(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.loop(), ms);
    this.timer.unref();
  }

  private async loop(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = (async () => {
      try {
        do {
          this.again = false;
          const sent = await this.tick();
          if (sent === this.batch) this.again = true;
        } while (this.again && !this.stopped);
      } catch (err) {
        this.ctx.log.error('webhook worker failed', errorFields(err));
      }
    })();
    await this.running;
    this.running = undefined;
    // A wake that came after the pass last looked at `again` (between its final check and here)
    // set `again` while `running` was still set: honour it now instead of leaving the event to
    // wait a whole poll interval.
    if (!this.stopped) this.schedule(this.again ? 0 : this.pollMs);
  }

  /** One pass: lease due deliveries, attempt them side by side, record each outcome. Returns how many. */
  async tick(): Promise<number> {
    const now = this.ctx.clock.now();
    const due = await this.ctx.repos.webhookDeliveries.claimDue(now, now + 60_000, this.batch);
    await Promise.all(
      due.map(async (row) => {
        const outcome = await attemptDelivery(this.ctx, row);
        await this.ctx.repos.webhookDeliveries.record(row.id, outcome);
        this.ctx.log.info('webhook attempt', {
          delivery: row.id,
          event: row.eventType,
          status: outcome.status,
          responseCode: outcome.responseCode,
          attempts: outcome.attempts,
        });
      }),
    );
    return due.length;
  }
}
