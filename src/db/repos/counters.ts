import { sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';

export function countersRepo(x: Executor) {
  const t = x.s.counters;
  return {
    /**
     * Takes the next number of a named counter: 0 the first time, then 1, 2, … One upsert does the
     * arithmetic in the database, so servers sharing it never take the same number.
     */
    async next(name: string): Promise<number> {
      const rows = await x.run((q) =>
        q
          .insert(t)
          .values({ name, value: 0 })
          .onConflictDoUpdate({ target: t.name, set: { value: sql`${t.value} + 1` } })
          .returning({ value: t.value }),
      );
      return Number(rows[0]?.value);
    },
  };
}
