import type { Context } from '../../context.js';
import { refundAbandonedFee } from '../billing/watermark-fee.js';
import type { IngestResult } from './ingest.js';

/**
 * What an earlier attempt at a job left, when its worker died (machine gone, SIGKILL) and the
 * lease ran out: the attempt's content id is on the job. If its catalog row is there, the ingest
 * was done and only the job's end was lost: the result is rebuilt from the row and the job ends
 * without a second ingest. Otherwise its fee goes back (once, by the fee's refund key) and an
 * item it published without a row is removed, so the next attempt starts clean: a worker that
 * never comes back to sweep its own staging costs the organization nothing.
 */
export async function settleEarlierAttempt(ctx: Context, contentId: string): Promise<IngestResult | undefined> {
  const row = await ctx.repos.content.find(contentId);
  if (row) {
    return {
      contentId: row.id,
      title: row.title,
      type: row.type as IngestResult['type'],
      duration: Math.round(row.duration / 100) / 10,
      resolution: row.resolution,
      isWatermarked: row.isWatermarked,
      segmentCount: row.segmentCount,
      segmentSeconds: row.segmentSeconds,
      backend: null,
      seconds: 0,
      // the attempt that did the work died before it could say where its time went
      stages: [],
    };
  }
  await refundAbandonedFee(ctx, contentId);
  if (await ctx.storage.backend.has(contentId)) await ctx.storage.backend.remove(contentId);
  ctx.log.info('earlier ingest attempt cleared', { contentId });
  return undefined;
}
