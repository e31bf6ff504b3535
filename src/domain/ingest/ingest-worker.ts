import { randomUUID } from 'node:crypto';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import { HOUR_MS } from '../../clock.js';
import type { Context } from '../../context.js';
import type { IngestJobOutcome, IngestJobRow } from '../../db/repos/index.js';
import { progressWriter } from '../operations/job-progress.js';
import { sweepSpool } from '../operations/spool-sweep.js';
import { DrmError, jobFailureReason } from '../../errors.js';
import { errorFields } from '../../log.js';
import { type IngestResult, ingestContent, sweepAbandonedIngests } from './ingest.js';
import { settleEarlierAttempt } from './ingest-attempts.js';
import type { QueuedRequest } from './ingest-queue.js';

export interface IngestWorkerOptions {
  /** who this worker is in the jobs it takes (host and pid) */
  name: string;
  /** the DTCWT backend (the worker's own, shared with its analyses; the caller closes it) */
  backend: () => Promise<DtcwtBackend>;
  /** how long a taken job stays taken without news from this worker */
  leaseMs: number;
  pollMs?: number;
}

/** A job that took its worker down this many times is failed rather than taken again. */
const MAX_ATTEMPTS = 3;

/**
 * Takes queued ingests from the database one at a time and runs them here (`drm worker`). The
 * job's lease is renewed while it runs; a worker that dies lets its lease run out and another
 * worker starts the job again. `stop` gives a running job back to the queue at once (its
 * ingest is cancelled, and its staging and any fee go back as for any cancelled ingest).
 */
export class IngestWorker {
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  /** the turn under way (claiming, or running a job), which stop() waits for */
  private turn: Promise<void> | undefined;
  private current: { id: string; abort: AbortController; done: Promise<void> } | undefined;
  private stopping = false;
  private readonly pollMs: number;

  constructor(
    private readonly ctx: Context,
    private readonly options: IngestWorkerOptions,
  ) {
    this.pollMs = options.pollMs ?? 2000;
  }

  start(): void {
    void sweepSpool(this.ctx);
    this.schedule(0);
    // Leftovers of ingests killed outright (their staging, a half-published item) go hourly, new ingests or not.
    const sweep = () =>
      void sweepAbandonedIngests(this.ctx).catch((err) =>
        this.ctx.log.warn('could not sweep abandoned ingests', errorFields(err)),
      );
    this.sweeper = setInterval(sweep, HOUR_MS);
    this.sweeper.unref();
  }

  /** Stops taking jobs; a running one is cancelled and given back to the queue. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    clearInterval(this.sweeper);
    this.current?.abort.abort();
    // A claim under way ends in a release (stopping is set); a running job is cancelled and given back.
    await this.turn;
  }

  /** The id of the job running now, if any. */
  get running(): string | undefined {
    return this.current?.id;
  }

  private schedule(ms: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.turn = this.takeNext().finally(() => {
        this.turn = undefined;
      });
    }, ms);
  }

  private async takeNext(): Promise<void> {
    const { ctx, options } = this;
    let row: IngestJobRow | undefined;
    try {
      const now = ctx.clock.now();
      row = await ctx.repos.ingestJobs.claimNext(options.name, now, now + options.leaseMs);
    } catch (err) {
      ctx.log.error('ingest queue failed', errorFields(err));
    }
    if (!row || this.stopping) {
      if (row) await ctx.repos.ingestJobs.release(row.id, options.name).catch(() => {});
      this.schedule(this.pollMs);
      return;
    }
    const abort = new AbortController();
    const done = this.run(row, abort);
    this.current = { id: row.id, abort, done };
    try {
      await done;
    } finally {
      this.current = undefined;
      this.schedule(0);
    }
  }

  /** One job: leased while it runs, its progress written now and then, its end stored, its source removed. */
  private async run(row: IngestJobRow, abort: AbortController): Promise<void> {
    const { ctx, options } = this;
    const jobs = ctx.repos.ingestJobs;
    const keepLease = async () => {
      // A lease that was lost (this worker stalled past it, and another took the job) ends this run.
      if (!(await jobs.extendLease(row.id, options.name, ctx.clock.now() + options.leaseMs).catch(() => true)))
        abort.abort();
    };
    const heartbeat = setInterval(() => void keepLease(), options.leaseMs / 3);
    heartbeat.unref();
    ctx.log.info('ingest job started', { jobId: row.id, attempt: row.attempts, worker: options.name });
    try {
      const result = await this.ingest(row, abort.signal);
      await this.end(row, {
        status: 'done',
        contentId: result.contentId,
        result: JSON.stringify(result),
        failureReason: null,
        finishedAt: ctx.clock.now(),
      });
      ctx.log.info('ingest job done', { jobId: row.id, contentId: result.contentId, seconds: result.seconds });
    } catch (err) {
      if (abort.signal.aborted) {
        await jobs.release(row.id, options.name).catch(() => {});
        ctx.log.info('ingest job given back to the queue', { jobId: row.id });
        return;
      }
      ctx.log.error('ingest job failed', { jobId: row.id, ...errorFields(err) });
      const reason = jobFailureReason(err, 'ingest');
      await this.end(row, {
        status: 'failed',
        contentId: null,
        result: null,
        failureReason: reason,
        finishedAt: ctx.clock.now(),
      }).catch(() => {});
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** The ingest itself, under a content id the job records first (settleEarlierAttempt reads it if this worker dies). */
  private async ingest(row: IngestJobRow, signal: AbortSignal): Promise<IngestResult> {
    const { ctx, options } = this;
    if (row.attempts > MAX_ATTEMPTS)
      throw new DrmError('INTERNAL_ERROR', `the ingest stopped its worker ${MAX_ATTEMPTS} times`);
    if (!row.sourceRef) throw new DrmError('INTERNAL_ERROR', 'the source of this job is no longer kept');
    const request = JSON.parse(row.request) as QueuedRequest;
    const earlier = row.contentId ? await settleEarlierAttempt(ctx, row.contentId) : undefined;
    if (earlier) return earlier;
    const contentId = randomUUID();
    await ctx.repos.ingestJobs.setAttemptContent(row.id, options.name, contentId);
    const source = await ctx.storage.spool.fetch(row.sourceRef, signal);
    const onProgress = progressWriter(ctx, (p) => ctx.repos.ingestJobs.setProgress(row.id, options.name, p));
    const hooks = { backend: options.backend, signal, onProgress };
    return ingestContent(ctx, { ...request, input: source.path, contentId }, hooks).finally(() => source.release());
  }

  /** Stores how the job ended, if it is still this worker's, and then lets its source go. */
  private async end(row: IngestJobRow, outcome: IngestJobOutcome): Promise<void> {
    const { ctx, options } = this;
    if (!(await ctx.repos.ingestJobs.finish(row.id, options.name, outcome))) {
      ctx.log.warn(
        'ingest job was taken by another worker after this one lost its lease; its end is left to that worker',
        { jobId: row.id, outcome: outcome.status },
      );
      return;
    }
    if (row.sourceRef)
      await ctx.storage.spool
        .remove(row.sourceRef)
        .catch((err) => ctx.log.warn('could not remove a job source', errorFields(err)));
  }
}
