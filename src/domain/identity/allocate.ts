import type { Context } from '../../context.js';
import { viewerIdFor } from './viewer-ids.js';

const ALL_ZERO = '0'.repeat(40);

/**
 * A new viewer's permanent id, in constant time: a number of the shared counter no one else takes
 * (reserved a block at a time) turned into a code word (./viewer-ids.ts), skipping 00…0, which is
 * what a copy served unmarked reads as under the fixed rule of older content (under a keyed rule it
 * reads as another id per content, and a viewer who ties with it is named by nobody either).
 * An id an older viewer already holds (one allocated at random before ids came from the counter)
 * is found by the viewer's insert, which then takes another (src/domain/viewers.ts).
 */
export async function allocateViewerId(ctx: Context): Promise<string> {
  for (;;) {
    const id = viewerIdFor(ctx.keys.viewerIds, BigInt(await ctx.repos.counters.distinct('viewer-ids')));
    if (id !== ALL_ZERO) return id;
  }
}
