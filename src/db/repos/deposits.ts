import { and, desc, eq, gte, inArray, isNull, lt } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type DepositRow = typeof billing.deposits.$inferSelect;
export type FundRequestRow = typeof billing.fundRequests.$inferSelect;

/** APUSD deposits read from a chain, the watcher's cursor, and organizations by deposit address. */
export function depositsRepo(x: Executor) {
  const t = x.s.deposits;
  const o = x.s.organizations;
  return {
    ...fundRequests(x),
    /** Records a deposit once: false when its id (chainId:txHash:logIndex) was recorded before. */
    async insertOnce(row: DepositRow): Promise<boolean> {
      const rows = await x.run((q) => q.insert(t).values(row).onConflictDoNothing().returning({ id: t.id }));
      return rows.length === 1;
    },

    /** The newest deposits, of one organization or of all (bounded). */
    list: (organizationId: string | undefined, limit: number): Promise<DepositRow[]> =>
      x.run((q) =>
        q
          .select()
          .from(t)
          .where(organizationId === undefined ? undefined : eq(t.organizationId, organizationId))
          .orderBy(desc(t.createdAt), desc(t.blockNumber), desc(t.logIndex))
          .limit(literalInt(limit)),
      ),

    /** Credited deposits of a chain read from blocks at or after a height (what a reorg may have taken). */
    creditedFrom: (chainId: number, number: number): Promise<DepositRow[]> =>
      x.run((q) =>
        q
          .select()
          .from(t)
          .where(and(eq(t.chainId, chainId), eq(t.status, 'credited'), gte(t.blockNumber, number))),
      ),

    /** A deposit's new place after a reorg, or its reversal (false when it was not credited any more). */
    async markReversed(id: string): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ status: 'reversed' })
          .where(and(eq(t.id, id), eq(t.status, 'credited')))
          .returning({ id: t.id }),
      );
      return rows.length === 1;
    },
    /** A reversed deposit back on the chain: credited again at its new place (false when it was not reversed). */
    async creditAgain(id: string, blockNumber: number, blockHash: string): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ status: 'credited', blockNumber, blockHash })
          .where(and(eq(t.id, id), eq(t.status, 'reversed')))
          .returning({ id: t.id }),
      );
      return rows.length === 1;
    },
    moved: (id: string, blockNumber: number, blockHash: string) =>
      x.run((q) => q.update(t).set({ blockNumber, blockHash }).where(eq(t.id, id))),

    /** Organizations by their deposit addresses (lower case). */
    async byDepositAddress(addresses: string[]): Promise<Map<string, string>> {
      if (addresses.length === 0) return new Map();
      const rows = await x.run((q) =>
        q.select({ id: o.id, address: o.depositAddress }).from(o).where(inArray(o.depositAddress, addresses)),
      );
      return new Map(rows.map((r) => [r.address as string, r.id]));
    },

    /** Sets an organization's deposit address unless it has one; the address it has afterwards. */
    async assignDepositAddress(organizationId: string, address: string): Promise<string | undefined> {
      await x.run((q) =>
        q
          .update(o)
          .set({ depositAddress: address })
          .where(and(eq(o.id, organizationId), isNull(o.depositAddress))),
      );
      const rows = await x.run((q) => q.select({ address: o.depositAddress }).from(o).where(eq(o.id, organizationId)));
      return rows[0]?.address ?? undefined;
    },
  };
}

/** What organizations said they would send (POST /billing/fund), matched by the deposits that come. */
function fundRequests(x: Executor) {
  const f = x.s.fundRequests;
  return {
    recordFundRequest: (row: FundRequestRow) => x.run((q) => q.insert(f).values(row)),

    /**
     * Marks the oldest pending request of the organization for exactly this amount, made at or
     * after `createdFrom`, as received by a deposit. Two deposits of one amount committing at once
     * may pick the same request: the one whose update finds it taken tries the next (a few times;
     * a miss only leaves a request pending).
     */
    async matchFundRequest(
      organizationId: string,
      amountMicro: number,
      depositId: string,
      createdFrom: number,
    ): Promise<void> {
      const pending = and(
        eq(f.organizationId, organizationId),
        eq(f.status, 'pending'),
        eq(f.amountMicro, amountMicro),
        gte(f.createdAt, createdFrom),
      );
      const candidates = await x.run((q) =>
        q.select({ id: f.id }).from(f).where(pending).orderBy(f.createdAt, f.id).limit(5),
      );
      for (const { id } of candidates) {
        const taken = await x.run((q) =>
          q
            .update(f)
            .set({ status: 'received', depositId })
            .where(and(eq(f.id, id), eq(f.status, 'pending')))
            .returning({ id: f.id }),
        );
        if (taken.length === 1) return;
      }
    },

    /** Pending requests made before `createdBefore` (of one organization, or all) become expired; how many. */
    async expireFundRequests(createdBefore: number, organizationId?: string): Promise<number> {
      const stale = and(
        eq(f.status, 'pending'),
        lt(f.createdAt, createdBefore),
        organizationId === undefined ? undefined : eq(f.organizationId, organizationId),
      );
      return (await x.run((q) => q.update(f).set({ status: 'expired' }).where(stale).returning({ id: f.id }))).length;
    },

    findFundRequest: async (id: string): Promise<FundRequestRow | undefined> =>
      (await x.run((q) => q.select().from(f).where(eq(f.id, id)).limit(1)))[0],
  };
}
