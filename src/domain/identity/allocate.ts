import type { Context } from '../../context.js';
import { DrmError } from '../../errors.js';
import { viewerIdFor } from './viewer-ids.js';

const VIEWER_COUNTER = 'viewer-ids';
const ALL_ZERO = '0'.repeat(40);
/** Skipped ids are rare (an older random id lies in a level's coset with chance 2^(d−40)); this bounds a broken table. */
const MAX_SKIPS = 1000;

/**
 * A new viewer's permanent id, in constant time: the next number of the shared counter turned
 * into a code word (./viewer-ids.ts). An id already held (by a viewer allocated at random before
 * ids came from codes) is skipped, as is 00…0, which is what a copy served unmarked reads as.
 * Runs in the viewer's transaction; the unique index on binary_id stands behind it.
 */
export async function allocateViewerId(ctx: Context): Promise<string> {
  for (let skipped = 0; skipped < MAX_SKIPS; skipped++) {
    const counter = BigInt(await ctx.repos.counters.next(VIEWER_COUNTER));
    const id = viewerIdFor(ctx.keys.viewerIds, counter);
    if (id !== ALL_ZERO && !(await ctx.repos.viewers.findByBinaryId(id))) return id;
  }
  throw new DrmError('INTERNAL_ERROR', `no free viewer id after ${MAX_SKIPS} numbers of the counter`);
}
