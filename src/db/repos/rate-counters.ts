import { lt, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import { batchPerTurn } from '../per-turn.js';

/** The most numbers one process takes ahead in a bucket's window, beyond those its requests of the turn need. */
const MOST_AHEAD = 64;
/** Numbers taken ahead are at most this share of what is left of the limit (see hit). */
const AHEAD_SHARE = 1 / 1000;

/** Numbers of a bucket's window already added to the database and not yet handed to a request. */
interface Reserved {
  windowStart: number;
  next: number;
  last: number;
}

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
  const reserved = new Map<string, Reserved>();
  const inFlight = new Map<string, Promise<unknown>>();
  // Group commit: the hits of one turn are added per bucket in one statement. The database still
  // does the arithmetic atomically and answers with the new total, so counts stay exact and
  // shared between processes; each caller gets its own number of the range added. Numbers
  // reserved ahead by an earlier turn are handed out first.
  const hit = batchPerTurn(
    (w: { bucket: string; windowStart: number; limit?: number }) => `${w.windowStart}|${w.bucket}`,
    async ({ bucket, windowStart, limit }, n) => {
      const key = `${windowStart}|${bucket}`;
      // One statement in flight per bucket: a later turn waits for it and takes what it reserved
      // first, so ranges come back in order (Postgres runs statements side by side) and none is
      // overwritten.
      for (let busy = inFlight.get(key); busy; busy = inFlight.get(key)) await busy.catch(() => undefined);
      const held = reserved.get(key);
      const fromHeld = held ? Math.min(n, held.last - held.next + 1) : 0;
      const heldFirst = held?.next ?? 0;
      if (held) held.next += fromHeld;
      if (fromHeld === n) return (i) => heldFirst + i;
      const need = n - fromHeld;
      const ahead = aheadOf(n, limit, held?.last);
      const statement = add({ bucket, windowStart, n: need + ahead });
      inFlight.set(key, statement);
      let rows: Array<{ count: number }>;
      try {
        rows = await statement;
      } finally {
        if (inFlight.get(key) === statement) inFlight.delete(key);
      }
      const last = Number(rows[0]?.count);
      const first = last - need - ahead + 1;
      // A busy bucket is remembered (its total sizes what it adds ahead next); a lone request's is not.
      if (ahead > 0 || n >= 2) keep(reserved, key, { windowStart, next: first + need, last });
      else reserved.delete(key);
      return (i) => (i < fromHeld ? heldFirst + i : first + i - fromHeld);
    },
  );

  return {
    /**
     * Counts one request in a bucket's window and returns its number in that window (1 for the
     * first), shared by every server process on the database. Given the limit, a busy bucket
     * (several requests in one turn) adds a few numbers ahead and hands them out without a
     * statement; see aheadOf for what that costs other processes.
     */
    hit(bucket: string, windowStart: number, limit?: number): Promise<number> {
      // A number held already is handed out at once, without waiting for the turn's statement.
      const held = reserved.get(`${windowStart}|${bucket}`);
      if (held && held.next <= held.last) return Promise.resolve(held.next++);
      return hit({ bucket, windowStart, limit });
    },

    /** Forgets windows that ended; called now and then by the server, not on the request path. */
    async prune(before: number): Promise<void> {
      for (const [key, held] of reserved) if (held.windowStart < before) reserved.delete(key);
      await x.run((q) => q.delete(t).where(lt(t.windowStart, before)));
    },
  };
}

/**
 * How many numbers to add ahead for a turn of n requests in one bucket: none for a lone request
 * (so sequential traffic counts exactly as before), else up to 8 turns' worth, at most
 * MOST_AHEAD, and at most AHEAD_SHARE of what the last total left of the limit. Within one
 * process the numbers stay exact and in order. With several processes on one database, numbers
 * another process holds unused count as spent: its requests may be refused before the limit by at
 * most that share of what is left, and X-RateLimit-Remaining reads lower by as much. Unused
 * numbers of a window that ends are left there, in a count nothing reads again.
 */
function aheadOf(n: number, limit: number | undefined, lastTotal: number | undefined): number {
  if (n < 2 || limit === undefined || lastTotal === undefined) return 0;
  return Math.max(0, Math.min(MOST_AHEAD, 8 * n, Math.floor((limit - lastTotal) * AHEAD_SHARE)));
}

/** Keeps a bucket's reserved numbers; a process serving very many buckets forgets the oldest first. */
function keep(reserved: Map<string, Reserved>, key: string, held: Reserved): void {
  reserved.delete(key);
  if (reserved.size >= 10_000) reserved.delete(reserved.keys().next().value as string);
  reserved.set(key, held);
}
