import type { Context } from '../../context.js';
import { DrmError, jobFailureReason } from '../../errors.js';
import { errorFields } from '../../log.js';
import type { LeasedJobRunnerOptions, LeasedJobs, Renewal, StopReason, TakeOptions } from './leased-jobs.js';
import { Slots } from './slots.js';

type Claim<Job> = (holder: string, now: number, leaseUntil: number) => Promise<Job | undefined>;

/** How an attempt ended for its holder: its end stored, nothing left to store, or the job no longer its own. */
type Settled = 'succeeded' | 'failed' | 'left' | 'lost';

/**
 * Runs the jobs of one leased table in this process: the loop takes jobs while a slot is free
 * (and looks again every `pollMs`, or at once on `wake`), each running job's lease is renewed
 * every third of it, its end is stored only while this process still holds it, and a job that
 * already took down its holder `maxAttempts` times is failed instead of run. Several processes
 * on one database share the table: the claim is one statement, so a job runs in one at a time,
 * and a process that dies leaves its jobs to the others once their leases lapse.
 */
export class LeasedJobRunner<Job, Result> {
  private readonly slots: Slots;
  private readonly running = new Map<string, { stop: (why: StopReason) => void; done: Promise<void> }>();
  /** takes under way outside the loop (a caller's own job), which stop() waits for too */
  private readonly taking = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  /** the loop's turn under way (it may be claiming), which stop() waits for */
  private turn: Promise<void> | undefined;
  /** a wake came while a turn was under way: take another turn right after it */
  private again = false;
  private started = false;
  private stopping = false;

  constructor(
    private readonly ctx: Context,
    private readonly jobs: LeasedJobs<Job, Result>,
    private readonly options: LeasedJobRunnerOptions,
  ) {
    this.slots = new Slots(options.concurrency ?? 1);
  }

  get holder(): string {
    return this.options.holder;
  }

  /** The ids of the jobs running here now. */
  get runningIds(): string[] {
    return [...this.running.keys()];
  }

  /** The loop: takes waiting jobs whenever a slot is free. */
  start(): void {
    this.started = true;
    this.wake();
  }

