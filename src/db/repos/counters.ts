import { type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import { batchPerTurn } from '../per-turn.js';

/** How many numbers a process reserves at a time for `distinct` and the wallet index. */
const BLOCK = 32;

export function countersRepo(x: Executor) {
  const t = x.s.counters;
  /** Adds n to a counter (a new one takes first … first + n − 1) and returns its new value. */
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
  // Numbers only need to be distinct (viewer ids, wallet indexes): each process reserves them a
  // block at a time, and a block left unused when it stops is a gap no one needs filled.
  const blocks = new Map<string, { next: number; end: number; refill?: Promise<void> }>();
  const fromBlock = async (name: string, first: SQL | number): Promise<number> => {
    for (;;) {
      const block = blocks.get(name) ?? { next: 0, end: 0 };
      blocks.set(name, block);
      if (block.next < block.end) return block.next++;
      block.refill ??= addUp(name, BLOCK, first)
        .then((last) => {
          block.next = last - BLOCK + 1;
          block.end = last + 1;
        })
        .finally(() => {
          block.refill = undefined;
        });
      await block.refill;
    }
  };
  return {
    /**
     * A number of a named counter no one else takes, from this process's block of them (in no order across processes).
     */
    distinct: (name: string): Promise<number> => fromBlock(name, 0),

    /**
     * Takes the next number of a named counter, `first` the first time (a number, or an expression
     * the same statement evaluates). The database does the arithmetic in one upsert, so servers
     * sharing it never take the same number.
     */
    nextFrom: (name: string, first: SQL | number): Promise<number> => take({ name, first }),

    /**
     * A wallet index no other viewer has, from the `viewer-wallets` counter (a block at a time).
     * The first time, the counter starts past every index a viewer already has (viewers made
     * before the counter existed), in the same statement.
     */
    nextViewerWalletIndex: (): Promise<number> =>
      fromBlock('viewer-wallets', sql`(select coalesce(max(${x.s.viewers.walletIndex}), -1) + 1 from ${x.s.viewers})`),

    /** Adds `by` (negative to give numbers back) to a counter, 0 when new, and returns its new value. */
    add: (name: string, by: number): Promise<number> => addUp(name, by, 1),
  };
}
