import { and, asc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type PeriodUsageRow = typeof billing.periodUsage.$inferSelect;

/** Metering: a period's usage measured, and the record of what each invoiced period charged. */
export function usageRepo(x: Executor) {
  const c = x.s.usageCounters;
  const u = x.s.periodUsage;
  return {
    /**
     * One period's metering of an organization: its sessions' streams and bytes per price (null:
     * the plan's), and when the last of them expires (bytes can land until then). Read from the
     * counters the database keeps as sessions and bytes are written (schema/billing.ts,
     * usageCounters): a few rows, however many sessions the month has.
     */
    async measure(organizationId: string, periodStart: number) {
      const rows = await x.run((q) =>
        q
          .select({
            priceMicro: c.priceMicro,
            streams: sql<number>`sum(${c.streams})`,
            bytes: sql<number>`sum(${c.bytes})`,
            lastExpiry: sql<number>`max(${c.lastExpiry})`,
          })
          .from(c)
          .where(and(eq(c.organizationId, organizationId), eq(c.periodStart, periodStart)))
          .groupBy(c.priceMicro),
      );
      // A price whose sessions were all deleted (drm deletes none) leaves a row of 0 streams: no group.
      return rows
        .filter((r) => Number(r.streams) > 0)
        .map((r) => ({
          priceMicro: Number(r.priceMicro) === -1 ? null : Number(r.priceMicro),
          streams: Number(r.streams),
          bytes: Number(r.bytes),
          lastExpiry: Number(r.lastExpiry),
        }));
    },

    insert: (row: PeriodUsageRow) => x.run((q) => q.insert(u).values(row)),

    /** Periods invoiced whose sessions may still add bytes. */
    unsettled: (organizationId: string, before: number): Promise<PeriodUsageRow[]> =>
      x.run((q) =>
        q
          .select()
          .from(u)
          .where(and(eq(u.organizationId, organizationId), eq(u.settled, false), sql`${u.periodStart} < ${before}`))
          .orderBy(asc(u.periodStart)),
      ),

    update: (row: PeriodUsageRow) =>
      x.run((q) =>
        q
          .update(u)
          .set({ streams: row.streams, bytes: row.bytes, amountMicro: row.amountMicro, settled: row.settled })
          .where(and(eq(u.organizationId, row.organizationId), eq(u.periodStart, row.periodStart))),
      ),
  };
}
