import { and, desc, eq, sql } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type LedgerRow = typeof billing.ledgerEntries.$inferSelect;

/** The append-only ledger: entries are inserted, never updated or deleted. */
export function ledgerRepo(x: Executor) {
  const t = x.s.ledgerEntries;
  const o = x.s.organizations;
  return {
    ...ledgerSums(x),
    insert: (row: LedgerRow) => x.run((q) => q.insert(t).values(row)),

    async findByKey(idempotencyKey: string): Promise<LedgerRow | undefined> {
      return (await x.run((q) => q.select().from(t).where(eq(t.idempotencyKey, idempotencyKey)).limit(1)))[0];
    },

    /**
     * The organization's cached balance, its row locked to the end of the transaction on Postgres
     * (an update that changes nothing takes the lock; SQLite's transactions are serial anyway),
     * so that the entry appended next is computed from the balance no one else is moving.
     */
    async lockBalance(organizationId: string): Promise<number | undefined> {
      const rows = await x.run((q) =>
        q
          .update(o)
          .set({ apusdBalanceMicro: sql`${o.apusdBalanceMicro}` })
          .where(eq(o.id, organizationId))
          .returning({ balance: o.apusdBalanceMicro }),
      );
      return rows[0] === undefined ? undefined : Number(rows[0].balance);
    },

    setBalance: (organizationId: string, balanceMicro: number) =>
      x.run((q) => q.update(o).set({ apusdBalanceMicro: balanceMicro }).where(eq(o.id, organizationId))),
  };
}

/** What the entries add up to, per organization, kind or reference, the card events taken, and the pages of entries. */
function ledgerSums(x: Executor) {
  const t = x.s.ledgerEntries;
  return {
    /** The sum of every entry of the organization: what the cached balance must always equal. */
    async sumOf(organizationId: string): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ sum: sql<number | null>`sum(${t.amountMicro})` })
          .from(t)
          .where(eq(t.organizationId, organizationId)),
      );
      return Number(rows[0]?.sum ?? 0);
    },

    /** The sum of the organization's entries of one kind (card payments: Shape A's fiatBalance). */
    async sumOfKind(organizationId: string, kind: string): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ sum: sql<number | null>`sum(${t.amountMicro})` })
          .from(t)
          .where(and(eq(t.organizationId, organizationId), eq(t.kind, kind))),
      );
      return Number(rows[0]?.sum ?? 0);
    },

    /** The sum of the organization's entries of one kind for one reference (the refunds of one card payment). */
    async sumOfReference(organizationId: string, kind: string, reference: string): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ sum: sql<number | null>`sum(${t.amountMicro})` })
          .from(t)
          .where(and(eq(t.organizationId, organizationId), eq(t.kind, kind), eq(t.reference, reference))),
      );
      return Number(rows[0]?.sum ?? 0);
    },

    /** Records a card processor event once: false when it was taken before. */
    async takeFiatEvent(
      id: string,
      type: string,
      paymentIntentId: string | null,
      receivedAt: number,
    ): Promise<boolean> {
      const e = x.s.fiatEvents;
      const rows = await x.run((q) =>
        q.insert(e).values({ id, type, paymentIntentId, receivedAt }).onConflictDoNothing().returning({ id: e.id }),
      );
      return rows.length === 1;
    },

    /** A page of the organization's entries, newest first. */
    list(organizationId: string, page: { limit: number; offset: number }): Promise<LedgerRow[]> {
      return x.run((q) =>
        q
          .select()
          .from(t)
          .where(eq(t.organizationId, organizationId))
          .orderBy(desc(t.createdAt), desc(t.id))
          .limit(literalInt(page.limit))
          .offset(literalInt(page.offset)),
      );
    },
  };
}
