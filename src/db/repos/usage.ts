import { and, asc, count, eq, gte, lt, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type PeriodUsageRow = typeof billing.periodUsage.$inferSelect;

/** Metering: a period's sessions measured, and the record of what each invoiced period charged. */
export function usageRepo(x: Executor) {
  const t = x.s.streamSessions;
  const u = x.s.periodUsage;
  return {
    /**
     * One period's metering of an organization: its sessions' streams and bytes per price (null:
     * the plan's), and when the last of them expires (bytes can land until then).
     */
    async measure(organizationId: string, start: number, end: number) {
      const rows = await x.run((q) =>
        q
          .select({
            priceMicro: t.pricePerStreamMicro,
            streams: count(),
            bytes: sql<number | null>`sum(${t.bytesServed})`,
            lastExpiry: sql<number | null>`max(${t.expiresAt})`,
          })
          .from(t)
          .where(and(eq(t.organizationId, organizationId), gte(t.createdAt, start), lt(t.createdAt, end)))
          .groupBy(t.pricePerStreamMicro),
      );
      return rows.map((r) => ({
        priceMicro: r.priceMicro === null ? null : Number(r.priceMicro),
        streams: Number(r.streams),
        bytes: Number(r.bytes ?? 0),
        lastExpiry: Number(r.lastExpiry ?? 0),
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
