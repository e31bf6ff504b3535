import { and, count, desc, eq, gt } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';
import type { ContentRow } from './content.js';

/** The operator's side of the catalog: every item, what names one, and taking one out. */
export function contentAdminRepo(x: Executor) {
  const t = x.s.content;
  return {
    /** Every item (any status), newest first, and how many there are: the operator's list. */
    async listAll(limit: number, offset: number): Promise<{ rows: ContentRow[]; total: number }> {
      const rows = await x.run((q) =>
        q.select().from(t).orderBy(desc(t.createdAt), desc(t.id)).limit(literalInt(limit)).offset(literalInt(offset)),
      );
      const n = await x.run((q) => q.select({ n: count() }).from(t));
      return { rows, total: Number(n[0]?.n ?? 0) };
    },

    /** What points at an item: sessions (live ones apart), licenses naming it, forensic cases. */
    async references(id: string, now: number) {
      const s = x.s.streamSessions;
      const one = async (query: Promise<{ n: number }[]>) => Number((await query)[0]?.n ?? 0);
      return {
        liveSessions: await one(
          x.run((q) =>
            q
              .select({ n: count() })
              .from(s)
              .where(and(eq(s.contentId, id), eq(s.isActive, true), gt(s.expiresAt, now))),
          ),
        ),
        sessions: await one(x.run((q) => q.select({ n: count() }).from(s).where(eq(s.contentId, id)))),
        licenses: await one(
          x.run((q) => q.select({ n: count() }).from(x.s.licenses).where(eq(x.s.licenses.contentId, id))),
        ),
        cases: await one(
          x.run((q) => q.select({ n: count() }).from(x.s.forensicCases).where(eq(x.s.forensicCases.contentId, id))),
        ),
      };
    },

    /**
     * Takes an item out of the catalog: its licenses go, its live sessions end; the row goes too,
     * or stays as a tombstone (status deleted, no files, no key) while sessions or cases point at it.
     */
    async retire(id: string, keepRow: boolean): Promise<void> {
      await x.run((q) => q.delete(x.s.licenses).where(eq(x.s.licenses.contentId, id)));
      await x.run((q) =>
        q.update(x.s.streamSessions).set({ isActive: false }).where(eq(x.s.streamSessions.contentId, id)),
      );
      if (keepRow)
        await x.run((q) =>
          q.update(t).set({ status: 'deleted', storagePath: null, contentKey: null }).where(eq(t.id, id)),
        );
      else await x.run((q) => q.delete(t).where(eq(t.id, id)));
    },
  };
}
