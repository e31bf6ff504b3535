import { lt, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import { batchPerTurn } from '../per-turn.js';

export function rateCountersRepo(x: Executor) {
  const t = x.s.rateCounters;
  const add = x.prepared('drm_rate_add', (q) =>
    q
      .insert(t)
      .values({
        bucket: sql.placeholder('bucket'),
        windowStart: sql.placeholder('windowStart'),
        count: sql.placeholder('n'),
      })
      .onConflictDoUpdate({ target: [t.bucket, t.windowStart], set: { count: sql`${t.count} + excluded.count` } })
      .returning({ count: t.count }),
  );
  // Group commit: the hits of one turn are added per bucket in one statement. The database still
  // does the arithmetic atomically and answers with the new total, so counts stay exact and
  // shared between processes; each caller gets its own number of the range added.
  const hit = batchPerTurn(
    (w: { bucket: string; windowStart: number }) => `${w.windowStart}|${w.bucket}`,
    async (w, n) => {
      const rows = await add({ ...w, n });
      const first = Number(rows[0]?.count) - n + 1;
      return (i) => first + i;
    },
  );

  return {
    /**
     * Counts one request in a bucket's window and returns its number in that window (1 for the
     * first), shared by every server process on the database.
     */
    hit: (bucket: string, windowStart: number): Promise<number> => hit({ bucket, windowStart }),

    /** Forgets windows that ended; called now and then by the server, not on the request path. */
    async prune(before: number): Promise<void> {
      await x.run((q) => q.delete(t).where(lt(t.windowStart, before)));
    },
  };
}
