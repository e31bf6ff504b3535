import { lt, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';

export function rateCountersRepo(x: Executor) {
  const t = x.s.rateCounters;
  return {
    /**
     * Counts one request in each bucket's window and returns the new counts, in one atomic
     * statement, so that several server processes on one database share the counters.
     */
    async hit(buckets: string[], windowStart: number): Promise<Map<string, number>> {
      const rows = await x.run((q) =>
        q
          .insert(t)
          .values(buckets.map((bucket) => ({ bucket, windowStart, count: 1 })))
          .onConflictDoUpdate({ target: [t.bucket, t.windowStart], set: { count: sql`${t.count} + 1` } })
          .returning({ bucket: t.bucket, count: t.count }),
      );
      return new Map(rows.map((r) => [r.bucket, Number(r.count)]));
    },

    /** Forgets windows that ended; called now and then by the server, not on the request path. */
    async prune(before: number): Promise<void> {
      await x.run((q) => q.delete(t).where(lt(t.windowStart, before)));
    },
  };
}
