import { and, desc, eq, gt, gte, inArray, isNull, lt, sql } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type DepositRow = typeof billing.deposits.$inferSelect;

/** APUSD deposits read from a chain, the watcher's cursor, and organizations by deposit address. */
export function depositsRepo(x: Executor) {
  const t = x.s.deposits;
  const c = x.s.chainCursors;
  const o = x.s.organizations;
  const b = x.s.chainBlocks;
  return {
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

    /** Moves a cursor back to the first block a reorg replaced. */
    rewindCursor: (cursorId: string, nextBlock: number, now: number) =>
      x.run((q) => q.update(c).set({ nextBlock, updatedAt: now }).where(and(eq(c.id, cursorId), gt(c.nextBlock, nextBlock)))),

    /** Remembers the hash of a block read (checkpoints for finding reorgs), keeping the newest 256. */
    async checkpoint(cursorId: string, number: number, hash: string): Promise<void> {
      await x.run((q) => q.insert(b).values({ cursorId, number, hash }).onConflictDoUpdate({ target: [b.cursorId, b.number], set: { hash } }));
      await x.run((q) => q.delete(b).where(and(eq(b.cursorId, cursorId), lt(b.number, number - 256 * 2_000))));
    },

    /** Checkpoints, newest first. */
    checkpoints: (cursorId: string, limit = 256) =>
      x.run((q) => q.select().from(b).where(eq(b.cursorId, cursorId)).orderBy(desc(b.number)).limit(literalInt(limit))),

    forgetFrom: (cursorId: string, number: number) => x.run((q) => q.delete(b).where(and(eq(b.cursorId, cursorId), gte(b.number, number)))),

    /** Credited deposits of a chain read from blocks at or after a height (what a reorg may have taken). */
    creditedFrom: (chainId: number, number: number): Promise<DepositRow[]> =>
      x.run((q) => q.select().from(t).where(and(eq(t.chainId, chainId), eq(t.status, 'credited'), gte(t.blockNumber, number)))),

    /** A deposit's new place after a reorg, or its reversal (false when it was not credited any more). */
    async markReversed(id: string): Promise<boolean> {
      const rows = await x.run((q) => q.update(t).set({ status: 'reversed' }).where(and(eq(t.id, id), eq(t.status, 'credited'))).returning({ id: t.id }));
      return rows.length === 1;
    },
    moved: (id: string, blockNumber: number, blockHash: string) => x.run((q) => q.update(t).set({ blockNumber, blockHash }).where(eq(t.id, id))),

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
