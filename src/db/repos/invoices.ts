import { and, asc, count, desc, eq, inArray, isNull, lt, lte, sql } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type InvoiceRow = typeof billing.invoices.$inferSelect;
export type InvoiceLineRow = typeof billing.invoiceLines.$inferSelect;

export function invoicesRepo(x: Executor) {
  const t = x.s.invoices;
  const l = x.s.invoiceLines;
  return {
    async insert(row: InvoiceRow, lines: InvoiceLineRow[]): Promise<void> {
      await x.run((q) => q.insert(t).values(row));
      if (lines.length > 0) await x.run((q) => q.insert(l).values(lines));
    },

    async find(id: string): Promise<InvoiceRow | undefined> {
      return (await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1)))[0];
    },

    async forPeriod(organizationId: string, periodStart: number): Promise<InvoiceRow | undefined> {
      return (
        await x.run((q) =>
          q
            .select()
            .from(t)
            .where(and(eq(t.organizationId, organizationId), eq(t.periodStart, periodStart)))
            .limit(1),
        )
      )[0];
    },

    linesOf: (invoiceId: string): Promise<InvoiceLineRow[]> =>
      x.run((q) =>
        q.select().from(l).where(eq(l.invoiceId, invoiceId)).orderBy(asc(l.periodStart), asc(l.kind), asc(l.id)),
      ),

    /** Marks an open invoice paid; false when it was not open (paid already, or void). */
    async markPaid(id: string, paidAt: number): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ paymentStatus: 'paid', paidAt })
          .where(and(eq(t.id, id), eq(t.paymentStatus, 'open')))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },

    /** A page of the organization's invoices, newest period first, and how many there are. */
    async list(
      organizationId: string,
      page: { limit: number; offset: number },
    ): Promise<{ rows: InvoiceRow[]; total: number }> {
      const rows = await x.run((q) =>
        q
          .select()
          .from(t)
          .where(eq(t.organizationId, organizationId))
          .orderBy(desc(t.periodStart))
          .limit(literalInt(page.limit))
          .offset(literalInt(page.offset)),
      );
      const n = await x.run((q) => q.select({ n: count() }).from(t).where(eq(t.organizationId, organizationId)));
      return { rows, total: Number(n[0]?.n ?? 0) };
    },
    ...openInvoices(x),
    ...carriedInvoices(x),
  };
}

/** What is owed: open invoices, for autopay, the balance's pending charges and the period closer. */
function openInvoices(x: Executor) {
  const t = x.s.invoices;
  return {
    /** The organization's open invoices, oldest first (autopay pays them in that order). */
    open: (organizationId: string, limit = 100): Promise<InvoiceRow[]> =>
      x.run((q) =>
        q
          .select()
          .from(t)
          .where(and(eq(t.organizationId, organizationId), eq(t.paymentStatus, 'open')))
          .orderBy(asc(t.periodStart))
          .limit(literalInt(limit)),
      ),

    /** Records a card autopay attempt and when the next is due (null: no more). */
    scheduleAutopay: (id: string, attempts: number, nextAt: number | null) =>
      x.run((q) => q.update(t).set({ autopayAttempts: attempts, nextAutopayAt: nextAt }).where(eq(t.id, id))),

    /** Open invoices whose next card autopay attempt is due (oldest first, bounded). */
    dueCardRetries: (now: number, limit: number): Promise<InvoiceRow[]> =>
      x.run((q) =>
        q
          .select()
          .from(t)
          .where(and(eq(t.paymentStatus, 'open'), lte(t.nextAutopayAt, now)))
          .orderBy(asc(t.nextAutopayAt))
          .limit(literalInt(limit)),
      ),

    /** Organizations (up to limit) with an open invoice and APUSD autopay on. */
    async openUnderAutopay(limit: number): Promise<string[]> {
      const o = x.s.organizations;
      const due = and(eq(t.paymentStatus, 'open'), eq(o.autopayEnabled, true), eq(o.autopayMethod, 'apusd'));
      const rows = await x.run((q) =>
        q
          .selectDistinct({ id: t.organizationId })
          .from(t)
          .innerJoin(o, eq(o.id, t.organizationId))
          .where(due)
          .limit(literalInt(limit)),
      );
      return rows.map((r) => r.id);
    },

    async openTotal(organizationId: string): Promise<number> {
      const open = and(eq(t.organizationId, organizationId), eq(t.paymentStatus, 'open'));
      const rows = await x.run((q) =>
        q
          .select({ sum: sql<number | null>`sum(${t.amountMicro})` })
          .from(t)
          .where(open),
      );
      return Number(rows[0]?.sum ?? 0);
    },

    /** The newest period invoiced for each of these organizations. */
    async lastPeriods(organizationIds: string[]): Promise<Map<string, number>> {
      if (organizationIds.length === 0) return new Map();
      const rows = await x.run((q) =>
        q
          .select({ org: t.organizationId, last: sql<number>`max(${t.periodStart})` })
          .from(t)
          .where(inArray(t.organizationId, organizationIds))
          .groupBy(t.organizationId),
      );
      return new Map(rows.map((r) => [r.org, Number(r.last)]));
    },
  };
}

/** Invoices below the card minimum, carried forward to the next invoice (src/domain/billing/invoicing.ts, isDust). */
function carriedInvoices(x: Executor) {
  const t = x.s.invoices;
  return {
    /**
     * Open invoices issued to be carried forward (below the card minimum) that no invoice has taken yet, of periods
     * before `before`.
     */
    carryable: (organizationId: string, before: number): Promise<InvoiceRow[]> =>
      x.run((q) =>
        q
          .select()
          .from(t)
          .where(
            and(
              eq(t.organizationId, organizationId),
              eq(t.paymentStatus, 'open'),
              eq(t.carryForward, true),
              isNull(t.carriedInto),
              lt(t.periodStart, before),
            ),
          )
          .orderBy(asc(t.periodStart)),
      ),

    /** Voids an open invoice whose amount invoice `into` takes; false when it was no longer open (paid meanwhile). */
    async markCarried(id: string, into: string): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ paymentStatus: 'void', carriedInto: into })
          .where(and(eq(t.id, id), eq(t.paymentStatus, 'open'), isNull(t.carriedInto)))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },
  };
}
