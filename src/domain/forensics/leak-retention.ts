import type { Context } from '../../context.js';
import { errorFields } from '../../log.js';

/**
 * A case keeps the leak it analysed, in the content store's spool, for `--keep-leaks` after it
 * ended (90 days by default), so the file the evidence report's SHA-256 names can be produced
 * again. Then it is deleted: every server and worker removes the leaks whose time is up when it
 * starts and every hour, and the case forgets where its leak was. A case that says
 * it holds no leak is one whose leak was deleted (or was never kept: `--keep-leaks 0`).
 */

/** How many expired leaks one pass removes: the rest wait for the next pass. */
const PASS = 100;

/** How often a running server or worker looks for leaks whose time is up. */
export const RETENTION_PASS_MS = 3600_000;

/** Removes the leaks of cases that ended more than --keep-leaks ago; never throws. */
export async function sweepExpiredLeaks(ctx: Context): Promise<number> {
  let removed = 0;
  try {
    const due = await ctx.repos.forensicCases.leaksKeptSince(ctx.clock.now() - ctx.config.keepLeaksMs, PASS);
    for (const { id, uploadPath } of due) {
      await ctx.storage.spool.remove(uploadPath);
      await ctx.repos.forensicCases.dropUpload(id);
      removed++;
    }
    if (removed > 0) ctx.log.info('leaks past their retention deleted', { count: removed });
  } catch (err) {
    ctx.log.warn('could not delete leaks past their retention', errorFields(err));
  }
  return removed;
}

/** When a case's leak is deleted: its end plus the retention (null when it is not kept). */
export function leakKeptUntil(
  ctx: Context,
  row: { uploadPath: string | null; completedAt: number | null; status: string },
): number | null {
  if (row.status === 'processing' || row.uploadPath === null || row.completedAt === null) return null;
  return row.completedAt + ctx.config.keepLeaksMs;
}
