import { and, count, desc, eq, sql } from 'drizzle-orm';
import { type Executor, rowOfPlaceholders } from '../executor.js';
import type * as tables from '../schema/tables.js';

export type ViewerRow = typeof tables.viewers.$inferSelect;

/**
 * Rows written before a session's firstSeen and lastSeen came from one instant can have lastSeen
 * a few milliseconds before firstSeen; every read lifts it, so no caller ever sees it earlier.
 */
function inOrder<R extends ViewerRow | undefined>(row: R): R {
  return row && row.lastSeen < row.firstSeen ? { ...row, lastSeen: row.firstSeen } : row;
}

export function viewersRepo(x: Executor) {
  const t = x.s.viewers;
  // A new viewer's insert and every session's count of its stream: built once.
  const insertUnlessTaken = x.prepared('drm_viewer_insert', (q) =>
    q
      .insert(t)
      .values(rowOfPlaceholders(t) as never)
      .onConflictDoNothing()
      .returning({ id: t.id }),
  );
  const now = sql.placeholder('now');
  const countStream = x.prepared('drm_viewer_count_stream', (q) =>
    q
      .update(t)
      .set({
        totalStreams: sql`${t.totalStreams} + 1`,
        lastSeen: sql`case when ${t.lastSeen} > ${now} then ${t.lastSeen} else ${now} end`,
      })
      .where(eq(t.id, sql.placeholder('id')))
      .returning(),
  );
  const byId = x.prepared('drm_viewer_by_id', (q) =>
    q
      .select()
      .from(t)
      .where(eq(t.id, sql.placeholder('id'))),
  );
  const byExternal = x.prepared('drm_viewer_by_external', (q) =>
    q
      .select()
      .from(t)
      .where(
        and(
          eq(t.organizationId, sql.placeholder('organizationId')),
          eq(t.externalViewerId, sql.placeholder('externalViewerId')),
        ),
      ),
  );

  return {
    ...viewerPages(x),
    insert: (row: ViewerRow) => x.run((q) => q.insert(t).values(row)),

    /**
     * Inserts a new viewer unless its external id (in its organization) or its binaryId is taken,
     * and says whether it did. On Postgres a concurrent transaction inserting the same viewer is
     * waited for and its row then counts as taken: two first sessions of one person make one viewer.
     */
    async insertUnlessTaken(row: ViewerRow): Promise<boolean> {
      return (await insertUnlessTaken(row)).length === 1;
    },

    async find(id: string): Promise<ViewerRow | undefined> {
      return inOrder((await byId({ id }))[0]);
    },

    async findByExternal(organizationId: string, externalViewerId: string): Promise<ViewerRow | undefined> {
      return inOrder((await byExternal({ organizationId, externalViewerId }))[0]);
    },

    async findByBinaryId(binaryId: string): Promise<ViewerRow | undefined> {
      return inOrder((await x.run((q) => q.select().from(t).where(eq(t.binaryId, binaryId)).limit(1)))[0]);
    },

    /**
     * One more stream: totalStreams and lastSeen, answering the viewer as it now is. lastSeen never
     * moves back (servers' clocks differ a little), so it stays at or after firstSeen.
     */
    async countStream(id: string, now: number): Promise<ViewerRow | undefined> {
      return inOrder((await countStream({ id, now }))[0]);
    },
  };
}

/** Blocking a viewer, and the pages and counts of an organization's viewers. */
function viewerPages(x: Executor) {
  const t = x.s.viewers;
  const filter = (organizationId: string, blocked?: boolean) =>
    blocked === undefined
      ? eq(t.organizationId, organizationId)
      : and(eq(t.organizationId, organizationId), eq(t.isBlocked, blocked));
  return {
    async setBlocked(id: string, organizationId: string, blocked: boolean, reason: string | null): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ isBlocked: blocked, blockedReason: reason })
          .where(and(eq(t.id, id), eq(t.organizationId, organizationId)))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },

    /** One page of an organization's viewers, most recently seen first. */
    async list(organizationId: string, o: { blocked?: boolean; limit: number; offset: number }): Promise<ViewerRow[]> {
      const rows = await x.run((q) =>
        q
          .select()
          .from(t)
          .where(filter(organizationId, o.blocked))
          .orderBy(desc(t.lastSeen), t.id)
          .limit(o.limit)
          .offset(o.offset),
      );
      return rows.map(inOrder);
    },

    async count(organizationId: string, blocked?: boolean): Promise<number> {
      const rows = await x.run((q) => q.select({ n: count() }).from(t).where(filter(organizationId, blocked)));
      return Number(rows[0]?.n ?? 0);
    },
  };
}
