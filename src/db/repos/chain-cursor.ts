import { and, desc, eq, gt, gte, lt } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';

/** How far the deposit watcher read a token on a chain, and checkpoints of the blocks it read (for reorgs). */
export function chainCursorRepo(x: Executor) {
  const c = x.s.chainCursors;
  const b = x.s.chainBlocks;
  return {
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
      x.run((q) =>
        q
          .update(c)
          .set({ nextBlock, updatedAt: now })
          .where(and(eq(c.id, cursorId), lt(c.nextBlock, nextBlock))),
      ),

    /** Moves a cursor back to the first block a reorg replaced. */
    rewindCursor: (cursorId: string, nextBlock: number, now: number) =>
      x.run((q) =>
        q
          .update(c)
          .set({ nextBlock, updatedAt: now })
          .where(and(eq(c.id, cursorId), gt(c.nextBlock, nextBlock))),
      ),

    /** Remembers the hash of a block read (checkpoints for finding reorgs); ones 256 ranges back are dropped. */
    async checkpoint(cursorId: string, number: number, hash: string): Promise<void> {
      await x.run((q) =>
        q
          .insert(b)
          .values({ cursorId, number, hash })
          .onConflictDoUpdate({ target: [b.cursorId, b.number], set: { hash } }),
      );
      await x.run((q) => q.delete(b).where(and(eq(b.cursorId, cursorId), lt(b.number, number - 256 * 2_000))));
    },

    /** Checkpoints, newest first. */
    checkpoints: (cursorId: string, limit = 256) =>
      x.run((q) => q.select().from(b).where(eq(b.cursorId, cursorId)).orderBy(desc(b.number)).limit(literalInt(limit))),

    forgetFrom: (cursorId: string, number: number) =>
      x.run((q) => q.delete(b).where(and(eq(b.cursorId, cursorId), gte(b.number, number)))),
  };
}
