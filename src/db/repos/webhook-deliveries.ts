import { and, count, desc, eq, inArray, isNull, lte, or } from 'drizzle-orm';
import { type Executor, rowOfPlaceholders } from '../executor.js';
import type * as tables from '../schema/tables.js';

export type { DeliveryStatus } from '../schema/tables.js';

export type DeliveryRow = typeof tables.webhookDeliveries.$inferSelect;

export type DeliveryOutcome = Pick<
  DeliveryRow,
  'status' | 'attempts' | 'responseCode' | 'lastError' | 'nextAttemptAt' | 'deliveredAt'
>;

export function webhookDeliveriesRepo(x: Executor) {
  const t = x.s.webhookDeliveries;
  // Every event of every session: built once.
  const insert = x.prepared('drm_delivery_insert', (q) => q.insert(t).values(rowOfPlaceholders(t) as never));
  return {
    /** How many rows are in each status (metrics gauges). */
    async countByStatus(): Promise<Record<string, number>> {
      const rows = await x.run((q) => q.select({ status: t.status, n: count() }).from(t).groupBy(t.status));
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },

    insert: (row: DeliveryRow) => insert(row),

    async find(id: string): Promise<DeliveryRow | undefined> {
      const rows = await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1));
      return rows[0] as DeliveryRow | undefined;
    },

    /**
     * Leases up to `limit` due deliveries to the caller. The lease is taken in one UPDATE whose
     * WHERE is re-checked per row, so two workers (two processes on one Postgres) never both win.
     */
    async claimDue(now: number, leaseUntil: number, limit: number): Promise<DeliveryRow[]> {
      const due = and(
        inArray(t.status, ['pending', 'retrying']),
        lte(t.nextAttemptAt, now),
        or(isNull(t.leaseUntil), lte(t.leaseUntil, now)),
      );
      const ids = await x.run((q) => q.select({ id: t.id }).from(t).where(due).orderBy(t.nextAttemptAt).limit(limit));
      if (ids.length === 0) return [];
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ leaseUntil })
          .where(
            and(
              inArray(
                t.id,
                ids.map((r) => r.id),
              ),
              due,
            ),
          )
          .returning(),
      );
      return rows as DeliveryRow[];
    },

    async record(id: string, outcome: DeliveryOutcome): Promise<void> {
      await x.run((q) =>
        q
          .update(t)
          .set({ ...outcome, leaseUntil: null })
          .where(eq(t.id, id)),
      );
    },

    async listForOrg(organizationId: string, limit: number, offset = 0): Promise<DeliveryRow[]> {
      const rows = await x.run((q) =>
        q
          .select()
          .from(t)
          .where(eq(t.organizationId, organizationId))
          .orderBy(desc(t.createdAt), desc(t.id))
          .limit(limit)
          .offset(offset),
      );
      return rows as DeliveryRow[];
    },
  };
}
