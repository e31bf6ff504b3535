import { and, desc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type DepositRow = typeof billing.deposits.$inferSelect;

/** APUSD deposits read from a chain, the watcher's cursor, and organizations by deposit address. */
export function depositsRepo(x: Executor) {
  const t = x.s.deposits;
  const c = x.s.chainCursors;
  const o = x.s.organizations;
  return {
    /** Records a deposit once: false when its id (chainId:txHash:logIndex) was recorded before. */
    async insertOnce(row: DepositRow): Promise<boolean> {
      const rows = await x.run((q) => q.insert(t).values(row).onConflictDoNothing().returning({ id: t.id }));
      return rows.length === 1;
    },

    /** The organization's newest deposits (bounded). */
    list: (organizationId: string, limit: number): Promise<DepositRow[]> =>
      x.run((q) => q.select().from(t).where(eq(t.organizationId, organizationId)).orderBy(desc(t.blockNumber), desc(t.logIndex)).limit(literalInt(limit))),

    /** The next block to read for a cursor; undefined for one never started. */
    async nextBlock(cursorId: string): Promise<number | undefined> {
      const rows = await x.run((q) => q.select({ next: c.nextBlock }).from(c).where(eq(c.id, cursorId)));
      return rows[0] === undefined ? undefined : Number(rows[0].next);
    },

    /** Starts a cursor unless it exists (two servers starting at once agree on the first). */
    startCursor: (cursorId: string, nextBlock: number, now: number) =>
      x.run((q) => q.insert(c).values({ id: cursorId, nextBlock, updatedAt: now }).onConflictDoNothing()),

    /** Moves a cursor forward only: a server that read less never moves it back. */
    advanceCursor: (cursorId: string, nextBlock: number, now: number) =>
      x.run((q) => q.update(c).set({ nextBlock, updatedAt: now }).where(and(eq(c.id, cursorId), lt(c.nextBlock, nextBlock)))),

    /** Organizations by their deposit addresses (lower case). */
    async byDepositAddress(addresses: string[]): Promise<Map<string, string>> {
      if (addresses.length === 0) return new Map();
      const rows = await x.run((q) => q.select({ id: o.id, address: o.depositAddress }).from(o).where(inArray(o.depositAddress, addresses)));
      return new Map(rows.map((r) => [r.address as string, r.id]));
    },

    /** Sets an organization's deposit address unless it has one; the address it has afterwards. */
    async assignDepositAddress(organizationId: string, address: string): Promise<string | undefined> {
      await x.run((q) => q.update(o).set({ depositAddress: address }).where(and(eq(o.id, organizationId), isNull(o.depositAddress))));
      const rows = await x.run((q) => q.select({ address: o.depositAddress }).from(o).where(eq(o.id, organizationId)));
      return rows[0]?.address ?? undefined;
    },

    /** How many deposits a chain has credited (for the operator's view). */
    async creditedCount(chainId: number): Promise<number> {
      const rows = await x.run((q) => q.select({ n: sql<number>`count(*)` }).from(t).where(and(eq(t.chainId, chainId), eq(t.status, 'credited'))));
      return Number(rows[0]?.n ?? 0);
    },
  };
}
