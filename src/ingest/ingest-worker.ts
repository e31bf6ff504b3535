import type { DtcwtBackend } from '../../gpu/backend.js';
import type { Context } from '../context.js';
import type { IngestJobRow } from '../db/repos/index.js';
import { DrmError } from '../errors.js';
import { errorFields } from '../log.js';
import { ingestContent, sweepAbandonedIngests } from './ingest.js';
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
const PROGRESS_EVERY_MS = 2000;
const HOUR_MS = 3_600_000;

/**
 * Takes queued ingests from the database one at a time and runs them here (`drm worker`). The
 * job's lease is renewed while it runs; a worker that dies lets its lease run out and another
 * worker starts the job again. `stop` gives a running job back to the queue at once (its
 * ingest is cancelled, and its staging and any fee go back as for any cancelled ingest).
 */
export class IngestWorker {
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
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
    this.schedule(0);
    // Leftovers of ingests killed outright (their staging, a half-published item) go hourly, new ingests or not.
    const sweep = () => void sweepAbandonedIngests(this.ctx).catch((err) => this.ctx.log.warn('could not sweep abandoned ingests', errorFields(err)));
    this.sweeper = setInterval(sweep, HOUR_MS);
    this.sweeper.unref();
  }

  /** Stops taking jobs; a running one is cancelled and given back to the queue. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    clearInterval(this.sweeper);
    const job = this.current;
    if (!job) return;
    job.abort.abort();
    await job.done;
  }

  /** The id of the job running now, if any. */
  get running(): string | undefined {
    return this.current?.id;
  }

  private schedule(ms: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => void this.takeNext(), ms);
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
    await done;
    this.current = undefined;
    this.schedule(0);
  }

  /** One job: leased while it runs, its progress written now and then, its end stored, its source removed. */
  private async run(row: IngestJobRow, abort: AbortController): Promise<void> {
    const { ctx, options } = this;
    const jobs = ctx.repos.ingestJobs;
    const keepLease = async () => {
      // A lease that was lost (this worker stalled past it, and another took the job) ends this run.
      if (!(await jobs.extendLease(row.id, options.name, ctx.clock.now() + options.leaseMs).catch(() => true))) abort.abort();
    };
    const heartbeat = setInterval(() => void keepLease(), options.leaseMs / 3);
    ctx.log.info('ingest job started', { jobId: row.id, attempt: row.attempts, worker: options.name });
    try {
      if (row.attempts > MAX_ATTEMPTS) throw new DrmError('INTERNAL_ERROR', `the ingest stopped its worker ${MAX_ATTEMPTS} times`);
      if (!row.sourceRef) throw new DrmError('INTERNAL_ERROR', 'the source of this job is no longer kept');
      const source = await ctx.storage.spool.fetch(row.sourceRef);
      const request = JSON.parse(row.request) as QueuedRequest;
      const onProgress = progressWriter(ctx, row.id, options.name);
      const result = await ingestContent(ctx, { ...request, input: source.path }, { backend: options.backend, signal: abort.signal, onProgress }).finally(() => source.release());
      await jobs.finish(row.id, { status: 'done', contentId: result.contentId, result: JSON.stringify(result), failureReason: null, finishedAt: ctx.clock.now() });
      await ctx.storage.spool.remove(row.sourceRef).catch(() => {});
      ctx.log.info('ingest job done', { jobId: row.id, contentId: result.contentId, seconds: result.seconds });
    } catch (err) {
      if (abort.signal.aborted) {
        await jobs.release(row.id, options.name).catch(() => {});
        ctx.log.info('ingest job given back to the queue', { jobId: row.id });
        return;
      }
      const reason = err instanceof DrmError && err.code !== 'INTERNAL_ERROR' ? err.message : `ingest failed: ${err instanceof DrmError ? err.message : 'internal error'}`;
      ctx.log.error('ingest job failed', { jobId: row.id, ...errorFields(err) });
      await jobs.finish(row.id, { status: 'failed', contentId: null, result: null, failureReason: reason, finishedAt: ctx.clock.now() }).catch(() => {});
      if (row.sourceRef) await ctx.storage.spool.remove(row.sourceRef).catch(() => {});
    } finally {
      clearInterval(heartbeat);
    }
  }
}

/** Writes a job's stage and counts for `--wait` and the live view: on each new stage, and every 2 s within one. */
function progressWriter(ctx: Context, id: string, worker: string): (stage: string, done: number, total: number) => void {
  let lastWrite = 0;
  let lastStage = '';
  return (stage, done, total) => {
    const now = ctx.clock.now();
    if (stage === lastStage && now - lastWrite < PROGRESS_EVERY_MS && done < total) return;
    lastStage = stage;
    lastWrite = now;
    void ctx.repos.ingestJobs.setProgress(id, worker, JSON.stringify({ stage, done, total })).catch(() => {});
  };
}
