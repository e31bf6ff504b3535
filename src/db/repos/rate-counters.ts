import { lt, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';

interface Waiting {
  bucket: string;
  windowStart: number;
  callers: Array<{ resolve(count: number): void; reject(err: unknown): void }>;
}

export function rateCountersRepo(x: Executor) {
  const t = x.s.rateCounters;
  const add = x.prepared('drm_rate_add', (q) =>
    q
      .insert(t)
      .values({ bucket: sql.placeholder('bucket'), windowStart: sql.placeholder('windowStart'), count: sql.placeholder('n') })
      .onConflictDoUpdate({ target: [t.bucket, t.windowStart], set: { count: sql`${t.count} + excluded.count` } })
      .returning({ count: t.count }),
  );

  // Group commit: the hits of one event-loop turn are added per bucket in one statement. The
  // database still does the arithmetic atomically and answers with the new total, so counts stay
  // exact and shared between processes; each caller gets its own number of the range added.
  let waiting = new Map<string, Waiting>();
  const flush = async () => {
    const batch = waiting;
    waiting = new Map();
    await Promise.all(
      [...batch.values()].map(async ({ bucket, windowStart, callers }) => {
        try {
          const rows = await add({ bucket, windowStart, n: callers.length });
          const first = Number(rows[0]?.count) - callers.length + 1;
          callers.forEach((c, i) => c.resolve(first + i));
        } catch (err) {
          for (const c of callers) c.reject(err);
        }
      }),
    );
  };

  return {
    /**
     * Counts one request in a bucket's window and returns its number in that window (1 for the
     * first), shared by every server process on the database.
     */
    hit(bucket: string, windowStart: number): Promise<number> {
      return new Promise((resolve, reject) => {
        const id = `${windowStart}|${bucket}`;
        let entry = waiting.get(id);
        if (!entry) {
          if (waiting.size === 0) setImmediate(() => void flush());
          entry = { bucket, windowStart, callers: [] };
          waiting.set(id, entry);
        }
        entry.callers.push({ resolve, reject });
      });
    },

    /** Forgets windows that ended; called now and then by the server, not on the request path. */
    async prune(before: number): Promise<void> {
      await x.run((q) => q.delete(t).where(lt(t.windowStart, before)));
    },
  };
}
