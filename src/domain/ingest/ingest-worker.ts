import { randomUUID } from 'node:crypto';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import { HOUR_MS } from '../../clock.js';
import type { Context } from '../../context.js';
import type { IngestJobRow } from '../../db/repos/index.js';
import { DrmError } from '../../errors.js';
import { errorFields } from '../../log.js';
import { LeasedJobRunner } from '../jobs/leased-job-runner.js';
import type { LeasedJobs } from '../jobs/leased-jobs.js';
import { progressWriter } from '../operations/job-progress.js';
import { sweepSpool } from '../operations/spool-sweep.js';
import { type IngestResult, ingestContent, sweepAbandonedIngests } from './ingest.js';
import { settleEarlierAttempt } from './ingest-attempts.js';
import type { QueuedRequest } from './ingest-queue.js';
import { dropKeptSources } from './job-control.js';

export interface IngestWorkerOptions {
  /** who this worker is in the jobs it takes (host and pid) */
  name: string;
  /** the DTCWT backend (the worker's own, shared with its analyses; the caller closes it) */
  backend: () => Promise<DtcwtBackend>;
  /** how long a taken job stays taken without news from this worker */
  leaseMs: number;
  pollMs?: number;
}

/**
 * Takes queued ingests from the database one at a time and runs them here (`drm worker`), through
 * the shared job runner (src/domain/jobs/): the job's lease is renewed while it runs; a worker
 * that dies lets its lease run out and another worker starts the job again. `stop` gives a
 * running job back to the queue at once (its ingest is cancelled, and its staging and any fee go
 * back as for any cancelled ingest): restarting an ingest elsewhere costs only time. A job
 * cancelled with `drm jobs cancel` is stopped the same way at its next lease renewal.
 */
export class IngestWorker {
  private sweeper: NodeJS.Timeout | undefined;
  private readonly runner: LeasedJobRunner<IngestJobRow, IngestResult>;

  constructor(
    private readonly ctx: Context,
    options: IngestWorkerOptions,
  ) {
    this.runner = new LeasedJobRunner(ctx, ingestJobs(ctx, options.backend), {
      holder: options.name,
      leaseMs: options.leaseMs,
      pollMs: options.pollMs,
      onStop: 'give-back',
    });
  }

  start(): void {
    void sweepSpool(this.ctx);
    this.runner.start();
    // Leftovers of ingests killed outright (their staging, a half-published item) go hourly, new
    // ingests or not, and so do the sources failed and cancelled jobs kept past their retry window.
    const sweep = () => {
      void sweepAbandonedIngests(this.ctx).catch((err) =>
        this.ctx.log.warn('could not sweep abandoned ingests', errorFields(err)),
      );
      void dropKeptSources(this.ctx);
    };
    void dropKeptSources(this.ctx);
    this.sweeper = setInterval(sweep, HOUR_MS);
    this.sweeper.unref();
  }

  /** Stops taking jobs; a running one is cancelled and given back to the queue. */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await this.runner.stop();
  }

  /** The id of the job running now, if any. */
  get running(): string | undefined {
    return this.runner.runningIds[0];
  }
}

/** The ingest_jobs table as the job runner drives it. */
function ingestJobs(ctx: Context, backend: () => Promise<DtcwtBackend>): LeasedJobs<IngestJobRow, IngestResult> {
  const repo = ctx.repos.ingestJobs;
  return {
    noun: 'ingest job',
    label: 'ingest',
    idField: 'jobId',
    id: (row) => row.id,
    attempts: (row) => row.attempts,
    claimNext: (holder, now, until) => repo.claimNext(holder, now, until),
    async renew(row, holder, until) {
      if (await repo.extendLease(row.id, holder, until)) return 'held';
      const now = await repo.find(row.id);
      return now?.status === 'cancelled' && now.worker === holder ? 'cancelled' : 'lost';
    },
    release: (row, holder) => repo.release(row.id, holder),
    run: (row, signal) => ingestJob(ctx, row, backend, signal),
    async succeed(row, holder, result) {
      const stored = await repo.finish(row.id, holder, {
        status: 'done',
        contentId: result.contentId,
        result: JSON.stringify(result),
        failureReason: null,
        finishedAt: ctx.clock.now(),
      });
      if (stored)
        ctx.log.info('ingest job done', { jobId: row.id, contentId: result.contentId, seconds: result.seconds });
      return stored;
    },
    fail: (row, holder, reason) =>
      repo.finish(row.id, holder, {
        status: 'failed',
        contentId: null,
        result: null,
        failureReason: reason,
        finishedAt: ctx.clock.now(),
      }),
    // A done job's source goes now; a failed one keeps it for `drm jobs retry` (dropKeptSources ends that).
    async ended(row, how) {
      if (how === 'succeeded' && row.sourceRef)
        await ctx.storage.spool
          .remove(row.sourceRef)
          .catch((err) => ctx.log.warn('could not remove a job source', errorFields(err)));
    },
  };
}

/** The ingest itself, under a content id the job records first (settleEarlierAttempt reads it if this worker dies). */
async function ingestJob(
  ctx: Context,
  row: IngestJobRow,
  backend: () => Promise<DtcwtBackend>,
  signal: AbortSignal,
): Promise<IngestResult> {
  const jobs = ctx.repos.ingestJobs;
  const worker = row.worker as string;
  if (!row.sourceRef) throw new DrmError('INTERNAL_ERROR', 'the source of this job is no longer kept');
  const request = JSON.parse(row.request) as QueuedRequest;
  const earlier = row.contentId ? await settleEarlierAttempt(ctx, row.contentId) : undefined;
  if (earlier) return earlier;
  const contentId = randomUUID();
  await jobs.setAttemptContent(row.id, worker, contentId);
  const source = await ctx.storage.spool.fetch(row.sourceRef, signal);
  const onProgress = progressWriter(ctx, (p) => jobs.setProgress(row.id, worker, p));
  const hooks = { backend, signal, onProgress };
  return ingestContent(ctx, { ...request, input: source.path, contentId }, hooks).finally(() => source.release());
}