  /** Looks for waiting jobs now (one was just queued, or a slot came free). */
  wake(): void {
    if (!this.started || this.stopping) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.poll(), 0);
    this.timer.unref();
  }

  /** Takes nothing more; running jobs are given back or left to end (`onStop`); resolves once none runs here. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    if (this.options.onStop === 'give-back') for (const job of this.running.values()) job.stop('given-back');
    await this.turn;
    await Promise.allSettled([...this.taking]);
    await Promise.allSettled([...this.running.values()].map((job) => job.done));
  }

  /**
   * Claims one job with `claim` in a slot (waiting for one) and runs it to its end here; false
   * when `claim` found none to take.
   */
  take(claim: Claim<Job>, options: TakeOptions<Job, Result> = {}): Promise<boolean> {
    const taken = this.takeInSlot(claim, options);
    this.taking.add(taken);
    return taken.finally(() => this.taking.delete(taken));
  }

  /** Runs every waiting job, one after another (tests; a process without the loop). */
  async drain(): Promise<void> {
    while (await this.take((holder, now, until) => this.jobs.claimNext(holder, now, until))) {}
  }

  private async takeInSlot(claim: Claim<Job>, options: TakeOptions<Job, Result>): Promise<boolean> {
    await this.slots.take();
    try {
      const now = this.ctx.clock.now();
      const job = await claim(this.holder, now, now + this.options.leaseMs);
      if (!job) return false;
      await this.execute(job, options);
      return true;
    } finally {
      this.slots.give();
    }
  }

  private poll(): void {
    // One turn at a time, so that stop() has one to wait for; a wake during a turn asks for another.
    if (this.turn) {
      this.again = true;
      return;
    }
    this.turn = this.fill().finally(() => {
      this.turn = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async fill(): Promise<void> {
    const { jobs, ctx, holder } = this;
    while (!this.stopping && this.slots.tryTake()) {
      let job: Job | undefined;
      try {
        const now = ctx.clock.now();
        job = await jobs.claimNext(holder, now, now + this.options.leaseMs);
      } catch (err) {
        ctx.log.error(`could not take a waiting ${jobs.noun}`, errorFields(err));
      }
      // A job claimed as the stop came has not started: it goes back untouched, whatever `onStop` says.
      if (job && this.stopping) await jobs.release(job, holder).catch(() => {});
      if (!job || this.stopping) {
        this.slots.give();
        break;
      }
      void this.execute(job).finally(() => {
        this.slots.give();
        this.wake();
      });
    }
    if (this.stopping) return;
    this.timer = setTimeout(() => this.poll(), this.options.pollMs ?? 2000);
    this.timer.unref();
  }

  /** One job, its lease renewed while it runs; resolves once its end is stored (or left to whoever holds it now). */
  private execute(job: Job, options: TakeOptions<Job, Result> = {}): Promise<void> {
    const id = this.jobs.id(job);
    const control = new AbortController();
    let why: StopReason | undefined;
    const stop = (reason: StopReason) => {
      why ??= reason;
      control.abort();
    };
    const onCaller = () => stop('caller');
    options.signal?.addEventListener('abort', onCaller, { once: true });
    if (options.signal?.aborted) stop('caller');
    if (this.stopping && this.options.onStop === 'give-back') stop('given-back');
    const beat = () => void this.renew(job).then((r) => r !== 'held' && stop(r));
    const heartbeat = setInterval(beat, this.options.leaseMs / 3);
    heartbeat.unref();
    const work = options.run ?? ((j: Job, signal: AbortSignal) => this.jobs.run(j, signal));
    const done = this.attempt(
      job,
      () => work(job, control.signal),
      () => why,
    ).finally(() => {
      clearInterval(heartbeat);
      options.signal?.removeEventListener('abort', onCaller);
      this.running.delete(id);
    });
    this.running.set(id, { stop, done });
    return done;
  }

  private renew(job: Job): Promise<Renewal> {
    const until = this.ctx.clock.now() + this.options.leaseMs;
    // A database that does not answer is not a lost lease: the next beat asks again.
    return this.jobs.renew(job, this.holder, until).catch(() => 'held' as const);
  }

  private async attempt(job: Job, work: () => Promise<Result>, why: () => StopReason | undefined): Promise<void> {
    const { jobs, ctx, holder } = this;
    const fields = { [jobs.idField]: jobs.id(job) };
    const max = this.options.maxAttempts ?? 3;
    let settled: Settled;
    ctx.log.info(`${jobs.noun} started`, { ...fields, attempt: jobs.attempts(job), worker: holder });
    try {
      if (jobs.attempts(job) > max)
        throw new DrmError('INTERNAL_ERROR', `the ${jobs.label} stopped its worker ${max} times`);
      const result = await work();
      settled = (await jobs.succeed(job, holder, result)) ? 'succeeded' : 'lost';
    } catch (err) {
      settled = await this.settleStopped(job, err, why());
    }
    if (settled === 'lost')
      ctx.log.warn(
        `${jobs.noun} is no longer this worker's (its lease lapsed and another took it, ` +
          `or it was cancelled); its end is left as it is`,
        fields,
      );
    else if (settled !== 'left')
      await jobs
        .ended?.(job, settled)
        .catch((err) => ctx.log.warn(`could not clear after a ${jobs.noun}`, { ...fields, ...errorFields(err) }));
  }

  /** A job whose work threw: why it was stopped decides what is stored. */
  private async settleStopped(job: Job, err: unknown, why: StopReason | undefined): Promise<Settled> {
    const { jobs, ctx, holder } = this;
    const fields = { [jobs.idField]: jobs.id(job) };
    const failed = async (reason: string): Promise<Settled> =>
      (await jobs.fail(job, holder, reason).catch(() => false)) ? 'failed' : 'lost';
    switch (why) {
      case 'lost':
        return 'lost';
      case 'cancelled':
        // `drm jobs cancel` stored the end already; the work removed what it had made.
        ctx.log.info(`${jobs.noun} cancelled`, fields);
        return 'left';
      case 'given-back':
        await jobs.release(job, holder).catch(() => {});
        ctx.log.info(`${jobs.noun} given back to the queue`, fields);
        return 'left';
      case 'caller':
        ctx.log.info(`${jobs.noun} cancelled`, fields);
        return failed(`${jobs.label} cancelled`);
      default:
        ctx.log.error(`${jobs.noun} failed`, { ...fields, ...errorFields(err) });
        return failed(jobFailureReason(err, jobs.label));
    }
  }
}
