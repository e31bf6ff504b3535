import { lt, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';

export function rateCountersRepo(x: Executor) {
  const t = x.s.rateCounters;
  const increment = x.prepared('drm_rate_hit', (q) =>
    q
      .insert(t)
      .values({ bucket: sql.placeholder('bucket'), windowStart: sql.placeholder('windowStart'), count: 1 })
      .onConflictDoUpdate({ target: [t.bucket, t.windowStart], set: { count: sql`${t.count} + 1` } })
      .returning({ count: t.count }),
  );
  return {
    /**
     * Counts one request in a bucket's window and returns the new count, in one atomic
     * statement, so that several server processes on one database share the counters.
     */
    async hit(bucket: string, windowStart: number): Promise<number> {
      const rows = await increment({ bucket, windowStart });
      return Number(rows[0]?.count);
    },

    /** Forgets windows that ended; called now and then by the server, not on the request path. */
    async prune(before: number): Promise<void> {
      await x.run((q) => q.delete(t).where(lt(t.windowStart, before)));
    },
  };
}
