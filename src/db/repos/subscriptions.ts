import { and, asc, eq, isNull, or, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type SubscriptionRow = typeof billing.subscriptions.$inferSelect;

export function subscriptionsRepo(x: Executor) {
  const t = x.s.subscriptions;
  return {
    insert: (row: SubscriptionRow) => x.run((q) => q.insert(t).values(row)),

    async find(id: string): Promise<SubscriptionRow | undefined> {
      return (await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1)))[0];
    },

    /** Subscriptions still charged at `at` or later (not ended by then), oldest first; five products bound them. */
    liveAt: (organizationId: string, at: number): Promise<SubscriptionRow[]> =>
      x.run((q) =>
        q
          .select()
          .from(t)
          .where(and(eq(t.organizationId, organizationId), or(isNull(t.endsAt), sql`${t.endsAt} > ${at}`)))
          .orderBy(asc(t.startedAt), asc(t.id)),
      ),

    cancel: (id: string, cancelledAt: number, endsAt: number) =>
      x.run((q) =>
        q
          .update(t)
          .set({ cancelledAt, endsAt })
          .where(and(eq(t.id, id), isNull(t.cancelledAt))),
      ),
  };
}
