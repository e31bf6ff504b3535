import type { Context } from '../../context.js';
import { errorFields } from '../../log.js';

/** Spooled files wait at most this long without a case or job that keeps them. */
const ORPHAN_AFTER_MS = 24 * 3600_000;

/**
 * Removes spooled files no waiting case or job keeps: a process that died between receiving a
 * file and queueing its case or job, or while it held a fetched copy. Every server and worker
 * runs it when it starts; it never throws (a sweep can wait for the next start).
 */
export async function sweepSpool(ctx: Context): Promise<void> {
  const { repos } = ctx;
  const isOwned = async (ref: string) =>
    (await repos.forensicCases.usesUpload(ref)) || (await repos.ingestJobs.usesSource(ref));
  await ctx.storage.spool
    .sweep(ORPHAN_AFTER_MS, isOwned)
    .catch((err) => ctx.log.warn('could not sweep the spool', errorFields(err)));
}
