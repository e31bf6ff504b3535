import { and, count, desc, eq, gte, sql } from 'drizzle-orm';
import { type Executor, rowOfPlaceholders } from '../executor.js';
import type * as tables from '../schema/tables.js';

export type SessionRow = typeof tables.streamSessions.$inferSelect;

/** A session with what serving it depends on: the viewer's bits and block, the organization's standing. */
export interface ServingSession {
  session: SessionRow;
  binaryId: string;
  viewerBlocked: boolean;
  organizationActive: boolean;
}

export function sessionsRepo(x: Executor) {
  const t = x.s.streamSessions;
  const v = x.s.viewers;
  const o = x.s.organizations;
  // Every playlist, key and segment request reads this one row join: by primary keys only.
  const serving = x.prepared('drm_session_serving', (q) =>
    q
      .select({ session: t, binaryId: v.binaryId, viewerBlocked: v.isBlocked, organizationActive: o.isActive })
      .from(t)
      .innerJoin(v, eq(v.id, t.viewerId))
      .innerJoin(o, eq(o.id, t.organizationId))
      .where(eq(t.id, sql.placeholder('id'))),
  );
  const addBytes = x.prepared('drm_session_add_bytes', (q) =>
    q
      .update(t)
      .set({ bytesServed: sql`${t.bytesServed} + ${sql.placeholder('bytes')}` })
      .where(eq(t.id, sql.placeholder('id'))),
  );

  // Every new session: built once.
  const insert = x.prepared('drm_session_insert', (q) => q.insert(t).values(rowOfPlaceholders(t) as never));

  return {
    insert: (row: SessionRow) => insert(row),

    /**
     * Many sessions in one statement (seeding a benchmark's month); the usage counters' trigger runs per row all the
     * same.
     */
    insertMany: (rows: SessionRow[]) => x.run((q) => q.insert(t).values(rows)),

    async find(id: string): Promise<SessionRow | undefined> {
      return (await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1)))[0];
    },

    async findServing(id: string): Promise<ServingSession | undefined> {
      return (await serving({ id }))[0];
    },

    /** Counted in the database (one statement), so concurrent segment requests all add up. */
    addBytes: async (id: string, bytes: number): Promise<void> => {
      await addBytes({ id, bytes });
    },

    async deactivate(id: string, organizationId: string): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ isActive: false })
          .where(and(eq(t.id, id), eq(t.organizationId, organizationId)))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },

    /** A viewer's most recent sessions (bounded). */
    listForViewer(viewerId: string, limit: number): Promise<SessionRow[]> {
      return x.run((q) =>
        q.select().from(t).where(eq(t.viewerId, viewerId)).orderBy(desc(t.createdAt), t.id).limit(limit),
      );
    },

    async countSince(organizationId: string, since: number): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ n: count() })
          .from(t)
          .where(and(eq(t.organizationId, organizationId), gte(t.createdAt, since))),
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
