import { type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import { batchPerTurn } from '../per-turn.js';

export function countersRepo(x: Executor) {
  const t = x.s.counters;
  /** Adds n to a counter, which a new one starts from at `first` − 1 (so its first n numbers are first … first + n − 1); returns the new value. */
  const addUp = async (name: string, n: number, first: SQL | number): Promise<number> => {
    const rows = await x.run((q) =>
      q
        .insert(t)
        .values({ name, value: typeof first === 'number' ? first + n - 1 : sql`${first} + ${sql.raw(String(n - 1))}` })
        .onConflictDoUpdate({ target: t.name, set: { value: sql`${t.value} + ${n}` } })
        .returning({ value: t.value }),
    );
    return Number(rows[0]?.value);
  };
  // Group commit, as for the rate counters: the numbers one turn asks of a counter are taken in
  // one statement, and each caller gets its own number of the range.
  const take = batchPerTurn(
    (a: { name: string; first: SQL | number }) => a.name,
    async (a, n) => {
      const last = await addUp(a.name, n, a.first);
      return (i) => last - n + 1 + i;
    },
  );
  return {
    /**
     * Takes the next number of a named counter: 0 the first time, then 1, 2, … The database does
     * the arithmetic in one upsert, so servers sharing it never take the same number.
     */
    next: (name: string): Promise<number> => take({ name, first: 0 }),

    /** Like next, but a new counter starts at `first` (a number, or an expression the same statement evaluates). */
    nextFrom: (name: string, first: SQL | number): Promise<number> => take({ name, first }),

    /**
     * Takes the next wallet index of viewers from the `viewer-wallets` counter. The first time, the
     * counter starts past every index a viewer already has (viewers made before the counter
     * existed), in the same statement.
     */
    nextViewerWalletIndex: (): Promise<number> =>
      take({ name: 'viewer-wallets', first: sql`(select coalesce(max(${x.s.viewers.walletIndex}), -1) + 1 from ${x.s.viewers})` }),

    /** Adds `by` (negative to give numbers back) to a counter, 0 when new, and returns its new value. */
    async add(name: string, by: number): Promise<number> {
      const rows = await x.run((q) =>
        q
          .insert(t)
          .values({ name, value: by })
          .onConflictDoUpdate({ target: t.name, set: { value: sql`${t.value} + ${by}` } })
          .returning({ value: t.value }),
      );
      return Number(rows[0]?.value);
    },
  };
}
