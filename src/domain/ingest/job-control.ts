import type { Context } from '../../context.js';
import type { IngestJobRow } from '../../db/repos/index.js';
import { badRequest } from '../../errors.js';
import { errorFields } from '../../log.js';
import { findJob } from './ingest-queue.js';

/**
 * How long a failed or cancelled job keeps its source in the spool for `drm jobs retry`: a
 * weekend's failure can still be retried on Monday, and a film does not sit in the store for good.
 */
export const SOURCE_KEPT_MS = 3 * 24 * 3600_000;

export interface CancelledJob {
  row: IngestJobRow;
  /** whether a worker was running it (it stops at its next lease renewal) */
  wasRunning: boolean;
}

/**
 * `drm jobs cancel`: a queued job ends cancelled at once; a running one too, and its worker
 * learns it at its next lease renewal, stops the ingest and removes what it made (its staging,
 * any fee taken). Either keeps its source for a while, so that `retry` can undo a cancel. A job
 * that ended cannot be cancelled.
 */
export async function cancelJob(ctx: Context, id: string): Promise<CancelledJob> {
  const before = await findJob(ctx, id);
  refuseEnded(before);
  const row = await ctx.repos.ingestJobs.cancel(id, ctx.clock.now());
  if (!row) {
    // it ended between the read and the cancel: say how
    refuseEnded(await findJob(ctx, id));
    throw badRequest(`ingest job ${id} could not be cancelled; try again`);
  }
  ctx.log.info('ingest job cancelled by hand', { jobId: id, worker: row.worker });
  return { row, wasRunning: before.status === 'running' };
}

/**
 * `drm jobs retry`: queues a failed or cancelled job again, its attempts counted afresh, as long
 * as its source is still in the spool; otherwise the file has to be queued again.
 */
export async function retryJob(ctx: Context, id: string): Promise<IngestJobRow> {
  const before = await findJob(ctx, id);
  if (before.status === 'done')
    throw badRequest(
      `ingest job ${id} is done (content ${before.contentId}); only a failed or cancelled job is retried`,
    );
  if (before.status === 'queued' || before.status === 'running')
    throw badRequest(`ingest job ${id} is ${before.status}; only a failed or cancelled job is retried`);
  const row = await ctx.repos.ingestJobs.requeue(id);
  if (!row) {
    const now = await findJob(ctx, id);
    if (now.status === before.status) throw sourceGone(now);
    throw badRequest(`ingest job ${id} is ${now.status} now; only a failed or cancelled job is retried`);
  }
  ctx.log.info('ingest job queued again', { jobId: id });
  return row;
}

function sourceGone(row: IngestJobRow): Error {
  const days = SOURCE_KEPT_MS / (24 * 3600_000);
  return badRequest(
    `the source of ingest job ${row.id} (${row.sourceName}) is no longer kept (a ` +
      `failed or cancelled job keeps it ${days} days); queue the file again with drm ` +
      `ingest FILE --queue`,
  );
}

function refuseEnded(row: IngestJobRow): void {
  if (row.status === 'queued' || row.status === 'running') return;
  const how = row.status === 'done' ? `is done (content ${row.contentId})` : `${row.status} already`;
  const hint = row.status === 'done' ? '' : '; drm jobs retry queues it again';
  throw badRequest(`ingest job ${row.id} ${how}: only a queued or running job can be cancelled${hint}`);
}

/**
 * Removes the sources failed and cancelled jobs kept past SOURCE_KEPT_MS (each worker runs it
 * when it starts and hourly); never throws. The job forgets its source before the file goes, so
 * a retry either wins the race and keeps it, or finds it gone.
 */
export async function dropKeptSources(ctx: Context): Promise<number> {
  let dropped = 0;
  try {
    for (;;) {
      const kept = await ctx.repos.ingestJobs.keptSources(ctx.clock.now() - SOURCE_KEPT_MS, 100);
      for (const { id, sourceRef } of kept) {
        if (!(await ctx.repos.ingestJobs.dropSource(id))) continue;
        await ctx.storage.spool.remove(sourceRef);
        dropped++;
      }
      if (kept.length < 100) return dropped;
    }
  } catch (err) {
    ctx.log.warn('could not remove the sources of ended jobs', errorFields(err));
    return dropped;
  }
}
